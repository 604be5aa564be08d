"""quadriga-kernel-thinning: kernel thinning and Compress++ (goodpoints) as quadriga components.

Importing this package imports nothing heavy; the components live in
:mod:`quadriga_kernel_thinning.thinning` and :mod:`quadriga_kernel_thinning.evaluators`.
"""
