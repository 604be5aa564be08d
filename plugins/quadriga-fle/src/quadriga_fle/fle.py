"""Fitted Likelihood Estimation (FLE): the return law of a target policy from off-policy data.

The discounted FLE iteration (Wu, Uehara & Sun 2023, Algorithm 1, written for the discounted
setting of their Section 5 [recalled]): from ``p^0 = delta_0``, for ``k = 1..K``

    a'_im ~ pi(. | s'_i)                                   # the target's next action
    z'_im ~ p^{k-1}(. | s'_i, a'_im)                       # sample, never a mean
    z_im  = r_i + gamma (1 - terminated_i) z'_im           # Bellman targets, m = 1..M
    p^k   = argmax_p  sum_i sum_m log p(z_im | s_i, a_i)   # MLE over the model class

and the answer is the law at the start state ``sum_a pi(a | s_0) p^K(. | s_0, a)``. Sampling the
next return (rather than plugging in its mean) is what keeps the distribution: a mean collapses it
to a point mass after one step. ``M`` draws per transition lower the variance of the MLE's targets.

On a finite MDP the conditional model is one law per ``(s, a)`` cell (:mod:`quadriga_fle.models`);
the guarantee (their Theorem 4.1 / 5.1 [recalled]) bounds the error at the start state in TV
(finite horizon) or Wasserstein (discounted) when the behaviour data covers the target policy
(bounded concentrability), which the estimator reports with its answer.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import Estimate, Estimator, param
from quadriga.errors import ConfigError
from quadriga.validators import int_at_least, one_of, optional, positive, positive_int
from quadriga_fle.models import CellHistogram, CellMixture, quantile_levels

__all__ = ["FLE", "check_offline_task", "fitted_likelihood_estimation", "next_actions", "start_weights"]


def next_actions(policy: np.ndarray, s_next: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``a' ~ policy(. | s')``: ``ndarray[n, draws]`` int (``policy [S, A]``, ``s_next [n]``)."""
    cdf = policy[s_next].cumsum(-1)[:, None, :]  # [n, 1, A]
    u = rng.random((s_next.size, draws, 1))
    return np.minimum((u > cdf).sum(-1), policy.shape[1] - 1)


def start_weights(policy: np.ndarray, start: int) -> np.ndarray:
    """Cell weights ``ndarray[S * A]`` of the start-state law: ``pi(a | s_0)`` on the cells of ``s_0``."""
    S, A = policy.shape
    w = np.zeros(S * A)
    w[start * A : (start + 1) * A] = policy[start]
    return w


def fitted_likelihood_estimation(
    data: Any,
    policy: np.ndarray,
    gamma: float,
    model: Any,
    rng: np.random.Generator,
    *,
    iterations: int,
    samples_per_transition: int,
    start: int = 0,
) -> tuple[Any, list[float]]:
    """The FLE iteration (module docstring; Wu, Uehara & Sun 2023, Algorithm 1).

    Args:
        data: :class:`~quadriga_std.rl.offline.OfflineData` (``s, a, r, s_next, terminated``).
        policy: ``ndarray[S, A]`` the target policy.
        gamma: discount in [0, 1).
        model: the initial model ``p^0`` (:class:`CellMixture` or :class:`CellHistogram` at
            ``delta_0``), with ``fit`` and ``sample``.
        rng: the stream of the next-return draws.
        iterations: ``K``.
        samples_per_transition: ``M``.
        start: the start state ``s_0``.

    Returns:
        ``(p^K, history)``: the fitted model and the start-state mean after each iteration
        (return units).
    """
    A = policy.shape[1]
    M = int(samples_per_transition)
    cells = np.repeat(data.s * A + data.a, M)  # [n M]
    cont = (~data.terminated).astype(float)[:, None]
    w0 = start_weights(policy, start)
    history = []
    for _ in range(iterations):
        a_next = next_actions(policy, data.s_next, M, rng)  # [n, M]
        z_next = model.sample(data.s_next[:, None] * A + a_next, rng)  # [n, M]
        td_target = data.r[:, None] + gamma * cont * z_next  # Bellman targets z_im
        model = model.fit(cells, td_target.ravel())  # the MLE step
        history.append(float(w0 @ model.mean(np.arange(w0.size))))
    return model, history


def check_offline_task(task: Any, method: str) -> None:
    """Check that ``task`` is offline data from a finite MDP (an ``offline-rl-dataset``).

    Raises:
        ConfigError: naming the missing method or attribute and the task to use instead.
    """
    for attr in ("collect", "offline", "target_policy", "mdp", "coverage_of", "gamma"):
        if not hasattr(task, attr):
            raise ConfigError(
                f"{method} needs offline data from a finite MDP (e.g. offline-rl-dataset); "
                f"{type(task).__name__} has no {attr}.",
                key="data",
            )


