"""Feynman-Kac correctors for annealed, product and geometric-average targets of diffusion models.

Source: Skreta, Akhound-Sadegh, Ohanesian, ..., Tong & Neklyudov 2025, "Feynman-Kac Correctors in
Diffusion: Annealing, Guidance, and Product of Experts" (arXiv 2503.02819).
"""

__version__ = "0.1.0"
