"""Peer-library arms for ``benchmarks/run_all.py``: quadriga against the libraries users would pick instead.

* MALA and HMC per iteration: quadriga-std's kernels against BlackJAX 1.7 (Cabezas et al. 2024,
  "BlackJAX: Composable Bayesian inference in JAX", arXiv 2402.10797), written the way its
  documentation does: ``blackjax.mala`` / ``blackjax.hmc`` steps inside one ``jax.lax.scan``,
  ``jax.vmap`` over chains when there are several, the whole loop ``jax.jit``-compiled once per
  configuration before timing (compilation not counted; "warm"), draws kept like quadriga keeps
  them. Same target: N(0, Sigma) with Sigma = 0.7 I + 0.3 11^T (quadriga's
  ``Gaussian(dim=d, equicorrelation=0.3)``), written for BlackJAX as one precision matmul, the
  way a JAX user writes a Gaussian log density; same step size, float64 on both (``jax_enable_x64``).
* DQN environment steps per CPU second: quadriga-std's ``dqn`` against stable-baselines3's ``DQN``
  (Raffin et al. 2021, "Stable-Baselines3: Reliable Reinforcement Learning Implementations",
  JMLR 22(268)) on CartPole-v1 with the network, optimiser and update schedule of
  ``plugins/quadriga-std/benchmarks/bench_dqn_speed.py`` (MLP 128-128 ReLU, Adam 2.5e-3,
  batch 64, replay 50 000, 5 updates after every 10 steps from 500 stored steps on, Huber loss,
  gradient-norm clip 10, hard target copy every 100 updates = 200 steps, epsilon 1 -> 0.05
  over half the budget).

Both peers run on one thread: XLA's CPU client with ``--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`` (set by :func:`configure_threads` before jax is first
imported), torch with ``torch.set_num_threads(1)``; CPU seconds are ``time.process_time`` of
this process (all its threads). The peers are optional: the ``bench`` extra of the root
``pyproject.toml`` (pinned in ``constraints.txt``) installs them; :func:`peer_benches` leaves out
the arms of a peer that is not installed and says so in a note (``make venv`` and CI do not
install it).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

#: what installs the peers (the root ``pyproject.toml``'s optional extra, pinned in constraints.txt)
INSTALL_HINT = "pip install -c constraints.txt -e '.[bench]'"
#: each peer and the modules its arms import
PEERS: dict[str, tuple[str, ...]] = {
    "BlackJAX": ("blackjax", "jax", "jaxlib"),
    "stable-baselines3": ("stable_baselines3",),
}
#: XLA flags that keep the CPU client on one thread for compute
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
#: the Gaussian target of every MCMC arm: covariance (1 - RHO) I + RHO 11^T, mean 0
RHO = 0.3
MALA_STEP = 0.01
HMC_STEP, HMC_LEAPFROG = 0.05, 10


def missing(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (``importlib.util.find_spec`` is None)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def skip_note(peer: str, absent: Sequence[str]) -> str:
    """The note printed and written under the table when ``peer``'s arms are left out."""
    return (
        f"{peer} arms skipped: {', '.join(absent)} not installed (optional `bench` extra: `{INSTALL_HINT}`)."
    )


def configure_threads() -> str:
    """Put XLA's CPU client on one compute thread (before jax is imported); say what was done.

    Returns:
        A short note for the results: the flags set, or why they could not be (jax already imported).
    """
    if "jax" in sys.modules:
        return "jax was imported before the XLA flags could be set: its thread count is its default"
    flags = os.environ.get("XLA_FLAGS", "")
    if XLA_ONE_THREAD not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()
    return f"XLA_FLAGS={os.environ['XLA_FLAGS']}"


# ------------------------------------------------------------------------------------------ MCMC
def _jax() -> Any:
    configure_threads()
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def precision(d: int) -> Any:
    """The precision matrix ``numpy.ndarray[d, d]`` (float64) of the target ((1 - RHO) I + RHO 11^T)^-1.

    Closed form (Sherman-Morrison): (I - RHO / (1 - RHO + d RHO) 11^T) / (1 - RHO).
    """
    import numpy as np

    return (np.eye(d) - RHO / (1 - RHO + d * RHO) * np.ones((d, d))) / (1 - RHO)


