"""Samplers: transport rho_0 to rho_1 with the learned fields, and plain points of a dataset.

:class:`InterpolantSampler` integrates, from X_0 ~ rho_0 to t = 1 (Albergo, Boffi & Vanden-Eijnden
2023, Sec. 2, the probability flow and the forward SDE):

    epsilon = 0:  dX/dt = b(t, X)                                  (torchdiffeq ``odeint``)
    epsilon > 0:  dX = [b(t, X) + eps(t) s(t, X)] dt + sqrt(2 eps(t)) dW   (torchsde ``sdeint``)

with eps(t) = epsilon on [t_clip, 1 - t_clip] and 0 outside (the score is singular at the ends:
s = -eta / gamma with gamma(0) = gamma(1) = 0). Every eps(t) >= 0 gives the same marginals rho_t
with the exact fields; with an estimated drift the SDE's KL error is bounded by the L2 error of
b^ + eps s^ over 4 eps, which the ODE lacks (the paper's likelihood-control result).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Sampler
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, non_negative_int, positive_int

__all__ = ["ODE_METHODS", "SDE_METHODS", "DatasetPoints", "InterpolantSampler", "transport"]

#: torchdiffeq methods: adaptive (rtol/atol) and fixed-step (num_steps).
ODE_METHODS = ("dopri5", "bosh3", "rk4", "midpoint", "euler")
_ADAPTIVE = ("dopri5", "bosh3")
#: torchsde methods: Euler-Maruyama (Ito) and stochastic Heun (Stratonovich; the same SDE here since
#: the noise sqrt(2 eps(t)) does not depend on x).
SDE_METHODS = ("euler", "heun")


class _Counter:
    def __init__(self) -> None:
        self.velocity = 0
        self.score = 0


class _InterpolantSDE(torch.nn.Module):
    """The forward SDE as a torchsde object (diagonal noise)."""

    noise_type = "diagonal"

    def __init__(self, fields: Any, epsilon: float, t_clip: float, sde_type: str, counter: _Counter) -> None:
        super().__init__()
        self.fields, self.epsilon, self.t_clip, self.sde_type, self.counter = (
            fields,
            epsilon,
            t_clip,
            sde_type,
            counter,
        )

    def _eps(self, t: torch.Tensor) -> float:
        tf = float(t)
        return self.epsilon if self.t_clip <= tf <= 1 - self.t_clip else 0.0

    def f(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Drift b + eps(t) s: ``Tensor[n, d]``."""
        eps = self._eps(t)
        self.counter.velocity += 1
        drift = self.fields.velocity(t, y)
        if eps > 0:
            self.counter.score += 1
            drift = drift + eps * self.fields.score(t, y)
        return drift

    def g(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Diagonal diffusion sqrt(2 eps(t)): ``Tensor[n, d]``."""
        return torch.full_like(y, (2 * self._eps(t)) ** 0.5)


def transport(
    fields: Any,
    x0: torch.Tensor,
    *,
    generator: torch.Generator,
    epsilon: float = 0.0,
    num_steps: int = 200,
    ode_method: str = "dopri5",
    sde_method: str = "euler",
    rtol: float = 1e-5,
    atol: float = 1e-5,
    t_clip: float = 0.01,
) -> tuple[torch.Tensor, dict[str, int]]:
    """Push ``x0`` from t = 0 to t = 1 through the probability flow (epsilon = 0) or the forward SDE.

    Args:
        fields: ``velocity(t, x)`` and, for epsilon > 0, ``score(t, x)`` (``Tensor[n, d] -> Tensor[n, d]``).
        x0: ``Tensor[n, d]`` draws of rho_0.
        generator: randomness of the Brownian path (one integer seed drawn from it).
        epsilon: the noise level eps >= 0 (units of x^2 per unit time).
        num_steps: steps of the fixed-step ODE methods and of the SDE (dt = 1 / num_steps).
        ode_method: one of :data:`ODE_METHODS`; sde_method: one of :data:`SDE_METHODS`.
        rtol, atol: tolerances of the adaptive ODE methods.
        t_clip: eps(t) = 0 on [0, t_clip) and (1 - t_clip, 1] (dimensionless).

    Returns:
        ``(x1: Tensor[n, d], {"velocity_evals": count, "score_evals": count})`` (batched evaluations).

    Source: Albergo, Boffi & Vanden-Eijnden 2023 (arXiv 2303.08797), Sec. 2; torchdiffeq
    (Chen et al. 2018), torchsde (Li et al. 2020; Kidger et al. 2021).
    """
    with single_thread():  # 2-D batches: intra-op threads cost more than they save
        return _transport(
            fields, x0, generator, epsilon, num_steps, ode_method, sde_method, rtol, atol, t_clip
        )


def _transport(fields, x0, generator, epsilon, num_steps, ode_method, sde_method, rtol, atol, t_clip):
    counter = _Counter()
    if epsilon == 0:
        import torchdiffeq

        def rhs(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            counter.velocity += 1
            return fields.velocity(t, x)

        ts = torch.tensor([0.0, 1.0], dtype=x0.dtype, device=x0.device)
        kwargs: dict[str, Any] = {"method": ode_method}
        if ode_method in _ADAPTIVE:
            kwargs.update(rtol=rtol, atol=atol)
        else:
            kwargs["options"] = {"step_size": 1.0 / num_steps}
        out = torchdiffeq.odeint(rhs, x0, ts, **kwargs)[-1]
    else:
        import torchsde

        sde_type = "ito" if sde_method == "euler" else "stratonovich"
        sde = _InterpolantSDE(fields, float(epsilon), float(t_clip), sde_type, counter)
        ts = torch.tensor([0.0, 1.0], dtype=x0.dtype, device=x0.device)
        bm = torchsde.BrownianInterval(
            t0=0.0,
            t1=1.0,
            size=tuple(x0.shape),
            dtype=x0.dtype,
            device=x0.device,
            entropy=int_seed(generator),
        )
        out = torchsde.sdeint(sde, x0, ts, method=sde_method, dt=1.0 / num_steps, bm=bm)[-1]
    return out, {"velocity_evals": counter.velocity, "score_evals": counter.score}


def _points(dataset: Any, split: str, role: str) -> torch.Tensor:
    try:
        x, _ = dataset.split(split)
    except KeyError as exc:
        raise ConfigError(f"the {role} dataset has no split '{split}' ({exc}).", key="source_split") from None
    return torch.as_tensor(x)


@attrs.define(kw_only=True)
class InterpolantSampler(Sampler):
    """Transport points of rho_0 to rho_1 with a learned stochastic interpolant (ODE or SDE).

    Integrates dX/dt = b^(t, X) (``epsilon = 0``, torchdiffeq) or dX = [b^ + eps s^] dt + sqrt(2 eps) dW
    (``epsilon > 0``, torchsde, eps switched off within ``t_clip`` of the ends) from X_0 = the first
    ``num_samples`` points of the source's ``source_split`` (or N(0, I) draws for a model trained
    from a Gaussian base) up to t = 1.

    Shapes: ``Samples.x: Tensor[num_samples, d]`` (float32, the model's dtype).
    Units: those of the datasets; ``info`` counts batched field evaluations (count).

    Raises:
        ConfigError: unknown method, epsilon > 0 for a model without a score, a source given to a
            Gaussian-base model (or missing for a data-source model), a split with fewer than
            ``num_samples`` points, or a dimension mismatch.

    Source: Albergo, Boffi & Vanden-Eijnden 2023 (arXiv 2303.08797), Sec. 2 (probability flow and
    forward SDE with tunable eps); defaults after their ``checker-with-score.ipynb`` (dopri5; SDE with
    eps = 0.5 and 100 Heun steps there, 200 Euler-Maruyama steps here).
    """

    input_types: ClassVar[dict] = {"target": (Fitted,), "source": (Dataset,)}
    check_params: ClassVar[dict] = {"num_samples": 64, "num_steps": 10, "epsilon": 0.5}
    check_inputs: ClassVar[dict] = {
        "task": {
            "ring": {"use": "gaussian-mixture-points", "num_train": 256, "num_test": 64},
            "moons": {"use": "two-moons", "num_train": 256, "num_test": 64},
        },
        "stage": {
            "si": {
                "use": "stochastic-interpolant",
                "inputs": {"task": "ring", "source": "moons"},
                "num_steps": 10,
                "batch_size": 32,
                "hidden_sizes": [8],
            }
        },
        "inputs": {"target": "si", "source": "moons"},
    }

    epsilon: float = param(
        0.0, doc="SDE noise level eps >= 0; 0 = probability-flow ODE", validator=in_range(0, 100)
    )
    num_samples: int = param(2000, doc="points transported (count)", validator=positive_int)
    num_steps: int = param(200, doc="SDE / fixed-step ODE steps over [0, 1] (count)", validator=positive_int)
    ode_method: str = param("dopri5", doc=f"torchdiffeq method: {', '.join(ODE_METHODS)}")
    sde_method: str = param("euler", doc=f"torchsde method: {', '.join(SDE_METHODS)}")
    rtol: float = param(
        1e-5, doc="relative tolerance of adaptive ODE methods", validator=in_range(0, 1, low_open=True)
    )
    atol: float = param(
        1e-5, doc="absolute tolerance of adaptive ODE methods", validator=in_range(0, 1, low_open=True)
    )
    t_clip: float = param(
        0.01, doc="eps(t) = 0 within t_clip of t = 0 and t = 1", validator=in_range(0, 0.5, high_open=True)
    )
    source_split: str = param("test", doc="split of the source dataset whose points are transported")

    def __attrs_post_init__(self) -> None:
        if self.ode_method not in ODE_METHODS:
            raise ConfigError(
                f"ode_method must be one of {', '.join(ODE_METHODS)}, got {self.ode_method!r}.",
                key="ode_method",
            )
        if self.sde_method not in SDE_METHODS:
            raise ConfigError(
                f"sde_method must be one of {', '.join(SDE_METHODS)}, got {self.sde_method!r}.",
                key="sde_method",
            )

    def sample(self, target: Any, source: Any = None, *, generator: torch.Generator) -> Samples:
        """Transport ``num_samples`` points of rho_0 to t = 1.

        Args:
            target: ``Fitted`` whose ``model`` has ``velocity``/``score``, ``dim`` and ``interpolant``
                (an :class:`~quadriga_stochastic_interpolants.model.InterpolantModel` or exact fields).
            source: the ``Dataset`` of rho_0 points, or ``None`` for a Gaussian-base model.
            generator: randomness of N(0, I) starting points and of the Brownian path.

        Returns:
            ``Samples`` with ``x: Tensor[num_samples, d]`` and ``info`` (``velocity_evals``,
            ``score_evals``, ``epsilon``, ``num_steps``).

        Raises:
            ConfigError: see the class docstring.
        """
        fields = target.model if isinstance(target, Fitted) else target
        itp = fields.interpolant
        dtype = getattr(fields, "dtype", torch.float32)
        device = generator.device
        if self.epsilon > 0 and not getattr(fields, "has_score", itp.has_score):
            raise ConfigError(
                "epsilon > 0 needs a score, but this model has none (gamma = 0 between data densities, "
                "or learn_score = false); use epsilon = 0 or train with gamma_scale > 0.",
                key="epsilon",
            )
        if itp.gaussian_source:
            if source is not None:
                raise ConfigError(
                    "the model was trained from a Gaussian base (no source); remove inputs.source.",
                    key="source",
                )
            x0 = torch.randn(self.num_samples, fields.dim, generator=generator, device=device, dtype=dtype)
        else:
            if source is None:
                raise ConfigError(
                    "the model was trained from a source dataset: give inputs.source = the same dataset.",
                    key="source",
                )
            pts = _points(source, self.source_split, "source")
            if pts.shape[0] < self.num_samples or pts.shape[1] != fields.dim:
                raise ConfigError(
                    f"the source split '{self.source_split}' has shape {tuple(pts.shape)}; need at least "
                    f"{self.num_samples} rows of dimension {fields.dim} (lower num_samples).",
                    key="num_samples",
                )
            x0 = pts[: self.num_samples].to(device=device, dtype=dtype)
        with torch.no_grad():
            x1, counts = transport(
                fields,
                x0,
                generator=generator,
                epsilon=float(self.epsilon),
                num_steps=self.num_steps,
                ode_method=self.ode_method,
                sde_method=self.sde_method,
                rtol=self.rtol,
                atol=self.atol,
                t_clip=self.t_clip,
            )
        return Samples(x=x1, info={**counts, "epsilon": float(self.epsilon), "num_steps": self.num_steps})


@attrs.define(kw_only=True)
class DatasetPoints(Sampler):
    """The points of one dataset split as ``Samples`` (or fresh exact draws), for references and floors.

    With ``fresh = false`` returns the ``split`` as it is (``num_samples = 0``: all rows, else the first
    ``num_samples``); with ``fresh = true`` draws ``num_samples`` new points with the dataset's ``draw``
    and the stage's generator (a new independent sample per replicate).

    Shapes: ``Samples.x: Tensor[n, d]`` (float64).
    Units: those of the dataset.

    Raises:
        ConfigError: unknown split, ``fresh`` for a dataset without ``draw``, ``fresh`` with
            ``num_samples = 0``, or a split shorter than ``num_samples``.

    Source: none (data plumbing).
    """

    input_types: ClassVar[dict] = {"target": (Dataset,)}
    check_inputs: ClassVar[dict] = {
        "task": {"moons": {"use": "two-moons", "num_train": 64, "num_test": 32}},
        "inputs": {"target": "moons"},
    }

    split: str = param("test", doc="split to return (train, test, reference)")
    num_samples: int = param(0, doc="rows to return; 0 = the whole split (count)", validator=non_negative_int)
    fresh: bool = param(False, doc="draw num_samples new points instead of reading the split")

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Return the split (or fresh draws) as ``Samples``.

        Args:
            target: a ``Dataset`` (``split(name) -> (ndarray[n, d], y)``; ``draw`` for ``fresh``).
            generator: randomness of fresh draws (unused otherwise).

        Returns:
            ``Samples`` with ``x: Tensor[n, d]`` float64 and ``info["split"]``.

        Raises:
            ConfigError: see the class docstring.
        """
        if self.fresh:
            if not hasattr(target, "draw") or self.num_samples == 0:
                raise ConfigError(
                    "fresh = true needs a dataset with exact draws and num_samples >= 1.", key="fresh"
                )
            x = torch.as_tensor(target.draw(self.num_samples, generator=generator), dtype=torch.float64)
            return Samples(x=x, info={"split": "fresh"})
        x = _points(target, self.split, "target").to(torch.float64)
        if self.num_samples:
            if x.shape[0] < self.num_samples:
                raise ConfigError(
                    f"split '{self.split}' has {x.shape[0]} rows < num_samples = {self.num_samples}",
                    key="num_samples",
                )
            x = x[: self.num_samples]
        return Samples(x=x.reshape(x.shape[0], -1), info={"split": self.split})
