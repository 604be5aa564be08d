"""quadriga-snf components: learners ``snf`` and ``nf``, sampler ``snf-sample``, ``snf-diagnostics``.

- ``snf`` trains a stochastic normalizing flow (:func:`quadriga_snf.flows.build_flow`, RealNVP couplings
  each followed by ``mcmc_steps`` Metropolis steps) by Adam on the path KL ``E[-log w]``, using only the
  target's unnormalised ``log_prob`` (no data).
- ``nf`` is the same model with ``mcmc_steps = 0``: the pure flow with the same couplings and the same
  parameter count (Metropolis blocks have no parameters).
- ``snf-sample`` draws from a trained flow with its exact path log weights (``Samples.log_weights``).
- ``snf-diagnostics`` reports per subject the Kish ESS fraction of the weights, the path KL, the
  energy distance to exact target draws (unweighted and reweighted), and for the double well the
  error of the reweighted probability of the right well against quadrature.

Source: Wu, Köhler & Noé 2020, "Stochastic Normalizing Flows", NeurIPS (arXiv 2002.06707).
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Learner, Sampler, Target
from quadriga.seeding import child_generator
from quadriga.threads import single_thread
from quadriga.validators import (
    int_at_least,
    non_negative_int,
    positive,
    positive_int,
    positive_int_list,
)
from quadriga_snf.flows import build_flow, kish_ess, path_sample, seeded

__all__ = [
    "NF",
    "SNF",
    "SNFDiagnostics",
    "SNFSample",
    "energy_distance",
    "exact_draws",
    "free_energy_error",
    "right_well_probability",
]

_CHECK_INPUTS: dict[str, Any] = {
    "task": {"target": {"use": "double-well"}},
    "inputs": {"task": "target"},
}


def _check_target(target: Any) -> None:
    if not callable(getattr(target, "log_prob", None)) or not hasattr(target, "dim"):
        raise ConfigError(
            f"{type(target).__name__} has no log_prob/dim; an SNF needs a Target such as 'double-well'.",
            key="task",
        )


@attrs.define(kw_only=True)
class SNF(Learner):
    """Train a stochastic normalizing flow on the path KL (module docstring) with Adam.

    Shapes: ``Fitted.model``: a ``normflows.NormalizingFlow`` on ``Tensor[n, d]``; ``history`` has
    ``step`` and ``loss`` (mean path KL over ``log_every`` steps, nats).
    Units: loss in nats; ``step_size`` in units of x; ``info["seconds"]`` wall time.

    Raises:
        ConfigError: invalid parameters, a task without ``log_prob``/``dim``.
        FloatingPointError: a non-finite loss.

    Source: Wu, Köhler & Noé 2020, eq. 10 (KL by energy) and experiment 1 (RNVP, 3 couplings [64, 64],
    Adam lr 5e-3, batch 128, MC step 0.25).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Target,)}
    check_params: ClassVar[dict[str, Any]] = {"num_steps": 5, "batch_size": 16, "hidden_sizes": [8]}
    check_inputs: ClassVar[dict[str, Any]] = _CHECK_INPUTS

    num_couplings: int = param(4, doc="RealNVP coupling layers K (count)", validator=positive_int)
    hidden_sizes: list[int] = param(
        [64, 64], doc="hidden widths of each scale/shift MLP", validator=positive_int_list
    )
    mcmc_steps: int = param(
        5, doc="Metropolis steps after each coupling (count; 0 gives a pure flow)", validator=non_negative_int
    )
    step_size: float = param(
        0.25,
        doc="Metropolis proposal standard deviation (units of x)",
        validator=positive,
    )
    num_steps: int = param(500, doc="Adam steps (count)", validator=positive_int)
    batch_size: int = param(128, doc="paths per step (count)", validator=int_at_least(2))
    learning_rate: float = param(5e-3, doc="Adam learning rate", validator=positive)
    log_every: int = param(50, doc="steps between history entries (count)", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Build the flow, train it on the path KL, and return it frozen."""
        _check_target(task)
        with single_thread():  # 2-D batches of 128: intra-op threads cost more than they save
            return self._fit(task, generator, progress)

    def _fit(self, task: Any, generator: torch.Generator, progress: Any) -> Fitted:
        t0 = time.perf_counter()
        model = build_flow(
            task,
            num_couplings=int(self.num_couplings),
            hidden=list(self.hidden_sizes),
            mcmc_steps=int(self.mcmc_steps),
            step_size=float(self.step_size),
            generator=generator,
        )
        opt = torch.optim.Adam(
            [p for p in model.parameters() if p.requires_grad], lr=float(self.learning_rate)
        )
        history: dict[str, list] = {"step": [], "loss": []}
        running, n = 0.0, int(self.num_steps)
        if progress is not None:
            progress.start(n)
        with seeded(generator):
            for step in range(1, n + 1):
                loss = model.reverse_kld(int(self.batch_size))
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"non-finite path KL at step {step}; lower learning_rate")
                opt.zero_grad()
                loss.backward()
                opt.step()
                running += float(loss.detach())
                if step % int(self.log_every) == 0 or step == n:
                    k = step - (history["step"][-1] if history["step"] else 0)
                    history["step"].append(step)
                    history["loss"].append(running / k)
                    running = 0.0
                if progress is not None:
                    progress.advance(1)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        params = sum(p.numel() for p in model.parameters())
        return Fitted(
            model=model,
            history=history,
            info={
                "final_loss": history["loss"][-1],
                "num_parameters": int(params),
                "mcmc_steps_total": int(self.mcmc_steps) * int(self.num_couplings),
                "seconds": time.perf_counter() - t0,
            },
        )


@attrs.define(kw_only=True)
class NF(SNF):
    """Pure-flow baseline: :class:`SNF` with ``mcmc_steps = 0``: the same couplings and parameters.

    Source: Dinh et al. 2017 (RealNVP) trained by reverse KL (Rezende & Mohamed 2015); the RNVP row of
    Wu, Köhler & Noé 2020, experiment 1.
    """

    mcmc_steps: int = param(0, doc="Metropolis steps per block (0: pure flow)", validator=non_negative_int)


@attrs.define(kw_only=True)
class SNFSample(Sampler):
    """Draw from a trained (stochastic) flow with its exact path importance weights.

    Shapes: ``Samples.x: Tensor[n, d]`` (float64), ``Samples.log_weights: Tensor[n]`` (nats,
    ``log π̃(x) - log q_path``); ``info``: ``ess`` (Kish, count), ``ess_fraction`` in [0, 1],
    ``path_kl`` (``mean(-log w)``, nats; the path KL when ``π̃`` is normalised), ``log_evidence``
    (``log mean w``, nats), ``seconds``.

    Raises:
        ConfigError: ``model`` is not a Fitted normflows model, or the target has no ``log_prob``.
        FloatingPointError: non-finite draws.

    Source: Wu, Köhler & Noé 2020, eq. 9 and sec. 3 (reweighting for unbiased estimates).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target,), "model": (Fitted,)}
    check_params: ClassVar[dict[str, Any]] = {"num_samples": 64}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"target": {"use": "double-well"}},
        "stage": {"flow": {"use": "nf", "inputs": {"task": "target"}, "num_steps": 3, "hidden_sizes": [8]}},
        "inputs": {"target": "target", "model": "flow"},
    }

    num_samples: int = param(2000, doc="draws (count)", validator=int_at_least(2))

    def sample(self, target: Any, model: Any = None, *, generator: torch.Generator) -> Samples:
        """Draw ``num_samples`` weighted points (see the class docstring)."""
        _check_target(target)
        flow = getattr(model, "model", None)
        if flow is None or not hasattr(flow, "sample") or not hasattr(flow, "q0"):
            raise ConfigError(
                "give inputs = { model = '<snf or nf stage>' }: a Fitted normflows model.", key="model"
            )
        t0 = time.perf_counter()
        with single_thread(), seeded(generator), torch.no_grad():
            x, log_w = path_sample(flow, int(self.num_samples))
        x, log_w = x.to(torch.float64), log_w.to(torch.float64)
        if not torch.isfinite(x).all():
            raise FloatingPointError("the flow produced non-finite draws")
        n = int(self.num_samples)
        ess = kish_ess(log_w)
        info = {
            "ess": ess,
            "ess_fraction": ess / n,
            "path_kl": float(-log_w.mean()),
            "log_evidence": float(torch.logsumexp(log_w, 0) - math.log(n)),
            "seconds": time.perf_counter() - t0,
        }
        return Samples(x=x, log_weights=log_w, info=info)


