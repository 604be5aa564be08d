"""Registration of quadriga-std's components (lazy: nothing heavy is imported here)."""

from __future__ import annotations

import quadriga

#: the kits, each a subpackage declaring its components in its own plugin.toml
KITS = ("shift", "rl", "weightspace", "attribution", "sequences", "randomdesign")


@quadriga.hookimpl
def quadriga_register(registry):
    """Register quadriga-std's components (plugin.toml), its pipelines, and each kit's plugin.toml."""
    registry.add_package(__package__)
    for kit in KITS:
        registry.add_package(f"{__package__}.{kit}")


@quadriga.hookimpl
def quadriga_check_tasks():
    """The small tasks quadriga.testing gives components: a 2-D Gaussian, diabetes, CartPole-v1."""
    return {
        "Target": {"use": "gaussian", "dim": 2},
        "Dataset": {"use": "sklearn-dataset", "name": "diabetes"},
        "Environment": {"use": "gym-env", "env_id": "CartPole-v1"},
    }
