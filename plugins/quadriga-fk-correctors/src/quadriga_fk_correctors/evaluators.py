"""``mode-weight-error``: how much mass a sampler puts on each mode of a composed target.

Source: the mode-weight diagnostic of Skreta et al. 2025 (arXiv 2503.02819), sec. 5.1 (mass per
mode of the annealed / product targets), here as a total-variation distance between mode masses.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.seeding import child_generator
from quadriga.validators import positive_int

__all__ = ["ModeWeightError", "mode_masses"]


def mode_masses(target: Any, x: torch.Tensor, log_weights: Any, num_modes: int) -> torch.Tensor:
    """Weighted mass per mode label ``target.assign(x)``: ``Tensor[n, d] -> Tensor[num_modes]`` (sum 1)."""
    n = x.shape[0]
    if log_weights is None:
        w = torch.full((n,), 1.0 / n, dtype=torch.float64)
    else:
        w = torch.softmax(torch.as_tensor(log_weights).detach().cpu().to(torch.float64).reshape(-1), 0)
    labels = target.assign(x)
    return torch.zeros(num_modes, dtype=torch.float64).index_add_(0, labels, w)


@attrs.define(kw_only=True)
class ModeWeightError(Evaluator):
    """Total variation ``0.5 sum_m |mass_subject(m) - mass_exact(m)|`` over the modes of expert 0.

    Modes are the Bayes components of the target's first expert (``target.assign``); the exact
    masses are those of ``num_reference_samples`` exact draws of the target (Monte-Carlo standard
    error about ``sqrt(p (1 - p) / n)`` per mode). Subject weights (``log_weights``) are respected.

    Shapes: subject ``Samples.x: Tensor[n, d]`` (any device); values ``"<subject>/mode_weight_tv"``
    (fraction in [0, 1]) and ``"<subject>/mode_mass_<m>"`` for each mode ``m``, plus
    ``"reference/mode_mass_<m>"``.

    Units: masses and TV are fractions in [0, 1].

    Raises:
        ConfigError: a subject that is not Samples, a reference without ``assign`` and exact ``sample``.

    Source: Skreta et al. 2025 (arXiv 2503.02819), sec. 5.1 (mode weights of annealed targets).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {
            "composed": {
                "use": "fkc-target",
                "composition": "anneal",
                "beta": 2.0,
                "experts": [{"means": [[-2.0], [2.0]], "scale": [0.5]}],
            }
        },
        "stage": {
            "draws": {"use": "fkc", "inputs": {"target": "composed"}, "num_particles": 16, "num_steps": 8}
        },
        "inputs": {"subject": "draws", "reference": "composed"},
    }

    num_reference_samples: int = param(
        20000, doc="exact draws for the exact mode masses (count)", validator=positive_int
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Mode-weight TV of every subject against exact draws of ``reference``."""
        if reference is None or not callable(getattr(reference, "assign", None)):
            raise ConfigError(
                "give reference = '<fkc-target task>' (a target with assign and sample).", key="reference"
            )
        num_modes = int(reference.expert_models[0].mixture_weights.shape[0])
        y = reference.sample(self.num_reference_samples, generator=child_generator(generator, "reference"))
        exact = mode_masses(reference, torch.as_tensor(y, dtype=torch.float64), None, num_modes)
        values = {f"reference/mode_mass_{m}": float(v) for m, v in enumerate(exact)}
        for name, s in named(subject).items():
            if not isinstance(s, Samples):
                raise ConfigError(
                    f"subject '{name}' is a {type(s).__name__}, expected Samples.", key="subject"
                )
            x = torch.as_tensor(s.x).detach().cpu().to(torch.float64)
            mass = mode_masses(reference, x, s.log_weights, num_modes)
            values[f"{name}/mode_weight_tv"] = 0.5 * float((mass - exact).abs().sum())
            values.update({f"{name}/mode_mass_{m}": float(v) for m, v in enumerate(mass)})
        return Metrics(values=values)
