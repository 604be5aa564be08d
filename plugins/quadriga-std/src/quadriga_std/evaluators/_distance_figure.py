"""The figure of the sample-distance evaluators: one bar panel per metric, one bar per subject."""

from __future__ import annotations

import re
from typing import Any

from quadriga.artifacts import Samples

__all__ = ["bar_figure", "draws_label", "reference_label"]


def draws_label(samples: Any) -> str:
    """What a sample set's size means, for figure labels.

    ``"8000 draws (4 chains x 2000, correlated)"`` when the artifact comes from several Markov
    chains (``chains: Tensor[c, n, d]`` or ``info["num_chains"]``), ``"2000 draws (1 chain,
    correlated)"`` for one chain, ``"n = 2000 draws"`` otherwise (independence is not known here).
    """
    n = int(samples.num_samples)
    chains = getattr(samples, "chains", None)
    c = int(chains.shape[0]) if chains is not None else int(samples.info.get("num_chains", 0) or 0)
    if c > 1 and n % c == 0:
        return f"{n} draws ({c} chains \u00d7 {n // c}, correlated)"
    if c == 1:
        return f"{n} draws (1 chain, correlated)"
    return f"n = {n} draws"


def reference_label(ref: Samples, given: Any) -> str:
    """``"reference: 2000 independent exact draws from the target"`` or the stage it came from."""
    if not isinstance(given, Samples):
        return f"reference: {ref.num_samples} independent exact draws from the target"
    stage = given.info.get("stage")
    return f"reference: {draws_label(ref)}" + (f" of stage '{stage}'" if stage else "")


def _words(name: str) -> str:
    """A class or metric name in words: ``"EnergyDistance"`` -> ``"energy distance"``.

    ``"energy_distance_sqrt"`` -> ``"energy distance sqrt"``; acronyms (``MMD``) are kept.
    """
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ")
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in spaced.split())


#: y-axis units of the metrics whose units are known (the others are labelled by name only)
_UNITS = {"energy_distance": "units of x", "energy_distance_sqrt": "\u221a(units of x)"}


def bar_figure(
    rows: list[dict[str, Any]], title: str, counts: dict[str, str] | None = None, reference: str = ""
) -> Any:
    """One bar panel per metric, one bar per subject (matplotlib object API).

    Each bar is one estimate from one run (no interval is drawn: there is nothing to draw it
    from); tick labels give the subject and what its sample size is (:func:`draws_label`: MCMC
    draws are correlated, so their count is not an effective sample size), the title the
    reference set's size.
    """
    from matplotlib.figure import Figure

    metrics = [k for k in rows[0] if k != "subject"] if rows else []
    fig = Figure(figsize=(4.0 * max(len(metrics), 1), 3.8), layout="constrained")
    axes = fig.subplots(1, max(len(metrics), 1), squeeze=False)[0]
    counts = counts or {}
    shared = {counts.get(r["subject"]) for r in rows}
    common = shared.pop() if len(shared) == 1 else None  # one size for all: said once, in the title
    names = [
        f"{r['subject']}\n" + counts[r["subject"]].replace(" (", "\n(").replace(", ", ",\n")
        if r["subject"] in counts and common is None
        else r["subject"]
        for r in rows
    ]
    for ax, metric in zip(axes, metrics, strict=False):
        ax.bar(range(len(rows)), [r[metric] for r in rows], color="tab:blue")
        ax.set_xticks(
            range(len(rows)),
            names,
            rotation=30 if len(rows) > 3 else 0,
            ha="right" if len(rows) > 3 else "center",
            fontsize=8,
        )
        unit = _UNITS.get(metric)
        ax.set_ylabel(f"{_words(metric)} ({unit})" if unit else _words(metric))
        ax.set_title(_words(metric), fontsize=10)
    lines = [f"{_words(title)} of each sampler to the reference (one estimate per sampler, no interval)"]
    if common:
        lines.append(f"each sampler: {common}")
    if reference:
        lines.append(reference)
    fig.suptitle("\n".join(lines), fontsize=9)
    return fig
