"""quadriga-target-score-matching: score networks regressed on the clean target score (TSM)
and its mixture with denoising score matching.

Source: De Bortoli, Hutchinson, Wirnsberger & Doucet 2024, "Target score matching" (arXiv 2402.08667).
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-target-score-matching")
