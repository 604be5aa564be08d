"""``quadriga doctor``: the environment, every plugin and its status, broken plugins, collisions."""

from __future__ import annotations

import argparse
import platform
import sys
from typing import Any

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    print_problems,
    registry_for,
)
from quadriga.cli.output import print_table
from quadriga.errors import QuadrigaError
from quadriga.markup import escape
from quadriga.versions import version_of

__all__ = [
    "CHECKED",
    "LIBRARIES",
    "OPTIONAL",
    "add_parser",
    "cmd_doctor",
    "optional_lines",
    "requirement_problems",
    "shadow_problems",
]

#: libraries whose versions the report shows
LIBRARIES = (
    "torch",
    "numpy",
    "gymnasium",
    "torchrl",
    "POT",
    "goodpoints",
    "pluggy",
    "attrs",
    "cattrs",
    "rich",
)
#: libraries whose version requirements (of the plugins, and of each other) are checked
CHECKED = ("torch", "numpy", "gymnasium", "torchrl", "pot", "goodpoints")


#: optional features: (distribution that provides it, what it enables, the command that installs it)
OPTIONAL = (
    ("ray", "quadriga sweep --backend ray", "pip install 'quadriga[ray]'"),
    ("submitit", "quadriga sweep --backend submitit (SLURM)", "pip install 'quadriga[slurm]'"),
    ("pyarrow", "results.parquet (else results.csv)", "pip install 'quadriga[parquet]'"),
    ("quadriga-mlflow", "--with mlflow", "pip install quadriga-mlflow"),
    ("quadriga-tensorboard", "--with tensorboard", "pip install quadriga-tensorboard"),
)


def optional_lines() -> list[str]:
    """One line per optional feature of :data:`OPTIONAL`: its version, or how to install it.

    Nothing is imported (``importlib.metadata`` only). E.g. ``"  ray 2.9.0: quadriga sweep
    --backend ray"`` or ``"  submitit not installed: quadriga sweep --backend submitit (SLURM);
    pip install 'quadriga[slurm]'"``.
    """
    lines = []
    for dist, enables, install in OPTIONAL:
        version = version_of(dist)
        lines.append(
            f"  {dist} {version}: {enables}" if version else f"  {dist} not installed: {enables}; {install}"
        )
    return lines


def requirement_problems(distributions: list[str]) -> list[str]:
    """Requirements on :data:`CHECKED` libraries that the installed versions do not meet.

    Reads ``Requires-Dist`` of each distribution (and of the checked libraries themselves, e.g.
    torchrl's ``torch>=...``) from its metadata, ignoring optional extras, and compares with
    :class:`packaging.specifiers.SpecifierSet` (``importlib.metadata``; nothing is imported).

    Args:
        distributions: distribution names, e.g. the plugins' (``"quadriga-std"``).

    Returns:
        One sentence per unmet requirement, naming who requires what and what is installed.
    """
    import importlib.metadata as md

    from packaging.requirements import InvalidRequirement, Requirement

    from quadriga.registry import normalize_name

    problems = []
    for dist in dict.fromkeys([*distributions, *CHECKED]):
        try:
            requires = md.requires(dist) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if normalize_name(req.name) not in CHECKED:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue  # an optional extra, or another platform
            installed = version_of(req.name)
            if not installed:
                problems.append(f"'{dist}' requires {req} but {req.name} is not installed")
            elif req.specifier and not req.specifier.contains(installed, prereleases=True):
                problems.append(f"'{dist}' requires {req} but {req.name} {installed} is installed")
    return problems


def shadow_problems() -> list[str]:
    """Distributions with two metadata copies on ``sys.path``, where the first one read is not the install.

    A ``*.egg-info`` or ``*.dist-info`` folder left in the working directory (or another folder
    early on ``sys.path``, such as ``python -m`` puts there) is read before the installed
    distribution: its stale entry points and version shadow the plugin that is really installed.
    Only the core and distributions declaring ``quadriga`` entry points are checked, and only a
    first copy that pip did not install (no ``INSTALLER`` file) whose version or entry points
    differ from the installed copy's counts: an editable install's own ``src/*.egg-info`` is fine.

    Returns:
        one sentence per shadowed distribution naming both folders and the fix; empty when none.
    """
    import importlib.metadata as md
    from pathlib import Path

    from packaging.utils import canonicalize_name as canonical_name

    copies: dict[str, list[md.Distribution]] = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            copies.setdefault(canonical_name(name), []).append(dist)
    problems = []
    for name, found in sorted(copies.items()):
        relevant = name == "quadriga" or any(
            ep.group == "quadriga" for dist in found for ep in dist.entry_points
        )
        installed = [d for d in found if d.read_text("INSTALLER") is not None]  # pip wrote these
        if len(found) < 2 or not relevant or not installed or found[0].read_text("INSTALLER") is not None:
            continue  # one copy, or the installed one is read first (an editable's src egg-info follows it)
        lead, real = found[0], installed[0]
        if lead.version == real.version and sorted(lead.entry_points) == sorted(real.entry_points):
            continue  # the same metadata: nothing is shadowed
        first, where = (Path(str(getattr(d, "_path", "?"))) for d in (lead, real))
        problems.append(
            f"{name}: the metadata in {first} (version {lead.version}) is read before the installed "
            f"{where} (version {real.version}) and shadows it; remove {first} (a leftover of a "
            "build) or run quadriga from another directory"
        )
    return problems


