"""Registration of quadriga-fle from plugin.toml and pipelines/*.toml (imports nothing heavy)."""

from __future__ import annotations

from typing import Any

import quadriga


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Register the components and claims of plugin.toml by lazy "module:attr" paths, and the pipelines."""
    registry.add_package(__package__)
