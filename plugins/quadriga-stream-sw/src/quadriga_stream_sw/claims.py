"""The paper's headline claims as runnable checks (``quadriga verify quadriga-stream-sw``).

Both claims stream n points from the two presets of :mod:`quadriga_stream_sw.tasks`
(batches of 1000), with L = 100 directions shared by Stream-SW, the correctly weighted
random subsample (same retained floats per direction) and POT's exact SW.

Source: Nguyen 2025, "Streaming Sliced Optimal Transport", arXiv 2505.06835
(Gaussian and MixtureGaussian experiments, vary_k and vary_n).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quadriga.claims import ClaimResult

__all__ = ["beats_subsample", "flat_in_n", "trial"]

PRESETS = ("gaussians", "mixtures")
SCALES = {
    "smoke": {"ks": (10, 50), "n": 1500, "reps": 2, "ns": (1000, 3000), "k_n": 20},
    "paper": {"ks": (10, 30, 100, 300), "n": 10_000, "reps": 10, "ns": (10_000, 30_000, 100_000), "k_n": 100},
}
NUM_PROJECTIONS = 100
BATCH = 1000


def trial(preset: str, n: int, ks: tuple[int, ...], rep: int) -> list[dict[str, Any]]:
    """One replicate: exact SW once, then Stream-SW and the matched subsample for each k.

    Args:
        preset: ``"gaussians"`` or ``"mixtures"``; n: points per stream; ks: KLL parameters; rep: seed.

    Returns:
        One row per k: ``preset, n, k, rep, exact, stream_err, sub_err`` (relative errors,
        fractions) and ``retained`` (floats per direction per stream, equal for both methods).
    """
    from quadriga_stream_sw.threads import single_thread

    with single_thread():  # small sorts: torch's intra-op threads only add contention
        return _trial(preset, n, ks, rep)


def _trial(preset: str, n: int, ks: tuple[int, ...], rep: int) -> list[dict[str, Any]]:
    from quadriga.seeding import derive_seed, make_generator
    from quadriga_stream_sw.components import ExactSWEstimator, StreamSWEstimator, SubsampleSWEstimator
    from quadriga_stream_sw.tasks import TwoSampleStream

    task = TwoSampleStream(preset=preset, dim=2, num_samples=n, batch_size=BATCH)
    task.prepare(generator=make_generator(derive_seed(rep, f"task/{preset}/{n}")))
    gen = lambda tag: make_generator(derive_seed(rep, tag))  # noqa: E731
    exact = (
        ExactSWEstimator(num_projections=NUM_PROJECTIONS, projection_seed=rep)
        .estimate(task, generator=gen("exact"))
        .value
    )
    rows = []
    for k in ks:
        st = StreamSWEstimator(num_projections=NUM_PROJECTIONS, k=k, projection_seed=rep).estimate(
            task, generator=gen(f"stream/{k}")
        )
        sub = SubsampleSWEstimator(num_projections=NUM_PROJECTIONS, match_k=k, projection_seed=rep).estimate(
            task, generator=gen(f"sub/{k}")
        )
        rows.append(
            {
                "preset": preset,
                "n": n,
                "k": k,
                "rep": rep,
                "exact": exact,
                "stream_err": abs(st.value - exact) / exact,
                "sub_err": abs(sub.value - exact) / exact,
                "retained": st.info["retained_per_projection"] // 2,
            }
        )
    return rows


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _se(xs: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def _figure(summary: list[dict[str, Any]], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4.5))
    ax = fig.add_subplot()
    for preset, marker in zip(PRESETS, ("o", "s"), strict=False):
        rows = [r for r in summary if r["preset"] == preset]
        mem = [r["retained"] for r in rows]
        ax.errorbar(
            mem,
            [r["stream_err"] for r in rows],
            yerr=[r["stream_se"] for r in rows],
            marker=marker,
            color="C0",
            label=f"Stream-SW ({preset})",
        )
        ax.errorbar(
            mem,
            [r["sub_err"] for r in rows],
            yerr=[r["sub_se"] for r in rows],
            marker=marker,
            color="C1",
            linestyle="--",
            label=f"random subsample ({preset})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("retained floats per direction per stream")
    ax.set_ylabel("relative error to exact SW (POT)")
    ax.set_title("Stream-SW vs equal-memory subsampling, L = 100")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def beats_subsample(scale: str, *, out_dir: Path) -> ClaimResult:
    """At equal retained floats per direction, Stream-SW's relative error is below the subsample's.

    Passes when the ratio of mean relative errors (Stream-SW / subsample) is < 1 for every k and preset.
    Numbers: per preset and k, both mean errors, their ratio, and the retained floats.
    """
    cfg = SCALES[scale]
    rows = [
        r for preset in PRESETS for rep in range(cfg["reps"]) for r in trial(preset, cfg["n"], cfg["ks"], rep)
    ]
    summary, numbers = [], {}
    for preset in PRESETS:
        for k in cfg["ks"]:
            sel = [r for r in rows if r["preset"] == preset and r["k"] == k]
            s, b = [r["stream_err"] for r in sel], [r["sub_err"] for r in sel]
            item = {
                "preset": preset,
                "k": k,
                "retained": sel[0]["retained"],
                "stream_err": _mean(s),
                "stream_se": _se(s),
                "sub_err": _mean(b),
                "sub_se": _se(b),
                "ratio": _mean(s) / _mean(b),
            }
            summary.append(item)
            for key in ("stream_err", "sub_err", "ratio", "retained"):
                numbers[f"{preset}/k={k}/{key}"] = item[key]
    _figure(summary, out_dir / "error_vs_memory.png")
    table = [
        "| preset | k | floats/direction | Stream-SW rel. err | subsample rel. err | ratio |",
        "|---|---|---|---|---|---|",
    ]
    table += [
        f"| {r['preset']} | {r['k']} | {r['retained']} | {r['stream_err']:.2e} ± {r['stream_se']:.1e} | "
        f"{r['sub_err']:.2e} ± {r['sub_se']:.1e} | {r['ratio']:.3f} |"
        for r in summary
    ]
    worst = max(r["ratio"] for r in summary)
    passed = worst < 1.0
    return ClaimResult(
        passed=passed,
        numbers=numbers,
        table="\n".join(table),
        figures={"error_vs_memory": "error_vs_memory.png"},
        summary=(
            f"n = {cfg['n']}, {cfg['reps']} reps: error ratio Stream-SW / subsample "
            f"between {min(r['ratio'] for r in summary):.3f} and {worst:.3f} over "
            f"k in {list(cfg['ks'])} and both presets (claim: < 1)"
        ),
    )


def flat_in_n(scale: str, *, out_dir: Path) -> ClaimResult:
    """At fixed k, Stream-SW's relative error does not grow with n over a decade.

    Passes when, for both presets, the least-squares slope of log(mean error) against log(n)
    is below 0.25 (a subsample of fixed size would drift like its sampling error; a sketch
    whose error grew like sqrt(n) would have slope 0.5).
    """
    cfg = SCALES[scale]
    k = cfg["k_n"]
    numbers, table, slopes = (
        {},
        ["| preset | n | Stream-SW rel. err | subsample rel. err |", "|---|---|---|---|"],
        [],
    )
    for preset in PRESETS:
        logs_n, logs_e = [], []
        for n in cfg["ns"]:
            rows = [r for rep in range(cfg["reps"]) for r in trial(preset, n, (k,), rep)]
            s, b = [r["stream_err"] for r in rows], [r["sub_err"] for r in rows]
            numbers[f"{preset}/n={n}/stream_err"], numbers[f"{preset}/n={n}/sub_err"] = _mean(s), _mean(b)
            table.append(
                f"| {preset} | {n} | {_mean(s):.2e} ± {_se(s):.1e} | {_mean(b):.2e} ± {_se(b):.1e} |"
            )
            logs_n.append(math.log(n))
            logs_e.append(math.log(max(_mean(s), 1e-300)))
        mx, my = _mean(logs_n), _mean(logs_e)
        slope = sum((a - mx) * (c - my) for a, c in zip(logs_n, logs_e, strict=False)) / sum(
            (a - mx) ** 2 for a in logs_n
        )
        numbers[f"{preset}/slope"] = slope
        slopes.append(slope)
    passed = max(slopes) < 0.25
    return ClaimResult(
        passed=passed,
        numbers=numbers,
        table="\n".join(table),
        summary=(
            f"k = {k}, n in {list(cfg['ns'])}, {cfg['reps']} reps: log-log slope of "
            f"Stream-SW's relative error in n = {', '.join(f'{s:.2f}' for s in slopes)} "
            "(gaussians, mixtures; claim: < 0.25)"
        ),
    )
