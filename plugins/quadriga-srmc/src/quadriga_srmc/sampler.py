"""Score-Repellent Monte Carlo: any base MCMC kernel run on a history-dependent surrogate.

At iteration n every chain holds a history theta_{n-1} (``Tensor[d]``, the running average of
its scores, theta_0 = 0). The base kernel makes one transition that leaves the surrogate
pi_theta(x) proportional to pi(x) exp(-alpha_n theta_{n-1}^T s(x)) invariant, then

    theta_n = theta_{n-1} + gamma_n (s(X_n) - theta_{n-1}),   gamma_n = theta_step * n^(-rho).

Because E_pi[s] = 0 and theta_n -> 0, the plain average of f(X_n) is the estimator: there is
no reweighting. Memory is O(d) per chain: theta, the current point and its cached base values,
plus whatever ``store`` keeps (all draws, or only running means).

Any kernel runs through one general loop on a :class:`~quadriga_srmc.surrogate.GradientTilt` or
:class:`~quadriga_srmc.surrogate.FlipTilt`. SR-MALA with the shifted drift (quadriga-std's MALA,
alpha > 0) runs through a fused loop of its own, ``SRMC._run_sr_mala``: the same chain to rounding,
with two target calls and no surrogate object per transition.

Source: Hu et al. 2026, "Score-Repellent Monte Carlo: Toward Efficient Non-Markovian Sampler
with Constant Memory in General State Spaces", arXiv 2604.22948, Algorithm 1 and Sec. 3.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

import attrs
import torch

import quadriga
from quadriga import param
from quadriga.artifacts import Samples
from quadriga.components import as_component
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler
from quadriga.validators import non_negative, non_negative_int, one_of, positive, positive_int
from quadriga_srmc.schedules import ALPHA_SCHEDULES, alpha_at, theta_gain
from quadriga_srmc.surrogate import FlipTilt, GradientTilt

__all__ = ["SRMC", "SRRun"]


def _default_kernel() -> Sampler:
    from quadriga_std.samplers.mcmc import MALA

    return MALA(step_size=0.1)


def _is_plain_mala(kernel: Any) -> bool:
    """True for quadriga-std's MALA itself (not a subclass, whose transition may differ)."""
    try:
        from quadriga_std.samplers.mcmc import MALA
    except ImportError:  # pragma: no cover - quadriga-std is a dependency
        return False
    return type(kernel) is MALA


def _rho_ok(instance: Any, attribute: Any, value: float) -> None:
    if not 0.5 < value <= 1.0:
        raise ConfigError(
            f"rho = {value} is outside (1/2, 1]; theta_n converges only for 1/2 < rho <= 1 "
            "(the official code uses 0.6).",
            key="rho",
        )


@attrs.define(kw_only=True)
class SRRun:
    """What one SRMC run leaves besides the draws (for tests and diagnostics).

    Attributes:
        theta: ``Tensor[c, d]`` final histories theta_N.
        x: ``Tensor[c, d]`` final points X_N.
        kept: ``Tensor[c, m, d]`` stored draws (``store="draws"``) or ``Tensor[c, 1, d]`` running means.
        counters: evaluation counts (rows): ``score_evals``, ``log_prob_evals``, ``hvp_evals``, ...
        accepted: accepted transitions after burn-in, summed over chains (or flipped sites for Gibbs).
        proposals: transitions after burn-in times chains (or site updates for Gibbs).
    """

    theta: torch.Tensor
    x: torch.Tensor
    kept: torch.Tensor
    counters: Counter
    accepted: int
    proposals: int


