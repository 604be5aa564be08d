"""quadriga-fm-smc: training-free conditional sampling for flow-matching models by IS and SMC (TFTF).

Components (registered lazily in :mod:`quadriga_fm_smc.plugin`): samplers ``fm-smc``, ``fm-is``,
``fm-guidance``; the target ``linear-gaussian-posterior``; the learner ``prior-flow-matching``; the
evaluator ``posterior-diagnostics``. Importing this package imports nothing heavy.
"""

__version__ = "0.1.0"
