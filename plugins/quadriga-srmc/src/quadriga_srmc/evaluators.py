"""Replicate-chain metrics for variance-reduction samplers: MSE of chain means, Ising magnetization.

Each chain of a ``Samples`` artifact is treated as one replicate of the ergodic-average
estimator, so the spread of the per-chain estimates around the exact value is the
estimator's error. Medians and their bootstrap intervals are used because the per-chain
MSE is heavy-tailed (a few slowly mixing chains dominate the mean).

Source: the evaluation protocol of Hu et al. 2026, arXiv 2604.22948, Sec. 5 (MSE of the
post-burn-in mean over replicate chains); percentile bootstrap (Efron & Tibshirani 1993, ch. 13).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.seeding import child_numpy_rng
from quadriga.validators import in_range, int_at_least

__all__ = [
    "MagnetizationError",
    "ReplicateMeanMSE",
    "bootstrap_median",
    "bootstrap_median_ratio",
    "chain_means",
    "exact_expectation",
]


def chain_means(samples: Any, name: str = "subject") -> np.ndarray:
    """Per-chain mean of the stored draws: ``ndarray[c, d]`` float64.

    Raises:
        ConfigError: the artifact has no ``chains`` (a sampler that ran no Markov chains).
    """
    chains = getattr(samples, "chains", None)
    if chains is None:
        raise ConfigError(
            f"subject '{name}' has no chains; this metric needs a Markov-chain sampler "
            "(Samples.chains of shape [chains, draws, d]).",
            key="subject",
        )
    return np.asarray(
        chains.double().mean(1).numpy() if hasattr(chains, "double") else chains, dtype=np.float64
    )


def bootstrap_median(
    values: np.ndarray, rng: np.random.Generator, num: int, level: float
) -> tuple[float, float]:
    """Percentile-bootstrap interval ``(low, high)`` of the median of ``values`` (``ndarray[c]``)."""
    idx = rng.integers(0, len(values), size=(num, len(values)))
    meds = np.median(values[idx], axis=1)
    a = (1 - level) / 2
    return float(np.quantile(meds, a)), float(np.quantile(meds, 1 - a))


def bootstrap_median_ratio(
    num_: np.ndarray, den: np.ndarray, rng: np.random.Generator, num: int, level: float
) -> tuple[float, float, float]:
    """``(ratio, low, high)``: median(num_)/median(den) with an independent two-sample bootstrap interval."""
    i = rng.integers(0, len(num_), size=(num, len(num_)))
    j = rng.integers(0, len(den), size=(num, len(den)))
    ratios = np.median(num_[i], axis=1) / np.median(den[j], axis=1)
    a = (1 - level) / 2
    return (
        float(np.median(num_) / np.median(den)),
        float(np.quantile(ratios, a)),
        float(np.quantile(ratios, 1 - a)),
    )


def _split_intervals(
    subject: str, row: dict[str, Any], chains: int, num_bootstrap: int, level: float
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """A row's ``values`` (keyed ``subject/metric``) and the ``intervals`` of those with ``_low``/``_high``.

    ``{"mse_median": m, "mse_median_low": lo, "mse_median_high": hi}`` gives the value
    ``subject/mse_median`` and its interval ``{"low": lo, "high": hi, "level", "method"}``
    (:attr:`quadriga.artifacts.Metrics.intervals`): one value with its interval, not three metrics.
    """
    ends = {k[: -len("_low")] for k in row if k.endswith("_low") and f"{k[: -len('_low')]}_high" in row}
    values = {
        f"{subject}/{k}": v
        for k, v in row.items()
        if k != "subject" and not (k.endswith(("_low", "_high")) and k.rsplit("_", 1)[0] in ends)
    }
    intervals = {
        f"{subject}/{k}": {
            "low": row[f"{k}_low"],
            "high": row[f"{k}_high"],
            "level": level,
            "method": _method(k, chains, num_bootstrap),
        }
        for k in ends
    }
    return values, intervals


def _method(metric: str, chains: int, num_bootstrap: int) -> str:
    """How :func:`bootstrap_median` or :func:`bootstrap_median_ratio` computed ``metric``'s interval."""
    if metric.endswith("ratio"):
        return (
            f"percentile bootstrap of the ratio of medians, subject and baseline chains resampled "
            f"independently ({num_bootstrap} resamples)"
        )
    return f"percentile bootstrap of the median over {chains} chains ({num_bootstrap} resamples)"


