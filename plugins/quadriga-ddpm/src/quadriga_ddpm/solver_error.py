"""Evaluator ``solver-error``: discretization error of ODE solvers against the reference solve.

Each subject (a ``Samples`` from a :class:`~quadriga_ddpm.ode_samplers.LambdaSolver`) is paired
with the reference (a ``reference-ode`` ``Samples``) that started from the same x_T (equal
``info["x_T_digest"]``) and ended at the same lambda; the error is then deterministic: no
sampling noise enters it. For subject ``name``:

* ``name/rms_error`` = sqrt(mean_i |x_i - x_ref,i|^2) (units of x; Euclidean norm per sample),
* ``name/max_error`` = max_i |x_i - x_ref,i|,
* ``name/nfe`` = the subject's model evaluations,
* and every number of the subject's ``info`` whose name starts with ``ems_`` (statistics a solver
  reports about itself, e.g. DPM-Solver-v3's EMS departure), copied for claims to read.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, named

__all__ = ["SolverError", "rms_error"]


def rms_error(x: torch.Tensor, x_ref: torch.Tensor) -> float:
    """sqrt(mean_i |x_i - x_ref,i|^2) for ``Tensor[n, d]`` pairs (units of x).

    Raises:
        ValueError: shapes differ.
    """
    if x.shape != x_ref.shape:
        raise ValueError(f"shapes differ: {tuple(x.shape)} and {tuple(x_ref.shape)}")
    diff = x.detach().cpu().to(torch.float64) - x_ref.detach().cpu().to(torch.float64)
    return math.sqrt(float(diff.square().sum(-1).mean()))


@attrs.define(kw_only=True)
class SolverError(Evaluator):
    """RMS and max distance of solver endpoints to the reference endpoints from the same x_T.

    Inputs: ``subject`` one or several solver ``Samples``; ``reference`` one or several
    ``reference-ode`` ``Samples`` (e.g. ``"reference[*]"``).

    Shapes: each subject's ``x: Tensor[n, d]`` and its reference's ``x: Tensor[n, d]`` (row i of
    both started from row i of the same x_T).

    Units: ``rms_error`` and ``max_error`` in units of x; ``nfe`` a count of model evaluations.

    Raises:
        ConfigError: no reference; a subject without ``x_T_digest``; no reference (or several)
            with the subject's x_T and end lambda.

    Source: the error to a high-accuracy reference ODE solution used by Lu et al. 2022 (sec. 6)
    and Zheng et al. 2023 (DPM-Solver-v3, sec. 5).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Samples,)}
    required_inputs: ClassVar[tuple[str, ...]] = ("subject", "reference")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Pair every subject with its reference and report the errors (see the module docstring)."""
        if reference is None:
            raise ConfigError(
                'solver-error needs reference = a reference-ode stage (e.g. "reference[*]").', key="reference"
            )
        refs = named(reference, "reference")
        values: dict[str, float] = {}
        for name, samples in named(subject).items():
            digest = samples.info.get("x_T_digest")
            if digest is None:
                raise ConfigError(
                    f"subject '{name}' has no x_T_digest: give a lambda-stepping ODE sampler.", key="subject"
                )
            end = float(samples.info.get("lambda_end", math.nan))
            cands = [
                r
                for r in refs.values()
                if r.info.get("x_T_digest") == digest
                and math.isclose(float(r.info.get("lambda_end", math.nan)), end, abs_tol=1e-12)
            ]
            if len(cands) != 1:
                raise ConfigError(
                    f"subject '{name}' matches {len(cands)} references by x_T and end lambda (needs 1): "
                    "give each replicate's reference-ode stage with the same schedule and t_end.",
                    key="reference",
                )
            diff = samples.x.detach().cpu().to(torch.float64) - cands[0].x.detach().cpu().to(torch.float64)
            norms = diff.square().sum(-1).sqrt()
            values[f"{name}/rms_error"] = rms_error(samples.x, cands[0].x)
            values[f"{name}/max_error"] = float(norms.max())
            values[f"{name}/nfe"] = float(samples.info.get("nfe", math.nan))
            for key, val in samples.info.items():
                if key.startswith("ems_") and isinstance(val, (int, float)):
                    values[f"{name}/{key}"] = float(val)
        return Metrics(values=values)
