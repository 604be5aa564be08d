"""quadriga-stochastic-interpolants: flows and diffusions between two arbitrary densities.

Albergo, Boffi & Vanden-Eijnden 2023, "Stochastic interpolants: a unifying framework for flows
and diffusions" (arXiv 2303.08797). Importing this package does not import torch.
"""

__all__: list[str] = []