def add_parser(sub: Subparsers) -> None:
    """Add ``doctor`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "doctor",
        help="installed plugins, versions, and the broken ones with the reason",
        description="Report the Python environment, every plugin distribution and its status, "
        "plugins that failed to load (and why), and name collisions.",
        formatter_class=Formatter,
    )
    add_common_options(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """``quadriga doctor``: environment, plugins, broken plugins and collisions.

    Imports every component (slower than ``list``, but finds bad ``module:attr`` paths).

    Returns:
        0 when every plugin loads, every component imports, every version requirement on
        :data:`CHECKED` is met (:func:`requirement_problems`) and no stale metadata shadows an
        installed distribution (:func:`shadow_problems`), else 1.
    """
    reg = registry_for(args).load()
    con = console()
    _print_environment(con)
    _print_plugins(con, reg)
    for b in reg.broken:
        con.print(
            f"[red]{escape(repr(b.plugin))} ({escape(b.distribution)}) failed at {b.stage}[/]: "
            + escape(b.error)
        )
        con.print(
            f"  entry point: {escape(b.entry_point)}. Fix the error above and reinstall '{b.distribution}' "
            f"(pip install --force-reinstall, or pip install -e <its folder>), or disable it "
            f"(--disable {b.plugin})."
        )
        if getattr(args, "debug", False):
            con.print(b.traceback, markup=False)
    if reg.conflicts:
        print_problems(con, reg)
    mismatches = requirement_problems(sorted({s.distribution for s in reg.plugins.values()}))
    for m in mismatches:
        con.print(
            f"[red]version mismatch[/]: {escape(m)}. Install a matching version "
            "(pip install -c constraints.txt ...) before running its pipelines."
        )
    shadows = shadow_problems()
    for problem in shadows:
        con.print(f"[red]stale metadata[/]: {escape(problem)}.", soft_wrap=False)
    unresolved = []
    for spec in reg.components():
        try:
            reg.load_class(spec)
        except QuadrigaError as exc:
            unresolved.append(spec)
            con.print(f"[red]{spec.kind} '{escape(spec.name)}' cannot be imported[/]: {escape(str(exc))}")
    if not reg.broken and not reg.conflicts and not unresolved and not mismatches and not shadows:
        con.print(
            f"[green]all plugins load, all {len(reg.components())} components import and the versions "
            "they require are installed[/]"
        )
    return 1 if reg.broken or reg.conflicts or unresolved or mismatches or shadows else 0


def _print_environment(con: Any) -> None:
    """Print quadriga's version, the interpreter, and the versions of the libraries it uses."""
    con.print(
        f"quadriga {version_of('quadriga')} on Python {platform.python_version()} ({escape(sys.executable)})",
        soft_wrap=True,
    )
    for lib in LIBRARIES:
        version = version_of(lib)
        con.print(f"  {lib} {version}" if version else f"  {lib} [yellow]not installed[/]")
    con.print("optional (not needed to run pipelines):")
    for line in optional_lines():
        con.print(escape(line), soft_wrap=True)


def _print_plugins(con: Any, reg: Any) -> None:
    """Print the table of plugin distributions: version, load status and number of components."""
    counts: dict[str, int] = {}
    for c in reg.components():
        counts[c.plugin] = counts.get(c.plugin, 0) + 1
    rows = [  # the plugin (entry-point) name only where it is not the distribution's name
        [
            status.distribution,
            status.version,
            status.status,
            counts.get(name, 0),
            "" if status.distribution.removeprefix("quadriga-") == name else name,
        ]
        for name, status in sorted(reg.plugins.items(), key=lambda item: item[1].distribution)
    ]
    print_table(  # the shared table: names whole (never cut), split into parts if too wide
        con,
        ["distribution", "version", "status", "components", "plugin"],
        rows,
        title="plugins (distributions; --disable takes either name)",
        right=["components"],
    )
