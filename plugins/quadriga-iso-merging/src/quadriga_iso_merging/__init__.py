"""Isotropic model merging (Marczak et al., ICML 2025): Iso-C, Iso-CTS, subspace alignment."""
