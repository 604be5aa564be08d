"""Distances between sample sets: energy distance, MMD, sliced and exact Wasserstein.

Every evaluator here compares one or several ``Samples`` subjects with a reference,
which is either a ``Samples`` artifact or a ``Target`` with an exact sampler (then
``num_reference_samples`` exact draws are taken from the ``"reference"`` stream of the stage
generator, so every subject of a run is compared with the same reference set, and another
root seed draws another one). Inputs may live on any device; they are moved to CPU. Values are written
``"<subject>/<metric>"``; ``tables["summary"]`` has one row per subject and
``figures["distances"]`` is a bar chart comparing subjects.

Importance weights: ``Samples.log_weights`` is respected by every distance here
(the weighted empirical measure ``sum_i w_i delta_{x_i}`` with self-normalised
weights ``w`` is compared).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.params import param
from quadriga.seeding import child_generator, child_numpy_rng
from quadriga.validators import in_range, one_of, optional, positive, positive_int
from quadriga_std.evaluators._distance_figure import bar_figure, draws_label, reference_label

__all__ = ["MMD", "EnergyDistance", "SlicedWasserstein", "Wasserstein", "draws_label", "weighted_pair_sum"]

_CHUNK = 2048


def _weights(samples: Samples) -> torch.Tensor:
    """Self-normalised weights ``Tensor[n]`` (float64) of a ``Samples`` artifact."""
    n = samples.num_samples
    if samples.log_weights is None:
        return torch.full((n,), 1.0 / n, dtype=torch.float64)
    lw = torch.as_tensor(samples.log_weights).detach().cpu().to(torch.float64).reshape(-1)
    if lw.shape[0] != n:
        raise ConfigError(f"log_weights has {lw.shape[0]} entries but x has {n} rows.", key="subject")
    return torch.softmax(lw, dim=0)


def weighted_pair_sum(
    x: torch.Tensor, y: torch.Tensor, a: torch.Tensor, b: torch.Tensor, kernel: Any
) -> float:
    """``sum_ij a_i b_j k(x_i, y_j)`` computed in row chunks (memory ``O(chunk * m)``).

    Args:
        x: ``Tensor[n, d]``; y: ``Tensor[m, d]`` (float64).
        a: ``Tensor[n]``; b: ``Tensor[m]`` weights.
        kernel: callable on a ``Tensor[c, m]`` of Euclidean distances returning ``Tensor[c, m]``.

    Returns:
        The double sum as a float.
    """
    total = torch.zeros((), dtype=torch.float64)
    for start in range(0, x.shape[0], _CHUNK):
        dist = torch.cdist(x[start : start + _CHUNK], y, compute_mode="donot_use_mm_for_euclid_dist")
        total = total + a[start : start + _CHUNK] @ kernel(dist) @ b
    return float(total)


def _as_samples(value: Any, role: str) -> Samples:
    if not isinstance(value, Samples):
        raise ConfigError(
            f"'{role}' must be a Samples artifact (got {type(value).__name__}); "
            "connect it to a sampler stage.",
            key=role,
        )
    return value


@attrs.define(kw_only=True)
class _SampleDistance(Evaluator):
    """Shared plumbing: subjects, reference draws, table and figure."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Samples,),
        "reference": (Samples, Target),
    }
    #: checked before anything runs (the method's ``reference = None`` default is the interface's)
    required_inputs: ClassVar[tuple[str, ...]] = ("subject", "reference")

    num_reference_samples: int = param(
        2000, doc="exact draws from a Target reference (count)", validator=positive_int
    )

    def _reference(self, reference: Any, generator: Any) -> Samples:
        if reference is None:
            raise ConfigError(
                'a reference is required: give `reference = "<task or stage>"` in the stage\'s inputs.',
                key="reference",
            )
        if isinstance(reference, Samples):
            return reference
        gen = child_generator(generator, "reference")
        try:
            x = reference.sample(int(self.num_reference_samples), generator=gen)
        except NotImplementedError as exc:
            raise ConfigError(
                f"the reference target {type(reference).__name__} has no exact sampler "
                f"({exc}); pass a Samples reference instead (e.g. a long MCMC run).",
                key="reference",
            ) from exc
        return Samples(x=torch.as_tensor(x), info={"stage": "reference"})

    def _compute(
        self,
        x: torch.Tensor,
        a: torch.Tensor,
        y: torch.Tensor,
        b: torch.Tensor,
        *,
        generator: Any,
        notes: list[str],
    ) -> dict[str, float]:
        """The metrics of subject ``x`` ``Tensor[n, d]`` (weights ``a``) against ``y`` ``Tensor[m, d]``
        (weights ``b``).

        Args:
            x, a, y, b: float64 points and normalised weights of the subject and the reference.
            generator: the stage generator (its named child streams for any random draw).
            notes: caveats of this computation are appended here (they go to ``info["notes"]``).
        """
        raise NotImplementedError

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compare each subject with the reference.

        Args:
            subject: a ``Samples`` (``x: Tensor[n, d]``, any device) or ``{name: Samples}``.
            reference: a ``Samples`` (``Tensor[m, d]``) or a ``Target`` with an exact ``sample``.
            generator: the stage generator; its named streams draw the reference set, the
                projections and the subsamples.

        Returns:
            ``Metrics`` with values ``"<subject>/<metric>"``, ``tables["summary"]`` and
            ``figures["distances"]``.

        Raises:
            ConfigError: no reference, a target without an exact sampler, a non-Samples
                subject, or dimensions that differ.
        """
        ref = self._reference(reference, generator)
        y = torch.as_tensor(ref.x).detach().cpu().to(torch.float64).reshape(ref.num_samples, -1)
        b = _weights(ref)
        values: dict[str, float] = {}
        rows = []
        counts: dict[str, str] = {}
        notes: list[str] = []
        for name, value in named(subject).items():
            s = _as_samples(value, "subject")
            x = torch.as_tensor(s.x).detach().cpu().to(torch.float64).reshape(s.num_samples, -1)
            if x.shape[1] != y.shape[1]:
                raise ConfigError(
                    f"subject '{name}' has dimension {x.shape[1]} but the reference has "
                    f"{y.shape[1]}; compare samples of the same target.",
                    key="subject",
                )
            caveats: list[str] = []
            res = self._compute(x, _weights(s), y, b, generator=generator, notes=caveats)
            notes += [f"{name}: {n}" for n in caveats]
            rows.append({"subject": name, **res})
            counts[name] = draws_label(s)
            values.update({f"{name}/{k}": float(v) for k, v in res.items()})
        return Metrics(
            values=values,
            tables={"summary": rows},
            figures={
                "distances": bar_figure(rows, type(self).__name__, counts, reference_label(ref, reference))
            },
            info={"notes": notes} if notes else {},
        )


@attrs.define(kw_only=True)
class EnergyDistance(_SampleDistance):
    """Energy distance between a sample set and a reference.

    ``E(P, Q) = 2 E|X - Y| - E|X - X'| - E|Y - Y'|`` estimated by the (weighted)
    V-statistic ``2 sum a_i b_j |x_i - y_j| - sum a_i a_k |x_i - x_k| - sum b_j b_l |y_j - y_l|``
    (Euclidean norm, units of x). Reports ``energy_distance`` (``E``, units of x; the V-statistic,
    not divided by 2) and ``energy_distance_sqrt`` (``sqrt(E)``). Cost ``O((n + m)^2 d)`` time,
    chunked memory.

    Raises:
        ConfigError: a constant reference (a point mass).

    Source: Székely & Rizzo 2013, "Energy statistics", eq. 2.
    """

    metrics_doc: ClassVar[dict[str, str]] = {
        "energy_distance": "energy distance to exact draws from the target (units of x; 0: same law)",
        "energy_distance_sqrt": "square root of the energy distance (units of sqrt(x))",
    }

    def _compute(self, x, a, y, b, *, generator, notes):
        _check_reference_spread(y, "energy-distance")

        def dist(d: torch.Tensor) -> torch.Tensor:
            return d

        e = (
            2 * weighted_pair_sum(x, y, a, b, dist)
            - weighted_pair_sum(x, x, a, a, dist)
            - weighted_pair_sum(y, y, b, b, dist)
        )
        return {"energy_distance": e, "energy_distance_sqrt": math.sqrt(max(e, 0.0))}


def _median_distance(x: torch.Tensor, y: torch.Tensor, max_points: int = 1000) -> tuple[float, str]:
    """Median pairwise Euclidean distance of the pooled sample (first ``max_points`` of each set).

    Returns:
        ``(h, note)``. When ties make the median 0 (more than half the pairs coincide), ``h`` is
        the median of the non-zero distances and ``note`` says so (empty otherwise).

    Raises:
        ConfigError: every pooled point is the same (no scale to take a bandwidth from).
    """
    z = torch.cat([x[:max_points], y[:max_points]])
    d = torch.pdist(z)
    med = float(d.median()) if d.numel() else 0.0
    if med > 0:
        return med, ""
    nonzero = d[d > 0]
    if nonzero.numel() == 0:
        raise ConfigError(
            "the median-heuristic bandwidth is undefined: every pooled point is identical. "
            "Give `bandwidth = <h>` (units of x) or check the subject and reference samplers.",
            key="bandwidth",
        )
    frac = 1.0 - nonzero.numel() / d.numel()
    h = float(nonzero.median())
    return (
        h,
        f"median heuristic: {frac:.0%} of pooled distances are 0 (ties); bandwidth {h:.4g} is the "
        "median of the non-zero distances",
    )


def _check_reference_spread(y: torch.Tensor, who: str) -> None:
    """ConfigError when every reference point is the same (a point mass)."""
    if y.shape[0] > 1 and bool((y == y[:1]).all()):
        raise ConfigError(
            f"{who}: the reference is constant (all {y.shape[0]} points equal {y[0].tolist()}); "
            "a distance to a point mass says nothing about sample quality. "
            "Check the reference stage or target.",
            key="reference",
        )


@attrs.define(kw_only=True)
class MMD(_SampleDistance):
    """Maximum mean discrepancy with a Gaussian or inverse multiquadric kernel.

    Kernels (``r = |x - y|``, bandwidth ``h`` in units of x): Gaussian
    ``k = exp(-r^2 / (2 h^2))``; IMQ ``k = (1 + r^2 / h^2)^(-1/2)``. Both have ``k(x, x) = 1``.
    ``h`` defaults to the median heuristic (median pairwise distance of the pooled sample; when
    ties make it 0, the median of the non-zero distances, with a note in ``info["notes"]``).
    Convention: ``mmd2`` is the squared MMD (unbiased), ``mmd`` its square root.

    Raises:
        ConfigError: a constant reference, or every pooled point identical with no ``bandwidth``.

    Estimator: the unbiased U-statistic
    ``MMD^2_u = [sum_{i!=k} a_i a_k k(x_i,x_k)] / (1 - sum a_i^2) + [same for y] - 2 sum a_i b_j k(x_i,y_j)``
    which is Gretton et al.'s eq. 3 for uniform weights ``a_i = 1/n``. Reports ``mmd2``
    (may be slightly negative), ``mmd = sqrt(max(mmd2, 0))`` and ``bandwidth``.

    Source: Gretton, Borgwardt, Rasch, Schölkopf, Smola 2012, JMLR, Lemma 6 / eq. 3.
    """

    kernel: str = param("gaussian", doc="'gaussian' or 'imq'", validator=one_of(("gaussian", "imq")))
    bandwidth: float | None = param(
        None, doc="kernel bandwidth h (units of x); None = median heuristic", validator=optional(positive)
    )

    def _compute(self, x, a, y, b, *, generator, notes):
        _check_reference_spread(y, "mmd")
        if self.bandwidth is not None:
            h = float(self.bandwidth)
        else:
            h, note = _median_distance(x, y)
            if note:
                notes.append(note)
        if self.kernel == "gaussian":

            def k(d: torch.Tensor) -> torch.Tensor:
                return torch.exp(-d.square() / (2 * h * h))
        else:

            def k(d: torch.Tensor) -> torch.Tensor:
                return torch.rsqrt(1 + d.square() / (h * h))

        def within(z, w):
            off = weighted_pair_sum(z, z, w, w, k) - float(w.square().sum())  # drop i == k (k(0) = 1)
            denom = 1.0 - float(w.square().sum())
            if denom <= 0:
                raise ConfigError(
                    "MMD needs at least two samples with positive weight in each set.", key="subject"
                )
            return off / denom

        mmd2 = within(x, a) + within(y, b) - 2 * weighted_pair_sum(x, y, a, b, k)
        return {"mmd2": mmd2, "mmd": math.sqrt(max(mmd2, 0.0)), "bandwidth": h}


@attrs.define(kw_only=True)
class SlicedWasserstein(_SampleDistance):
    """Sliced Wasserstein distance ``SW_p`` (units of x) through POT.

    ``SW_p = (mean over L random unit directions theta of W_p^p(theta#P, theta#Q))^(1/p)``,
    computed by ``ot.sliced_wasserstein_distance`` with weights. The ``num_projections``
    directions ``Tensor[d, L]`` are drawn from the ``"projections"`` stream of the stage generator
    (normalised Gaussian vectors), so they are identical for every subject of a stage and
    change with the root seed.

    Source: Bonneel, Rabin, Peyré, Pfister 2015, eq. 4; POT ``ot.sliced``.
    """

    num_projections: int = param(200, doc="number of random directions L (count)", validator=positive_int)
    p: float = param(2.0, doc="order p >= 1 of the distance", validator=in_range(1.0))

    def projections(self, dim: int, generator: Any) -> np.ndarray:
        """The projection directions ``ndarray[dim, num_projections]`` with unit columns,
        from the ``"projections"`` stream of ``generator``."""
        rng = child_numpy_rng(generator, "projections")
        theta = rng.standard_normal((dim, int(self.num_projections)))
        return theta / np.linalg.norm(theta, axis=0, keepdims=True)

    def _compute(self, x, a, y, b, *, generator, notes):
        import ot

        sw = ot.sliced_wasserstein_distance(
            x.numpy(),
            y.numpy(),
            a.numpy(),
            b.numpy(),
            n_projections=int(self.num_projections),
            p=float(self.p),
            projections=self.projections(x.shape[1], generator),
        )
        return {"sliced_wasserstein": float(sw)}


@attrs.define(kw_only=True)
class Wasserstein(_SampleDistance):
    """Exact Wasserstein distance ``W_p`` (units of x) by linear programming (POT ``ot.emd2``).

    Ground cost ``|x - y|^p`` (Euclidean); ``W_p = emd2(a, b, M)^(1/p)`` with the weights of
    each set (uniform, or from ``log_weights``). Cost ``O(n^3)``: each set is reduced to at
    most ``max_points`` points by uniform subsampling without replacement (from the
    ``"subsample/subject"`` and ``"subsample/reference"`` streams of the stage generator;
    weights renormalised over the kept points) and the metrics' ``info["notes"]`` says so.

    Source: Villani 2009, Def. 6.1; POT ``ot.emd2`` (Bonneel et al. 2011 network simplex).
    """

    p: float = param(2.0, doc="order p >= 1 of the distance", validator=in_range(1.0))
    max_points: int = param(
        2000,
        doc="largest set size solved exactly; larger sets are subsampled (count)",
        validator=positive_int,
    )

    def _subsample(self, z, w, role, generator, notes):
        """At most ``max_points`` of ``z`` (``Tensor[n, d]``) and their renormalised weights ``w``.

        Draws from the ``"subsample/<role>"`` stream of ``generator``; warns and appends a note
        when it subsamples.
        """
        n = z.shape[0]
        if n <= self.max_points:
            return z, w
        rng = child_numpy_rng(generator, f"subsample/{role}")
        keep = torch.as_tensor(np.sort(rng.choice(n, size=int(self.max_points), replace=False)))
        msg = (
            f"{role} subsampled from {n} to {self.max_points} points for the exact solver "
            "(raise max_points for an exact value on all points)"
        )
        warnings.warn(msg, stacklevel=3)
        notes.append(msg)
        wk = w[keep]
        return z[keep], wk / wk.sum()

    def _compute(self, x, a, y, b, *, generator, notes):
        import ot

        x, a = self._subsample(x, a, "subject", generator, notes)
        y, b = self._subsample(y, b, "reference", generator, notes)
        cost = torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist").pow(float(self.p)).numpy()
        w = float(ot.emd2(a.numpy(), b.numpy(), cost, numItermax=10_000_000))
        return {"wasserstein": max(w, 0.0) ** (1.0 / float(self.p))}
