"""``quadriga new plugin NAME``: render the plugin template into a new distribution."""

from __future__ import annotations

import argparse
from pathlib import Path

from quadriga.cli._common import Formatter, Subparsers, add_common_options, console
from quadriga.scaffold import PLUGIN_KINDS

__all__ = ["EPILOG", "add_parser", "cmd_new"]

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


def add_parser(sub: Subparsers) -> None:
    """Add ``new plugin NAME [--kind KIND] [--dest DIR]`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "new",
        help="create a new plugin distribution from the template",
        description="Create files from a template. `quadriga new plugin NAME` writes a complete, "
        "installable plugin distribution.",
        formatter_class=Formatter,
    )
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = what.add_parser(
        "plugin",
        help="a plugin distribution with one component, a pipeline, a claim and tests",
        formatter_class=Formatter,
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
    add_common_options(q)
    add_common_options(p)
    q.set_defaults(func=cmd_new)


def cmd_new(args: argparse.Namespace) -> int:
    """``quadriga new plugin``: render the template and print the next steps.

    Raises:
        ConfigError: a malformed name, or a destination that exists and is not empty.
    """
    from quadriga.scaffold import render_plugin

    path = render_plugin(
        args.name,
        kind=args.kind,
        dest=args.dest,
        description=args.description,
        author=args.author or "",
        paper=args.paper,
    )
    console().print(
        f"created [bold]{path}[/] ({args.kind} '{args.name}'). Next:\n"
        f"  pip install -e {path} --no-deps\n"
        f"  quadriga info {args.name}\n"
        f"  quadriga run {args.name}-demo\n"
        f"  pytest {path / 'tests'}"
    )
    return 0
