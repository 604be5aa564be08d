"""Render the plugin template (copier) into a new distribution, as ``quadriga new plugin NAME`` does.

The template ships inside the ``quadriga`` package (``quadriga/templates/plugin``, package data),
so the command works from an installed wheel as well as from a checkout. It renders::

    quadriga-NAME/
      pyproject.toml              entry point [project.entry-points.quadriga]
      README.md
      src/quadriga_NAME/plugin.py registration (lazy "module:Class" paths)
      src/quadriga_NAME/KIND.py   a working component skeleton with documented shapes, units, errors, source
      src/quadriga_NAME/claims.py a claim stub run by ``quadriga verify``
      src/quadriga_NAME/pipelines/NAME-demo.toml
      tests/test_NAME_KIND.py     conformance checks, a known answer, the pipeline, the claim (smoke)
"""

from __future__ import annotations

import contextlib
import importlib.resources as resources
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError
from quadriga.registry import NAME_PATTERN

__all__ = ["PLUGIN_KINDS", "render_plugin", "template_dir"]

PLUGIN_KINDS = ("sampler", "learner", "estimator", "evaluator")


@contextlib.contextmanager
def template_dir() -> Iterator[Path]:
    """The plugin template's directory (a real path, also from a zipped install)."""
    with resources.as_file(resources.files("quadriga") / "templates" / "plugin") as path:
        yield Path(path)


def render_plugin(
    name: str,
    *,
    kind: str = "sampler",
    dest: str | Path = ".",
    description: str | None = None,
    author: str = "",
    paper: str | None = None,
) -> Path:
    """Render the plugin template for a new component.

    Args:
        name: the component's registered name, lowercase with dashes (``"my-sampler"``); the
            distribution is ``quadriga-<name>`` and the package ``quadriga_<name with underscores>``.
        kind: ``sampler``, ``learner``, ``estimator`` or ``evaluator``.
        dest: the parent folder; the plugin is written to ``dest/quadriga-<name>``.
        description: one line for the README, ``pyproject.toml`` and ``quadriga list``.
        author: written to ``pyproject.toml`` when given.
        paper: the method's reference, shown by ``quadriga info``.

    Returns:
        The path of the new distribution folder.

    Raises:
        ConfigError: a malformed name, an unknown kind, or a destination that exists and is not empty.
    """
    if not NAME_PATTERN.match(name or ""):
        raise ConfigError(
            f"'{name}' is not a valid plugin name: use lowercase letters, digits and single dashes, "
            "starting with a letter (e.g. my-sampler).",
            key="NAME",
        )
    if name.startswith("quadriga-"):
        raise ConfigError(
            f"give the method's name without the 'quadriga-' prefix (e.g. '{name[9:]}'); "
            "the distribution is named quadriga-NAME.",
            key="NAME",
        )
    if kind not in PLUGIN_KINDS:
        raise ConfigError(f"unknown kind '{kind}'; use one of {', '.join(PLUGIN_KINDS)}.", key="--kind")
    target = Path(dest) / f"quadriga-{name}"
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"'{target}' exists and is not empty; choose another --dest or NAME.", key="--dest")
    import copier  # a dependency of quadriga; imported here because it is slow to import

    data: dict[str, Any] = {"name": name, "kind": kind, "author": author}
    if description:
        data["description"] = description
    if paper:
        data["paper"] = paper
    with template_dir() as src:
        copier.run_copy(
            str(src), str(target), data=data, defaults=True, quiet=True, unsafe=False, overwrite=True
        )
    return target
