# PYTHON_ARGCOMPLETE_OK
"""The ``quadriga`` command line.

Each subcommand is a module of this package with ``add_parser(subparsers)``, which sets the
subcommand's handler with ``set_defaults(func=...)``; :data:`COMMANDS` is the one table of them.
Exit codes: 0 success, 1 a run or claim failed, 2 a usage or configuration error, 130 interrupted
(Ctrl-C). Errors are printed as one paragraph without a traceback unless ``--debug`` is given.
Nothing here imports torch or a plugin algorithm at import time.

Shell completion (argcomplete): ``eval "$(register-python-argcomplete quadriga)"`` in bash or zsh.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from rich.markup import escape

from quadriga.cli import compare, doctor, info, listing, new, report, run, sweep, verify
from quadriga.cli._common import Formatter, add_common_options, console
from quadriga.errors import QuadrigaError

__all__ = ["COMMANDS", "build_parser", "main"]

#: the subcommands, in the order ``quadriga --help`` lists them
COMMANDS = (listing, info, run, verify, doctor, sweep, compare, report, new)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``quadriga`` command, with one subparser per module of :data:`COMMANDS`."""
    from quadriga import __version__

    parser = argparse.ArgumentParser(
        prog="quadriga",
        description="Recent machine-learning methods as composable plugins: Sampler, Learner, Estimator, "
        "Evaluator. Pipelines are TOML files composed by name.",
        formatter_class=Formatter,
        epilog="Start with `quadriga list`, then `quadriga run NAME`. `quadriga COMMAND --help` for details.",
    )
    add_common_options(parser)
    parser.add_argument("--version", action="version", version=f"quadriga {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``quadriga`` console script (and ``python -m quadriga``); returns the exit code."""
    import argcomplete

    parser = build_parser()
    argcomplete.autocomplete(parser)  # returns at once unless the shell asks for completions
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    debug = getattr(args, "debug", False)
    try:
        if args.command != "new":  # a bad --disable or QUADRIGA_DISABLE is refused before anything else
            from quadriga.cli._common import registry_for

            registry_for(args).load()
        return int(args.func(args))
    except QuadrigaError as exc:
        if debug:
            raise
        console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        console(stderr=True).print("[yellow]interrupted[/]")
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # disk full, a read-only file system, permissions: not a bug of quadriga
        if debug:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        console(stderr=True).print(
            f"[red]error:[/] {escape(f'cannot write or read a file{where}: {exc.strerror or exc}')}. "
            "Free disk space or fix the permissions, then run again (finished stages are kept; "
            "`quadriga run --resume RUN_DIR` continues a run).",
            highlight=False,
        )
        return 1
    except RecursionError:
        if debug:
            raise
        console(stderr=True).print(
            "[red]error:[/] the input is nested too deeply to process (more than 32 levels of tables, "
            "arrays or components are refused).",
            highlight=False,
        )
        return 2
    except Exception as exc:
        if debug:
            raise
        console(stderr=True).print(
            f"[red]internal error:[/] {escape(f'{type(exc).__name__}: {exc}')} "
            "(run again with --debug for the traceback)"
        )
        return 1
