"""Datamodels (Ilyas, Park, Engstrom, Leclerc, Madry, ICML 2022, arXiv 2202.00622) for quadriga."""
