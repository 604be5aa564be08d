"""Random-design regression kit: Gaussian designs with isotropic, equicorrelated and power-law
spectra, planted linear signals, ridge and least squares, and their exact risks.

Modules: :mod:`~quadriga_std.randomdesign.design` (covariances, signals, ridge fits, exact and
deterministic-equivalent risks; numpy only), :mod:`~quadriga_std.randomdesign.task` (the
``random-design`` dataset and an in-memory ``ArrayRegression``), :mod:`~quadriga_std.randomdesign.learners`
(``least-squares`` and ``ridge-regression``). Registered from ``plugin.toml`` by ``quadriga_std.plugin``.
"""
