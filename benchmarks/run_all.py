"""Every performance ratio of the repository in one run: each against a baseline measured alongside it.

Usage::

    python benchmarks/run_all.py [--quick] [--only SUBSTRING] [--no-write] [--scripts]

Each benchmark times a method arm (A) and a baseline arm (B) ``repeats`` times, alternating the
order (A B, B A, A B, ...) so that other load on a shared machine hits both arms alike; the
ratio is computed per repeat and the table reports its median, the range over repeats and n.
In-process arms are timed in CPU seconds of this process (``time.process_time``; torch on one
thread), subprocess arms in CPU seconds of the child (``resource.getrusage``), the sweep in wall
seconds (its work is sleeping). ``--quick`` shrinks every budget for a fast check (numbers only).
Beside the median, each row gives the ratio of the arms' mean costs with its 95 % interval
(``quadriga.stats.interval``, paired by repeat, t on the log scale): with n = 2-5 repeats on a
shared machine it is wide, and it is the honest width of the comparison.
The peer rows (``benchmarks/bench_peers.py``: BlackJAX for MALA/HMC, stable-baselines3 for DQN)
need the optional ``bench`` extra (``pip install -c constraints.txt -e '.[bench]'``); without it
they are left out with a note. ``--only BlackJAX`` or ``--only stable-baselines3`` runs them alone.
The table is printed (stdout; progress goes to stderr) and written to ``benchmarks/RESULTS.md``,
keeping the sections that follow the table there (notes measured separately). ``--scripts`` also
runs every ``benchmarks/bench_*.py`` and ``plugins/*/benchmarks/bench_*.py`` script as it is.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS.md"


def _script(path: str) -> Any:
    """Import a benchmark script by path (they are scripts, not packages)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@attrs.define
class Bench:
    """One row of the table.

    Attributes:
        name: what is compared.
        method: ``() -> float``, the measured cost of the method arm (seconds or MiB).
        baseline: ``() -> float``, the baseline arm.
        target: ``(ratio, ratios) -> bool`` and its text; None for a row that is only reported.
        inverse: the ratio is ``baseline / method`` (a throughput ratio) instead of ``method / baseline``.
        repeats: repeats (full, quick).
        setup: called once before the repeats (warm-up, imports).
        absolute: ``(method median, baseline median) -> bool``: a target on the arms' own
            medians (a fixed cost in milliseconds) instead of their ratio; the row's verdict.
    """

    name: str
    method: Callable[[], float]
    baseline: Callable[[], float]
    target_text: str
    target: Callable[[float, list[float]], bool] | None
    inverse: bool = False
    repeats: tuple[int, int] = (3, 2)
    setup: Callable[[], None] | None = None
    absolute: Callable[[float, float], bool] | None = None


def _progress(text: str) -> None:
    """A progress line on stderr (the table alone goes to stdout)."""
    print(text, file=sys.stderr, flush=True)


def _cpu(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _child_cpu(cmd: list[str], env: dict[str, str] | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


_TOY: list[Path] = []


def _toy_site() -> Path:
    """A temporary site directory with the core's toy plugin installed (tests/toy); made once."""
    if _TOY:
        return _TOY[0]
    tmp = Path(tempfile.mkdtemp(prefix="quadriga-bench-"))
    _TOY.append(tmp)
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "toy"), str(tmp)]
    from qtest_helpers import make_dist

    make_dist(tmp, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "tests" / "toy"), str(tmp), os.environ.get("PYTHONPATH", "")]
    )
    return tmp


