"""``quadriga new plugin NAME``: render the plugin template (copier) into a new distribution.

The template ships inside the ``quadriga`` package (``quadriga/templates/plugin``, package data),
so the command works from an installed wheel as well as from a checkout. It renders::

    quadriga-NAME/
      pyproject.toml              entry point [project.entry-points.quadriga]
      README.md
      src/quadriga_NAME/plugin.py registration (lazy "module:Class" paths)
      src/quadriga_NAME/KIND.py   a working component skeleton with documented shapes, units, errors, source
      src/quadriga_NAME/claims.py a claim stub run by ``quadriga verify``
      src/quadriga_NAME/pipelines/NAME-demo.toml
      tests/test_NAME_KIND.py     check_component, a known answer, the pipeline, the claim at smoke scale
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources as resources
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError, QuadrigaError

__all__ = ["NAME_PATTERN", "PLUGIN_KINDS", "add_new_command", "render_plugin", "template_dir"]

PLUGIN_KINDS = ("sampler", "learner", "estimator", "evaluator")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

EPILOG = """\
examples:
  quadriga new plugin my-sampler                       ./quadriga-my-sampler, a Sampler
  quadriga new plugin my-metric --kind evaluator --dest plugins
then:
  pip install -e quadriga-my-sampler --no-deps
  quadriga list --kind sampler
  quadriga run my-sampler-demo
  pytest quadriga-my-sampler/tests
"""


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
        QuadrigaError: copier is not installed.
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
    try:
        import copier
    except ImportError:
        raise QuadrigaError(
            "`quadriga new` renders a copier template: `pip install copier` "
            "(or install quadriga with its test/docs extras)."
        ) from None
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


def cmd_new(args: argparse.Namespace) -> int:
    """``quadriga new plugin``: render the template and print the next steps."""
    from rich.console import Console

    console = Console(highlight=False)
    path = render_plugin(
        args.name,
        kind=args.kind,
        dest=args.dest,
        description=args.description,
        author=args.author or "",
        paper=args.paper,
    )
    console.print(
        f"created [bold]{path}[/] ({args.kind} '{args.name}'). Next:\n"
        f"  pip install -e {path} --no-deps\n"
        f"  quadriga info {args.name}\n"
        f"  quadriga run {args.name}-demo\n"
        f"  pytest {path / 'tests'}"
    )
    return 0


def add_new_command(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``quadriga new plugin NAME [--kind KIND] [--dest DIR]`` to ``sub`` (argparse subparsers)."""
    from quadriga.extensions import EXTENSION_COMMANDS

    p = sub.add_parser(
        "new",
        help="create a new plugin distribution from the template",
        description="Create files from a template. `quadriga new plugin NAME` writes a complete, "
        "installable plugin distribution.",
    )
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = what.add_parser(
        "plugin",
        help="a plugin distribution with one component, a pipeline, a claim and tests",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description="Render the plugin template into DEST/quadriga-NAME: pyproject.toml with the "
        "entry point, a working component skeleton of the chosen kind, claims.py, a "
        "ready pipeline NAME-demo, tests and a README.",
    )
    q.add_argument(
        "name", metavar="NAME", help="the component's name, lowercase with dashes, e.g. my-sampler"
    )
    q.add_argument("--kind", choices=PLUGIN_KINDS, default="sampler", help="the interface (default sampler)")
    q.add_argument("--dest", type=Path, default=Path("."), help="parent folder (default: the current one)")
    q.add_argument("--description", help="one line describing the method")
    q.add_argument("--author", help="author name for pyproject.toml")
    q.add_argument("--paper", help="the method's paper (authors, year, title, algorithm number)")
    common(q)
    common(p)
    EXTENSION_COMMANDS["new"] = cmd_new