def _check_common(instance: Any, baseline: str, subjects: dict[str, Any]) -> None:
    if baseline and baseline not in subjects:
        raise ConfigError(
            f"baseline '{baseline}' is not among the subjects {sorted(subjects)}; "
            "name one of them or leave baseline empty.",
            key="baseline",
        )


@attrs.define(kw_only=True)
class _ReplicateEvaluator(Evaluator):
    """Shared parameters of the evaluators over replicate chains: a baseline subject and bootstrap intervals.

    The bootstrap resamples come from the ``"bootstrap"`` stream of the stage generator.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}

    baseline: str = param("", doc="subject (stage) name to divide the median MSEs by; empty for none")
    num_bootstrap: int = param(
        2000,
        doc="bootstrap resamples for the intervals",
        validator=int_at_least(100),
    )
    level: float = param(
        0.95,
        doc="confidence level of the intervals",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )


@attrs.define(kw_only=True)
class ReplicateMeanMSE(_ReplicateEvaluator):
    """MSE of each chain's post-burn-in mean against the target's exact mean.

    For chain k with mean m_k (``Tensor[d]``) the error is ||m_k - mu||^2 / d (per-dimension
    MSE, units of x squared). Values per subject: ``mse_median`` with its interval in
    ``Metrics.intervals`` (bootstrap over chains), ``mse_mean``, ``asymptotic_variance`` (draws
    per chain times mse_mean), ``acceptance_rate`` and ``score_evals`` from the sampler's info, and with a
    ``baseline`` ``mse_ratio`` (median / baseline median) with its interval. The table
    ``replicate_mse`` keeps each row with the interval ends as columns.

    The table ``per_chain`` has one row per (subject, chain), so that a claim can read the chains
    as replicates (:class:`quadriga.claims.Rows`): ``subject`` (the stage name), ``sampler`` (the
    stage table it was expanded from, ``"mala"`` for ``mala[step_size=0.1]``), one column per
    setting of the subject's matrix point, named by the last part of its key
    (``base_kernel.step_size`` -> ``step_size``, so one setting varied in differently nested
    components reads as one column; the whole key when two last parts coincide), ``chain``
    (0-based), ``mse`` (the chain's error above; its mean over chains is ``mse_mean``), and, when
    the chains hold draws (not running means, ``info["store"] == "means"``), ``moved`` (the
    fraction of consecutive stored draws that differ: the post-burn-in acceptance when every
    draw is kept; dimensionless), ``max_abs`` (the largest ``|x_i|`` over the chain's stored
    draws, units of x) and, when the reference has a ``covariance``, ``max_abs_sd`` (``max_abs``
    over the reference's largest marginal standard deviation: a chain that ran off reads in the
    thousands).

    With ``num_chains`` > 0 only the first ``num_chains`` chains of every subject are evaluated
    (every value, interval and table computed from the chains; ``acceptance_rate`` and
    ``score_evals`` stay the sampler's, over all its chains), so that one setting fixes the number
    of replicate chains of several sampler stages (the claim ``srmc-variance-reduction`` sets it
    to its replicates).

    Raises:
        ConfigError: a subject without chains, a reference without an exact ``mean``, an unknown
            baseline, a subject with fewer chains than ``num_chains``.

    Source: Hu et al. 2026, Sec. 5 (MSE of the mean over replicates).
    """

    num_chains: int = param(
        0,
        doc="evaluate the first num_chains chains of every subject (0: all of them)",
        validator=int_at_least(0),
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compute the metrics for one subject or ``{name: Samples}`` against ``reference`` (a Target)."""
        subjects = named(subject)
        _check_common(self, self.baseline, subjects)
        mu = getattr(reference, "mean", None)
        if mu is None:
            raise ConfigError(
                "replicate-mean-mse needs a reference target with an exact mean.", key="reference"
            )
        mu = np.asarray(mu.detach().cpu().double().numpy() if hasattr(mu, "double") else mu, dtype=np.float64)
        rng = child_numpy_rng(generator, "bootstrap")
        subjects = {n: self._first_chains(n, s) for n, s in subjects.items()}
        mses = {n: ((chain_means(s, n) - mu) ** 2).mean(1) for n, s in subjects.items()}
        values: dict[str, float] = {}
        intervals: dict[str, dict[str, Any]] = {}
        rows = []
        per_chain: list[dict[str, Any]] = []
        sd = _largest_sd(reference)
        for n, s in subjects.items():
            e = mses[n]
            per_chain.extend(_chain_rows(n, s, e, sd))
            lo, hi = bootstrap_median(e, rng, self.num_bootstrap, self.level)
            draws = s.info.get("draws_per_chain") or (s.chains.shape[1] * s.info.get("thin", 1))
            row = {
                "subject": n,
                "mse_median": float(np.median(e)),
                "mse_median_low": lo,
                "mse_median_high": hi,
                "mse_mean": float(e.mean()),
                "asymptotic_variance": float(draws * e.mean()),
                "chains": len(e),
            }
            for key in ("acceptance_rate", "score_evals"):
                if key in s.info:
                    row[key] = float(s.info[key])
            if self.baseline and n != self.baseline:
                r, rlo, rhi = bootstrap_median_ratio(
                    e, mses[self.baseline], rng, self.num_bootstrap, self.level
                )
                row.update(mse_ratio=r, mse_ratio_low=rlo, mse_ratio_high=rhi)
            rows.append(row)
            v, ci = _split_intervals(n, row, len(e), self.num_bootstrap, self.level)
            values.update(v)
            intervals.update(ci)
        return Metrics(
            values=values,
            intervals=intervals,
            tables={"replicate_mse": rows, "per_chain": per_chain},
            figures={"mse": _box(mses)},
        )

    def _first_chains(self, name: str, samples: Any) -> Any:
        """``samples`` with its first ``num_chains`` chains only (all of them when it is 0).

        Raises:
            ConfigError: the subject has no chains or fewer than ``num_chains``.
        """
        chains = getattr(samples, "chains", None)
        if not self.num_chains or chains is None:
            return samples
        if chains.shape[0] < self.num_chains:
            raise ConfigError(
                f"subject '{name}' has {chains.shape[0]} chains but num_chains = {self.num_chains}; "
                "run the sampler with at least as many chains or lower num_chains.",
                key="num_chains",
            )
        kept = chains[: self.num_chains]
        return Samples(x=kept.reshape(-1, kept.shape[-1]), chains=kept, info=dict(samples.info))


def _largest_sd(reference: Any) -> float | None:
    """The reference's largest marginal standard deviation, or ``None`` without a ``covariance``."""
    cov = getattr(reference, "covariance", None)
    if cov is None:
        return None
    cov = np.asarray(cov.detach().cpu().double().numpy() if hasattr(cov, "double") else cov, dtype=np.float64)
    return float(np.sqrt(np.max(np.diag(np.atleast_2d(cov)))))


def _point_columns(name: str) -> dict[str, Any]:
    """``{"sampler": source, setting: value, ...}`` of a stage name (``srmala[base_kernel.step_size=0.1]``).

    A setting is named by the last part of its dotted key, or by the whole key where two last parts
    coincide; a name that is not a stage name (a subject named from Python) is its own ``sampler``.
    """
    from quadriga.stage_names import parse_stage_name

    try:
        parsed = parse_stage_name(name)
    except ConfigError:
        return {"sampler": name}
    point = parsed.point_dict()
    short = [k.rsplit(".", 1)[-1] for k in point]
    names = short if len(set(short)) == len(short) else list(point)
    return {"sampler": parsed.source, **dict(zip(names, point.values(), strict=True))}


def _chain_rows(name: str, samples: Any, errors: np.ndarray, sd: float | None) -> list[dict[str, Any]]:
    """The ``per_chain`` rows of one subject (see :class:`ReplicateMeanMSE`).

    ``errors`` is ``ndarray[c]``; ``sd`` the reference's largest marginal s.d. (``None``: no ``max_abs_sd``).
    """
    head = {"subject": name, **_point_columns(name)}
    chains = samples.chains
    moved = max_abs = None
    if samples.info.get("store", "draws") != "means" and hasattr(chains, "double"):
        x = chains.double()
        max_abs = x.abs().amax(dim=(1, 2)).numpy()
        if x.shape[1] > 1:
            moved = (x[:, 1:] != x[:, :-1]).any(-1).double().mean(1).numpy()
    out = []
    for k, e in enumerate(errors):
        row = {**head, "chain": k, "mse": float(e)}
        if moved is not None:
            row["moved"] = float(moved[k])
        if max_abs is not None:
            row["max_abs"] = float(max_abs[k])
            if sd is not None:
                row["max_abs_sd"] = float(max_abs[k]) / sd
        out.append(row)
    return out


def _box(mses: dict[str, np.ndarray], reference: str = "the exact mean") -> Any:
    """Box plot of the per-chain MSEs, one box per subject, on a log axis.

    The boxes are drawn on log10 of the MSE (it spans decades across chains) and labelled in
    powers of ten: box, the quartiles of the chains' log10 MSE; line, the median; whiskers, the
    furthest chain within 1.5 IQR of the box; points, the chains beyond. n (chains) is under
    each box; the unit is the squared unit of x.
    """
    from matplotlib.figure import Figure

    names = list(mses)
    fig = Figure(figsize=(max(5.0, 1.6 + 1.15 * len(mses)), 4.2), layout="constrained")
    ax = fig.add_subplot()
    logs = [np.log10(np.maximum(v, 1e-300)) for v in mses.values()]
    ax.boxplot(
        logs,
        whis=1.5,
        medianprops={"color": "tab:red"},
        flierprops={"marker": "o", "markersize": 3},
    )
    _log_ticks(ax, np.concatenate(logs) if logs else np.zeros(1))
    labels = [f"{n}\n(n = {len(v)} chains)" for n, v in mses.items()]
    many = len(names) > 3
    ax.set_xticks(
        range(1, len(names) + 1),
        labels,
        rotation=30 if many else 0,
        ha="right" if many else "center",
        fontsize=8,
    )
    ax.set_ylabel("MSE of a chain's mean\n(squared units of x, log scale)")
    ax.set_title(
        f"Per-chain MSE of the post-burn-in mean against {reference}\n"
        "box: quartiles; red line: median; points: chains beyond the whiskers;\n"
        "whiskers: furthest chain within 1.5 IQR of the box (IQR of log10 MSE)",
        fontsize=8,
    )
    return fig


def _log_ticks(ax: Any, logs: np.ndarray) -> None:
    """Label a log10-valued y axis: ``10^k`` at whole decades when the data span two or more,
    otherwise plain numbers at 1, 2 and 5 times a power of ten (so no two ticks read the same)."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    lo, hi = float(np.min(logs)), float(np.max(logs))
    if hi - lo >= 2:
        ticks = list(range(int(np.floor(lo)), int(np.ceil(hi)) + 1))
        labels = [f"$10^{{{k}}}$" for k in ticks]
    else:
        ticks, labels = [], []
        for k in range(int(np.floor(lo)) - 1, int(np.ceil(hi)) + 1):
            for m in (1, 2, 5):
                t = np.log10(m) + k
                if lo - 0.05 <= t <= hi + 0.05:
                    ticks.append(t)
                    labels.append(f"{m * 10.0**k:g}")
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FixedFormatter(labels))
    ax.yaxis.set_minor_locator(NullLocator())


def exact_expectation(target: Any, f: Any, max_sites: int = 20) -> float:
    """Exact E_pi[f(x)] over {-1, +1}^d by enumeration of ``target.log_prob``.

    Args:
        target: ``dim`` and ``log_prob(Tensor[n, d]) -> Tensor[n]`` on spins.
        f: ``Tensor[n, d] -> Tensor[n]``.
        max_sites: refuse d above this (2^d states).

    Raises:
        ConfigError: when d > max_sites.
    """
    import torch

    d = int(target.dim)
    if d > max_sites:
        raise ConfigError(
            f"exact enumeration of 2^{d} states is too large (limit 2^{max_sites}); use a smaller lattice.",
            key="reference",
        )
    codes = torch.arange(2**d).unsqueeze(-1)
    states = (2 * ((codes >> torch.arange(d)) & 1) - 1).to(torch.float64)
    p = torch.softmax(target.log_prob(states).double(), 0)
    return float((p * f(states).double()).sum())


@attrs.define(kw_only=True)
class MagnetizationError(_ReplicateEvaluator):
    """Per-chain error of the magnetization estimates of a spin system against exact enumeration.

    With m(x) = mean_i x_i, each chain estimates E[m] and E[|m|] by its post-burn-in average.
    Values per subject: ``mag_mse`` and ``abs_mag_mse`` (mean over chains of the squared error,
    dimensionless), ``mag_mse_median`` with bootstrap interval, ``abs_mag_bias`` (pooled estimate
    minus exact), and with a ``baseline`` ``mag_mse_ratio`` (median ratio) with interval.
    ``abs_mag`` needs the draws (``store = "draws"``).

    Shapes:
        each subject's ``Samples.chains`` is ``Tensor[c, n, d]`` of spins in {-1, +1} (c chains, n
        stored draws, d sites); per-chain errors ``ndarray[c]``; the reference's ``log_prob`` is
        evaluated on all ``2^d`` states ``Tensor[2^d, d]``; every value is a scalar (float).

    Units:
        magnetization is dimensionless (a mean of spins, in [-1, 1]); ``mag_mse`` and ``abs_mag_mse``
        are squared magnetization, ``abs_mag_bias`` magnetization; ratios are dimensionless;
        ``level`` is a probability and ``num_bootstrap`` a count.

    Raises:
        ConfigError: an unknown ``baseline``; a reference without ``log_prob``; a lattice of more
            than 20 sites (too large to enumerate); a subject without chains or whose chains have
            another number of sites than the reference's ``dim``; bad parameters when built.

    Source: exact small-lattice Ising references as in Hu et al. 2026, "Score-Repellent Monte
    Carlo", arXiv 2604.22948, Sec. 5 (discrete targets, error over replicate chains); percentile
    bootstrap intervals (Efron & Tibshirani 1993, ch. 13).
    """

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compute the metrics for one subject or ``{name: Samples}`` against an Ising ``reference``."""
        subjects = named(subject)
        _check_common(self, self.baseline, subjects)
        if reference is None or not hasattr(reference, "log_prob"):
            raise ConfigError("magnetization-error needs the spin target as reference.", key="reference")
        exact_m = exact_expectation(reference, lambda s: s.mean(-1))
        exact_abs = exact_expectation(reference, lambda s: s.mean(-1).abs())
        rng = child_numpy_rng(generator, "bootstrap")
        errs, values, rows = {}, {}, []
        intervals: dict[str, dict[str, Any]] = {}
        for n, s in subjects.items():
            means = chain_means(s, n)
            if means.shape[1] != int(reference.dim):
                raise ConfigError(
                    f"subject '{n}' has {means.shape[1]} sites per draw but the reference has "
                    f"{int(reference.dim)}; evaluate it against its own spin target.",
                    key="subject",
                )
            err = (means.mean(1) - exact_m) ** 2
            errs[n] = err
            lo, hi = bootstrap_median(err, rng, self.num_bootstrap, self.level)
            row = {
                "subject": n,
                "mag_mse": float(err.mean()),
                "mag_mse_median": float(np.median(err)),
                "mag_mse_median_low": lo,
                "mag_mse_median_high": hi,
                "exact_abs_mag": exact_abs,
            }
            if s.info.get("store", "draws") == "draws":
                absm = s.chains.double().mean(-1).abs().mean(1).numpy()
                row.update(
                    abs_mag_mse=float(((absm - exact_abs) ** 2).mean()),
                    abs_mag_bias=float(absm.mean() - exact_abs),
                )
            if "acceptance_rate" in s.info:
                row["acceptance_rate"] = float(s.info["acceptance_rate"])
            rows.append(row)
        for row in rows:
            n = row["subject"]
            if self.baseline and n != self.baseline:
                r, rlo, rhi = bootstrap_median_ratio(
                    errs[n], errs[self.baseline], rng, self.num_bootstrap, self.level
                )
                row.update(mag_mse_ratio=r, mag_mse_ratio_low=rlo, mag_mse_ratio_high=rhi)
            v, ci = _split_intervals(n, row, len(errs[n]), self.num_bootstrap, self.level)
            values.update(v)
            intervals.update(ci)
        return Metrics(values=values, intervals=intervals, tables={"magnetization": rows})