@attrs.define(kw_only=True)
class SRMC(Sampler):
    """Score-Repellent Monte Carlo around a base kernel (``mala``, ``hmc``, ``rwm``, ``ula``, ``gibbs``).

    ``sample(target, generator=...)`` returns ``Samples`` with ``x: Tensor[c * m, d]`` (chain-major),
    ``chains: Tensor[c, m, d]`` (m = num_steps // thin) and ``info`` with ``acceptance_rate``,
    ``score_evals``, ``log_prob_evals``, ``hvp_evals`` (base-target rows), ``rejected_nonfinite``,
    ``theta_norm`` (mean final |theta|), ``alpha_final``, ``seconds``. With ``store = "running-mean"``
    only the post-burn-in mean of each chain is kept: ``chains: Tensor[c, 1, d]`` and ``x: Tensor[c, d]``
    are those means (memory flat in num_steps; ``info["draws_per_chain"]`` says how many they average).

    The starting points, their dtype and the chain layout come from the base kernel's own
    ``initial_state`` (its ``init``, ``init_scale``, ``dtype``) with this sampler's ``num_chains``;
    the base kernel's ``num_chains``/``num_samples``/``burn_in``/``thin`` are ignored. With
    ``alpha = 0`` the run is the base kernel itself, draw for draw.

    Raises:
        ConfigError: a base kernel without ``init_state``/``transition``, a target without
            ``log_prob``/``dim``, a continuous kernel on a spin target or vice versa.

    Source: Hu et al. 2026, arXiv 2604.22948, Algorithm 1 (SRMC), Sec. 3 (surrogate, drift),
    Prop. 3.6 (discrete score); alpha schedules and shifted drift from the official code.
    """

    base_kernel: Sampler = param(
        factory=_default_kernel,
        converter=as_component(Sampler),
        doc='base MCMC kernel run on the surrogate, e.g. { use = "mala", step_size = 0.1 }',
    )
    alpha: float = param(
        1.0,
        doc="repellence strength alpha >= 0 (dimensionless); 0 gives the base kernel",
        validator=non_negative,
    )
    alpha_schedule: str = param(
        "fixed",
        doc="'fixed', 'warmup' (alpha min(1, n/alpha_warmup)) or 'adaptive' (n / (alpha_scale + n/alpha))",
        validator=one_of(ALPHA_SCHEDULES),
    )
    alpha_warmup: int = param(
        1000, doc="W: iterations of the linear warm-up of alpha", validator=positive_int
    )
    alpha_scale: float = param(
        100.0, doc="C: iterations until the adaptive alpha reaches alpha/2 (about)", validator=positive
    )
    rho: float = param(
        0.6,
        doc="decay exponent of the theta gain gamma_n = theta_step n^-rho, in (1/2, 1]",
        validator=_rho_ok,
    )
    theta_step: float = param(1.0, doc="scale c of the theta gain (dimensionless)", validator=positive)
    drift: str = param(
        "auto",
        doc="surrogate drift for gradient kernels: 'exact' (s - alpha H theta by "
        "autograd), 'shifted' (s(x - alpha theta)) or 'auto' (exact for ULA, else shifted)",
        validator=one_of(("auto", "exact", "shifted")),
    )
    score_kind: str = param(
        "auto",
        doc="'gradient' (s = grad log pi), 'discrete' (s_i = pi(x flip i)/pi(x) - 1) "
        "or 'auto' (discrete when the target has flip_log_ratios)",
        validator=one_of(("auto", "gradient", "discrete")),
    )
    num_chains: int = param(4, doc="number of chains, each with its own theta", validator=positive_int)
    num_steps: int = param(1000, doc="transitions per chain after burn-in", validator=positive_int)
    burn_in: int = param(
        500,
        doc="transitions per chain discarded first (theta is updated during them)",
        validator=non_negative_int,
    )
    thin: int = param(1, doc="keep every thin-th post-burn-in draw (store = 'draws')", validator=positive_int)
    store: str = param(
        "draws",
        doc="'draws' (keep the chains) or 'running-mean' (keep only per-chain means: "
        "memory flat in num_steps)",
        validator=one_of(("draws", "running-mean")),
    )

    # ------------------------------------------------------------------ checks
    def _check(self, target: Any) -> str:
        kernel = self.base_kernel
        for name in ("init_state", "transition", "initial_state"):
            if not callable(getattr(kernel, name, None)):
                raise ConfigError(
                    f"base_kernel {type(kernel).__name__} has no '{name}'; use an MCMC kernel of "
                    "quadriga-std ('mala', 'hmc', 'rwm', 'ula', 'gibbs').",
                    key="base_kernel",
                )
        if not hasattr(target, "log_prob") or not hasattr(target, "dim"):
            raise ConfigError("srmc needs a target with dim and log_prob.", key="target")
        kind = self.score_kind
        if kind == "auto":
            kind = "discrete" if hasattr(target, "flip_log_ratios") else "gradient"
        uses_score = getattr(kernel, "uses_score", True)
        is_gibbs = bool(getattr(kernel, "discrete", False))
        if kind == "gradient" and is_gibbs:
            raise ConfigError(
                "the Gibbs kernel needs a spin target and score_kind 'discrete' (or 'auto').",
                key="base_kernel",
            )
        if kind == "discrete" and uses_score:
            raise ConfigError(
                f"{type(kernel).__name__} follows a gradient, which does not exist on a spin target; "
                "use base_kernel = 'gibbs' (or 'rwm').",
                key="base_kernel",
            )
        if kind == "gradient" and not hasattr(target, "score"):
            raise ConfigError("score_kind 'gradient' needs a target with score(x).", key="target")
        return kind

    def _drift(self) -> str:
        if self.drift != "auto":
            return self.drift
        return "shifted" if getattr(self.base_kernel, "metropolis_adjusted", True) else "exact"

    # ------------------------------------------------------------------ run
    def run(self, target: Any, *, generator: torch.Generator, x0: torch.Tensor | None = None) -> SRRun:
        """Run the chains and return the final state (see :class:`SRRun`).

        With quadriga-std's MALA as base kernel, the shifted drift and alpha > 0, the transitions
        run in the fused loop :meth:`_run_sr_mala` (same chains to rounding); otherwise in the
        general loop below.

        Args:
            target: a quadriga target (``dim``, ``log_prob``, and ``score`` or ``flip_log_ratios``).
            generator: ``torch.Generator``, the only source of randomness.
            x0: optional starting points ``Tensor[num_chains, d]``; default: the base kernel's
                ``initial_state``.

        Raises:
            ConfigError: see the class docstring.
        """
        kind = self._check(target)
        kernel = attrs.evolve(self.base_kernel, num_chains=self.num_chains)
        if x0 is None:
            x = kernel.initial_state(target, generator).x
        else:
            x = torch.as_tensor(x0).clone()
        c, d = x.shape
        counters: Counter = Counter()
        theta = torch.zeros(c, d, dtype=x.dtype)
        tilt = (
            FlipTilt(target, theta, counters=counters)
            if kind == "discrete"
            else GradientTilt(target, theta, drift=self._drift(), counters=counters)
        )
        # a kernel that moves to its proposal or stays (new.x = where(accepted, y, x); MALA, ULA)
        # declares it: the proposal's cached values are then reused without comparing the points
        selects = kind == "gradient" and bool(getattr(kernel, "selects_proposal", False))
        if kind == "gradient":
            tilt.prefetch = selects
        tracks_theta = self.alpha != 0.0
        lp, s = tilt.base(x, need_score=tracks_theta)
        if (
            tracks_theta
            and kind == "gradient"
            and self._drift() == "shifted"
            and _is_plain_mala(kernel)
            and bool(torch.isfinite(s).all())
        ):
            return self._run_sr_mala(target, kernel.step_size, x, lp, s, counters, generator)
        total = self.burn_in + self.num_steps
        keep_draws = self.store == "draws"
        m = self.num_steps // self.thin if keep_draws else 1
        kept = torch.empty(c, m, d, dtype=x.dtype)
        running = torch.zeros(c, d, dtype=torch.float64)
        accepted_sum, proposals, k = 0, 0, 0
        progress = quadriga.current_progress()
        progress.start(total, f"SR-{type(kernel).__name__}")
        every = max(1, total // 100)
        new, prev_alpha = None, None
        for n in range(1, total + 1):
            alpha_n = alpha_at(
                n,
                alpha=self.alpha,
                schedule=self.alpha_schedule,
                warmup=self.alpha_warmup,
                scale=self.alpha_scale,
            )
            tilt.set(theta, alpha_n)
            if new is not None and alpha_n == 0.0 and prev_alpha == 0.0:
                state = new  # pi_theta = pi: the kernel's own state is still exact
            else:
                tilt.remember(x, lp, s)
                state = kernel.init_state(tilt, x)
            prev_alpha = alpha_n
            tilt.last_proposal = None
            new, accepted, step_counts = kernel.transition(state, tilt, generator)
            counters["rejected_nonfinite"] += int(step_counts.get("rejected_nonfinite", 0))
            x, lp, s, accepted = self._resolve(tilt, x, lp, s, new.x, accepted, tracks_theta, selects)
            if tracks_theta:
                gain = theta_gain(n, theta_step=self.theta_step, rho=self.rho)
                theta = theta + gain * (s - theta)
            if n > self.burn_in:
                if "site_updates" in step_counts:
                    accepted_sum += int(step_counts["flips"])
                    proposals += int(step_counts["site_updates"])
                else:
                    accepted_sum += int(accepted.sum())
                    proposals += c
                j = n - self.burn_in
                if not keep_draws:
                    running += x
                elif j % self.thin == 0:
                    kept[:, k] = x
                    k += 1
            if n % every == 0:
                progress.advance(every)
        if not keep_draws:
            kept[:, 0] = (running / self.num_steps).to(x.dtype)
        return SRRun(
            theta=theta, x=x, kept=kept, counters=counters, accepted=accepted_sum, proposals=proposals
        )

    def _run_sr_mala(
        self,
        target: Any,
        h: float,
        x: torch.Tensor,
        lp: torch.Tensor,
        s: torch.Tensor,
        counters: Counter,
        generator: torch.Generator,
    ) -> SRRun:
        """SR-MALA with the shifted drift as one fused loop: the chain of the general loop.

        Per transition n, with theta = theta_{n-1}, a = alpha_n and the cached base values
        (log pi(x), s(x)) of the current points:

        1. drift g_x = s(x - a theta): one call of ``target.score`` on c rows;
        2. proposal y = x + h g_x + sqrt(2h) xi, xi ~ N(0, I) (the normal draw of quadriga-std's MALA);
        3. log pi(y), s(y) and the drift g_y = s(y - a theta) from one call on the 2c stacked rows
           [y; y - a theta] (``log_prob_and_score`` when the target has it, else ``log_prob`` on y
           and ``score`` on the stack);
        4. log acceptance ratio of MALA on pi_theta (Hu et al. 2026, SR-MH acceptance):
           [log pi(y) - log pi(x)] - a theta^T [s(y) - s(x)] + |xi|^2 / 2 - |x - y - h g_y|^2 / (4h),
           where |y - x - h g_x|^2 / (4h) = |xi|^2 / 2 is the forward term; accept when
           log u < ratio (u ~ U(0, 1), the uniform draw of ``mh_accept``), never when it is not finite;
        5. the accepted chains take y with its log pi(y) and s(y): no evaluation at X_n;
        6. theta_n = theta_{n-1} + gamma_n (s(X_n) - theta_{n-1}) (``torch.lerp``).

        Three score rows and one log-density row per chain per transition (MALA: one and one), in
        two target calls; the counters are those of the general loop. The generator is consumed as
        by the general loop (one normal tensor, one uniform tensor per transition), so the chains are
        the same up to rounding: within 1e-12 on the fixed seeds of tests/test_srmc_loop_equivalence.py,
        with the same accept decisions; a chain that amplifies its last bits (far from a mixture's
        modes, say) drifts further apart while still making the same decisions.
        A finite log acceptance ratio implies a finite s(y) (alpha theta^T s(y) enters it), and the
        initial scores are finite (checked by the caller), so the scores stay finite and the general
        loop's non-finite-score undo never applies here.

        Args:
            target: the base target (``log_prob``, ``score``, optionally ``log_prob_and_score``).
            h: MALA step size (units of x squared).
            x, lp, s: starting points ``Tensor[c, d]``, log pi ``Tensor[c]`` and s ``Tensor[c, d]`` there.
            counters: the run's counters (``score_evals``, ``log_prob_evals``, ``rejected_nonfinite``).
            generator: ``torch.Generator``.

        Source: Hu et al. 2026, arXiv 2604.22948, Algorithm 1 with the MALA kernel on the surrogate
        (Sec. 3) and the official code's shifted drift; MALA as in quadriga-std (Roberts & Tweedie 1996).
        """
        from quadriga_std.samplers.mcmc import ChainState, fused_evaluator, target_evaluators

        c, d = x.shape
        dtype = x.dtype
        if fused_evaluator(target) is not None:
            # the target's bound evaluators where it offers them (bit for bit its methods)
            both, score = target_evaluators(target, x)
            score = score or target.score
        else:  # no fused call, or one that a subclass overriding log_prob or score inherited
            both, score = None, target.score
        log_prob, dot, log = target.log_prob, torch.linalg.vecdot, torch.log
        randn, rand = torch.randn, torch.rand
        sq = math.sqrt(2 * h)
        inv4h = 1.0 / (4 * h)
        theta = torch.zeros(c, d, dtype=dtype)
        total = self.burn_in + self.num_steps
        keep_draws = self.store == "draws"
        m = self.num_steps // self.thin if keep_draws else 1
        kept = torch.empty(c, m if keep_draws else 0, d, dtype=dtype)
        running = torch.zeros(c, d, dtype=torch.float64)
        fixed = self.alpha_schedule == "fixed"
        kw = dict(
            alpha=self.alpha, schedule=self.alpha_schedule, warmup=self.alpha_warmup, scale=self.alpha_scale
        )
        burn_in = self.burn_in
        # gamma_n = theta_step * n^(-rho), as theta_gain computes it, without a call per step
        c_gain, neg_rho = float(self.theta_step), -float(self.rho)
        alpha_fixed = float(self.alpha)
        n_done = [0]

        def advance(x: torch.Tensor, lp: torch.Tensor, s: torch.Tensor, generator: torch.Generator) -> Any:
            n = n_done[0] = n_done[0] + 1
            a = alpha_fixed if fixed else alpha_at(n, **kw)
            gx = score(torch.add(x, theta, alpha=-a))
            xi = randn(x.shape, generator=generator, dtype=dtype)
            step = torch.mul(gx, h).add_(xi, alpha=sq)  # y - x
            y = x + step
            stacked = torch.cat([y, torch.add(y, theta, alpha=-a)])
            if both is not None:
                lp_all, s_all = both(stacked)
                lp_y = lp_all[:c]
            else:
                lp_y, s_all = log_prob(y), score(stacked)
            s_y, gy = s_all.split(c)
            back = torch.add(step, gy, alpha=h)  # -(x - y - h g_y)
            log_ratio = (lp_y - lp).sub_(dot(theta, s_y - s), alpha=a)
            log_ratio.add_(dot(xi, xi), alpha=0.5).sub_(dot(back, back), alpha=inv4h)
            u = rand(log_ratio.shape, generator=generator, dtype=dtype)
            # log u < ratio < inf: never accepted where the ratio is not finite (NaN fails both)
            accepted = (log(u) < log_ratio) & (log_ratio < math.inf)
            col = accepted.unsqueeze(1)
            x = torch.where(col, y, x)
            lp = torch.where(accepted, lp_y, lp)
            s = torch.where(col, s_y, s)
            theta.lerp_(s, c_gain * float(n) ** neg_rho)
            if not keep_draws and n > burn_in:
                running.add_(x)
            return x, lp, s, accepted, log_ratio

        # quadriga-std's eager runner: the counts and the kept draws gathered a block of steps at a
        # time (no host synchronisation per step); with store = "running-mean" nothing is kept
        # (burn_in = total) and advance sums the draws itself
        runner = attrs.evolve(self.base_kernel, burn_in=burn_in if keep_draws else total, thin=self.thin)
        progress = quadriga.current_progress()
        progress.start(total, "SR-MALA")
        state, _, finite_burn, k = runner.run_eager(
            advance, ChainState(x, lp, s), generator, 0, burn_in, kept, 0, progress
        )
        state, accepted_n, finite_kept, k = runner.run_eager(
            advance, state, generator, burn_in, total, kept, k, progress
        )
        if not keep_draws:
            kept = (running / self.num_steps).to(dtype)[:, None]
        counters["score_evals"] += 3 * c * total
        counters["log_prob_evals"] += c * total
        counters["rejected_nonfinite"] += c * total - int(finite_burn + finite_kept)
        return SRRun(
            theta=theta,
            x=state.x,
            kept=kept,
            counters=counters,
            accepted=int(accepted_n),
            proposals=c * self.num_steps,
        )

    @staticmethod
    def _resolve(
        tilt: Any,
        x: torch.Tensor,
        lp: torch.Tensor,
        s: Any,
        x_new: torch.Tensor,
        accepted: torch.Tensor,
        need_score: bool,
        selects: bool = False,
    ) -> tuple[Any, Any, Any, torch.Tensor]:
        """Base values at the new points, reusing the proposal's; non-finite moves are undone.

        ``selects``: the kernel's new points are ``where(accepted, proposal, x)`` by construction
        (MALA, ULA), so the check that they are is skipped.
        """
        prop = tilt.last_proposal
        lp_new = s_new = None
        if prop is not None and prop[0].shape == x.shape:
            y, lp_y, s_y = prop
            if selects or torch.equal(torch.where(accepted[:, None], y, x), x_new):
                lp_new = torch.where(accepted, lp_y, lp)
                if need_score and s_y is not None and s is not None:
                    s_new = torch.where(accepted[:, None], s_y, s)
        if lp_new is None or (need_score and s_new is None):
            lp_new, s_new = tilt.base(x_new, need_score=need_score)
        if need_score and not bool(torch.isfinite(s_new).all()):
            # a finite log density with an overflowing score: undo the move so theta stays finite
            ok = torch.isfinite(s_new).all(-1)
            tilt.counters["rejected_nonfinite"] += int((~ok).sum())
            x_new = torch.where(ok[:, None], x_new, x)
            lp_new = torch.where(ok, lp_new, lp)
            s_new = torch.where(ok[:, None], s_new, s)
            accepted = accepted & ok
        return x_new, lp_new, s_new, accepted

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Run SRMC; see the class docstring for the returned ``Samples``."""
        t0 = time.perf_counter()
        out = self.run(target, generator=generator)
        kept, cnt = out.kept, out.counters
        info = {
            "acceptance_rate": out.accepted / out.proposals if out.proposals else float("nan"),
            "score_evals": int(cnt["score_evals"]),
            "log_prob_evals": int(cnt["log_prob_evals"]),
            "hvp_evals": int(cnt["hvp_evals"]),
            "rejected_nonfinite": int(cnt["rejected_nonfinite"]),
            "nonfinite_log_prob": int(cnt["nonfinite_log_prob"]),
            "theta_norm": float(out.theta.norm(dim=-1).mean()),
            "alpha_final": alpha_at(
                self.burn_in + self.num_steps,
                alpha=self.alpha,
                schedule=self.alpha_schedule,
                warmup=self.alpha_warmup,
                scale=self.alpha_scale,
            ),
            "num_chains": self.num_chains,
            "transitions": self.burn_in + self.num_steps,
            "draws_per_chain": self.num_steps,
            "store": self.store,
            "base_kernel": type(self.base_kernel).__name__.lower(),
            "seconds": time.perf_counter() - t0,
        }
        return Samples(x=kept.reshape(-1, kept.shape[-1]), chains=kept, info=info)
