"""Stratified GRPO (Zhu et al., arXiv 2510.06214): Stratified Advantage Normalization for
agents whose rollouts differ in structure (e.g. the number of tool calls), plus a GRPO baseline
and a search-agent gymnasium environment. Importing this package imports nothing heavy."""
