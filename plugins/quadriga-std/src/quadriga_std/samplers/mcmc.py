"""Batched Metropolis-Hastings and Langevin kernels: RWM, ULA, MALA, HMC.

All four share :class:`MCMCKernel`, which runs ``num_chains`` chains at once as a loop
of ``transition`` calls. ``transition`` is the kernel contract other samplers build on
(e.g. a wrapper that runs the kernel on a surrogate target changing between steps): it
works on any object with ``log_prob(x: Tensor[c, d]) -> Tensor[c]`` and
``score(x: Tensor[c, d]) -> Tensor[c, d]``. A proposal whose log acceptance ratio is
not finite (NaN or inf from an overflowing target) is rejected and counted in
``rejected_nonfinite``; it never stops the run.

RWM, ULA, MALA and HMC write their transition as ``draw`` (the random numbers of one step) and
``step`` (the deterministic rest), which lets ``compile = true`` run ``compile_steps`` transitions
per call of one ``torch.compile``-d function (:mod:`quadriga_std.samplers.compiled`), the numbers
still drawn in the eager order, so the chains agree with the eager ones to rounding.

Eagerly, ``sample`` runs MALA and HMC (when not customised) through their own loop
(:meth:`MCMCKernel.eager_advance`): the same operations on the same draws, so the same chains bit
for bit, without the per-step :class:`ChainState`, counters and copies of ``transition`` (a
chain of a few dimensions pays Python's dispatch per tensor operation, so every one counts).
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import attrs
import torch

import quadriga
from quadriga import param
from quadriga.artifacts import Samples
from quadriga.errors import ConfigError, DivergenceError
from quadriga.interfaces import Sampler
from quadriga.validators import non_negative_int, one_of, positive, positive_int

__all__ = [
    "HMC",
    "MALA",
    "RWM",
    "ULA",
    "ChainState",
    "MCMCKernel",
    "fused_evaluator",
    "initial_points",
    "log_prob_and_score",
    "mh_accept",
    "mh_accept_with",
    "target_evaluators",
]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


@attrs.define
class ChainState:
    """State of c chains.

    Attributes:
        x: ``Tensor[c, d]`` current points.
        log_prob: ``Tensor[c]`` target log density at ``x`` (nats).
        score: ``Tensor[c, d]`` score at ``x``, or ``None`` for kernels that do not use it.
    """

    x: torch.Tensor
    log_prob: torch.Tensor
    score: torch.Tensor | None = None


def mh_accept(log_ratio: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Metropolis-Hastings accept step for c chains.

    Args:
        log_ratio: ``Tensor[c]`` log acceptance ratio (nats); NaN or +-inf means reject.
        generator: ``torch.Generator``.

    Returns:
        ``(accepted, nonfinite)``: two ``Tensor[c]`` bool; a non-finite ratio is never accepted.

    Source: Metropolis et al. 1953; Hastings 1970 (acceptance min(1, ratio)).
    """
    u = torch.rand(log_ratio.shape, generator=generator, dtype=log_ratio.dtype, device=log_ratio.device)
    return mh_accept_with(log_ratio, u)