def exact_draws(target: Any, n: int, generator: torch.Generator) -> torch.Tensor:
    """Exact draws ``Tensor[n, d]`` (float64): ``target.sample``, or for the double well inverse-CDF draws.

    The double well factorises: ``x_1`` has density ``∝ exp(-(a x + b x^2 + c x^4))`` (drawn by
    inverting its CDF on a 20001-point grid on [-6, 6] with linear interpolation; the mass outside is
    below 1e-30 for the defaults) and ``x_{2:d} ~ N(0, I)``.

    Raises:
        ConfigError: a target with neither an exact sampler nor the double well's coefficients.
    """
    try:
        return torch.as_tensor(target.sample(int(n), generator=generator), dtype=torch.float64)
    except NotImplementedError:
        pass
    if not all(hasattr(target, k) for k in ("a", "b", "c")):
        raise ConfigError(
            f"{type(target).__name__} has no exact sampler for reference draws.", key="reference"
        )
    grid = torch.linspace(-6.0, 6.0, 20001, dtype=torch.float64)
    u = target.a * grid + target.b * grid**2 + target.c * grid**4
    p = torch.exp(-(u - u.min()))
    cdf = torch.cumsum((p[1:] + p[:-1]) / 2, 0)
    cdf = torch.cat([torch.zeros(1, dtype=torch.float64), cdf / cdf[-1]])
    q = torch.rand(int(n), generator=generator, dtype=torch.float64)
    i = torch.searchsorted(cdf, q).clamp(1, grid.numel() - 1)
    frac = (q - cdf[i - 1]) / (cdf[i] - cdf[i - 1]).clamp_min(1e-300)
    x1 = grid[i - 1] + frac * (grid[i] - grid[i - 1])
    rest = torch.randn(int(n), int(target.dim) - 1, generator=generator, dtype=torch.float64)
    return torch.cat([x1[:, None], rest], 1)