_RUNNERS: dict[tuple[Any, ...], Callable[[int], Any]] = {}


def blackjax_runner(kernel: str, d: int, chains: int, steps: int) -> Callable[[int], Any]:
    """A compiled BlackJAX loop ``seed -> draws[steps, (chains,) d]`` for ``kernel`` in {"mala", "hmc"}.

    Built and compiled on the first call for each ``(kernel, d, chains, steps)`` (one warm-up run
    of it compiles it), then cached. Starting points N(0, I), like :func:`blackjax_mala`'s quadriga
    counterpart (``init = "normal"``, ``init_scale = 1``).
    """
    key = (kernel, d, chains, steps)
    if key in _RUNNERS:
        return _RUNNERS[key]
    jax = _jax()
    import blackjax
    import jax.numpy as jnp

    prec = jnp.asarray(precision(d))

    def logdensity(x: Any) -> Any:
        return -0.5 * x @ (prec @ x)

    if kernel == "mala":
        algo = blackjax.mala(logdensity, MALA_STEP)
    elif kernel == "hmc":
        algo = blackjax.hmc(logdensity, HMC_STEP, jnp.ones(d), HMC_LEAPFROG)
    else:
        raise ValueError(f"kernel must be 'mala' or 'hmc', got {kernel!r}")
    init, step = (algo.init, algo.step) if chains == 1 else (jax.vmap(algo.init), jax.vmap(algo.step))

    def run(seed: Any) -> Any:
        k0, k1 = jax.random.split(jax.random.key(seed))
        x0 = jax.random.normal(k0, (d,) if chains == 1 else (chains, d))
        state = init(x0)

        def body(state: Any, k: Any) -> Any:
            keys = k if chains == 1 else jax.random.split(k, chains)
            state, _ = step(keys, state)
            return state, state.position

        return jax.lax.scan(body, state, jax.random.split(k1, steps))[1]

    compiled = jax.jit(run)
    jax.block_until_ready(compiled(0))  # compile + one warm run
    _RUNNERS[key] = compiled
    return compiled


def blackjax_arm(kernel: str, d: int, chains: int, steps: int, seed: int) -> float:
    """CPU seconds per iteration of the compiled BlackJAX loop (compilation excluded)."""
    jax = _jax()
    runner = blackjax_runner(kernel, d, chains, steps)
    t0 = time.process_time()
    jax.block_until_ready(runner(seed))
    return (time.process_time() - t0) / steps


def quadriga_arm(kernel: str, d: int, chains: int, steps: int, seed: int, compile: bool = False) -> float:
    """CPU seconds per iteration of quadriga-std's ``MALA``/``HMC`` on the same Gaussian (float64).

    ``compile``: the kernel's ``compile = true`` path (``compile_steps`` transitions per call of
    one ``torch.compile``-d function); the first call in a process compiles (see :func:`compile_seconds`).
    """
    import torch
    from quadriga_std.samplers.mcmc import HMC, MALA
    from quadriga_std.targets.gaussian import Gaussian

    target = Gaussian(dim=d, equicorrelation=RHO)
    common: dict[str, Any] = {
        "num_chains": chains,
        "num_samples": steps,
        "burn_in": 0,
        "dtype": "float64",
        "compile": compile,
    }
    if kernel == "mala":
        sampler: Any = MALA(step_size=MALA_STEP, **common)
    else:
        sampler = HMC(step_size=HMC_STEP, num_leapfrog_steps=HMC_LEAPFROG, **common)
    t0 = time.process_time()
    sampler.sample(target, generator=torch.Generator().manual_seed(seed))
    return (time.process_time() - t0) / steps


