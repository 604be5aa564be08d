"""quadriga-prospect: Prospect and its baselines for spectral-risk minimization (Mehta et al., ICLR 2024)."""

__version__ = "0.1.0"
