"""quadriga-nero: classifiers along group orbits g . x (NERO, Zhao et al. 2023, arXiv 2305.19889)."""

__version__ = "0.1.0"