def right_well_probability(target: Any) -> float:
    """``P(x_1 > 0)`` under the double well by scipy quadrature (probability), ``nan`` for other targets."""
    if not all(hasattr(target, k) for k in ("a", "b", "c")):
        return math.nan
    from scipy import integrate

    def f(t: float) -> float:
        return math.exp(-(target.a * t + target.b * t * t + target.c * t**4) - 12.0)

    right = integrate.quad(f, 0.0, 10.0, epsrel=1e-12, limit=200)[0]
    left = integrate.quad(f, -10.0, 0.0, epsrel=1e-12, limit=200)[0]
    return right / (left + right)


#: the x_1 window and bin count of the double-well free-energy profile (Wu et al. 2020, experiment 1)
FREE_ENERGY_RANGE = (-2.25, 2.25)
FREE_ENERGY_BINS = 45


def exact_free_energy(target: Any, edges: torch.Tensor) -> torch.Tensor:
    """``F_j = -log P(x_1 in bin j)`` of the double well's x_1 marginal by scipy quadrature (kT).

    Shapes: ``edges: Tensor[B + 1]`` -> ``Tensor[B]`` (float64); ``nan`` for other targets.
    """
    if not all(hasattr(target, k) for k in ("a", "b", "c")):
        return torch.full((edges.numel() - 1,), math.nan, dtype=torch.float64)
    from scipy import integrate

    def f(t: float) -> float:
        return math.exp(-(target.a * t + target.b * t * t + target.c * t**4) - 12.0)

    total = integrate.quad(f, -10.0, 10.0, epsrel=1e-12, limit=400, points=[-1.7, 0.0, 1.7])[0]
    e = edges.tolist()
    mass = [integrate.quad(f, e[j], e[j + 1], epsrel=1e-12)[0] / total for j in range(len(e) - 1)]
    return -torch.log(torch.tensor(mass, dtype=torch.float64))


