"""``prior-flow-matching``: a small MLP velocity trained by conditional flow matching on exact draws.

Loss (Lipman et al. 2023, eq. 23 with sigma_min = 0; Liu et al. 2023, eq. 1; Tong et al. 2024, eq. 14,
"independent CFM"): ``E_{t ~ U(0,1), x0 ~ N(0, I), x1 ~ data} |v_theta(t x1 + (1 - t) x0, t) - (x1 - x0)|^2``,
whose minimiser is the marginal velocity ``E[x1 - x0 | x_t]`` that :mod:`quadriga_fm_smc.mixture_flow`
gives in closed form for a Gaussian mixture. The data are ``num_train`` draws from the task's prior
(``task.prior_sample``) when it has one, else from its exact sampler (``task.sample``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Learner, Target
from quadriga.validators import int_at_least, positive, positive_int, positive_int_list

__all__ = ["FlowMatching", "VelocityMLP"]


class VelocityMLP(torch.nn.Module):
    """``v_theta(x, t)``: an MLP on ``[x, sin(2 pi f t), cos(2 pi f t)]`` with SiLU activations.

    Shapes: ``x: Tensor[n, d]``, ``t`` a float or ``Tensor[n]``; returns ``Tensor[n, d]`` in ``x``'s dtype.
    Units: those of x per unit time.

    Raises:
        ValueError: ``x`` without two dimensions.

    Source: a time-conditioned MLP as in Tong et al. 2024 (torchcfm examples), with Fourier time features.
    """

    def __init__(self, dim: int, hidden: list[int], num_frequencies: int = 4) -> None:
        super().__init__()
        self.dim = int(dim)
        self.register_buffer("freqs", 2 * math.pi * torch.arange(1, num_frequencies + 1, dtype=torch.float32))
        layers: list[torch.nn.Module] = []
        width = self.dim + 2 * num_frequencies
        for h in hidden:
            layers += [torch.nn.Linear(width, h), torch.nn.SiLU()]
            width = h
        layers.append(torch.nn.Linear(width, self.dim))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, t: Any) -> torch.Tensor:
        """The velocity at ``(x, t)`` (see the class docstring)."""
        if x.ndim != 2:
            raise ValueError(f"x must be Tensor[n, d], got shape {tuple(x.shape)}")
        dtype = x.dtype
        xf = x.to(self.freqs.dtype)
        tt = torch.as_tensor(t, dtype=xf.dtype, device=xf.device).reshape(-1, 1).expand(xf.shape[0], 1)
        feats = torch.cat([xf, torch.sin(tt * self.freqs), torch.cos(tt * self.freqs)], -1)
        return self.net(feats).to(dtype)


@attrs.define(kw_only=True)
class FlowMatching(Learner):
    """Train :class:`VelocityMLP` by conditional flow matching (module docstring) with Adam.

    Shapes: ``Fitted.model(x: Tensor[n, d], t) -> Tensor[n, d]``; ``history`` has ``step`` and ``loss``
    (one entry per ``log_every`` steps).
    Units: loss in squared units of x per unit time squared; ``learning_rate`` per step.

    Raises:
        ConfigError: invalid parameters, or a task with neither ``prior_sample`` nor an exact ``sample``.

    Source: Lipman, Chen, Ben-Hamu, Nickel & Le 2023, "Flow matching for generative modeling", eq. 23;
    Tong et al. 2024, "Improving and generalizing flow-based generative models", Algorithm 1 (I-CFM).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Target,)}
    check_params: ClassVar[dict[str, Any]] = {
        "num_steps": 20,
        "num_train": 256,
        "batch_size": 64,
        "hidden_sizes": [16],
    }
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"posterior": {"use": "linear-gaussian-posterior", "dim": 2, "num_components": 2}},
        "inputs": {"task": "posterior"},
    }

    hidden_sizes: list[int] = param(
        [128, 128, 128], doc="hidden layer widths (count each)", validator=positive_int_list
    )
    num_steps: int = param(3000, doc="Adam steps (count)", validator=positive_int)
    batch_size: int = param(512, doc="minibatch size (count)", validator=positive_int)
    num_train: int = param(20000, doc="training draws from the prior (count)", validator=int_at_least(2))
    learning_rate: float = param(2e-3, doc="Adam learning rate", validator=positive)
    log_every: int = param(100, doc="steps between history entries (count)", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Draw the training set, train, and return the velocity network."""
        draw = getattr(task, "prior_sample", None) or getattr(task, "sample", None)
        try:
            data = torch.as_tensor(draw(int(self.num_train), generator=generator), dtype=torch.float32)
        except (NotImplementedError, TypeError) as exc:
            raise ConfigError(
                f"{type(task).__name__} has neither prior_sample nor an exact sample ({exc}).", key="task"
            ) from None
        data = data.to(generator.device)
        d = int(data.shape[1])
        init_seed = int(torch.randint(0, 2**62, (), generator=generator))
        with torch.random.fork_rng(devices=[]):  # initial weights from the stage generator, global state kept
            torch.manual_seed(init_seed)
            model = VelocityMLP(d, list(self.hidden_sizes)).to(generator.device)
        opt = torch.optim.Adam(model.parameters(), lr=float(self.learning_rate))
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=int(self.num_steps))
        history: dict[str, list] = {"step": [], "loss": []}
        if progress is not None:
            progress.start(int(self.num_steps))
        b, running = int(self.batch_size), 0.0
        for step in range(1, int(self.num_steps) + 1):
            idx = torch.randint(0, data.shape[0], (b,), generator=generator, device=data.device)
            x1 = data[idx]
            x0 = torch.randn(b, d, generator=generator, device=data.device)
            t = torch.rand(b, generator=generator, device=data.device)
            xt = t[:, None] * x1 + (1 - t[:, None]) * x0
            loss = ((model(xt, t) - (x1 - x0)) ** 2).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            running += loss.detach().item()
            if step % int(self.log_every) == 0 or step == int(self.num_steps):
                n = step - (history["step"][-1] if history["step"] else 0)
                history["step"].append(step)
                history["loss"].append(running / n)
                running = 0.0
                if progress is not None:
                    progress.log(step, loss=history["loss"][-1])
            if progress is not None:
                progress.advance(1)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        return Fitted(
            model=model,
            history=history,
            info={"final_loss": history["loss"][-1], "num_train": int(data.shape[0])},
        )
