"""LAME (Boudiaf et al. 2022): test-time adaptation of a frozen classifier's outputs, and its baselines."""
