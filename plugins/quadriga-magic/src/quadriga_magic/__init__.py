"""MAGIC, metagradient data attribution (Ilyas & Engstrom 2025, arXiv 2504.16430), for quadriga."""