def _estimate(
    task: Any, n: int | None, generator: Any, method: str, run: Any, num_quantiles: int
) -> tuple[Estimate, Any]:
    """Shared part of the three estimators: draw (or read) the data, run ``run``, package the law.

    ``run(data, policy, mdp, rng) -> (quantile function: levels -> ndarray, info dict)``.

    Raises:
        ConfigError: the data is not an ``offline-rl-dataset``-like task.
    """
    from quadriga.seeding import child_numpy_rng

    check_offline_task(task, method)
    data = task.collect(n, child_numpy_rng(generator, "data")) if n is not None else task.offline()
    policy, mdp = task.target_policy(), task.mdp()
    quantile_fn, info = run(data, policy, mdp, child_numpy_rng(generator, "method"))
    q = np.asarray(quantile_fn(quantile_levels(num_quantiles)), float)
    cov = task.coverage_of(data)
    if not np.isfinite(cov.get("concentrability", 0.0)):
        cov["concentrability"] = None  # a pair the target visits has no data
    info = {**info, **cov, "num_transitions": len(data), "num_episodes": data.num_episodes}
    info["mean"] = float(q.mean())
    return Estimate(value=q, info=info), data


def _support(instance: Any, attribute: Any, value: Any) -> None:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        or not value[0] < 0.0 < value[1]
    ):
        raise ConfigError(
            f"{attribute.name} must be [low, high] with low < 0 < high (return units), got {value!r}.",
            key=attribute.name,
        )


@attrs.define(kw_only=True)
class FLE(Estimator):
    """Fitted Likelihood Estimation of the target policy's return law (:func:`fitted_likelihood_estimation`).

    ``estimate(data)`` takes an ``offline-rl-dataset`` task. With ``num_transitions`` set, it draws
    fresh data of that size from the stage's stream (replicate ``i`` of every arm and every size
    share it, and smaller sets are prefixes of larger ones); with ``None`` it uses the task's own
    data. Returns ``Estimate(value=ndarray[num_quantiles])``: the quantiles of the estimated law
    at the start state at levels ``(i + 1/2) / num_quantiles``, with ``info``: ``mean``, the
    per-iteration start-state means' last change ``last_change``, the coverage diagnostics of
    :func:`~quadriga_std.rl.offline.coverage` (``min_target_count``, ``uncovered_pairs``,
    ``concentrability``), ``num_transitions``.

    Shapes:
        ``value``: ``ndarray[num_quantiles]``, non-decreasing.

    Units:
        Discounted return units of the task (its ``gamma``).

    Raises:
        ConfigError: bad hyperparameters; data that is not from a finite MDP.

    Source: Wu, Uehara & Sun 2023, ICML (arXiv 2302.09456), Algorithm 1 (FLE), discounted form.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}

    model: str = param(
        "mixture",
        doc="model class: mixture (Gaussian, EM) or categorical (histogram)",
        validator=one_of(("mixture", "categorical")),
    )
    num_transitions: int | None = param(
        None,
        doc="fresh transitions drawn per replicate (None: the task's own data)",
        validator=optional(positive_int),
    )
    iterations: int = param(50, doc="FLE iterations K (gamma^K is the truncation)", validator=positive_int)
    samples_per_transition: int = param(5, doc="next-return draws M per transition", validator=positive_int)
    components: int = param(5, doc="Gaussian components J per cell (model = mixture)", validator=positive_int)
    em_steps: int = param(4, doc="EM steps per fit, warm-started (model = mixture)", validator=positive_int)
    min_sd: float = param(1e-3, doc="floor on component std (return units)", validator=positive)
    bins: int = param(100, doc="histogram bins (model = categorical)", validator=int_at_least(2))
    support: list[float] = param(
        factory=lambda: [-1.5, 1.5], doc="[low, high] of the histogram (return units)", validator=_support
    )
    num_quantiles: int = param(1000, doc="quantiles of the answer", validator=int_at_least(2))

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Run FLE on the task's (or fresh) data; see the class docstring."""
        check_offline_task(data, "fle")
        gamma = float(data.gamma)

        def run(d: Any, policy: np.ndarray, mdp: Any, rng: np.random.Generator) -> Any:
            C = mdp.num_states * mdp.num_actions
            if self.model == "mixture":
                p0: Any = CellMixture.point_mass(
                    C, self.components, min_sd=self.min_sd, em_steps=self.em_steps
                )
            else:
                p0 = CellHistogram.point_mass(C, self.bins, *self.support)
            fitted, history = fitted_likelihood_estimation(
                d,
                policy,
                gamma,
                p0,
                rng,
                iterations=self.iterations,
                samples_per_transition=self.samples_per_transition,
                start=int(mdp.initial_state),
            )
            w0 = start_weights(policy, int(mdp.initial_state))
            change = abs(history[-1] - history[-2]) if len(history) > 1 else float("nan")
            return (lambda lv: fitted.quantiles(w0, lv)), {
                "last_change": float(change),
                "iterations": self.iterations,
            }

        est, _ = _estimate(data, self.num_transitions, generator, "fle", run, self.num_quantiles)
        return est
