"""``ground-truth-error``: a sampler's moments of inference-gym's sample transformation vs. ground truth."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga import named, param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target
from quadriga.stage_names import replicate_groups
from quadriga.validators import in_range, int_at_least, positive

__all__ = ["SUMMARY_METRICS", "GroundTruthError"]

#: the per-subject metrics also summarised over the replicates of one configuration
SUMMARY_METRICS = (
    "standardized_error_rms",
    "standardized_error_max",
    "gt_se_error_rms",
    "sd_rel_error_max",
    "ess_bulk_min",
    "ess_per_grad",
)


def _density_evals(s: Samples) -> float:
    """Density evaluations of the sampling phase: ``density_evals``, else score (or log-density) rows."""
    info = s.info
    if info.get("density_evals"):
        return float(info["density_evals"])
    return float(info.get("score_evals") or info.get("log_prob_evals") or 0.0)


@attrs.define(kw_only=True)
class GroundTruthError(Evaluator):
    """Error of each subject's posterior moments against inference-gym's ground truth, and ESS per gradient.

    The draws are mapped through the reference's sample transformation (``reference.transform``).
    Per coordinate j of it: the standardized error of the mean ``z_j = (mean_j - m_j) / sd_j`` (m, sd:
    ground-truth mean and standard deviation), the same error in units of the ground truth's own
    Monte Carlo standard error ``e_j = (mean_j - m_j) / se_j`` (only where inference-gym ships se;
    analytic ground truth has none), the relative error of the standard deviation and the bulk
    ESS (arviz, via :func:`quadriga.stats.ess`, on the subject's chains).

    Metrics per subject: ``standardized_error_rms`` = sqrt(mean_j z_j^2), ``standardized_error_max``
    = max_j |z_j|, ``gt_se_error_rms``, ``gt_se_error_max`` (from e_j), ``sd_rel_error_max`` =
    max_j |s_j / sd_j - 1|, ``ess_bulk_min``, ``ess_bulk_median`` (draws), ``density_evals`` (of the
    sampling phase: gradients, or log densities for a sampler without scores), ``ess_per_grad`` =
    ``ess_bulk_min / density_evals`` and, when the subject's info has them, ``acceptance_rate``,
    ``step_size``, ``tuning_density_evals``. A subject with a non-finite draw, or one beyond
    ``divergence_bound`` times the largest |m_j| + sd_j, gets only ``diverged = 1`` (else 0) and
    ``density_evals``, and is left out of the summaries over replicates.
    ``info["coordinates"][subject]`` lists z, e, s / sd - 1 and the ESS per coordinate.
    ``tables["summary"]``: one row per subject; ``tables["configs"]``:
    per configuration (the replicates ``name[i]`` of one stage) the mean of each of
    :data:`SUMMARY_METRICS` with a calibrated interval over replicates (n >= 2;
    :func:`quadriga.stats.interval`: Student t for a mean).

    Shapes: subject ``chains: Tensor[m, n, d]`` (or ``x: Tensor[n, d]`` as one chain); reference
    ``transform: Tensor[N, d] -> Tensor[N, k]`` and ground-truth vectors ``Tensor[k]``; every value is
    a float.
    Units: z and ``sd_rel_error`` are dimensionless (posterior sds); e in ground-truth standard errors;
    ESS in draws; ``ess_per_grad`` in effective draws per density evaluation (all chains together).

    Raises:
        ConfigError: a reference without ``transform``/ground truth, a subject that is not
            ``Samples``, dimensions that differ, fewer than 4 draws per chain.

    Source: the ground truth and its standard errors from Sountsov, Radul et al., "Inference Gym"
    (2020); bulk ESS from Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, "Rank-normalization,
    folding, and localization", Bayesian Analysis 16(2), sec. 3-4.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    #: the conformance checks score exact draws of the banana (the default Gaussian has no ground truth)
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"banana": {"use": "ig-banana"}},
        "stage": {"draws": {"use": "check-draws", "inputs": {"target": "banana"}}},
        "inputs": {"subject": "draws", "reference": "banana"},
    }
    level: float = param(
        0.95,
        doc="confidence level of the intervals over replicates (fraction)",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )
    divergence_bound: float = param(
        1e6,
        doc="a subject with a draw beyond this many times max_j(|m_j| + sd_j), or a non-finite one, "
        "counts as diverged (dimensionless)",
        validator=positive,
    )
    resamples: int = param(
        2000,
        doc="bootstrap resamples, where the interval's method resamples (a t interval does not) (count)",
        validator=int_at_least(100),
    )

    def _truth(self, reference: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        try:
            m = np.asarray(reference.ground_truth_mean, dtype=np.float64)
            sd = np.asarray(reference.ground_truth_std, dtype=np.float64)
            se = reference.ground_truth_mean_stderr
        except AttributeError:
            raise ConfigError(
                "ground-truth-error needs a reference with transform and ground truth "
                f"(an inference-gym target such as ig-eight-schools), not {type(reference).__name__}.",
                key="reference",
            ) from None
        return m, sd, None if se is None else np.asarray(se, dtype=np.float64)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score each subject against ``reference``'s ground truth; see the class docstring."""
        from quadriga import stats

        m, sd, se = self._truth(reference)
        values: dict[str, float] = {}
        rows, coords = [], {}
        for name, s in named(subject).items():
            if not isinstance(s, Samples):
                raise ConfigError(
                    f"ground-truth-error scores Samples; subject '{name}' is a {type(s).__name__}.",
                    key="inputs",
                )
            ch = torch.as_tensor(s.chains if s.chains is not None else s.x[None]).detach().cpu()
            if ch.shape[-1] != int(reference.dim):
                raise ConfigError(
                    f"subject '{name}' has dimension {ch.shape[-1]}, the reference {int(reference.dim)}.",
                    key="inputs",
                )
            if ch.shape[1] < 4:
                raise ConfigError(
                    f"subject '{name}' has {ch.shape[1]} draws per chain; need >= 4.", key="inputs"
                )
            with torch.no_grad():
                t = reference.transform(ch.reshape(-1, ch.shape[-1]).to(torch.float64))
            t = t.reshape(ch.shape[0], ch.shape[1], -1).numpy()
            if not np.isfinite(t).all() or np.abs(t).max() > self.divergence_bound * (np.abs(m) + sd).max():
                rows.append({"subject": name, "diverged": 1.0, "density_evals": _density_evals(s)})
                values.update({f"{name}/diverged": 1.0, f"{name}/density_evals": _density_evals(s)})
                continue
            flat = t.reshape(-1, t.shape[-1])
            z = (flat.mean(0) - m) / sd
            rel_sd = flat.std(0, ddof=1) / sd - 1.0
            ess = stats.ess(t, method="bulk")["ess"]
            grads = _density_evals(s)
            row: dict[str, Any] = {
                "subject": name,
                "standardized_error_rms": float(np.sqrt(np.mean(z**2))),
                "standardized_error_max": float(np.max(np.abs(z))),
                "sd_rel_error_max": float(np.max(np.abs(rel_sd))),
                "ess_bulk_min": float(np.min(ess)),
                "ess_bulk_median": float(np.median(ess)),
                "density_evals": grads,
                "diverged": 0.0,
            }
            per = {
                "standardized_error": z.tolist(),
                "sd_rel_error": rel_sd.tolist(),
                "ess_bulk": ess.tolist(),
            }
            if se is not None:
                e = (flat.mean(0) - m) / se
                row["gt_se_error_rms"] = float(np.sqrt(np.mean(e**2)))
                row["gt_se_error_max"] = float(np.max(np.abs(e)))
                per["gt_se_error"] = e.tolist()
            if grads > 0:
                row["ess_per_grad"] = row["ess_bulk_min"] / grads
            for key in ("acceptance_rate", "step_size", "tuning_density_evals"):
                if isinstance(s.info.get(key), (int, float)):
                    row[key] = float(s.info[key])
            rows.append(row)
            coords[name] = per
            values.update({f"{name}/{k}": v for k, v in row.items() if k != "subject"})
        configs = self._configs(rows, generator)
        tables = {"summary": rows, "configs": configs}
        return Metrics(values=values, tables=tables, info={"coordinates": coords})

    def _configs(self, rows: list[dict[str, Any]], generator: Any) -> list[dict[str, Any]]:
        """Mean and calibrated interval over the replicates of each configuration, per summary metric.

        The interval is :func:`quadriga.stats.interval`'s for a mean (Student t at the n used, with its
        skew note); ``interval`` names the methods used.
        """
        from quadriga import stats
        from quadriga.seeding import numpy_rng

        rng = numpy_rng(generator)
        by_name = {r["subject"]: r for r in rows}
        out = []
        for base, members in replicate_groups(by_name).items():
            rec: dict[str, Any] = {
                "config": base,
                "replicates": len(members),
                "diverged": int(sum(r.get("diverged", 0.0) for r in members.values())),
            }
            methods: dict[str, None] = {}  # the intervals' methods, in order, once each
            for key in SUMMARY_METRICS:
                vals = [r[key] for r in members.values() if key in r]
                if not vals:
                    continue
                rec["n"] = len(vals)
                ci = stats.interval(vals, "mean", level=self.level, resamples=self.resamples, rng=rng)
                rec[key], rec[f"{key}_low"], rec[f"{key}_high"] = ci.estimate, ci.low, ci.high
                methods.setdefault(ci.method, None)
            several = rec.get("n", 0) > 1
            rec["interval"] = f"{self.level:.0%} {'; '.join(methods)}" if several else "none (n < 2)"
            out.append(rec)
        return out
