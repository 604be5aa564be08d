# PYTHON_ARGCOMPLETE_OK
"""The ``quadriga`` command line.

Each subcommand is a module of this package with ``add_parser(subparsers)``, which sets the
subcommand's handler with ``set_defaults(func=...)``; :data:`COMMANDS` is the one table of them.
A command line that names its subcommand imports only that module (the others get an empty
placeholder parser), so ``quadriga list`` does not import what ``run`` or ``sweep`` need.
Exit codes: 0 success, 1 a run or claim failed, 2 a usage or configuration error, 130 interrupted
(Ctrl-C), 143 a command stopped by SIGTERM (handled as Ctrl-C by every command: a run marked
interrupted with its finished stages kept, a sweep's runs and jobs stopped the same way, a verify
reporting the claims done so far). Output piped into a reader
that stops early (``quadriga list --full | head -1``) ends the command quietly with exit code 0, the
usual way of command-line tools: the rest of the output goes to ``os.devnull``.
Errors are printed as one paragraph without a traceback unless ``--debug`` is given.
Nothing here imports torch, rich or a plugin algorithm at import time (rich is imported when a
help text or a table is printed, or the output is a terminal; see :func:`quadriga.cli._common.console`).

Shell completion (argcomplete): ``eval "$(register-python-argcomplete quadriga)"`` in bash or zsh.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from quadriga.cli._common import Formatter, add_common_options, console
from quadriga.errors import PluginImportInterrupted, QuadrigaError, sigterm_interrupts
from quadriga.markup import escape

__all__ = ["COMMANDS", "build_parser", "main"]

#: subcommand name -> its module in this package, in the order ``quadriga --help`` lists them
COMMANDS = {
    "list": "listing",
    "info": "info",
    "run": "run",
    "verify": "verify",
    "doctor": "doctor",
    "sweep": "sweep",
    "compare": "compare",
    "report": "report",
    "new": "new",
}


def _named_commands(argv: Sequence[str] | None) -> set[str] | None:
    """The subcommands whose parsers ``argv`` may need; None: all of them.

    All are needed without a command line, for the top-level ``--help``/``--version`` (they
    come before the subcommand), while the shell asks for completions, and when no known
    subcommand is named (argparse then lists the choices). Every word that names a command is
    kept, so that an option value such as ``--disable list`` cannot hide the real subcommand.
    """
    if argv is None or "_ARGCOMPLETE" in os.environ:
        return None
    named: set[str] = set()
    for word in argv:
        if word in ("-h", "--help", "--version") and not named:
            return None
        if word in COMMANDS:
            named.add(word)
    return named or None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``quadriga`` command, with one subparser per entry of :data:`COMMANDS`.

    Args:
        argv: the command line to be parsed, if known: then only the modules of the subcommands
            it names are imported and the others get an empty placeholder parser (enough for
            argparse to accept the names). None: every subcommand's full parser.
    """
    parser = Parser(
        prog="quadriga",
        description="Recent machine-learning methods as composable plugins: Sampler, Learner, Estimator, "
        "Evaluator. Pipelines are TOML files composed by name.",
        formatter_class=Formatter,
        epilog="Start with `quadriga list`, then `quadriga run NAME`. `quadriga COMMAND --help` for details.",
    )
    add_common_options(parser)
    parser.add_argument("--version", action=_Version)
    # prog given: otherwise argparse formats the main usage to find it (rich's formatter, imported)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog=parser.prog)
    named = _named_commands(argv)
    for name, module in COMMANDS.items():
        if named is None or name in named:
            importlib.import_module(f"quadriga.cli.{module}").add_parser(sub)
        else:
            sub.add_parser(name, add_help=False)
    return parser


class Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors fit 80 columns and name close matches.

    ``argument --kind: invalid choice: 'samplr' (choose from 'sampler', ...)`` becomes
    ``argument --kind: 'samplr' is not one of sampler, learner, ... Did you mean 'sampler'?``;
    subcommand parsers inherit the class (``add_subparsers`` uses the parent's). Exit code 2.
    """

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message`` (wrapped to 80 columns) on stderr and exit with code 2."""
        import re
        import textwrap

        from quadriga.errors import suggest

        choice = re.fullmatch(r"(argument \S+): invalid choice: '(.*)' \(choose from (.*)\)", message)
        if choice:
            arg, bad, listed = choice.groups()
            names = [n.strip().strip("'") for n in listed.split(",")]
            message = f"{arg}: '{bad}' is not one of {', '.join(names)}.{suggest(bad, names)}"
        unknown = re.fullmatch(r"unrecognized arguments: (.*)", message)
        flag = next((w for w in unknown.group(1).split() if w.startswith("-")), None) if unknown else None
        if flag:
            options = [o for action in self._actions for o in action.option_strings]
            close = suggest(flag.split("=", 1)[0], options, n=1)
            message += "." + (close or f" `{self.prog} --help` lists its options.")
        self.print_usage(sys.stderr)
        text = textwrap.fill(
            f"{self.prog}: error: {message}", width=80, subsequent_indent="  ", break_on_hyphens=False
        )
        self.exit(2, text + "\n")


class _Version(argparse._VersionAction):
    """``--version``: argparse's version action, reading the installed version only when it is asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from quadriga import __version__

        self.version = f"quadriga {__version__}"
        super().__call__(parser, *args, **kwargs)


def _quiet_stdout() -> None:
    """Send the rest of stdout to ``os.devnull``: its reader has gone (``| head``).

    The final flush at interpreter exit then cannot fail again.
    """
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _report_interrupt(exc: KeyboardInterrupt) -> int:
    """Say on stderr that the command was interrupted (Ctrl-C) or terminated (SIGTERM); the exit code.

    An interrupt during a plugin's import names the plugin and how to disable it.
    """
    code = int(getattr(exc, "exit_code", 130))
    plugin = exc.plugin if isinstance(exc, PluginImportInterrupted) else None  # a hanging import
    console(stderr=True).print(
        ("[yellow]interrupted[/]" if code == 130 else "[yellow]terminated (SIGTERM)[/]")
        + (
            f" while importing plugin '{escape(plugin)}'; if it hangs, disable it with "
            f"--disable {escape(plugin)} and report it to its authors"
            if plugin
            else ""
        )
    )
    return code


def _report_os_error(exc: OSError) -> int:
    """Say on stderr which file could not be read or written and how to go on; exit code 1."""
    where = f" ({exc.filename})" if exc.filename else ""
    console(stderr=True).print(
        f"[red]error:[/] {escape(f'cannot write or read a file{where}: {exc.strerror or exc}')}. "
        "Free disk space or fix the permissions, then run again (finished stages are kept; "
        "`quadriga run --resume RUN_DIR` continues a run).",
        highlight=False,
    )
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``quadriga`` console script (and ``python -m quadriga``); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (argcomplete's own test)
        import argcomplete

        argcomplete.autocomplete(parser)
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the subcommand's parser, with its close options: `run --chek`
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        owner = commands.choices.get(args.command) if args.command else None
        (owner or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not args.command:
        parser.print_help()
        return 2
    debug = getattr(args, "debug", False)
    try:
        with sigterm_interrupts():  # SIGTERM (kill, timeout, a batch time limit) is handled as Ctrl-C
            if args.command != "new":  # a bad --disable or QUADRIGA_DISABLE is refused before anything
                from quadriga.cli._common import registry_for

                registry_for(args).load()
            code = int(args.func(args))
        sys.stdout.flush()  # a reader that stopped early shows here, not at interpreter exit
        return code
    except QuadrigaError as exc:
        if debug:
            raise
        console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM to a run or submitit sweep (exit_code 143)
        return _report_interrupt(exc)
    except BrokenPipeError:  # output piped into `head` and the like (Python's docs, "Note on SIGPIPE")
        _quiet_stdout()
        return 0
    except SystemExit as exc:  # rich's Console.on_broken_pipe sends stdout to devnull and exits 1
        if isinstance(exc.__context__, BrokenPipeError):
            _quiet_stdout()
            return 0
        raise
    except OSError as exc:  # disk full, a read-only file system, permissions: not a bug of quadriga
        if debug:
            raise
        return _report_os_error(exc)
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
