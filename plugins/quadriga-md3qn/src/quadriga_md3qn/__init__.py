"""MD3QN: Multi-Dimensional Distributional DQN (Zhang et al., NeurIPS 2021)."""
