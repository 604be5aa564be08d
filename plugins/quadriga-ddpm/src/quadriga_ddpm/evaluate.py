"""``mixture-diagnostics``: score DDPM / DDIM samples against isotropic Gaussian-mixture targets.

For every subject (a ``Samples`` artifact) the evaluator finds its target among the references
(by dimension), then reports

* K = 1 and a subject produced by this plugin's samplers (its ``info`` carries ``betas``):
  the exact ``kl`` (nats) and ``tv`` of the chain's output law (:mod:`quadriga_ddpm.gaussian_exact`);
* always: ``weight_error``, ``radial_error`` and ``direction_w1`` (:mod:`quadriga_ddpm.metrics`).

With subjects at several ``num_steps`` it also fits the slope of log(error) against log(T) per
(schedule, target) and draws error against T, one line per dimension, one panel per K.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, ClassVar

import attrs

from quadriga import named, param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target
from quadriga.validators import one_of

__all__ = ["MIXTURE_API", "MixtureDiagnostics"]

#: what a reference target must provide (quadriga-std's ``gaussian-mixture``, ``sphere-mixture``).
MIXTURE_API = ("mixture_weights", "component_means", "component_covariances", "component_log_probs")


def _missing_api(target: Any) -> list[str]:
    """The names of :data:`MIXTURE_API` that ``target`` lacks (properties are looked up on the class,
    so a mixture not yet prepared is not evaluated here)."""
    missing = []
    for name in MIXTURE_API:
        if hasattr(type(target), name):
            continue
        try:
            if not hasattr(target, name):
                missing.append(name)
        except Exception:
            continue
    return missing


def _isotropic_sigma2(target: Any) -> float | None:
    """sigma^2 if the only component's covariance is sigma^2 I, else None."""
    import torch

    cov = target.component_covariances[0]
    s2 = float(cov[0, 0])
    return s2 if torch.allclose(cov, s2 * torch.eye(cov.shape[0], dtype=cov.dtype)) else None