def benches(quick: bool, notes: list[str] | None = None) -> list[Bench]:
    """The table's rows, with budgets for ``quick`` or full runs; notes on rows left out go to ``notes``."""
    import torch

    peers = _script("benchmarks/bench_peers.py")
    peers.configure_threads()  # before anything imports jax
    torch.set_num_threads(1)
    out: list[Bench] = []

    # --- RL: dqn against a CleanRL-style loop (quadriga-std's benchmark), minto against dqn
    # (quadriga-minto's benchmark); steps per CPU second
    rl = _script("plugins/quadriga-std/benchmarks/bench_dqn_speed.py")
    frames = 1500 if quick else 4000
    seed = iter(range(10_000))
    out.append(
        Bench(
            "DQN env steps/s / CleanRL-style PyTorch loop (CartPole-v1)",
            lambda: rl.cpu_seconds_per_step(rl.quadriga_dqn, frames, next(seed)),
            lambda: rl.cpu_seconds_per_step(rl.cleanrl_loop, frames, next(seed)),
            ">= 0.95",
            lambda r, rs: r >= 0.95,
            inverse=True,
            repeats=(5, 2),
            setup=lambda: rl.cpu_seconds_per_step(rl.quadriga_dqn, 600, 0),
        )
    )
    if importlib.util.find_spec("quadriga_minto") is not None:
        mt = _script("plugins/quadriga-minto/benchmarks/bench_minto_speed.py")

        def learner(name: str) -> Callable[[], float]:
            return lambda: rl.cpu_seconds_per_step(
                lambda f, s: mt.quadriga_learner(name, f, s), frames, next(seed)
            )

        out.append(
            Bench(
                "MINTO env steps/s / DQN (CartPole-v1)",
                learner("minto"),
                learner("dqn"),
                ">= 0.95",
                lambda r, rs: r >= 0.95,
                inverse=True,
                repeats=(5, 2),
            )
        )

    # --- peers: BlackJAX (MALA, HMC) and stable-baselines3 (DQN), when the `bench` extra is installed
    peer_rows, _ = peers.peer_benches(quick, Bench, notes=notes)
    out.extend(peer_rows)

    # --- listing: `quadriga list` against importing pluggy and importlib.metadata (child CPU seconds)
    py = sys.executable

    def _list_setup() -> None:
        # bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set and a core file
        # edited since its .pyc was written, every child would compile that file again
        subprocess.run([py, "-m", "compileall", "-q", str(ROOT / "framework" / "quadriga")], check=True)
        _child_cpu([py, "-m", "quadriga", "list"])  # fills the registry cache

    out.append(
        Bench(
            '`quadriga list` / `python -c "import pluggy, importlib.metadata"` (child CPU s)',
            lambda: _child_cpu([py, "-m", "quadriga", "list"], env={**os.environ, "COLUMNS": "200"}),
            lambda: _child_cpu([py, "-c", "import pluggy, importlib.metadata"]),
            "<= 2.0",
            lambda r, rs: r <= 2.0,
            repeats=(7, 3),
            setup=_list_setup,
        )
    )

    # --- MALA and HMC against bare PyTorch loops of the same update; float32 against float64
    mc = _script("plugins/quadriga-std/benchmarks/bench_mcmc_speed.py")
    mseed = iter(range(10_000))
    # iterations per arm (full, quick), by (kernel, d, chains): about 0.1-1 s per full arm
    budget = {
        ("MALA", 10): (400, 100),
        ("MALA", 100): (400, 100),
        ("MALA", 1000): (80, 20),
        ("HMC", 10): (100, 25),
        ("HMC", 100): (100, 25),
        ("HMC", 1000): (20, 5),
    }
    kernels = {
        "MALA": ("MALA / bare PyTorch MALA loop", mc.quadriga_mala, mc.bare_arm),
        "HMC": ("HMC (10 leapfrog steps) / bare PyTorch HMC loop", mc.quadriga_hmc, mc.bare_hmc_arm),
    }
    for kernel, (label, quad, bare) in kernels.items():
        for d in (10, 100, 1000):
            for chains in (1, 64):
                full, short = budget[(kernel, d)]
                steps = max(2, (short if quick else full) // (4 if chains > 1 and d >= 100 else 1))
                out.append(
                    Bench(
                        f"{label} per iteration, d = {d}, {chains} chain(s)",
                        lambda d=d, c=chains, n=steps, f=quad: f(d, c, n, next(mseed)),
                        lambda d=d, c=chains, n=steps, f=bare: f(d, c, n, next(mseed)),
                        "<= 1.15",
                        lambda r, rs: r <= 1.15,
                        repeats=(5, 2),
                        setup=lambda d=d, c=chains, q=quad, b=bare: (q(d, c, 2, 0), b(d, c, 2, 0)) and None,
                    )
                )
    steps = 20 if quick else 80
    out.append(
        Bench(
            "MALA float32 / float64 per iteration, d = 1000, 1 chain",
            lambda: mc.quadriga_mala(1000, 1, steps, next(mseed), "float32"),
            lambda: mc.quadriga_mala(1000, 1, steps, next(mseed), "float64"),
            "<= 1.0",
            lambda r, rs: r <= 1.0,
            repeats=(5, 2),
        )
    )

    # --- SR-MALA (shifted drift) against its floor: MALA plus SR-MALA's extra target calls
    if importlib.util.find_spec("quadriga_srmc") is not None:
        from quadriga_srmc.sampler import SRMC
        from quadriga_std.samplers.mcmc import MALA
        from quadriga_std.targets.gaussian import Gaussian

        sc = _script("plugins/quadriga-srmc/benchmarks/bench_srmc_cost.py")
        steps = 100 if quick else 400
        for d in (20, 1000):
            target = Gaussian(dim=d, equicorrelation=0.9)
            h = 0.05 if d <= 20 else 0.01
            mala = MALA(step_size=h, num_chains=16, num_samples=steps, burn_in=0, init="target")
            sr = SRMC(
                base_kernel=MALA(step_size=h, init="target"),
                alpha=1.0,
                drift="shifted",
                num_chains=16,
                num_steps=steps,
                burn_in=0,
            )
            out.append(
                Bench(
                    f"SR-MALA (shifted drift) / its floor (MALA + its extra target calls), d = {d}",
                    lambda s=sr, t=target, n=steps: sc._cpu_per_step(s, t, n, 0),
                    lambda m=mala, t=target, n=steps: sc.floor_per_step(m, t, n, 0, 16),
                    "<= 1.15",
                    lambda r, rs: r <= 1.15,
                    repeats=(5, 2),
                    setup=lambda s=sr, m=mala, t=target: (
                        (
                            sc._cpu_per_step(s, t, 5, 0),
                            sc.floor_per_step(m, t, 5, 0, 16),
                        )
                        and None
                    ),
                )
            )

    # --- DDPM sampler against a direct loop of the same update
    if importlib.util.find_spec("quadriga_ddpm") is not None:
        dd = _script("plugins/quadriga-ddpm/benchmarks/bench_ddpm_speed.py")
        n, steps_t = (1000, 50) if quick else (5000, 200)
        target = dd.SphereMixture(dim=256, num_components=16, scale=1.0)
        target.prepare(generator=torch.Generator().manual_seed(0))
        sampler = dd.DDPM(num_steps=steps_t, num_samples=n, dtype="float32")
        betas = dd.theory_betas(steps_t)
        out.append(
            Bench(
                f"DDPM sampler / direct loop (d = 256, K = 16, T = {steps_t}, n = {n})",
                lambda: _cpu(lambda: sampler.sample(target, generator=torch.Generator().manual_seed(0))),
                lambda: _cpu(
                    lambda: dd.direct_loop(
                        target.component_means, 1.0, betas, n, torch.Generator().manual_seed(0)
                    )
                ),
                "<= 1.05 (every repeat <= 1.10)",
                lambda r, rs: r <= 1.05 and max(rs) <= 1.10,  # the median and the worst repeat
                repeats=(5, 3),
                # one short call of each arm first: lazy imports and first allocations stay out of repeat 1
                setup=lambda: (
                    (
                        dd.DDPM(num_steps=5, num_samples=64, dtype="float32").sample(
                            target, generator=torch.Generator().manual_seed(0)
                        ),
                        dd.direct_loop(
                            target.component_means,
                            1.0,
                            dd.theory_betas(5),
                            64,
                            torch.Generator().manual_seed(0),
                        ),
                    )
                    and None
                ),
            )
        )

    # --- what a run costs beyond its work: api.run's fixed cost and the cost per stage, in
    # process and from the CLI (the toy plugin's 2-draw sampler, whose own work is negligible)
    rc = _script("benchmarks/bench_run_stages.py")
    fixed = _script("benchmarks/bench_run_fixed.py")
    runs_dir: dict[str, Path] = {}

    def _outputs() -> Path:
        # run directories outside every sys.path entry (a directory on sys.path is listed again
        # by the provenance's installed-distributions check when it changes)
        if "dir" not in runs_dir:
            _toy_site()
            runs_dir["dir"] = Path(tempfile.mkdtemp(prefix="quadriga-bench-runs-"))
        return runs_dir["dir"] / str(time.perf_counter_ns())

    def direct_calls() -> float:
        """CPU seconds of what the 1-stage pipeline's work is without the runner: build, prepare, sample."""
        from quadriga.registry import get_registry
        from quadriga.seeding import make_generator

        reg = get_registry()
        start = time.process_time()
        task = reg.load_class(reg.get("toy-normal"))(dimension=2)
        task.prepare(generator=make_generator(0))
        reg.load_class(reg.get("toy-iid"))(num_samples=2).sample(task, generator=make_generator(1))
        return time.process_time() - start

    many = 50 if quick else 200
    out.append(
        Bench(
            "`api.run` of a 1-stage pipeline / its build, prepare and sample calls (CPU s)",
            lambda: statistics.median(fixed.one_run(_outputs()) for _ in range(5)),
            lambda: statistics.median(direct_calls() for _ in range(5)),
            "fixed cost (method - baseline) <= 5 ms",
            None,
            repeats=(5, 2),
            setup=lambda: [fixed.one_run(_outputs()) for _ in range(3)] and None,
            absolute=lambda m, b: m - b <= 5e-3,
        )
    )

    def in_process(n: int) -> float:
        from quadriga.api import run

        start = time.process_time()
        result = run(rc.pipeline(n), out=_outputs())
        assert result.status == "finished"
        return time.process_time() - start

    out.append(
        Bench(
            f"`api.run` of {many + 1} / 1 stages, in process (CPU s)",
            lambda n=many + 1: in_process(n),  # bound now: `many` is reused below (memory row)
            lambda: in_process(1),
            f"per stage ((method - baseline) / {many}) <= 0.5 ms",
            None,
            repeats=(5, 2),
            setup=lambda n=many + 1: (in_process(n), in_process(1)) and None,
            absolute=lambda m, b, k=many: (m - b) / k <= 0.5e-3,
        )
    )

    def from_cli(n: int) -> float:
        import tomli_w

        folder = _outputs()
        folder.mkdir(parents=True)
        toml = folder / "p.toml"
        toml.write_text(tomli_w.dumps(rc.pipeline(n)))
        return _child_cpu([py, "-m", "quadriga", "run", str(toml), "--out", str(folder / "run")])

    cli_many = 100 if quick else 500  # the CLI's start-up (about 2 s) varies by more than 100 stages cost
    out.append(
        Bench(
            f"`quadriga run` of {cli_many + 1} / 1 stages, from the CLI (child CPU s)",
            lambda n=cli_many + 1: from_cli(n),
            lambda: from_cli(1),
            f"per stage ((method - baseline) / {cli_many}) <= 1 ms",
            None,
            repeats=(5, 2),
            absolute=lambda m, b, k=cli_many: (m - b) / k <= 1e-3,
        )
    )

    # --- sweep: 2 workers against the same runs one after the other (wall seconds)
    runs, seconds = (8, 0.25) if quick else (40, 1.0)
    state: dict[str, Any] = {}

    def sweep_setup() -> None:
        state["tmp"] = _toy_site()
        from quadriga.api import run
        from quadriga.sweep import run_sweep

        run("toy-pipeline", overrides=[f"stage.draw.sleep={seconds}"], out=state["tmp"] / "warm")
        # both arms warm: the sequential arm's imports are done by the run above, the sweep arm's
        # (its fork server, which imports torch and the core once per process) by a small sweep;
        # otherwise only the first repeat of the sweep arm pays that start-up
        run_sweep(
            "toy-pipeline",
            seeds=range(2),
            fixed=["stage.draw.sleep=0"],
            workers=2,
            out=state["tmp"] / "warm-sweep",
        )

    def sequential() -> float:
        from quadriga.api import run

        tag = time.perf_counter_ns()
        start = time.perf_counter()
        for s in range(runs):
            run(
                "toy-pipeline",
                overrides=[f"stage.draw.sleep={seconds}"],
                seed=s,
                out=state["tmp"] / f"seq{tag}" / str(s),
            )
        return time.perf_counter() - start

    def swept() -> float:
        from quadriga.sweep import run_sweep

        start = time.perf_counter()
        result = run_sweep(
            "toy-pipeline",
            seeds=range(runs),
            fixed=[f"stage.draw.sleep={seconds}"],
            workers=2,
            out=state["tmp"] / f"sweep{time.perf_counter_ns()}",
        )
        assert all(r["status"] == "finished" for r in result.runs)
        return time.perf_counter() - start

    out.append(
        Bench(
            f"sweep {runs} x {seconds:g} s on 2 workers / sequential (wall s)",
            swept,
            sequential,
            "<= 0.55, every repeat <= 1.0",
            lambda r, rs: r <= 0.55 and max(rs) <= 1.0,
            repeats=(2, 2),
            setup=sweep_setup,
        )
    )

    # --- peak memory of a run with many evaluator stages that make figures
    many, few = (30, 3) if quick else (100, 10)
    child = (
        "import resource, sys, tempfile\n"
        "from quadriga.api import run\n"
        "n = int(sys.argv[1])\n"
        "p = {'pipeline': {'name': 'bench-memory', 'seed': 0},\n"
        "     'task': {'normal': {'use': 'toy-normal', 'dimension': 2}},\n"
        "     'stage': {'draw': {'use': 'toy-iid', 'inputs': {'target': 'normal'}, 'num_samples': 200},\n"
        "               'check': {'use': 'toy-mean', 'kind': 'evaluator', 'plot': True, 'repeat': n,\n"
        "                         'inputs': {'subject': ['draw'], 'reference': 'normal'}}}}\n"
        "r = run(p, out=tempfile.mkdtemp())\n"
        "assert r.status == 'finished', r.status\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )

    def peak(n: int) -> float:
        res = subprocess.run([py, "-c", child, str(n)], capture_output=True, text=True, check=True)
        return int(res.stdout.split()[-1]) / 1024  # MiB

    out.append(
        Bench(
            f"peak RSS of a run with {many} / {few} evaluator stages with figures",
            lambda n=many: peak(n),
            lambda n=few: peak(n),
            "<= 1.10 (flat in stages)",
            lambda r, rs: r <= 1.10,
            repeats=(2, 1),
            setup=lambda: _toy_site() and None,
        )
    )
    return out


def measure(bench: Bench, quick: bool) -> dict[str, Any]:
    """Run one benchmark's repeats (alternating the arms' order); return its row."""
    if bench.setup is not None:
        bench.setup()
    n = bench.repeats[1] if quick else bench.repeats[0]
    ratios, a_all, b_all = [], [], []
    for rep in range(n):
        if rep % 2 == 0:
            a, b = bench.method(), bench.baseline()
        else:
            b, a = bench.baseline(), bench.method()
        a_all.append(a)
        b_all.append(b)
        ratios.append(b / a if bench.inverse else a / b)
    ratio = statistics.median(ratios)
    from quadriga.stats import interval

    num, den = (b_all, a_all) if bench.inverse else (a_all, b_all)
    ci = interval(num, "ratio", den, paired=True, method="log-t")
    return {
        "name": bench.name,
        "ratio": ratio,
        "low": min(ratios),
        "high": max(ratios),
        "n": n,
        "target": bench.target_text,
        "met": (
            bench.absolute(statistics.median(a_all), statistics.median(b_all))
            if bench.absolute is not None
            else None
            if bench.target is None
            else bench.target(ratio, ratios)
        ),
        "mean_ratio": ci.estimate,
        "ci": (ci.low, ci.high),
        "method": statistics.median(a_all),
        "baseline": statistics.median(b_all),
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| benchmark | ratio (median) | range over repeats | ratio of means [95 % CI] | n "
        "| method / baseline (medians) | target | met? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        met = "—" if r["met"] is None else "yes" if r["met"] else "NO"
        lo, hi = r.get("ci", (math.nan, math.nan))
        lines.append(
            f"| {r['name']} | {r['ratio']:.3f} | [{r['low']:.3f}, {r['high']:.3f}] | "
            f"{r.get('mean_ratio', math.nan):.3f} [{lo:.3f}, {hi:.3f}] | {r['n']} | "
            f"{r['method']:.4g} / {r['baseline']:.4g} | {r['target']} | {met} |"
        )
    return "\n".join(lines)


def _verdict(met: bool | None) -> str:
    return "reported (no target)" if met is None else "met" if met else "NOT met"


def _notes(old: str) -> str:
    """The sections after the table in an earlier RESULTS.md (from its first ``## `` heading on)."""
    at = old.find("\n## ")
    return "" if at < 0 else old[at:]


def main() -> int:
    """Measure, print the table, write RESULTS.md; returns the number of targets not met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small budgets (a fast check, numbers only)")
    parser.add_argument("--only", help="run only benchmarks whose name contains this")
    parser.add_argument("--no-write", action="store_true", help="do not write benchmarks/RESULTS.md")
    parser.add_argument("--scripts", action="store_true", help="also run every bench_*.py script as it is")
    args = parser.parse_args()
    os.environ.setdefault("RL_WARNINGS", "False")
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows = []
    notes: list[str] = []
    selected = [b for b in benches(args.quick, notes) if not args.only or args.only.lower() in b.name.lower()]
    for note in notes:
        _progress(f"note: {note}")
    for i, bench in enumerate(selected, 1):
        _progress(f"[{i}/{len(selected)}] {bench.name} ... (load {os.getloadavg()[0]:.1f})")
        t0 = time.perf_counter()
        row = measure(bench, args.quick)
        rows.append(row)
        _progress(
            f"    {row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}] n={row['n']} "
            f"target {row['target']} -> {_verdict(row['met'])} "
            f"({time.perf_counter() - t0:.0f} s, {time.perf_counter() - started:.0f} s in all)"
        )
    text = table(rows)
    if notes:
        text += "\n\n" + "\n".join(f"- {note}" for note in notes)
    print(text)
    if not args.no_write:
        load = os.getloadavg()
        notes = _notes(RESULTS.read_text(encoding="utf-8")) if RESULTS.is_file() else ""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        RESULTS.write_text(
            "# Benchmark results\n\n"
            f"`python benchmarks/run_all.py{' --quick' if args.quick else ''}`, "
            f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {cores} cores, load average "
            f"{load_before[0]:.1f} / {load_before[1]:.1f} / {load_before[2]:.1f} at the start and "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end (1 / 5 / 15 min; shared machine), "
            f"{time.perf_counter() - started:.0f} s in all.\n\n"
            "Each ratio is the median over n repeats of (method / baseline) measured in the same run, "
            "arms alternating order each repeat (A B, B A, ...); throughput ratios (steps per second) "
            "are baseline time / method time. CPU seconds for in-process and subprocess arms, wall "
            "seconds for the sweep, peak RSS (MiB) for memory. The ratio of means comes with its 95 % "
            "interval (`quadriga.stats.interval`, paired by repeat, t on the log scale); a target is "
            "judged on the median. Rows marked — are reported without a target.\n\n" + text + "\n" + notes,
            encoding="utf-8",
        )
        _progress(f"written to {RESULTS.relative_to(ROOT)}")
    if args.scripts:
        scripts = sorted(ROOT.glob("benchmarks/bench_*.py")) + sorted(
            ROOT.glob("plugins/*/benchmarks/bench_*.py")
        )
        for script in scripts:
            print(f"\n=== {script.relative_to(ROOT)}", flush=True)
            subprocess.run([sys.executable, str(script)], cwd=ROOT)
    return sum(r["met"] is False for r in rows)


if __name__ == "__main__":
    sys.exit(main())
