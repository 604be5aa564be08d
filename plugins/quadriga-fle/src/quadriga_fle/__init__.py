"""quadriga-fle: Fitted Likelihood Estimation for distributional off-policy evaluation.

Wu, Uehara & Sun 2023, "Distributional Offline Policy Evaluation with Predictive Error
Guarantees" (ICML, arXiv 2302.09456). Modules: :mod:`quadriga_fle.fle` (the estimator),
:mod:`quadriga_fle.baselines` (fitted Q evaluation, categorical fit), :mod:`quadriga_fle.models`
(tabular conditional densities), :mod:`quadriga_fle.envs` (noisy FrozenLake),
:mod:`quadriga_fle.evaluators` (W1 to the Monte-Carlo law), :mod:`quadriga_fle.claims`.
"""
