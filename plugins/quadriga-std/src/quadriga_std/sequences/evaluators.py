"""Exact evaluation of sequence policies on an enumerable sequence space (:mod:`.space`)."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga import Evaluator, Metrics, named, param
from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.stage_names import replicate_groups
from quadriga.validators import probability
from quadriga_std.sequences.space import SequenceSpace, kl

__all__ = ["SequenceDivergence", "policy_metrics"]

_MEANS = ("kl_target_policy", "kl_target_policy_relative", "kl_policy_base", "moment", "moment_error")


def policy_metrics(
    log_pi: torch.Tensor, task: SequenceSpace, *, mode_threshold: float = 0.05
) -> dict[str, float]:
    """Exact metrics of a policy given by ``log pi`` on every sequence (``Tensor[V^L]``, normalised).

    Returns ``kl_target_policy`` = KL(p || pi) (the DPG objective), ``kl_policy_base`` = KL(pi || a)
    (drift from the base model), ``kl_target_base`` = KL(p || a) (the starting distance),
    ``kl_target_policy_relative`` = KL(p || pi) / KL(p || a) (1 at pi = a),
    ``moment`` = E_pi[phi], ``moment_error`` = |E_pi[phi] - mu_bar|, ``mean_reward`` = E_pi[phi],
    ``entropy`` (nats) and, when the task has modes, ``mode_coverage`` (number of modes with
    ``pi(x) >= mode_threshold``), ``mode_mass`` (pi's total mass on the modes) and ``mode_entropy``
    (entropy of pi restricted to the modes, renormalised; nats).

    Source: the metrics of Khalifa et al. 2021 (GDC), sec. 3 (KL to p, moment, KL to a) and of
    Zhu et al. 2025 (FlowRL), sec. 4 (mode coverage / diversity).
    """
    log_pi = log_pi.detach().double()
    log_a = task.base_log_probs().double()
    log_p = task.target_log_probs().double()
    phi = task.feature(task.sequences()).double()
    pi = log_pi.exp()
    out = {
        "kl_target_policy": kl(log_p, log_pi),
        "kl_policy_base": kl(log_pi, log_a),
        "kl_target_base": kl(log_p, log_a),
        "moment": float((pi * phi).sum()),
        "mean_reward": float((pi * phi).sum()),
        "entropy": float(-(pi * log_pi).sum()),
    }
    out["moment_error"] = abs(out["moment"] - task.target_moment)
    out["kl_target_policy_relative"] = out["kl_target_policy"] / out["kl_target_base"]
    modes = task.modes
    if modes is not None:
        m = pi[modes]
        out["mode_coverage"] = float((m >= mode_threshold).sum())
        out["mode_mass"] = float(m.sum())
        q = m / m.sum().clamp_min(1e-300)
        out["mode_entropy"] = float(-(q * q.clamp_min(1e-300).log()).sum())
    return out


@attrs.define(kw_only=True)
class SequenceDivergence(Evaluator):
    """Exact KL(p || pi), KL(pi || a), moment error and mode coverage of sequence policies.

    ``subject``: one or several ``Fitted`` whose ``model`` has ``all_log_probs()`` (a model of
    :mod:`quadriga_std.sequences.models`); ``reference``: the :class:`SequenceSpace` they were
    trained on. ``p ∝ a exp(lambda phi)`` uses the exact lambda (root finding), whatever lambda the
    learner estimated. Values ``<stage>/<metric>`` (:func:`policy_metrics`) and
    ``<base>/<metric>_mean`` over the replicates ``name[i]`` of one stage.

    Shapes:
        Every value is a scalar; the policy's distribution is ``Tensor[V^L]``.

    Units:
        KL and entropies in nats; moments and masses are probabilities; coverage is a count.

    Raises:
        ConfigError: no reference sequence space; a subject whose model has no ``all_log_probs``.

    Source: Khalifa et al. 2021 (GDC, arXiv 2012.11635), sec. 3.1 metrics; Zhu et al. 2025 (FlowRL,
    arXiv 2509.15207), sec. 4.3 (diversity).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (SequenceSpace,)}
    check_xfail: ClassVar[dict[str, str]] = {
        "run": "needs a sequence policy's Fitted (model.all_log_probs), which quadriga-std does not "
        "train; quadriga-gdc's pipeline and tests run it"
    }

    mode_threshold: float = param(0.05, doc="mass a mode needs to count as covered", validator=probability)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        if not isinstance(reference, SequenceSpace):
            raise ConfigError(
                "sequence-divergence needs the sequence space: "
                'inputs = { subject = [...], reference = "<task>" }.',
                key="reference",
            )
        values: dict[str, float] = {}
        subjects = named(subject)
        for name, art in subjects.items():
            model: Any = getattr(art, "model", None)
            if model is None or not hasattr(model, "all_log_probs"):
                raise ConfigError(
                    f"subject '{name}' is not a sequence model (no all_log_probs).", key="subject"
                )
            with torch.no_grad():
                metrics = policy_metrics(model.all_log_probs(), reference, mode_threshold=self.mode_threshold)
            values.update({f"{name}/{k}": v for k, v in metrics.items()})
        for base, members in replicate_groups(dict.fromkeys(subjects)).items():
            if len(members) < 2:
                continue
            for m in _MEANS:
                values[f"{base}/{m}_mean"] = float(np.mean([values[f"{n}/{m}"] for n in members]))
        return Metrics(values=values)
