"""Learners: Prospect and its four baselines on a ``spectral-risk-data`` task's objective.

Every learner shares the same surface: a step size ``learning_rate``, a number of epochs
``num_epochs`` (passes over the data) and ``tune``: with ``tune = true`` it runs every value of
``learning_rate_grid`` on the same random index stream (common random numbers) and keeps the run
with the smallest mean over passes of ``log10(F(w_k) - F_best)``, ``F_best`` the lowest objective
any grid run reached (diverged runs are excluded). The grid is the same for every learner
(:data:`LR_GRID`), so a pipeline that tunes all of them has tuning parity;
``Fitted.info["settings_tried"]`` records how many settings were run.

Output: ``Fitted(model=Tensor[D] float64 w, predict=x -> scores, history, info)`` with
``history = {"pass": [0..K], "objective": [F(w_k)], "grad_evals": [...]}``: ``F`` in the loss's
units (squared standard deviations of y, or nats), ``grad_evals`` cumulative per-example gradient
evaluations.

Source: Mehta, Roulet, Pillutla, Harchaoui, "Distributionally Robust Optimization with Bias and
Variance Reduction", ICLR 2024: Algorithm 1 (Prospect) and sec. 5 (baselines, step-size grid
``{1e-6, 3e-6, ..., 0.3}``, selection by training objective); official code ronakdm/prospect.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.validators import positive, positive_int
from quadriga_prospect.optimizers import Trace, run_method

__all__ = ["LR_GRID", "LSVRG", "SGD", "SRDA", "Prospect", "SaddleSAGA", "select_trace"]

#: The shared step-size grid: the top of the paper's half-decade grid {1e-6, 3e-6, ..., 0.3}
#: (smaller values never win within 50 passes here).
LR_GRID = [1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3]


def _grid(instance: Any, attribute: Any, value: Any) -> None:
    ok = isinstance(value, (list, tuple)) and len(value) > 0
    ok = ok and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in value
    )
    if not ok:
        raise ConfigError(
            f"{attribute.name} must be a non-empty list of positive learning rates, e.g. [0.01, 0.1], "
            f"got {value!r}",
            key=attribute.name,
        )


def select_trace(traces: dict[float, Trace]) -> float:
    """The tuning rule: the step size with the smallest mean log10 gap to the best value reached.

    Args:
        traces: ``{lr: Trace}`` of runs on the same random stream.

    Returns:
        The chosen ``lr``.

    Raises:
        RuntimeError: every run diverged (lower the grid).
    """
    ok = {lr: t for lr, t in traces.items() if not t.diverged}
    if not ok:
        raise RuntimeError(
            f"every step size of {sorted(traces)} diverged; add smaller values to learning_rate_grid."
        )
    best = min(min(t.objective) for t in ok.values())
    floor = 1e-15 * max(1.0, abs(best))

    def score(t: Trace) -> float:
        gaps = np.maximum(np.asarray(t.objective) - best, floor)
        return float(np.mean(np.log10(gaps)))

    return min(ok, key=lambda lr: (score(ok[lr]), lr))


@attrs.define(kw_only=True)
class _SpectralRiskLearner(Learner):
    """Shared fields and ``fit`` of the spectral-risk optimizers (see the module docstring).

    Raises:
        ConfigError: a task without an ``objective`` (use ``spectral-risk-data``), bad parameters.
        RuntimeError: every tuned step size diverged, or the untuned one did.
    """

    algorithm: ClassVar[str] = ""
    check_params: ClassVar[dict] = {"num_epochs": 2, "tune": False}
    check_inputs: ClassVar[dict] = {
        "task": {"data": {"use": "spectral-risk-data", "dataset": "wine"}},
        "inputs": {"task": "data"},
    }

    learning_rate: float = param(0.01, doc="learning rate (used when tune = false)", validator=positive)
    num_epochs: int = param(64, doc="number of epochs (passes over the data)", validator=positive_int)
    tune: bool = param(
        False, doc="run every learning_rate_grid value on the same stream and keep the best (see module docs)"
    )
    learning_rate_grid: list[float] = param(
        factory=lambda: list(LR_GRID), doc="step sizes tried when tune = true", validator=_grid
    )

    def fit(self, task: Any, *, generator: Any, progress: Any = None) -> Fitted:
        """Minimize ``task.objective("train")`` from ``w = 0``.

        Args:
            task: a ``spectral-risk-data`` task (anything with ``objective(split)`` and ``describe()``).
            generator: ``torch.Generator``; one integer seed is drawn from it and every grid run
                uses a numpy generator with that seed.
            progress: optional stage progress (one unit per run of the grid).

        Returns:
            :class:`~quadriga.artifacts.Fitted` (see the module docstring).
        """
        import torch

        if not callable(getattr(task, "objective", None)):
            raise ConfigError(
                f'{self.algorithm} needs a spectral-risk task (use = "spectral-risk-data"), '
                f"got {type(task).__name__}.",
                key="task",
            )
        obj = task.objective("train")
        seed = int_seed(generator)
        grid = [float(v) for v in self.learning_rate_grid] if self.tune else [float(self.learning_rate)]
        if progress is not None:
            progress.start(len(grid))
        traces = {}
        for lr in grid:
            traces[lr] = run_method(self.algorithm, obj, lr, self.num_epochs, np.random.default_rng(seed))
            if progress is not None:
                progress.advance(1)
        if not self.tune and traces[grid[0]].diverged:
            raise RuntimeError(
                f"{self.algorithm} diverged at learning_rate = {self.learning_rate}; "
                "lower it or set tune = true."
            )
        lr = select_trace(traces)
        trace = traces[lr]
        w = torch.as_tensor(trace.w, dtype=torch.float64)
        n_class = obj.n_class if obj.loss == "multinomial" else 1

        def predict(x: Any) -> Any:
            scores = torch.as_tensor(x, dtype=torch.float64) @ w.reshape(-1, n_class)
            return scores.squeeze(-1) if n_class == 1 else scores

        k = len(trace.objective)
        return Fitted(
            model=w,
            predict=predict,
            history={
                "pass": list(range(k)),
                "objective": list(trace.objective),
                "grad_evals": list(trace.grad_evals),
            },
            info={
                "algorithm": self.algorithm,
                "lr": lr,
                "settings_tried": len(grid),
                "diverged_settings": sum(t.diverged for t in traces.values()),
                "n_train": obj.n,
                "objective": dict(task.describe()),
                "final_objective": trace.objective[-1],
            },
        )


@attrs.define(kw_only=True)
class Prospect(_SpectralRiskLearner):
    """Prospect: bias- and variance-reduced stochastic optimization of a spectral risk (one step size).

    Per step on a uniformly sampled example ``i`` (tables ``l_hat``, ``G``, ``rho``, ``g_bar``)::

        v = n lam_i grad l_i(w) - n rho_i G_i + g_bar        (Algorithm 1, direction)
        w = (w - lr v) / (1 + lr mu)                          (prox of the l2 term)
        l_hat_i = l_i(w_old); lam = q(l_hat)                  (sample-weight update, sort + PAV)
        g_bar += lam_i grad l_i - rho_i G_i; rho_i = lam_i; G_i = grad l_i

    Shapes: ``w`` is ``Tensor[D]`` (``D = p`` or ``p K``). Units: ``lr`` in 1 / (loss curvature).
    Converges linearly for smooth, strongly convex losses (the paper's Theorem 1).

    Raises:
        ConfigError: a task without an objective; RuntimeError: divergence (see ``fit``).

    Source: Mehta et al., ICLR 2024, Algorithm 1 and Theorem 1; official ``src/optim/prospect.py``.
    """

    algorithm: ClassVar[str] = "prospect"


@attrs.define(kw_only=True)
class SGD(_SpectralRiskLearner):
    """Minibatch SGD on the spectral risk of each batch of 64 (the plain, biased baseline).

    ``w = w - lr (sum_{i in B} q_B,i grad l_i(w) + mu w)``; shapes and units as for ``prospect``.

    Raises:
        ConfigError, RuntimeError: as ``prospect``.

    Source: Mehta et al., ICLR 2024, sec. 5 (baseline "SGD"); official ``StochasticSubgradientMethod``.
    """

    algorithm: ClassVar[str] = "sgd"


@attrs.define(kw_only=True)
class SRDA(_SpectralRiskLearner):
    """Stochastic regularized dual averaging (Xiao 2010) on the minibatch spectral-risk gradients.

    ``w_t = -mean_{s <= t} g_s / (mu + 1 / (lr (t + 1)))``; shapes and units as for ``prospect``.

    Raises:
        ConfigError, RuntimeError: as ``prospect``.

    Source: Mehta et al., ICLR 2024, sec. 5 (baseline "SRDA"); official code
    ``StochasticRegularizedDualAveraging``.
    """

    algorithm: ClassVar[str] = "srda"


@attrs.define(kw_only=True)
class LSVRG(_SpectralRiskLearner):
    """SVRG with the sample weights frozen at each epoch's checkpoint (3 n gradients per epoch).

    ``w = w - lr (n q_c,i (grad l_i(w) - grad l_i(w_c)) + g_c + mu w)``; shapes and units as for ``prospect``.

    Raises:
        ConfigError, RuntimeError: as ``prospect``.

    Source: Mehta et al., ICLR 2024, sec. 5 (baseline "LSVRG", Mehta et al. 2023); official ``SmoothedLSVRG``.
    """

    algorithm: ClassVar[str] = "lsvrg"


@attrs.define(kw_only=True)
class SaddleSAGA(_SpectralRiskLearner):
    """Saddle-point SAGA (Palaniappan & Bach 2016): SAGA steps in ``w`` and projected SAGA steps in ``q``.

    Dual step size ``lr_d = 0.1 lr / n`` (the official ratio); shapes and units as for ``prospect``.

    Raises:
        ConfigError, RuntimeError: as ``prospect``.

    Source: Mehta et al., ICLR 2024, sec. 5 (baseline "SaddleSAGA"); official ``SaddleSAGA``.
    """

    algorithm: ClassVar[str] = "saddle-saga"
