"""``posterior-diagnostics``: importance-sampling and posterior-specific numbers for the flow samplers.

For each ``Samples`` subject (self-normalised weights ``W`` from ``log_weights``, uniform when absent):

- ``ess`` (Kish, ``1 / sum W^2``, a count) and ``ess_fraction`` (``ess / n``);
- ``unique_fraction`` and ``velocity_evals``, copied from the sampler's ``info`` when present;
- with a ``linear-gaussian-posterior`` reference: ``log_evidence_error`` (``log Ẑ - log p(y)``, nats,
  when the sampler reports ``log_evidence``), ``mode_weight_tv`` (total variation between the
  weighted masses of the posterior components, each particle assigned to its most responsible
  component, and the exact posterior weights), and ``mean_error`` (``|sum W x - E[x | y]|`` divided
  by ``sqrt(tr Cov[x | y])``, dimensionless).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named

__all__ = ["PosteriorDiagnostics"]


@attrs.define(kw_only=True)
class PosteriorDiagnostics(Evaluator):
    """ESS, evidence error, mode-weight error and mean error of (weighted) posterior samples.

    Shapes: subject ``x: Tensor[n, d]`` with optional ``log_weights: Tensor[n]``; every value a float,
    written ``"<subject>/<metric>"``; ``tables["summary"]`` one row per subject.
    Units: ``ess`` and ``velocity_evals`` counts; ``ess_fraction``, ``unique_fraction``,
    ``mode_weight_tv`` in [0, 1]; ``log_evidence_error`` in nats; ``mean_error`` dimensionless.

    Raises:
        ConfigError: a subject that is not ``Samples`` or whose ``log_weights`` do not match ``x``.

    Source: Kong, Liu & Wong 1994 (ESS); the posterior mixture of Bishop 2006, eqs. 2.113-2.117.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"posterior": {"use": "linear-gaussian-posterior", "dim": 2, "num_components": 2}},
        "stage": {
            "draws": {"use": "fm-is", "inputs": {"target": "posterior"}, "num_particles": 16, "num_steps": 8}
        },
        "inputs": {"subject": "draws", "reference": "posterior"},
    }

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any = None) -> Metrics:
        """Compute the diagnostics of every subject (``generator`` is unused: nothing is random)."""
        values: dict[str, float] = {}
        rows = []
        for name, s in named(subject).items():
            if not isinstance(s, Samples):
                raise ConfigError(
                    f"subject '{name}' is a {type(s).__name__}, expected Samples.", key="subject"
                )
            x = torch.as_tensor(s.x).detach().cpu().to(torch.float64)
            n = x.shape[0]
            if s.log_weights is None:
                w = torch.full((n,), 1.0 / n, dtype=torch.float64)
            else:
                lw = torch.as_tensor(s.log_weights).detach().cpu().to(torch.float64).reshape(-1)
                if lw.shape[0] != n:
                    raise ConfigError(
                        f"subject '{name}': {lw.shape[0]} log weights for {n} rows.", key="subject"
                    )
                w = torch.softmax(lw, 0)
            ess = float(1.0 / (w * w).sum())
            row: dict[str, float] = {"ess": ess, "ess_fraction": ess / n}
            for key in ("unique_fraction", "velocity_evals"):
                if key in s.info:
                    row[key] = float(s.info[key])
            post = getattr(reference, "posterior", None)
            if post is not None:
                if "log_evidence" in s.info:
                    row["log_evidence_error"] = float(s.info["log_evidence"]) - float(reference.log_evidence)
                assign = post.component_log_probs(x).argmax(-1)
                mass = torch.zeros(post.num_components, dtype=torch.float64).index_add_(0, assign, w)
                row["mode_weight_tv"] = 0.5 * float((mass - post.weights).abs().sum())
                row["mean_error"] = float((w @ x - post.mean).norm() / post.covariance.trace().sqrt())
            rows.append({"subject": name, **row})
            values.update({f"{name}/{k}": float(v) for k, v in row.items()})
        return Metrics(values=values, tables={"summary": rows})