def compile_seconds(kernel: str, d: int, chains: int) -> float:
    """Wall seconds of the first ``compile = true`` run in this process (tracing and C++ compilation
    of the multi-step function, plus one block of transitions): reported, never counted."""
    start = time.perf_counter()
    quadriga_arm(kernel, d, chains, 16, 0, compile=True)
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------------- DQN
def sb3_dqn(frames: int, seed: int) -> int:
    """Train stable-baselines3's ``DQN`` with the settings of ``bench_dqn_speed.py``; return env steps.

    stable-baselines3 counts the target period in environment steps: 100 updates at 5 updates per
    10 steps are 200 steps. It trains once ``num_timesteps > learning_starts``, so
    ``learning_starts = 499`` starts at the same step (500) as the other arms.
    """
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN

    rl = _dqn_settings()
    model = DQN(
        "MlpPolicy",
        gym.make("CartPole-v1"),
        learning_rate=rl.LR,
        buffer_size=rl.BUFFER,
        learning_starts=rl.LEARNING_STARTS - 1,
        batch_size=rl.BATCH_SIZE,
        tau=1.0,
        gamma=rl.GAMMA,
        train_freq=(rl.FRAMES_PER_BATCH, "step"),
        gradient_steps=rl.UPDATES_PER_BATCH,
        target_update_interval=rl.TARGET_PERIOD * rl.FRAMES_PER_BATCH // rl.UPDATES_PER_BATCH,
        exploration_fraction=0.5,
        exploration_initial_eps=1.0,
        exploration_final_eps=0.05,
        max_grad_norm=rl.CLIP,
        policy_kwargs={"net_arch": [128, 128], "activation_fn": torch.nn.ReLU},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=frames)
    return int(model.num_timesteps)


_DQN: list[Any] = []


