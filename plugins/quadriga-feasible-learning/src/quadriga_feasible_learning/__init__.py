"""Feasible Learning: per-sample loss constraints instead of the average loss (Ramirez et al. 2025)."""