#: a bin enters the free-energy error when an exact sampler would put this many draws in it (count)
FREE_ENERGY_MIN_COUNT = 10


def free_energy_error(
    x1: torch.Tensor, w: torch.Tensor, exact: torch.Tensor, edges: torch.Tensor, *, min_mass: float
) -> float:
    """RMS error (kT) of the weighted free-energy profile of ``x1`` against ``exact``, up to a constant.

    ``F^_j = -log sum_{i in bin j} w_i`` (``w: Tensor[n]`` normalised weights of ``x1: Tensor[n]``)
    over the bins whose exact probability ``exp(-F_j)`` is at least ``min_mass`` (the diagnostics use
    ``FREE_ENERGY_MIN_COUNT / n``: bins an exact sampler of n draws resolves); a bin's weight is floored at
    half a draw, ``1 / (2n)``, so an empty bin among them counts as holding half a draw. The error is
    ``sqrt(mean_j (F^_j - F_j - c)^2)`` with ``c`` the mean of ``F^_j - F_j`` over those bins (the free
    energy is defined up to a constant). Units: kT (nats). ``nan`` when fewer than 2 bins qualify.

    The paper's notebook masks every empty bin instead; that gives a sampler which misses a well the
    error of the well it found, so here only bins too improbable to be resolved are left out.

    Source: Wu, Köhler & Noé 2020, experiment 1 (free-energy profile along x_1 in (-2.25, 2.25));
    their metric ``sqrt(bias^2 + std^2)`` is taken across 10 retrainings, ours per replicate
    (its mean over replicates estimates ``sqrt(bias^2 + variance)`` per bin).
    """
    idx = torch.bucketize(x1.contiguous(), edges) - 1
    inside = (idx >= 0) & (idx < exact.numel())
    mass = torch.zeros(exact.numel(), dtype=torch.float64).index_add_(0, idx[inside], w[inside])
    keep = torch.exp(-exact) >= min_mass
    if int(keep.sum()) < 2:
        return math.nan
    floor = 0.5 / x1.numel()
    diff = -torch.log(mass[keep].clamp_min(floor)) - exact[keep]
    return float(torch.sqrt(((diff - diff.mean()) ** 2).mean()))


def energy_distance(x: torch.Tensor, a: torch.Tensor, y: torch.Tensor) -> float:
    """Weighted energy distance between ``x: Tensor[n, d]`` (weights ``a: Tensor[n]``, summing to 1) and
    equally weighted ``y: Tensor[m, d]`` (units of x), by quadriga-std's ``weighted_pair_sum``.

    Source: Székely & Rizzo 2013, "Energy statistics", eq. 2.
    """
    from quadriga_std.evaluators.distances import weighted_pair_sum

    b = torch.full((y.shape[0],), 1.0 / y.shape[0], dtype=torch.float64)

    def dist(d: torch.Tensor) -> torch.Tensor:
        return d

    return float(
        2 * weighted_pair_sum(x, y, a, b, dist)
        - weighted_pair_sum(x, x, a, a, dist)
        - weighted_pair_sum(y, y, b, b, dist)
    )