def _dqn_settings() -> Any:
    """quadriga-std's DQN speed benchmark module (its constants and arms)."""
    if not _DQN:
        from pathlib import Path

        path = Path(__file__).resolve().parent.parent / "plugins/quadriga-std/benchmarks/bench_dqn_speed.py"
        spec = importlib.util.spec_from_file_location("bench_dqn_speed", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _DQN.append(module)
    return _DQN[0]


# ----------------------------------------------------------------------------------------- rows
MCMC_CONFIGS = ((10, 1), (100, 1), (1000, 1), (10, 64), (100, 64), (1000, 64))


def _mcmc_steps(kernel: str, d: int, chains: int, quick: bool) -> tuple[int, int]:
    """Iterations per repeat (quadriga arm, BlackJAX arm): about the same CPU time per arm."""
    work = d * d * chains if d >= 100 else d * chains  # matmul-bound above d = 100, dispatch-bound below
    base = 400 if quick else 1500
    if work >= 1000 * 1000 * 64:
        base = 10 if quick else 40
    elif work >= 1000 * 1000 or work >= 100 * 100 * 64:
        base = 40 if quick else 150
    if kernel == "hmc":
        base = max(base // 5, 4)
    peer = base if d * d * chains >= 1000 * 1000 else base * 10  # the compiled loop is 5-30x faster there
    return base, peer


def _warm(kernel: str, d: int, chains: int, peer_steps: int) -> None:
    """Compile the BlackJAX loop and run quadriga's kernel once (imports, first allocations)."""
    blackjax_runner(kernel, d, chains, peer_steps)
    quadriga_arm(kernel, d, chains, 2, 0)


def _mcmc_target(kernel: str, d: int, chains: int) -> tuple[str, Callable[[float, list[float]], bool] | None]:
    if chains == 64 and d >= 100:
        return "<= 1.3", lambda r, rs: r <= 1.3
    if chains == 1 and d == 10:
        return "reported (eager; <= 4 is the `compile = true` row's)", None
    return "reported", None


def _compiled_row(
    kernel: str, label: str, make: Callable[..., Any], quick: bool, seed: Any, notes: list[str]
) -> Any:
    """The ``compile = true`` row at 1 chain, d = 10 (its compile time goes to ``notes``)."""
    n_q, n_b = _mcmc_steps(kernel, 10, 1, quick)

    def setup() -> None:
        seconds = compile_seconds(kernel, 10, 1)
        blackjax_runner(kernel, 10, 1, n_b)
        notes.append(
            f"{label} with `compile = true`, d = 10, 1 chain: first call (compilation) {seconds:.1f} s "
            "wall, not counted in the row."
        )

    return make(
        name=f"{label} `compile = true` per iteration / BlackJAX (jit), d = 10, 1 chain(s)",
        method=lambda: quadriga_arm(kernel, 10, 1, n_q, next(seed), compile=True),
        baseline=lambda: blackjax_arm(kernel, 10, 1, n_b, next(seed)),
        target_text="<= 4",
        target=lambda r, rs: r <= 4,
        repeats=(5, 2),
        setup=setup,
    )


def peer_benches(
    quick: bool,
    make: Callable[..., Any],
    kernels: Sequence[str] = ("mala", "hmc"),
    notes: list[str] | None = None,
) -> tuple[list[Any], list[str]]:
    """The peer rows for ``run_all.py`` and the notes on arms left out.

    Args:
        quick: small budgets (``run_all.py --quick``).
        make: the row class of ``run_all.py`` (``Bench``), called with its fields as keywords.
        kernels: the MCMC kernels compared with BlackJAX (a quick run keeps MALA only: compiling
            each configuration's BlackJAX loop costs 3-12 s on a loaded 2-core machine).
        notes: the list the notes are appended to (also those a row's setup adds while the
            benchmarks run: the compile time of the ``compile = true`` rows); a new one if None.

    Returns:
        ``(rows, notes)``: rows whose libraries are installed; one note per peer that is not (its
        arms left out, with the command that installs it) and one on the thread settings.
    """
    rows: list[Any] = []
    notes = [] if notes is None else notes
    absent = missing(PEERS["BlackJAX"])
    if absent:
        notes.append(skip_note("BlackJAX", absent))
    else:
        notes.append(f"BlackJAX arms: float64, one compute thread ({configure_threads()}).")
        seed = iter(range(10_000))
        for kernel in kernels if not quick else [k for k in kernels if k == "mala"]:
            label = "MALA" if kernel == "mala" else f"HMC ({HMC_LEAPFROG} leapfrog steps)"
            rows.append(_compiled_row(kernel, label, make, quick, seed, notes))
            for d, chains in MCMC_CONFIGS:
                n_q, n_b = _mcmc_steps(kernel, d, chains, quick)
                text, target = _mcmc_target(kernel, d, chains)
                rows.append(
                    make(
                        name=f"{label} per iteration / BlackJAX (jit), d = {d}, {chains} chain(s)",
                        method=lambda k=kernel, d=d, c=chains, n=n_q: quadriga_arm(k, d, c, n, next(seed)),
                        baseline=lambda k=kernel, d=d, c=chains, n=n_b: blackjax_arm(k, d, c, n, next(seed)),
                        target_text=text,
                        target=target,
                        repeats=(5, 2),
                        setup=lambda k=kernel, d=d, c=chains, n=n_b: _warm(k, d, c, n),
                    )
                )
    absent = missing(PEERS["stable-baselines3"])
    if absent:
        notes.append(skip_note("stable-baselines3", absent))
    else:
        rl = _dqn_settings()
        frames = 1500 if quick else 4000
        seed = iter(range(10_000))
        rows.append(
            make(
                name="DQN env steps/s / stable-baselines3 DQN (CartPole-v1, same network and schedule)",
                method=lambda: rl.cpu_seconds_per_step(rl.quadriga_dqn, frames, next(seed)),
                baseline=lambda: rl.cpu_seconds_per_step(sb3_dqn, frames, next(seed)),
                target_text=">= 1.3",
                target=lambda r, rs: r >= 1.3,
                inverse=True,
                repeats=(5, 2),
                setup=lambda: (
                    [rl.cpu_seconds_per_step(arm, 600, 0) for arm in (rl.quadriga_dqn, sb3_dqn)] and None
                ),
            )
        )
        # what a hand-written loop reaches against stable-baselines3: the ceiling of the row above
        # for a library that adds nothing to that loop
        rows.append(
            make(
                name="CleanRL-style PyTorch loop env steps/s / stable-baselines3 DQN (CartPole-v1)",
                method=lambda: rl.cpu_seconds_per_step(rl.cleanrl_loop, frames, next(seed)),
                baseline=lambda: rl.cpu_seconds_per_step(sb3_dqn, frames, next(seed)),
                target_text="reported (the DQN / stable-baselines3 row's ceiling)",
                target=None,
                inverse=True,
                repeats=(5, 2),
            )
        )
    return rows, notes
