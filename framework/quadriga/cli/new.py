"""``quadriga new plugin NAME``: render the plugin template; ``quadriga new update PATH``: copier update."""

from __future__ import annotations

import argparse
from pathlib import Path

from quadriga.cli._common import Formatter, Subparsers, add_common_options, console
from quadriga.scaffold import PLUGIN_KINDS

__all__ = ["EPILOG", "add_parser", "cmd_new", "cmd_update"]

EPILOG = """\
examples:
  quadriga new plugin my-sampler           ./quadriga-my-sampler, a Sampler
  quadriga new plugin my-metric --kind evaluator --dest plugins
  quadriga new plugin my-posterior --kind target
then (the command prints these for the quadriga it runs from):
  pip install -e 'quadriga-my-sampler[test]'
  quadriga list --kind sampler
  quadriga run my-sampler-demo
  cd quadriga-my-sampler && pytest
later, after upgrading quadriga:
  quadriga new update quadriga-my-sampler  merges the template's changes
"""

UPDATE_EPILOG = """\
examples:
  quadriga new update quadriga-my-sampler
  quadriga new update . --conflict rej     conflicts as .rej files, not inline
The plugin must be a git repository without uncommitted changes (`quadriga new plugin` makes it one);
review the result with `git diff` and commit it.
"""


def add_parser(sub: Subparsers) -> None:
    """Add ``new plugin NAME [--kind KIND] [--dest DIR]`` and ``new update [PATH]`` to ``sub``."""
    p = sub.add_parser(
        "new",
        help="create a new plugin distribution from the template",
        description="Create files from a template. `quadriga new plugin NAME` writes a complete, "
        "installable plugin distribution; `quadriga new update PATH` brings one up to the current template.",
        formatter_class=Formatter,
    )
    what = p.add_subparsers(
        dest="what", metavar="WHAT", required=True, help="plugin (create one) or update (an existing one)"
    )
    q = what.add_parser(
        "plugin",
        help="a plugin distribution with one component, a pipeline, a claim and tests",
        formatter_class=Formatter,
        epilog=EPILOG,
        description="Render the plugin template into DEST/quadriga-NAME: pyproject.toml with the "
        "entry point, a working component skeleton of the chosen kind, claims.py, a "
        "ready pipeline NAME-demo, tests, a README and .copier-answers.yml; the folder is made a git "
        "repository with one commit (unless it lies inside one), so `quadriga new update` can merge "
        "later template changes. Prints the commands that install it.",
    )
    q.add_argument(
        "name", metavar="NAME", help="the component's name, lowercase with dashes, e.g. my-sampler"
    )
    q.add_argument(
        "--kind",
        choices=PLUGIN_KINDS,
        default="sampler",
        metavar="KIND",
        help=f"the kind of component: {', '.join(PLUGIN_KINDS)} (default sampler)",
    )
    q.add_argument("--dest", type=Path, default=Path("."), help="parent folder (default: the current one)")
    q.add_argument("--description", help="one line describing the method")
    q.add_argument("--author", help="author name for pyproject.toml")
    q.add_argument("--paper", help="the method's paper (authors, year, title, algorithm number)")
    q.add_argument("--no-git", action="store_true", help="do not make the new folder a git repository")
    add_common_options(q)
    add_common_options(p)
    q.set_defaults(func=cmd_new)
    u = what.add_parser(
        "update",
        help="merge the current template's changes into a rendered plugin (copier update)",
        formatter_class=Formatter,
        epilog=UPDATE_EPILOG,
        description="Run `copier update` on a plugin rendered by `quadriga new plugin`, against the "
        "template of the quadriga running now: the template's changes since the plugin's "
        "_commit (.copier-answers.yml) are merged into its files, keeping your edits.",
    )
    u.add_argument("path", metavar="PATH", type=Path, nargs="?", default=Path("."), help="the plugin folder")
    u.add_argument(
        "--conflict", choices=("inline", "rej"), default="inline", help="how conflicts are written"
    )
    add_common_options(u)
    u.set_defaults(func=cmd_update)


def next_steps(path: Path, kind: str, name: str) -> str:
    """The lines printed after a render: the install commands for this quadriga, then what to run.

    Args:
        path: the new plugin folder.
        kind: its component's kind.
        name: its component's name.
    """
    from quadriga.scaffold import install_commands, origin_of

    core = origin_of("quadriga")
    where = (
        f"quadriga from {core.path}{' (editable)' if core.editable else ''}"
        if core.path is not None
        else "quadriga from a package index"
    )
    commands = install_commands(path)
    lines = [f"Install it in this environment ({where}):"]
    lines += [f"  {c}" for c in commands["here"]]
    lines.append("or in a new environment, outside this one:")
    lines += [f"  {c}" for c in commands["new environment"]]
    lines.append("Then:")
    lines += [
        f"  quadriga list --kind {kind}          # {name} is listed",
        f"  quadriga run {name}-demo",
        f"  cd {path} && pytest",
    ]
    return "\n".join(lines)


def cmd_new(args: argparse.Namespace) -> int:
    """``quadriga new plugin``: render the template and print the next steps.

    Raises:
        ConfigError: a malformed name, a name already taken (its distribution is catalogued or
            installed, an installed plugin has its package or entry point, or a component of that kind
            and name is registered), or a destination that exists and is not empty.
    """
    from quadriga.cli._common import registry_for
    from quadriga.markup import escape
    from quadriga.scaffold import render_plugin

    path = render_plugin(
        args.name,
        kind=args.kind,
        dest=args.dest,
        description=args.description,
        author=args.author or "",
        paper=args.paper,
        git_init=not args.no_git,
        registry=registry_for(args),
    )
    out = console()
    out.print(f"created [bold]{escape(str(path))}[/] ({args.kind} '{args.name}').")
    out.print(escape(next_steps(path, args.kind, args.name)), soft_wrap=True, highlight=False)
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    """``quadriga new update``: copier update of a rendered plugin against this quadriga's template.

    Raises:
        ConfigError: PATH is not a folder, has no ``.copier-answers.yml`` or a damaged one, or copier
            refused (not a git repository, uncommitted changes, an older template).
    """
    from quadriga.markup import escape
    from quadriga.scaffold import update_plugin

    version = update_plugin(args.path, conflict=args.conflict)
    console().print(
        f"updated [bold]{escape(str(args.path))}[/] to template {version}; review with "
        f"`git -C {escape(str(args.path))} diff` and commit.",
        soft_wrap=True,
        highlight=False,
    )
    return 0
