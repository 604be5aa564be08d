"""Orchestrated value mapping (Fatemi & Tavakoli, ICLR 2022)."""
