"""Reference and subsampling samplers: exact i.i.d. draws, random subsampling, standard thinning."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler
from quadriga.validators import optional, positive_int

__all__ = ["IID", "RandomSubsample", "StandardThinning"]


@attrs.define(kw_only=True)
class IID(Sampler):
    """Exact i.i.d. samples from the target's own sampler (``target.sample``).

    Returns ``Samples(x=Tensor[num_samples, d], info={"seconds", "log_prob_evals": 0, "score_evals": 0})``.

    Shapes: ``Samples.x: Tensor[num_samples, d]`` in the dtype of ``target.sample`` (float64 for
    quadriga-std targets); no ``chains`` and no ``log_weights``.
    Units: x in the target's units; ``seconds`` is wall time; the evaluation counts are 0.

    Raises:
        ConfigError: when the target has no exact sampler (``NotImplementedError`` or no ``sample``),
            or its sampler refuses this size with a ``ValueError`` (e.g. ``ising`` above 16 spins);
            ``num_samples`` < 1 when built.

    Source: none (the target's own exact sampler; the reference against which samplers are scored).
    """

    num_samples: int = param(
        1000,
        doc="number of exact draws",
        validator=positive_int,
    )

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Draw ``num_samples`` exact samples."""
        t0 = time.perf_counter()
        try:
            x = target.sample(self.num_samples, generator=generator)
        except (NotImplementedError, AttributeError):
            raise ConfigError(
                f"sampler 'iid' needs a target with exact samples; {type(target).__name__} has "
                "none. Use an MCMC sampler (e.g. 'mala' or 'hmc') instead.",
                key="target",
            ) from None
        except ValueError as exc:
            raise ConfigError(f"sampler 'iid': {exc}", key="target") from None
        return Samples(
            x=torch.as_tensor(x),
            info={"seconds": time.perf_counter() - t0, "log_prob_evals": 0, "score_evals": 0},
        )


def _as_samples(target: Any, who: str) -> Samples:
    if not isinstance(target, Samples):
        raise ConfigError(
            f"sampler '{who}' subsamples a Samples artifact: give it the output of another "
            f'sampler stage (inputs = {{ target = "<stage>" }}), not a {type(target).__name__}.',
            key="inputs",
        )
    return target


def _subset(src: Samples, idx: torch.Tensor, info: dict[str, Any]) -> Samples:
    lw = None if src.log_weights is None else src.log_weights[idx]
    return Samples(
        x=src.x[idx],
        log_weights=lw,
        info={**{k: v for k, v in src.info.items() if k in ("score_evals", "log_prob_evals")}, **info},
    )


def _points_kept(n: int, num_points: int | None) -> int:
    """``num_points``, or round(sqrt(n)) when it is None: how many of the ``n`` input rows to keep.

    Raises:
        ConfigError: more points asked for than the ``n`` input rows.
    """
    m = round(n**0.5) if num_points is None else num_points
    if m > n:
        raise ConfigError(f"num_points = {m} exceeds the {n} input points; lower it.", key="num_points")
    return m


@attrs.define(kw_only=True)
class RandomSubsample(Sampler):
    """Uniform random subsample without replacement of a ``Samples`` artifact.

    Returns ``Samples(x=Tensor[m, d])`` with m = ``num_points`` (default round(sqrt(n))),
    rows in increasing index order; ``info["indices"]`` lists the kept rows.

    Shapes: input ``x: Tensor[n, d]``; output ``x: Tensor[m, d]`` and ``log_weights: Tensor[m]``
    when the input has weights (kept, not renormalised); ``chains`` is dropped.
    Units: those of the input; ``num_points`` and ``input_points`` are counts.

    Raises:
        ConfigError: input not a ``Samples``, or ``num_points`` > n (before drawing);
            ``num_points`` < 1 when built.

    Source: simple random sampling without replacement (``torch.randperm``), the baseline of
    thinning methods such as kernel thinning (Dwivedi & Mackey 2021) and Stein thinning
    (Riabiz et al. 2022).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Samples,)}
    num_points: int | None = param(
        None, doc="points kept m (default round(sqrt(n)))", validator=optional(positive_int)
    )

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Subsample the rows of ``target.x``."""
        src = _as_samples(target, "random-subsample")
        n = src.num_samples
        m = _points_kept(n, self.num_points)
        idx = torch.randperm(n, generator=generator)[:m].sort().values
        return _subset(src, idx, {"indices": idx.tolist(), "input_points": n})


@attrs.define(kw_only=True)
class StandardThinning(Sampler):
    """Keep every k-th row of a ``Samples`` artifact (rows k-1, 2k-1, ...).

    k = ``step`` if given, else floor(n / num_points) with ``num_points`` defaulting to
    round(sqrt(n)); at most ``num_points`` rows are kept. Deterministic (the generator is unused).

    Shapes: input ``x: Tensor[n, d]``; output ``x: Tensor[m, d]`` with m = min(num_points, floor(n / k))
    rows, and ``log_weights: Tensor[m]`` when the input has weights;
    ``chains`` is dropped (rows are taken from the chain-major ``x``).
    Units: those of the input; ``step`` (k) and ``input_points`` are counts.

    Raises:
        ConfigError: input not a ``Samples``, or ``num_points`` > n; ``num_points`` or ``step`` < 1
            when built.

    Source: standard thinning of MCMC output as in Owen 2017, "Statistically efficient thinning of a
    Markov chain sampler", JCGS 26(3); the baseline of kernel thinning (Dwivedi & Mackey 2021).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Samples,)}
    num_points: int | None = param(
        None, doc="points kept (default round(sqrt(n)))", validator=optional(positive_int)
    )
    step: int | None = param(
        None, doc="thinning interval k (default n // num_points)", validator=optional(positive_int)
    )

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Thin the rows of ``target.x``."""
        src = _as_samples(target, "standard-thinning")
        n = src.num_samples
        m = _points_kept(n, self.num_points)
        k = self.step if self.step is not None else max(1, n // m)
        idx = torch.arange(k - 1, n, k)[:m]
        return _subset(src, idx, {"step": k, "input_points": n})