@attrs.define(kw_only=True)
class SNFDiagnostics(Evaluator):
    """Per subject: Kish ESS fraction, path KL, energy distances to exact draws, double-well mode error.

    Values ``"<subject>/<metric>"``: ``ess_fraction`` (Kish, weights of the subject; 1 when unweighted),
    ``path_kl`` (``mean(-log w)``, nats; only for weighted subjects), ``energy_distance`` (the
    unweighted draws), ``energy_distance_reweighted`` (self-normalised weights; quadriga-std's
    ``energy-distance``), and for the double well ``mode_error`` = |reweighted P(x_1 > 0) - exact|
    and ``mode_error_unweighted``, ``mode_error_n<m>`` (the reweighted error from the first ``m``
    draws, for each ``m`` of ``subsample_sizes`` not above the number of draws), and
    ``free_energy_error`` (RMS error in kT of the reweighted free-energy profile along x_1 in
    (-2.25, 2.25), 45 bins, over the bins an exact sampler of the same size resolves:
    :func:`free_energy_error`) with ``free_energy_error_unweighted``.

    Shapes: ``subject``: a ``Samples`` (``x: Tensor[n, d]``, ``log_weights: Tensor[n]`` or ``None``) or
    ``{name: Samples}``; ``reference``: a Target of dimension d.
    Units: energy distances in units of x; ``path_kl`` in nats; fractions and probabilities in [0, 1].

    Raises:
        ConfigError: no reference target, or one without exact draws (double well excepted).

    Source: Wu, Köhler & Noé 2020 (reweighting, experiment 1); Székely & Rizzo 2013 (energy distance).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    check_params: ClassVar[dict[str, Any]] = {"num_reference_samples": 64}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"target": {"use": "double-well"}},
        "stage": {
            "draws": {
                "use": "rwm",
                "inputs": {"target": "target"},
                "num_chains": 32,
                "num_samples": 2,
                "burn_in": 5,
            }
        },
        "inputs": {"subject": "draws", "reference": "target"},
    }

    num_reference_samples: int = param(2000, doc="exact reference draws (count)", validator=int_at_least(2))
    subsample_sizes: list[int] = param(
        [250, 500, 1000, 2000],
        doc="prefix sizes m of the double-well mode error mode_error_n<m> (counts)",
        validator=positive_int_list,
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compute the metrics of every subject against ``reference`` (class docstring)."""
        if reference is None:
            raise ConfigError('give inputs = { reference = "<target task>" }.', key="reference")
        subjects = subject if isinstance(subject, dict) else {"subject": subject}
        y = exact_draws(reference, int(self.num_reference_samples), child_generator(generator, "reference"))
        exact_p = right_well_probability(reference)
        edges = torch.linspace(*FREE_ENERGY_RANGE, FREE_ENERGY_BINS + 1, dtype=torch.float64)
        exact_f = exact_free_energy(reference, edges)
        values: dict[str, float] = {}
        rows = []
        for name, s in subjects.items():
            x = torch.as_tensor(s.x, dtype=torch.float64)
            lw = None if s.log_weights is None else torch.as_tensor(s.log_weights, dtype=torch.float64)
            row: dict[str, Any] = {"subject": name}
            row["ess_fraction"] = 1.0 if lw is None else kish_ess(lw) / x.shape[0]
            if lw is not None:
                row["path_kl"] = float(-lw.mean())
            uniform = torch.full((x.shape[0],), 1.0 / x.shape[0], dtype=torch.float64)
            row["energy_distance"] = energy_distance(x, uniform, y)
            if lw is not None:
                row["energy_distance_reweighted"] = energy_distance(x, torch.softmax(lw, 0), y)
            if not math.isnan(exact_p):
                right = (x[:, 0] > 0).to(torch.float64)
                w = torch.ones_like(right) if lw is None else torch.softmax(lw, 0) * x.shape[0]
                row["mode_error"] = abs(float((w * right).mean()) - exact_p)
                row["mode_error_unweighted"] = abs(float(right.mean()) - exact_p)
                for m in self.subsample_sizes:
                    if m <= x.shape[0]:
                        wm = torch.ones(m, dtype=torch.float64)
                        if lw is not None:
                            wm = torch.softmax(lw[:m], 0) * m
                        row[f"mode_error_n{m}"] = abs(float((wm * right[:m]).mean()) - exact_p)
                wn = uniform if lw is None else torch.softmax(lw, 0)
                mm = FREE_ENERGY_MIN_COUNT / x.shape[0]
                row["free_energy_error"] = free_energy_error(x[:, 0], wn, exact_f, edges, min_mass=mm)
                row["free_energy_error_unweighted"] = free_energy_error(
                    x[:, 0], uniform, exact_f, edges, min_mass=mm
                )
            rows.append(row)
            for k, v in row.items():
                if k != "subject":
                    values[f"{name}/{k}"] = float(v)
        info = {} if math.isnan(exact_p) else {"right_well_probability": exact_p}
        return Metrics(values=values, tables={"snf-diagnostics": rows}, info=info)
