"""Registration of quadriga-value-classification from plugin.toml and pipelines/*.toml (nothing heavy)."""

from __future__ import annotations

import quadriga


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the components and claims of plugin.toml by lazy "module:attr" paths, and the pipelines."""
    registry.add_package(__package__)
