"""Coverage over re-splits and Monte-Carlo volume of multivariate prediction regions."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import int_at_least, non_negative_int

__all__ = ["RegionCoverage", "monte_carlo_volume", "resplit_coverage"]


def monte_carlo_volume(
    region: Any, X: np.ndarray, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Volume of ``C(x)`` at each row of ``X`` by uniform draws in the region's bounding box.

    ``vol(x) ~ |B(x)| * (1/M) sum_m 1{U_m in C(x)}``, ``U_m ~ Uniform(B(x))``, with the binomial
    standard error ``|B(x)| sqrt(f (1 - f) / M)``.

    Args:
        region: a :class:`~quadriga_std.estimators.regions.ScoreRegion` (``box``, ``contains``, ``dim``).
        X: ``ndarray[m, p]``; samples: ``M`` draws per row; rng: ``numpy.random.Generator``.

    Returns:
        ``(volume[m], stderr[m])`` in units of y^q.
    """
    X = np.asarray(X, np.float64)
    low, high = region.box(X, region.threshold)
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    q = low.shape[1]
    U = low[:, None, :] + (high - low)[:, None, :] * rng.random((len(X), samples, q))
    inside = region.contains(np.repeat(X, samples, axis=0), U.reshape(-1, q)).reshape(len(X), samples)
    frac = inside.mean(axis=1)
    box_vol = np.prod(high - low, axis=1)
    return box_vol * frac, box_vol * np.sqrt(frac * (1 - frac) / samples)


def resplit_coverage(
    region: Any,
    X: np.ndarray,
    Y: np.ndarray,
    n_calibration: int,
    alpha: float,
    resplits: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Coverage of a score region re-calibrated on ``resplits`` random splits of a pool.

    For each re-split the pool's rows are permuted; the first ``n_calibration`` set the
    split-conformal threshold (rank ``ceil((1 - alpha)(n + 1))``), the rest are the test rows.

    Args:
        region: a ``ScoreRegion``; X: ``ndarray[N, p]``; Y: ``ndarray[N, q]`` (the pool);
        n_calibration: calibration rows per re-split (``< N``); alpha: miscoverage; resplits: count.

    Returns:
        ``ndarray[resplits]`` coverages (fractions); their mean is ``>= 1 - alpha`` in expectation.

    Source: Feldman, Bates & Romano 2023, JMLR, sec. 6 (coverage over calibration/test re-splits).
    """
    from quadriga_std.estimators.regions import conformal_threshold

    s = np.asarray(region.score(np.asarray(X, np.float64), np.asarray(Y, np.float64)))
    out = np.empty(resplits)
    for r in range(resplits):
        perm = rng.permutation(len(s))
        t = conformal_threshold(s[perm[:n_calibration]], alpha)
        out[r] = float((s[perm[n_calibration:]] <= t).mean())
    return out


@attrs.define(kw_only=True)
class RegionCoverage(Evaluator):
    """Empirical coverage (with its standard error) and Monte-Carlo volume of prediction regions.

    Each subject is an :class:`~quadriga.artifacts.Estimate` whose ``predict`` is a
    ``ScoreRegion`` (``quadriga_std.estimators.regions``) with ``info["alpha"]``. Values per subject:

    - ``coverage``, ``coverage_se``: with ``resplits = 0``, the fraction of ``split`` rows inside
      their region and its binomial standard error; with ``resplits = R``, the mean over R
      re-splits of the pooled ``"calibration"`` and ``split`` rows into a calibration part (its
      original size) and a test part, the region's threshold recomputed on each, and the standard
      error ``sd / sqrt(R)`` over re-splits;
    - ``volume``, ``volume_se``: the mean Monte-Carlo volume of ``C(x)`` over the first
      ``volume_points`` rows of ``split`` (``mc_samples`` uniform draws in each region's bounding
      box), its standard error from the between-row spread and the Monte-Carlo error;
    - ``exact_volume``: the mean closed-form volume over the same rows, when the region has one.

    Units: coverage a fraction; volumes in units of y^q. Table ``summary``: one row per subject.

    Shapes: the reference's ``split(name) -> (X[n, p], Y[n, q])``; each subject's ``predict`` a
    ``ScoreRegion`` over ``R^q``.

    Raises:
        ConfigError: a subject without a region, a reference without the splits.

    Source: Feldman, Bates & Romano 2023, "Calibrated multiple-output quantile regression with
    representation learning", JMLR, sec. 6 (coverage over re-splits, region area by Monte Carlo).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Estimate,), "reference": (Dataset,)}

    split: str = param("test", doc="split whose rows are scored")
    resplits: int = param(
        0, doc="calibration/test re-splits (0: score the split as calibrated)", validator=non_negative_int
    )
    volume_points: int = param(
        100, doc="rows of the split at which volume is estimated", validator=int_at_least(1)
    )
    mc_samples: int = param(2000, doc="uniform draws per row for the volume", validator=int_at_least(1))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject (see the class docstring)."""
        try:
            X, Y = reference.split(self.split)
            if self.resplits:
                X_cal, Y_cal = reference.split("calibration")
        except (KeyError, AttributeError) as exc:
            raise ConfigError(f"the reference lacks a split ({exc}).", key="reference") from exc
        X, Y = np.asarray(X, np.float64), np.asarray(Y, np.float64).reshape(len(X), -1)
        rng = numpy_rng(generator)
        values: dict[str, float] = {}
        rows = []
        for name, est in named(subject).items():
            region: Any = getattr(est, "predict", None)
            if not hasattr(region, "contains") or not hasattr(region, "box"):
                raise ConfigError(f"subject '{name}' has no region predictor (a ScoreRegion).", key="subject")
            res: dict[str, float] = {}
            if self.resplits:
                alpha = float(est.info["alpha"])
                Xp = np.vstack([np.asarray(X_cal, np.float64), X])
                Yp = np.vstack([np.asarray(Y_cal, np.float64).reshape(len(X_cal), -1), Y])
                cov = resplit_coverage(region, Xp, Yp, len(X_cal), alpha, self.resplits, rng)
                res["coverage"] = float(cov.mean())
                res["coverage_se"] = (
                    float(cov.std(ddof=1) / math.sqrt(len(cov))) if len(cov) > 1 else math.nan
                )
            else:
                hit = region.contains(X, Y)
                res["coverage"] = float(hit.mean())
                res["coverage_se"] = float(math.sqrt(res["coverage"] * (1 - res["coverage"]) / len(hit)))
            Xv = X[: self.volume_points]
            vol, vol_se = monte_carlo_volume(region, Xv, self.mc_samples, rng)
            res["volume"] = float(vol.mean())
            between = vol.std(ddof=1) ** 2 / len(vol) if len(vol) > 1 else 0.0
            res["volume_se"] = float(math.sqrt(between + np.sum(vol_se**2) / len(vol) ** 2))
            if region.volume is not None:
                res["exact_volume"] = float(np.mean(region.volume(Xv, region.threshold)))
            values.update({f"{name}/{k}": v for k, v in res.items()})
            rows.append({"subject": name, **res})
        return Metrics(
            values=values, tables={"summary": rows}, info={"split": self.split, "resplits": self.resplits}
        )