@attrs.define(kw_only=True)
class MixtureDiagnostics(Evaluator):
    """Error of sampler outputs against Gaussian-mixture targets, and error-vs-T slopes.

    Inputs: ``subject`` one or several ``Samples``; ``reference`` one or several mixture targets
    (``mixture_weights``, ``component_means``, ``component_covariances``, ``component_log_probs``)
    of distinct dimensions.

    Returns (``Metrics``): values ``"<subject>/<metric>"``; ``"slope/<schedule>/K<k>/d<d>/<metric>"``
    when several T were run; a table with one row per subject; figure ``error_vs_T``.

    Shapes:
        each subject ``Samples.x: Tensor[n, d]``; a reference has weights ``Tensor[K]``, means
        ``Tensor[K, d]``, covariances ``Tensor[K, d, d]`` and responsibilities ``Tensor[n, K]``;
        ``info["betas"]`` of a subject is a list of T floats; every value is a scalar (float).

    Units:
        ``kl`` in nats; ``tv`` and ``weight_error`` are probabilities in [0, 1]; ``radial_error`` is a
        relative error (dimensionless); ``direction_w1`` is in the units of x; slopes are
        d log(error) / d log(T), dimensionless; T counts sampler steps.

    Raises:
        ConfigError: no reference; a reference that is not a Gaussian mixture (it lacks one of
            ``mixture_weights``, ``component_means``, ``component_covariances``,
            ``component_log_probs``), raised before any subject is scored; a subject's dimension
            matches no reference, or several references share it.

    Source: Li, Cai & Wei 2025, "Dimension-free convergence of diffusion models for approximate
    Gaussian mixtures", arXiv 2504.05300, Theorem 1 (TV error of DDPM with their schedule, free of
    d and K): these diagnostics measure that error (exactly for K = 1 through the linear-Gaussian
    recursion of Ho et al. 2020, Alg. 2) and its decay in T.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}

    figure_metric: str = param(
        "direction_w1",
        doc="metric drawn against T for K > 1 (K = 1 draws 'tv')",
        validator=one_of(("weight_error", "radial_error", "direction_w1")),
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score each subject; see the class docstring for inputs, outputs and errors."""
        from quadriga_ddpm.gaussian_exact import kl_isotropic, output_law, tv_isotropic
        from quadriga_ddpm.metrics import loglog_slope, mixture_metrics

        subjects = named(subject)
        refs = named(reference, "reference") if reference is not None else {}
        if not refs:
            raise ConfigError(
                "mixture-diagnostics needs reference = a mixture target (or several).", key="reference"
            )
        for name, t in refs.items():
            missing = _missing_api(t)
            if missing:
                raise ConfigError(
                    f"mixture-diagnostics needs Gaussian-mixture references, but '{name}' "
                    f"({type(t).__name__}) has no {', '.join(missing)}. Use a 'sphere-mixture' or "
                    "'gaussian-mixture' target as reference (for other targets use a sample-based "
                    "metric such as 'mmd').",
                    key="reference",
                )
        by_dim: dict[int, list[tuple[str, Any]]] = defaultdict(list)
        for name, t in refs.items():
            by_dim[int(t.dim)].append((name, t))
        values: dict[str, float] = {}
        table, groups = [], defaultdict(list)
        for sname, s in subjects.items():
            cands = by_dim.get(int(s.x.shape[1]), [])
            if len(cands) != 1:
                raise ConfigError(
                    f"subject '{sname}' has dimension {s.x.shape[1]}: "
                    f"{'no reference' if not cands else 'several references'} of that dimension "
                    f"(references: {', '.join(f'{n} (d={t.dim})' for n, t in refs.items())}). "
                    "Give one target per dimension.",
                    key="reference",
                )
            tname, target = cands[0]
            k = int(target.mixture_weights.shape[0])
            row: dict[str, Any] = {
                "subject": sname,
                "target": tname,
                "K": k,
                "d": int(target.dim),
                "T": s.info.get("num_steps"),
                "schedule": s.info.get("schedule", "?"),
            }
            row.update(mixture_metrics(target, s.x))
            sigma2 = _isotropic_sigma2(target) if k == 1 else None
            if sigma2 is not None and s.info.get("betas") is not None:
                import torch

                betas = torch.tensor(s.info["betas"], dtype=torch.float64)
                m, s2 = output_law(
                    betas,
                    sigma2,
                    method=s.info.get("method", "ddpm"),
                    variance=s.info.get("variance", "beta"),
                    eta=s.info.get("eta", 0.0),
                )
                gap = abs(1 - m) * float(target.component_means[0].norm())
                row["kl"] = kl_isotropic(gap, s2, sigma2, int(target.dim))
                row["tv"] = tv_isotropic(gap, s2, sigma2, int(target.dim))
            for key, v in row.items():
                if isinstance(v, float):
                    values[f"{sname}/{key}"] = v
            table.append(row)
            if row["T"] is not None:
                groups[(row["schedule"], k, row["d"])].append(row)
        figures = {}
        if any(len({r["T"] for r in rs}) >= 3 for rs in groups.values()):
            for (schedule, k, d), rs in groups.items():
                rs.sort(key=lambda r: r["T"])
                for metric in ("kl", "tv", "weight_error", "radial_error", "direction_w1"):
                    if metric in rs[0]:
                        slope, _ = loglog_slope([r["T"] for r in rs], [r[metric] for r in rs])
                        if math.isfinite(slope):
                            values[f"slope/{schedule}/K{k}/d{d}/{metric}"] = slope
            figures["error_vs_T"] = self._figure(groups)
        return Metrics(values=values, tables={"subjects": table}, figures=figures)

    def _figure(self, groups: dict[tuple, list[dict[str, Any]]]) -> Any:
        from matplotlib.figure import Figure

        ks = sorted({k for _, k, _ in groups})
        fig = Figure(figsize=(4.2 * len(ks), 3.4), layout="constrained")
        axes = fig.subplots(1, len(ks), squeeze=False)[0]
        dims = sorted({d for _, _, d in groups})
        colors = {d: f"C{i}" for i, d in enumerate(dims)}
        for ax, k in zip(axes, ks, strict=False):
            metric = "tv" if k == 1 else self.figure_metric
            for (schedule, kk, d), rs in sorted(groups.items()):
                if kk != k or metric not in rs[0]:
                    continue
                ax.loglog(
                    [r["T"] for r in rs],
                    [r[metric] for r in rs],
                    marker="o",
                    color=colors[d],
                    linestyle="-" if schedule == "theory" else "--",
                    label=f"d={d} {schedule}",
                )
            ax.set(title=f"K={k}", xlabel="T (steps)", ylabel=metric)
            ax.legend(fontsize=7)
        return fig
