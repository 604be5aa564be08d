"""Registration of quadriga-pfgmpp from plugin.toml and pipelines/*.toml (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

import quadriga


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Register the sampler, learner and claim of plugin.toml (lazy "module:attr" paths) and the pipelines."""
    registry.add_package(__package__)
