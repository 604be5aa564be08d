"""Probability-flow ODE samplers stepping in lambda, with an NFE budget, on one shared base.

:class:`LambdaSolver` owns what every such sampler shares: the schedule (:class:`NoiseSchedule`),
the end time, the step spacing, the number of samples, and x_T drawn from the stage generator's
``"x_T"`` stream, so every solver of one replicate (replicate ``i`` of every repeated stage shares
its seed) starts from the same x_T. A subclass implements only ``solve(model, x_T, lambdas)``.
Each result carries ``info["x_T_digest"]`` (which x_T it started from), ``nfe`` and the lambda range
so that :class:`quadriga_ddpm.solver_error.SolverError` can pair it with the reference solve.

Registered: ``reference-ode`` (scipy DOP853 at rtol 1e-10) and ``dpm-solver-pp`` (multistep
orders 1-3; order 1 is DDIM).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Samples
from quadriga.interfaces import Sampler, Target
from quadriga.seeding import child_generator
from quadriga.threads import single_thread
from quadriga.validators import in_range, one_of, optional, positive, positive_int
from quadriga_ddpm.guidance import guidance_info, guided_score_model
from quadriga_ddpm.noise_schedule import SCHEDULE_KINDS, NoiseSchedule
from quadriga_ddpm.probability_flow import draw_x_T, reference_solve, x_T_digest
from quadriga_ddpm.solvers import dpm_solver_pp

__all__ = ["DPMSolverPP", "LambdaSolver", "ReferenceODE"]


@attrs.define(kw_only=True)
class LambdaSolver(Sampler):
    """Base of the lambda-stepping probability-flow samplers (see the module docstring).

    Hyperparameters: ``nfe`` (steps M = model evaluations), ``num_samples`` n, ``schedule``,
    ``t_end``, ``skip``. Subclasses implement ``solve``; ``sample`` draws x_T, builds the lambda
    grid and records the cost.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target, Fitted)}

    nfe: int = param(
        10, doc="number of steps M, each one batched model evaluation (count)", validator=positive_int
    )
    num_samples: int = param(1000, doc="n, trajectories (count)", validator=positive_int)
    schedule: str = param(
        "vp-linear", doc="noise schedule: 'vp-linear', 'vp-cosine' or 'edm'", validator=one_of(SCHEDULE_KINDS)
    )
    t_end: float | None = param(
        None,
        doc="end time of sampling (schedule units; default 1e-3 VP, 0.002 EDM)",
        validator=optional(positive),
    )
    skip: str = param(
        "logSNR",
        doc="step spacing: 'logSNR' (uniform in lambda) or 'time'",
        validator=one_of(("logSNR", "time")),
    )
    guidance: float | None = param(
        None,
        doc="classifier-free guidance weight w >= -1 on a conditional input (see quadriga_ddpm.guidance); "
        "None: unguided",
        validator=optional(in_range(-1.0)),
    )

    def score_model(self, target: Any) -> Any:
        """The score model this sampler runs on ``target`` (the guidance hook; subclasses override)."""
        return guided_score_model(target, self.guidance)

    def noise_schedule(self) -> NoiseSchedule:
        """The :class:`NoiseSchedule` this sampler runs."""
        return NoiseSchedule(kind=self.schedule, t_min=self.t_end)

    def lambdas(self) -> torch.Tensor:
        """``Tensor[nfe + 1]`` increasing lambda of the steps."""
        return self.noise_schedule().lambda_steps(int(self.nfe), skip=self.skip)

    def solve(
        self, model: Any, x_T: torch.Tensor, lambdas: torch.Tensor, *, generator: torch.Generator
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Integrate from ``x_T: Tensor[n, d]`` over ``lambdas``; return (x, extra info)."""
        raise NotImplementedError

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Draw x_T from the ``"x_T"`` stream and solve the flow ODE on the score model of ``target``.

        Returns:
            ``Samples`` with ``x: Tensor[n, d]`` float64 and ``info``: ``nfe``, ``score_evals``
            (n nfe), ``lambda_start``, ``lambda_end``, ``schedule``, ``x_T_digest``, ``seconds``.

        Raises:
            ConfigError: the input cannot serve as a score model.
        """
        model = self.score_model(target)
        sched = self.noise_schedule()
        x_T = draw_x_T(sched, int(self.num_samples), int(model.dim), child_generator(generator, "x_T"))
        lam = self.lambdas()
        start = time.perf_counter()
        with single_thread():  # small batched tensors: intra-op threads only contend
            x, extra = self.solve(model, x_T, lam, generator=generator)
        if not torch.isfinite(x).all():
            raise FloatingPointError(f"{type(self).__name__} produced non-finite values")
        nfe = int(extra.pop("nfe", int(self.nfe)))
        info = {
            "nfe": nfe,
            "score_evals": nfe * int(self.num_samples),
            "lambda_start": float(lam[0]),
            "lambda_end": float(lam[-1]),
            "schedule": self.schedule,
            "x_T_digest": x_T_digest(x_T),
            "seconds": time.perf_counter() - start,
            **extra,
            **guidance_info(model),
        }
        return Samples(x=x, info=info)


@attrs.define(kw_only=True)
class DPMSolverPP(LambdaSolver):
    """DPM-Solver++ multistep, orders 1 (DDIM), 2 (2M) and 3 (3M), in lambda.

    Hyperparameters: those of :class:`LambdaSolver` and ``order``. Cost: nfe model evaluations.

    Source: Lu et al. 2022b, arXiv 2211.01095, eq. 8 and Algorithm 2; see :mod:`quadriga_ddpm.solvers`.
    """

    order: int = param(2, doc="multistep order: 1 (DDIM), 2 or 3", validator=one_of((1, 2, 3)))

    def solve(
        self, model: Any, x_T: torch.Tensor, lambdas: torch.Tensor, *, generator: torch.Generator
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """One multistep pass; no extra information."""
        return dpm_solver_pp(model, self.noise_schedule(), x_T, lambdas, order=int(self.order)), {
            "order": int(self.order)
        }


@attrs.define(kw_only=True)
class ReferenceODE(LambdaSolver):
    """High-accuracy probability-flow solve (scipy ``solve_ivp``, DOP853) from the shared x_T.

    ``nfe`` only sets the lambda grid it shares with the solvers (its end point); the adaptive
    solver's own evaluation count is reported as ``nfe``. Hyperparameters: those of
    :class:`LambdaSolver`, ``rtol``.

    Source: Hairer, Norsett & Wanner, "Solving ODEs I" (DOP853), through scipy; the ODE of
    Lu et al. 2022, eq. 3.3.
    """

    nfe: int = param(1, doc="steps of the lambda grid (only its end points are used)", validator=positive_int)
    rtol: float = param(
        1e-10, doc="relative (and absolute) tolerance of solve_ivp", validator=in_range(1e-14, 1e-3)
    )

    def solve(
        self, model: Any, x_T: torch.Tensor, lambdas: torch.Tensor, *, generator: torch.Generator
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Integrate from lambdas[0] to lambdas[-1] with DOP853."""
        ends = torch.stack([lambdas[0], lambdas[-1]])
        xs, nfe = reference_solve(
            model, self.noise_schedule(), x_T, ends, rtol=float(self.rtol), atol=float(self.rtol)
        )
        return xs[-1], {"nfe": nfe}
