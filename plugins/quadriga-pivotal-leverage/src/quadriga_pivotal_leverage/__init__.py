"""quadriga-pivotal-leverage: active regression by pivotal leverage-score sampling.

Shimizu, Cheng, Musco & Weare, "Improved Active Learning via Dependent Leverage Score
Sampling", ICLR 2024 (arXiv 2310.04966). The algorithms are in :mod:`.pivotal` (numpy only);
the components in :mod:`.samplers`, :mod:`.tasks` and :mod:`.evaluators`.
"""