def mh_accept_with(log_ratio: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`mh_accept` with its uniform draws ``u: Tensor[c]`` (in [0, 1)) given.

    Returns:
        ``(accepted, nonfinite)``: two ``Tensor[c]`` bool; accepted where ``log u < log_ratio``
        and the ratio is finite.
    """
    finite = torch.isfinite(log_ratio)
    accepted = (torch.log(u) < log_ratio) & finite
    return accepted, ~finite


def fused_evaluator(target: Any) -> Any:
    """The target's ``log_prob_and_score`` where it speaks for its ``log_prob`` and ``score``, else None.

    A class that defines ``log_prob_and_score`` declares it equal to its own ``log_prob`` and
    ``score``; a subclass that overrides either of those without defining ``log_prob_and_score``
    again (a Gaussian cut to a box through ``log_prob``) inherits a fused call that skips its
    override, so it is not used (see :func:`_declared_with`).
    """
    fused = getattr(target, "log_prob_and_score", None)
    if fused is None or not _declared_with(target, "log_prob_and_score", ("log_prob", "score")):
        return None
    return fused


def log_prob_and_score(target: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log_prob Tensor[c], score Tensor[c, d])`` of ``target`` at ``x: Tensor[c, d]``.

    One fused call where the target offers one that speaks for its methods
    (:func:`fused_evaluator`; std's Gaussian: one product with its precision for both), else its
    ``log_prob`` and ``score``.
    """
    fused = fused_evaluator(target)
    if fused is not None:
        return fused(x)
    return target.log_prob(x), target.score(x)


def _select(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    m = mask.reshape(-1, *([1] * (new.ndim - 1)))
    return torch.where(m, new, old)


def initial_points(
    target: Any, num_chains: int, init: str, init_scale: float, dtype: torch.dtype, generator: torch.Generator
) -> torch.Tensor:
    """Starting points ``Tensor[num_chains, d]``.

    Args:
        target: has ``dim`` (and ``sample`` when ``init == "target"``).
        init: ``"normal"`` (init_scale * N(0, I)) or ``"target"`` (exact draws).

    Raises:
        ConfigError: ``init = "target"`` on a target without an exact sampler.
    """
    if init == "target":
        try:
            x = target.sample(num_chains, generator=generator)
        except NotImplementedError:
            raise ConfigError(
                f"init = 'target' needs exact samples but {type(target).__name__} has none; "
                "use init = 'normal'.",
                key="init",
            ) from None
        return torch.as_tensor(x).to(dtype)
    return init_scale * torch.randn(
        num_chains, int(target.dim), generator=generator, dtype=dtype, device=generator.device
    )


def _defined_in(cls: type, name: str) -> type | None:
    """The class of ``cls.__mro__`` whose own namespace defines ``name`` (None: none does)."""
    return next((k for k in cls.__mro__ if name in vars(k)), None)


def _draw_in_place(
    state: ChainState, generator: torch.Generator, steps: int, kinds: tuple[str, ...]
) -> tuple[torch.Tensor, ...]:
    """``steps`` transitions' draws filled in place into one block per kind, in the eager order.

    ``kinds`` names the tensors one ``draw`` returns, in its order: ``"normal"`` for
    ``torch.randn(x.shape, generator=generator, dtype=x.dtype)`` (``Tensor[c, d]``), ``"uniform"``
    for ``torch.rand(x.shape[:1], ...)`` (``Tensor[c]``). Returns ``Tensor[steps, c, d]`` and
    ``Tensor[steps, c]`` blocks in that order.

    Bit for bit the numbers of ``steps`` such ``draw`` calls: ``torch.randn``/``torch.rand`` are
    ``empty(...).normal_(0, 1)``/``empty(...).uniform_(0, 1)``, and each ``[j]`` of a block is a
    contiguous tensor of the same shape, dtype and device as ``draw``'s, so ATen runs the same
    kernel on the same number of elements, drawing from the generator in the same order (without
    ``torch.randn``'s and ``torch.rand``'s own allocation and argument parsing).
    """
    x = state.x
    blocks = [
        torch.empty((steps, *(x.shape if kind == "normal" else x.shape[:1])), dtype=x.dtype, device=x.device)
        for kind in kinds
    ]
    rows = [block.unbind(0) for block in blocks]
    fills = [
        row[j].normal_ if kind == "normal" else row[j].uniform_
        for j in range(steps)
        for row, kind in zip(rows, kinds, strict=True)
    ]
    for fill in fills:
        fill(generator=generator)
    return tuple(blocks)


@attrs.define(kw_only=True)
class MCMCKernel(Sampler):
    """Base of the batched Markov kernels: initial points, then ``burn_in + num_samples * thin`` transitions.

    ``sample`` returns ``Samples(x=Tensor[num_chains * num_samples, d]`` (chain-major),
    ``chains=Tensor[num_chains, num_samples, d]``, ``info={acceptance_rate, score_evals,
    log_prob_evals, rejected_nonfinite, seconds}``); the acceptance rate is over all transitions.
    Subclasses implement :meth:`transition` (and set ``uses_score``).

    Shapes: ``Samples.x: Tensor[num_chains * num_samples, d]``, ``Samples.chains:
    Tensor[num_chains, num_samples, d]`` (``chains.reshape(-1, d) == x``), in ``dtype``.
    Units: x in the target's units; ``acceptance_rate`` is a fraction of all chain transitions
    (burn-in included); ``score_evals``, ``log_prob_evals``, ``rejected_nonfinite`` are counts
    (per chain and point); ``seconds`` is wall time.

    Raises:
        ConfigError: a target without ``dim`` or ``log_prob``, or ``init = "target"`` on a target
            without exact samples (both before the first transition); out-of-range parameters
            (``num_chains``, ``num_samples``, ``thin`` < 1, ``burn_in`` < 0, ``init_scale`` or
            ``step_size`` <= 0, unknown ``init``/``dtype``) when the sampler is built. Non-finite
            proposals are rejected and counted, never raised.
    """

    uses_score: ClassVar[bool] = True
    #: capabilities other plugins dispatch on (never on class names)
    discrete: ClassVar[bool] = False  # moves on spin configurations only (Gibbs)
    metropolis_adjusted: ClassVar[bool] = True  # False for ULA: no accept/reject step
    #: the acceptance rate a step-size tuner aims at (fraction; None: no known optimum)
    optimal_acceptance: ClassVar[float | None] = None
    #: True when ``transition`` returns ``x = where(accepted, proposal, x)`` and evaluates the target
    #: only at the proposal (ULA, MALA), so a caller may reuse the proposal's cached values; a
    #: subclass that changes ``transition`` sets it again
    selects_proposal: ClassVar[bool] = False

    num_chains: int = param(4, doc="number of independent chains run in parallel", validator=positive_int)
    num_samples: int = param(1000, doc="draws kept per chain", validator=positive_int)
    burn_in: int = param(
        500, doc="transitions discarded at the start of each chain", validator=non_negative_int
    )
    thin: int = param(1, doc="keep every thin-th transition after burn-in", validator=positive_int)
    init: str = param(
        "normal",
        doc="starting points: 'normal' (init_scale * N(0, I)) or 'target' (exact draws)",
        validator=one_of(("normal", "target")),
    )
    init_scale: float = param(
        1.0, doc="standard deviation of 'normal' starting points (units of x)", validator=positive
    )
    dtype: str = param(
        "float64",
        doc="floating dtype of the chains: 'float64' or 'float32'",
        validator=one_of(tuple(_DTYPES)),
    )
    compile: bool = param(
        False,
        doc="run compile_steps transitions per call of one torch.compile-d function (same chains "
        "to rounding; eager, with one warning, where the compiler is unavailable)",
    )
    compile_steps: int = param(
        16, doc="transitions per compiled call (with compile = true)", validator=positive_int
    )

    def __attrs_post_init__(self) -> None:
        if self.compile and not self.compilable():
            raise ConfigError(
                f"compile = true needs a kernel written as draw() and step(); {type(self).__name__} "
                "defines its own transition(). Set compile = false.",
                key="compile",
            )

    @classmethod
    def compilable(cls) -> bool:
        """Whether the kernel is written as :meth:`draw` + :meth:`step` (so ``compile = true`` works)."""
        return cls.transition is MCMCKernel.transition and cls.step is not MCMCKernel.step

    def init_state(self, target: Any, x: torch.Tensor) -> ChainState:
        """Evaluate ``target`` at ``x: Tensor[c, d]`` (log_prob, and score if the kernel uses it)."""
        if self.uses_score:
            return ChainState(x, *log_prob_and_score(target, x))
        return ChainState(x=x, log_prob=target.log_prob(x), score=None)

    def draw(self, state: ChainState, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
        """The random tensors one transition uses, drawn from ``generator`` in the kernel's order.

        They may depend on the shapes and dtype of ``state`` only (the compiled path draws the
        numbers of ``compile_steps`` transitions before running them). A kernel written as
        ``draw`` + :meth:`step` (instead of overriding :meth:`transition`) can run compiled.
        """
        raise NotImplementedError

    def draw_block(
        self, state: ChainState, generator: torch.Generator, steps: int
    ) -> tuple[torch.Tensor, ...]:
        """The random tensors of ``steps`` transitions, each stacked on a new leading axis.

        Equal, bit for bit, to ``steps`` calls of :meth:`draw` stacked (``draws[i][j]`` is the
        ``i``-th tensor of the ``j``-th call), with the generator left where those calls leave it.
        This default is exactly that; a kernel that also defines ``draw`` may override it with
        a faster equivalent (std's kernels fill one preallocated block in place). The compiled
        path calls it only where ``draw_block`` and ``draw`` are defined by the same class.
        """
        per_step = [self.draw(state, generator) for _ in range(steps)]
        return tuple(torch.stack(parts) for parts in zip(*per_step, strict=True))

    def step(
        self, state: ChainState, target: Any, draws: tuple[torch.Tensor, ...]
    ) -> tuple[ChainState, torch.Tensor, dict[str, Any]]:
        """:meth:`transition` with its random numbers given (``draws`` from :meth:`draw`).

        Deterministic and free of host synchronisation, so ``torch.compile`` can trace it.
        Returns what :meth:`transition` returns.
        """
        raise NotImplementedError

    def transition(
        self, state: ChainState, target: Any, generator: torch.Generator
    ) -> tuple[ChainState, torch.Tensor, dict[str, int]]:
        """One Markov step for all c chains: ``step(state, target, draw(state, generator))``.

        Args:
            state: the current :class:`ChainState` (evaluated on ``target``).
            target: any object with ``log_prob(Tensor[c, d]) -> Tensor[c]`` and
                ``score(Tensor[c, d]) -> Tensor[c, d]``.
            generator: ``torch.Generator``.

        Returns:
            ``(new_state, accepted Tensor[c] bool, counters)`` with counters
            ``{"score_evals", "log_prob_evals", "rejected_nonfinite"}`` (counts for this step: ints,
            or 0-d tensors left on the chains' device, which :meth:`sample` sums there and reads
            once at the end, so a step never waits for the device).
        """
        return self.step(state, target, self.draw(state, generator))

    #: how many times starting points where ``log_prob`` is not finite are drawn again
    max_init_redraws: ClassVar[int] = 100

    def initial_state(self, target: Any, generator: torch.Generator) -> ChainState:
        """Draw starting points (see :func:`initial_points`) and evaluate the target there.

        Chains whose starting point has a non-finite ``log_prob`` (outside the target's support:
        such a chain would never move) are drawn again, up to :attr:`max_init_redraws` times (see
        :meth:`start`, which also counts them).

        Raises:
            ConfigError: some chain still starts where ``log_prob`` is not finite.
        """
        return self.start(target, generator)[0]

    def start(self, target: Any, generator: torch.Generator) -> tuple[ChainState, int]:
        """:meth:`initial_state` and the number of starting points drawn again (a kernel with its
        own starting points overrides this).

        Returns:
            ``(state, redraws)``; ``sample`` reports ``redraws`` as ``info['init_redraws']``.

        Raises:
            ConfigError: some chain still starts where ``log_prob`` is not finite.
        """
        x = initial_points(
            target, self.num_chains, self.init, self.init_scale, _DTYPES[self.dtype], generator
        )
        state = self.init_state(target, x)
        redraws = 0
        for _ in range(self.max_init_redraws):
            bad = ~torch.isfinite(state.log_prob)
            if not bool(bad.any()):
                return state, redraws
            fresh = initial_points(
                target, int(bad.sum()), self.init, self.init_scale, _DTYPES[self.dtype], generator
            )
            x = state.x.clone()
            x[bad] = fresh.to(x.device)
            redraws += int(bad.sum())
            state = self.init_state(target, x)
        bad = ~torch.isfinite(state.log_prob)
        if bool(bad.any()):
            raise ConfigError(
                f"{int(bad.sum())} of {self.num_chains} chains start where log_prob is not finite (outside "
                f"the target's support) after {self.max_init_redraws} fresh draws of the '{self.init}' "
                "starting points; such chains never move. Use init = 'target' or an init_scale that "
                "reaches the support.",
                key="init",
            )
        return state, redraws

    def run_compiled(
        self, state: ChainState, target: Any, generator: torch.Generator, steps: int
    ) -> tuple[ChainState, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """``steps`` transitions in one call of the compiled :func:`_run_steps`.

        The random numbers of all ``steps`` transitions are drawn first by :meth:`draw_block`,
        transition by transition in the eager order (so the generator ends where ``steps`` eager
        transitions leave it);
        the rest runs through :func:`quadriga_std.samplers.compiled.compiled` (eager, with one
        warning, where the compiler is unavailable).

        Returns:
            ``(state, xs Tensor[steps, c, d], accepted Tensor[] int64, counters)``: the last
            state, the points after each transition, the number of accepted chain transitions,
            and :meth:`transition`'s counters summed over the steps.
        """
        from quadriga_std.samplers.compiled import compiled

        if _defined_in(type(self), "draw_block") is _defined_in(type(self), "draw"):
            draws = self.draw_block(state, generator, steps)
        else:  # a subclass with its own draw: its draw_block (inherited) would not match it
            draws = MCMCKernel.draw_block(self, state, generator, steps)
        x, lp, score, xs, accepted, counters = compiled(_run_steps)(
            self, target, state.x, state.log_prob, state.score, draws, steps
        )
        return ChainState(x, lp, score), xs, accepted, counters

    #: transitions the eager loop runs between two reductions of its counts, copies of the kept
    #: draws and progress updates (each per step would cost as much as a small tensor operation)
    eager_block: ClassVar[int] = 128
    #: kept draws ``Tensor[c, d]`` of at most this many elements are held and copied a block at a
    #: time; larger ones are copied at once (the copy then costs more than its dispatch)
    eager_hold_elements: ClassVar[int] = 4096

    def eager_advance(self, target: Any, like: torch.Tensor) -> Any:
        """The kernel's own eager transition on ``target``, or None to run :meth:`transition`.

        ``like`` is the chains' current ``x: Tensor[c, d]`` (their shape, dtype and device).

        A callable ``(x, log_prob, score, generator) -> (x, log_prob, score, accepted, log_ratio)``
        (``Tensor[c, d]``, ``Tensor[c]``, ``Tensor[c, d]`` or None, then ``Tensor[c]`` bool, the
        accept decisions, and ``Tensor[c]``, the log acceptance ratios, of which :meth:`sample`
        counts the non-finite ones) doing what
        :meth:`transition` does, bit for bit, without building a :class:`ChainState` and the
        counters on every step; :meth:`sample` counts with :meth:`counts_per_transition`. The
        base class has none; a kernel offers one only where it is not customised (see
        :func:`_own`), so a subclass that overrides ``draw``, ``step`` or ``transition`` runs its
        own code.
        """
        return None

    def counts_per_transition(self, num_chains: int) -> dict[str, int]:
        """``{"score_evals", "log_prob_evals"}`` of one transition of ``num_chains`` chains (counts)."""
        return {"score_evals": num_chains, "log_prob_evals": num_chains}

    def run_eager(
        self,
        advance: Any,
        state: ChainState,
        generator: torch.Generator,
        first: int,
        last: int,
        kept: torch.Tensor,
        k: int,
        progress: Any,
    ) -> tuple[ChainState, torch.Tensor, torch.Tensor, int]:
        """Transitions ``first .. last - 1`` through ``advance``; kept draws go to ``kept[:, k:]``.

        ``advance(x, log_prob, score, generator) -> (x, log_prob, score, accepted, log_ratio)`` is
        one transition (see :meth:`eager_advance`); the kernel's ``burn_in`` and ``thin`` decide
        which draws are kept (step ``j`` is kept when ``j >= burn_in`` and ``(j - burn_in + 1)`` is a
        multiple of ``thin``). :meth:`sample` calls it with the kernel's own transition; a loop built
        around a kernel (quadriga-srmc's SR-MALA) calls it with its own ``advance``.

        Returns ``(state, accepted Tensor[] int64, finite Tensor[] int64, k)``: the last state,
        the accepted chain transitions and those with a finite log acceptance ratio (summed on
        the chains' device, read by the caller once), and the next free slot of ``kept``.
        """
        x, lp, s = state.x, state.log_prob, state.score
        accepted_sum = torch.zeros((), dtype=torch.int64, device=x.device)
        finite_sum = torch.zeros((), dtype=torch.int64, device=x.device)
        burn_in, thin = self.burn_in, self.thin
        # the step's tensors are fresh (nothing writes into them later): hold them in lists and
        # reduce or copy a block at a time, instead of one small reduction and copy per step; kept
        # draws of more than eager_hold_elements entries are copied at once (one pass, cache-warm)
        block = self.eager_block
        hold = x.numel() <= self.eager_hold_elements
        xs: list[torch.Tensor] = []
        accepted_list: list[torch.Tensor] = []
        ratio_list: list[torch.Tensor] = []
        for step in range(first, last):
            x, lp, s, accepted, log_ratio = advance(x, lp, s, generator)
            accepted_list.append(accepted)
            ratio_list.append(log_ratio)
            if step >= burn_in and (step - burn_in + 1) % thin == 0:
                if hold:
                    xs.append(x)
                else:
                    kept[:, k] = x
                    k += 1
            if len(accepted_list) == block or step == last - 1:
                accepted_sum = accepted_sum + torch.stack(accepted_list).sum()
                finite_sum = finite_sum + torch.isfinite(torch.stack(ratio_list)).sum()
                if xs:
                    kept[:, k : k + len(xs)] = torch.stack(xs, 1)
                    k += len(xs)
                progress.advance(len(accepted_list))
                xs, accepted_list, ratio_list = [], [], []
        return ChainState(x, lp, s), accepted_sum, finite_sum, k

    def check_divergence(self, counts: dict[str, int], transitions: int, kept: torch.Tensor) -> None:
        """Raise when the chains cannot be trusted; Metropolis-adjusted kernels always can.

        Args:
            counts: the totals of ``transition``'s counters.
            transitions: chain transitions run (``num_chains`` times steps).
            kept: the kept draws, ``Tensor[c, n, d]``.
        """

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Run the chains; see the class docstring for the output."""
        if not hasattr(target, "log_prob") or not hasattr(target, "dim"):
            raise ConfigError(f"{type(self).__name__} needs a target with dim and log_prob.", key="target")
        t0 = time.perf_counter()
        state, redraws = self.start(target, generator)
        c = self.num_chains
        counts = {"score_evals": c if self.uses_score else 0, "log_prob_evals": c, "rejected_nonfinite": 0}
        total = self.burn_in + self.num_samples * self.thin
        kept = torch.empty(c, self.num_samples, state.x.shape[1], dtype=state.x.dtype, device=state.x.device)
        # totals stay on the chains' device (0-d tensors): no host synchronisation per step
        accepted_total: Any = torch.zeros((), dtype=torch.int64, device=state.x.device)
        running: dict[str, Any] = dict(counts)
        k = 0
        progress = quadriga.current_progress()
        progress.start(total, type(self).__name__)
        done = 0
        if self.compile:
            block = self.compile_steps
            while done + block <= total:
                state, xs, accepted_sum, counters = self.run_compiled(state, target, generator, block)
                accepted_total = accepted_total + accepted_sum
                for key, val in counters.items():
                    running[key] = running.get(key, 0) + val
                # the kept transitions of this block, copied at once: j from the first step at or
                # after burn-in whose count (done + j - burn_in + 1) is a multiple of thin
                first = max(self.burn_in - done, 0)
                first += -(done + first - self.burn_in + 1) % self.thin
                if first < block:
                    picked = xs[first :: self.thin]
                    kept[:, k : k + picked.shape[0]] = picked.transpose(0, 1)
                    k += picked.shape[0]
                done += block
                progress.advance(block)
        advance = self.eager_advance(target, state.x) if done < total else None
        if advance is not None:  # eager, the kernel's own loop: the same chains, less bookkeeping
            state, accepted_sum, finite_sum, k = self.run_eager(
                advance, state, generator, done, total, kept, k, progress
            )
            accepted_total = accepted_total + accepted_sum
            for key, val in self.counts_per_transition(c).items():
                running[key] = running.get(key, 0) + val * (total - done)
            running["rejected_nonfinite"] = running.get("rejected_nonfinite", 0) + (
                (total - done) * c - finite_sum
            )
            done = total
        for step in range(done, total):  # eager: all of it, or the last total % compile_steps
            state, accepted, counters = self.transition(state, target, generator)
            accepted_total = accepted_total + accepted.sum()
            for key, val in counters.items():
                running[key] = running.get(key, 0) + val
            if step >= self.burn_in and (step - self.burn_in + 1) % self.thin == 0:
                kept[:, k] = state.x
                k += 1
            progress.advance(1)
        counts = {key: int(val) for key, val in running.items()}
        accepted_total = int(accepted_total)
        self.check_divergence(counts, total * c, kept)
        info = {
            "acceptance_rate": accepted_total / (total * c) if total else float("nan"),
            **counts,
            "init_redraws": redraws,
            "seconds": time.perf_counter() - t0,
            "num_chains": c,
            "transitions": total,
        }
        return Samples(x=kept.reshape(-1, kept.shape[-1]), chains=kept, info=info)


class _NormalAndUniformDraws:
    """``draw`` and ``draw_block`` of a kernel whose step uses one N(0, I) tensor and one U(0, 1) per chain.

    RWM's proposal noise, MALA's Langevin noise and HMC's momentum are the normal tensor; the
    uniform is the accept step's ``u``. Placed before :class:`MCMCKernel` in the bases, so both
    methods come from this one class (the compiled path then uses the in-place ``draw_block``).
    """

    __slots__ = ()

    def draw(self, state, generator):
        """The N(0, I) noise ``Tensor[c, d]`` then the accept step's ``u: Tensor[c]``, from ``generator``."""
        x = state.x
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
        return noise, torch.rand(x.shape[:1], generator=generator, dtype=x.dtype, device=x.device)

    def draw_block(self, state, generator, steps):
        """``steps`` calls of :meth:`draw`, stacked, filled in place (see :meth:`MCMCKernel.draw_block`)."""
        return _draw_in_place(state, generator, steps, ("normal", "uniform"))


@attrs.define(kw_only=True)
class RWM(_NormalAndUniformDraws, MCMCKernel):
    """Random-walk Metropolis: propose y = x + step_size * N(0, I), accept with min(1, pi(y)/pi(x)).

    The proposal is symmetric, so the Hastings correction cancels; uses ``log_prob`` only
    (``score_evals`` stays 0, one ``log_prob`` evaluation per chain per transition).
    Shapes, units and errors: as :class:`MCMCKernel` (``step_size`` in units of x).

    Raises:
        ConfigError: see :class:`MCMCKernel`.

    Source: Metropolis, Rosenbluth, Rosenbluth, Teller & Teller 1953, "Equation of state
    calculations by fast computing machines", J. Chem. Phys. 21 (symmetric-proposal acceptance rule).
    """

    uses_score: ClassVar[bool] = False
    #: Roberts, Gelman & Gilks 1997, Ann. Appl. Probab. 7(1): 0.234 as the dimension grows
    optimal_acceptance: ClassVar[float | None] = 0.234
    step_size: float = param(0.5, doc="proposal standard deviation (units of x)", validator=positive)

    def step(self, state, target, draws):
        """One RWM step for all chains (see :meth:`MCMCKernel.transition`)."""
        x, (noise, u) = state.x, draws
        y = x + self.step_size * noise
        lp_y = target.log_prob(y)
        accepted, nonfinite = mh_accept_with(lp_y - state.log_prob, u)
        new = ChainState(_select(accepted, y, x), torch.where(accepted, lp_y, state.log_prob), None)
        return (
            new,
            accepted,
            {"score_evals": 0, "log_prob_evals": x.shape[0], "rejected_nonfinite": nonfinite.sum()},
        )


@attrs.define(kw_only=True)
class ULA(MCMCKernel):
    """Unadjusted Langevin: y = x + h s(x) + sqrt(2h) N(0, I), always accepted (biased in h).

    Proposals with a non-finite point, log_prob or score are rejected (counted), so
    ``acceptance_rate`` is 1 unless the target overflows. One ``log_prob`` and one ``score``
    evaluation per chain per transition. Shapes and units: as :class:`MCMCKernel`, with
    ``step_size`` h in units of x squared (the noise has standard deviation sqrt(2h)).

    Raises:
        ConfigError: see :class:`MCMCKernel`.

    Source: Roberts & Tweedie 1996, "Exponential convergence of Langevin distributions and their
    discrete approximations", Bernoulli 2(4): ULA, the Euler-Maruyama discretisation of the Langevin
    diffusion dL = dW + (1/2) s(L) dt; their step is 2h here (proposal N(x + h s(x), 2h I)).
    """

    metropolis_adjusted: ClassVar[bool] = False
    selects_proposal: ClassVar[bool] = True

    step_size: float = param(0.05, doc="Langevin step size h (units of x squared)", validator=positive)

    #: a kept draw beyond this magnitude (units of x) can only come from a blown-up discretisation
    blow_up: ClassVar[float] = 1e100

    def check_divergence(self, counts: dict[str, int], transitions: int, kept: torch.Tensor) -> None:
        """ULA has no accept step: a non-finite proposal, or a draw beyond :attr:`blow_up`, means
        the chains diverged (the step size is beyond the stability limit of the discretisation).

        Raises:
            DivergenceError: naming how many proposals overflowed (or the largest draw) and the fix;
                the samples are not returned.
        """
        bad = counts.get("rejected_nonfinite", 0)
        largest = float(kept.abs().max()) if kept.numel() else 0.0
        if bad or largest > self.blow_up:
            what = (
                f"{bad} of {transitions} proposals ({bad / transitions:.1%}) overflowed to NaN or inf"
                if bad
                else f"the chains reached |x| = {largest:.3g}"
            )
            raise DivergenceError(
                f"ULA diverged: {what}, so the chains blew up and their samples are meaningless. "
                f"Lower step_size (now {self.step_size:g}) and start a new run."
            )

    def draw(self, state, generator):
        """The Langevin noise ``Tensor[c, d]`` (standard normal)."""
        return (torch.randn(state.x.shape, generator=generator, dtype=state.x.dtype, device=state.x.device),)

    def draw_block(self, state, generator, steps):
        """``steps`` calls of :meth:`draw`, stacked, filled in place (see :meth:`MCMCKernel.draw_block`)."""
        return _draw_in_place(state, generator, steps, ("normal",))

    def step(self, state, target, draws):
        """One ULA step for all chains (see :meth:`MCMCKernel.transition`)."""
        x, h = state.x, self.step_size
        y = x + h * state.score + math.sqrt(2 * h) * draws[0]
        lp_y, s_y = log_prob_and_score(target, y)
        ok = torch.isfinite(lp_y) & torch.isfinite(s_y).all(-1) & torch.isfinite(y).all(-1)
        new = ChainState(
            _select(ok, y, x), torch.where(ok, lp_y, state.log_prob), _select(ok, s_y, state.score)
        )
        c = x.shape[0]
        return new, ok, {"score_evals": c, "log_prob_evals": c, "rejected_nonfinite": (~ok).sum()}


@attrs.define(kw_only=True)
class MALA(_NormalAndUniformDraws, MCMCKernel):
    """Metropolis-adjusted Langevin: the ULA proposal corrected by a Metropolis-Hastings step.

    log ratio = log pi(y) - log pi(x) + log q(x | y) - log q(y | x),
    log q(y | x) = -|y - x - h s(x)|^2 / (4h). One ``log_prob`` and one ``score`` evaluation per
    chain per transition. Shapes and units: as :class:`MCMCKernel`, with ``step_size`` h in units
    of x squared.

    Raises:
        ConfigError: see :class:`MCMCKernel`.

    Source: Roberts & Tweedie 1996, Bernoulli 2(4) (MALA: the ULA proposal with a Metropolis-Hastings
    correction; their step is 2h here); the adjusted Langevin proposal appears earlier in Besag 1994
    (discussion of Grenander & Miller, JRSS B 56).
    """

    #: Roberts & Rosenthal 1998, JRSS B 60(1): 0.574 as the dimension grows
    optimal_acceptance: ClassVar[float | None] = 0.574
    selects_proposal: ClassVar[bool] = True

    step_size: float = param(0.1, doc="Langevin step size h (units of x squared)", validator=positive)

    def step(self, state, target, draws):
        """One MALA step for all chains (see :meth:`MCMCKernel.transition`)."""
        h = self.step_size
        x, lp, s, accepted, log_ratio = _mala_core(
            h, math.sqrt(2 * h), _evaluator(target), state.x, state.log_prob, state.score, *draws
        )
        c = x.shape[0]
        nonfinite = (~torch.isfinite(log_ratio)).sum()
        return (
            ChainState(x, lp, s),
            accepted,
            {"score_evals": c, "log_prob_evals": c, "rejected_nonfinite": nonfinite},
        )

    def eager_advance(self, target: Any, like: torch.Tensor) -> Any:
        """:meth:`draw` then :meth:`step` as one callable (see :meth:`MCMCKernel.eager_advance`)."""
        if not _own(type(self), MALA):
            return None
        h = self.step_size
        return _normal_uniform_advance(_mala_core, h, math.sqrt(2 * h), target_evaluators(target, like)[0])


@attrs.define(kw_only=True)
class HMC(_NormalAndUniformDraws, MCMCKernel):
    """Hamiltonian Monte Carlo with identity mass and leapfrog integration, then a Metropolis step.

    Momentum p ~ N(0, I), ``num_leapfrog_steps`` L leapfrog steps of size epsilon, accept with
    min(1, exp(-H(q*, p*) + H(q, p))), H = -log pi(q) + |p|^2 / 2. Costs L ``score`` and one
    ``log_prob`` evaluation per chain per transition. Shapes and units: as :class:`MCMCKernel`,
    with ``step_size`` epsilon in units of x (unit mass).

    Raises:
        ConfigError: see :class:`MCMCKernel`.

    Source: Neal 2011, "MCMC using Hamiltonian dynamics", Handbook of Markov Chain Monte Carlo,
    ch. 5: sec. 5.2.3 (the leapfrog method) and sec. 5.3.2 (the HMC transition and its acceptance
    rule, kinetic energy |p|^2 / 2).
    """

    #: Beskos, Pillai, Roberts, Sanz-Serna & Stuart 2013, Bernoulli 19(5): 0.651 as the dimension
    #: grows; 0.65 as in Hoffman & Gelman 2014 (sec. 3.2)
    optimal_acceptance: ClassVar[float | None] = 0.65
    step_size: float = param(0.2, doc="leapfrog step size epsilon (units of x)", validator=positive)
    num_leapfrog_steps: int = param(10, doc="leapfrog steps L per transition", validator=positive_int)
    compile_steps: int = param(
        8,
        doc="transitions per compiled call (with compile = true); each is num_leapfrog_steps score "
        "calls, and compilation time grows with the steps unrolled",
        validator=positive_int,
    )

    def step(self, state, target, draws):
        """One HMC step for all chains (see :meth:`MCMCKernel.transition`)."""
        x, lp, s, accepted, log_ratio = _hmc_core(
            self.step_size,
            self.num_leapfrog_steps,
            _hmc_functions(target, None),
            state.x,
            state.log_prob,
            state.score,
            *draws,
        )
        c = x.shape[0]
        return (
            ChainState(x, lp, s),
            accepted,
            {
                "score_evals": c * self.num_leapfrog_steps,
                "log_prob_evals": c,
                "rejected_nonfinite": (~torch.isfinite(log_ratio)).sum(),
            },
        )

    def counts_per_transition(self, num_chains: int) -> dict[str, int]:
        """``num_leapfrog_steps`` score and one ``log_prob`` evaluation per chain (counts)."""
        return {"score_evals": num_chains * self.num_leapfrog_steps, "log_prob_evals": num_chains}

    def eager_advance(self, target: Any, like: torch.Tensor) -> Any:
        """:meth:`draw` then :meth:`step` as one callable (see :meth:`MCMCKernel.eager_advance`)."""
        if not _own(type(self), HMC):
            return None
        functions = _hmc_functions(target, like)
        return _normal_uniform_advance(_hmc_core, self.step_size, self.num_leapfrog_steps, functions)


def _normal_uniform_advance(core: Any, *consts: Any) -> Any:
    """``advance(x, lp, s, generator)``: :meth:`_NormalAndUniformDraws.draw`'s two draws, then ``core``.

    Draws ``noise: Tensor[c, d]`` (N(0, I)) then ``u: Tensor[c]`` (U(0, 1)) from ``generator`` in
    that order, and returns ``core(*consts, x, lp, s, noise, u)`` (MALA's and HMC's step cores).
    """
    randn, rand = torch.randn, torch.rand

    def advance(x, lp, s, generator):
        noise = randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
        u = rand(x.shape[:1], generator=generator, dtype=x.dtype, device=x.device)
        return core(*consts, x, lp, s, noise, u)

    return advance


def _own(cls: Any, owner: Any) -> bool:
    """Whether ``cls`` runs ``owner``'s ``draw`` and ``step`` through the base ``transition``."""
    return cls.draw is owner.draw and cls.step is owner.step and cls.transition is MCMCKernel.transition


def _evaluator(target: Any) -> Any:
    """``x -> (log_prob Tensor[c], score Tensor[c, d])``: :func:`log_prob_and_score`, looked up once."""
    fused = fused_evaluator(target)
    if fused is not None:
        return fused
    return lambda x: (target.log_prob(x), target.score(x))


def _declared_with(target: Any, attr: str, methods: tuple[str, ...]) -> bool:
    """Whether ``target``'s ``attr`` was declared by a class at least as derived as its ``methods``.

    An optional shortcut a target class offers (``evaluators``, ``fused_is_exact``) speaks for the
    methods of that class; a subclass that overrides one of ``methods`` without declaring ``attr``
    again inherits a shortcut that no longer matches them (it would skip the override). True also
    where ``attr`` or a method lives on the instance rather than its class (nothing to compare).
    """
    cls = type(target)
    owner = _defined_in(cls, attr)
    if owner is None:
        return True
    return all(
        definer is None or issubclass(owner, definer) for definer in (_defined_in(cls, m) for m in methods)
    )


def target_evaluators(target: Any, like: torch.Tensor | None) -> tuple[Any, Any]:
    """``(log_prob_and_score, score)`` callables of ``target`` for tensors like ``like``.

    The target's own ``evaluators(like)`` where it has one declared with its ``log_prob_and_score``
    and ``score`` (std's Gaussian: its factors looked up and ``x`` checked once, the same
    operations per call; not a subclass that overrides those methods only), else
    :func:`_evaluator` and ``score`` (None for a target without one: MALA needs only the first).
    """
    bound = getattr(target, "evaluators", None) if like is not None else None
    if bound is not None and _declared_with(
        target, "evaluators", ("log_prob_and_score", "score", "log_prob")
    ):
        return bound(like)
    return _evaluator(target), getattr(target, "score", None)


def _hmc_functions(target: Any, like: torch.Tensor | None) -> tuple[Any, Any, Any]:
    """``(score, fused, log_prob)`` for :func:`_hmc_core`: ``fused`` (``log_prob_and_score``) only
    where the target declares it equal to its two calls (``fused_is_exact``, declared by a class at
    least as derived as the ones defining ``log_prob``, ``score``, ``log_prob_and_score`` and
    ``evaluators``), else None.

    Raises:
        AttributeError: a target without ``score``.
    """
    both, score = target_evaluators(target, like)
    if score is None:
        score = target.score
    exact = getattr(target, "fused_is_exact", False) and _declared_with(
        target, "fused_is_exact", ("log_prob", "score", "log_prob_and_score", "evaluators")
    )
    return score, both if exact else None, target.log_prob


def _mala_core(
    h: float,
    root: float,
    lps: Any,
    x: torch.Tensor,
    lp: torch.Tensor,
    s: torch.Tensor,
    noise: torch.Tensor,
    u: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """One MALA transition from its draws: ``(x, log_prob, score, accepted, log_ratio)``.

    ``h`` the step size, ``root = sqrt(2 h)``, ``lps`` a ``log_prob_and_score`` callable. A chain
    is accepted where ``log u < log_ratio < inf`` (as :func:`mh_accept_with`: a NaN or -inf ratio
    fails the first test, +inf the second).
    """
    hs = h * s
    y = x + hs + root * noise
    lp_y, s_y = lps(y)
    fwd = (y - x - hs).pow(2).sum(-1)
    bwd = (x - y - h * s_y).pow(2).sum(-1)
    log_ratio = lp_y - lp + (fwd - bwd) / (4 * h)
    accepted = (torch.log(u) < log_ratio) & (log_ratio < math.inf)
    m = accepted.unsqueeze(-1)
    return torch.where(m, y, x), torch.where(accepted, lp_y, lp), torch.where(m, s_y, s), accepted, log_ratio


def _hmc_core(
    eps: float,
    steps: int,
    functions: tuple[Any, Any, Any],
    x: torch.Tensor,
    lp: torch.Tensor,
    s: torch.Tensor,
    p0: torch.Tensor,
    u: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """One HMC transition from its draws: ``(x, log_prob, score, accepted, log_ratio)``.

    ``steps`` leapfrog steps of size ``eps``; ``functions`` from :func:`_hmc_functions`. The last
    position's score and log density come from one fused call where the target says that call
    equals its two (``fused_is_exact``, std's Gaussian), else from ``score`` then ``log_prob`` as
    always. Accepted as in :func:`_mala_core`.
    """
    score, fused, log_prob = functions
    q = x
    p = p0 + 0.5 * eps * s
    last = steps - 1
    for i in range(steps):
        q = q + eps * p
        if i < last:
            s_q = score(q)
            p = p + eps * s_q
        elif fused is not None:
            lp_q, s_q = fused(q)
            p = p + 0.5 * eps * s_q
        else:
            s_q = score(q)
            p = p + 0.5 * eps * s_q
            lp_q = log_prob(q)
    log_ratio = lp_q - lp - 0.5 * (p * p).sum(-1) + 0.5 * (p0 * p0).sum(-1)
    accepted = (torch.log(u) < log_ratio) & (log_ratio < math.inf)
    m = accepted.unsqueeze(-1)
    return torch.where(m, q, x), torch.where(accepted, lp_q, lp), torch.where(m, s_q, s), accepted, log_ratio


def _run_steps(
    kernel: MCMCKernel,
    target: Any,
    x: torch.Tensor,
    log_prob: torch.Tensor,
    score: torch.Tensor | None,
    draws: tuple[torch.Tensor, ...],
    steps: int,
) -> tuple[Any, ...]:
    """``steps`` calls of ``kernel.step``, the draws of step ``j`` being ``d[j] for d in draws``.

    Pure (what :func:`quadriga_std.samplers.compiled.compiled` needs): returns
    ``(x, log_prob, score, xs Tensor[steps, c, d], accepted Tensor[] int64, counters)``.
    """
    state = ChainState(x, log_prob, score)
    xs = []
    accepted_sum = torch.zeros((), dtype=torch.int64, device=x.device)
    totals: dict[str, Any] = {}
    for j in range(steps):
        state, accepted, counters = kernel.step(state, target, tuple(d[j] for d in draws))
        xs.append(state.x)
        accepted_sum = accepted_sum + accepted.sum()
        for key, val in counters.items():
            totals[key] = totals.get(key, 0) + val
    return state.x, state.log_prob, state.score, torch.stack(xs), accepted_sum, totals
