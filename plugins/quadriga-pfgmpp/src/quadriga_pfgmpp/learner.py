"""The PFGM++ learner: an EDM-preconditioned denoiser regressed on the PFGM++ perturbation kernel.

One training step (Xu et al. 2023, sec. 4 and Algorithm 1; official ``training/loss.py``, ``EDMLoss``
with ``pfgmpp=True``; preconditioning of Karras et al. 2022, Table 1)::

    y ~ data,  sigma = exp(P_mean + P_std n), n ~ N(0, 1)
    x = y + R u,  R = sigma sqrt(D) sqrt(B / (1 - B)),  B ~ Beta(N / 2, D / 2)   (kernel.perturb)
    D_theta(x, sigma) = c_skip x + c_out F_theta(c_in x, log(sigma) / 4)
    loss = mean[(sigma^2 + sigma_d^2) / (sigma sigma_d)^2 ||D_theta(x, sigma) - y||^2]

The regression target is the clean y (the unbiased target of the paper), so the minimiser is the
posterior mean E_D[y | x], the field the PFGM++ ODE needs. D = inf is EDM's training exactly.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner, Target
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least, positive, positive_int, positive_int_list
from quadriga_pfgmpp.kernel import check_aug_dim, perturb

__all__ = ["EDMPrecond", "PFGMPPDenoiser"]


class EDMPrecond(torch.nn.Module):
    """D_theta(x, sigma) = c_skip x + c_out F(c_in x, c_noise) with an MLP F (Karras et al. 2022, Table 1).

    ``forward(x: Tensor[n, N], sigma: Tensor[n]) -> Tensor[n, N]`` in the dtype of x (units of x);
    the MLP runs in float32.

    Args:
        dim: N; hidden: widths of the SiLU MLP; sigma_data: sigma_d (units of x).
    """

    def __init__(self, dim: int, hidden: list[int], sigma_data: float) -> None:
        super().__init__()
        sizes = [dim + 1, *hidden, dim]
        layers: list[torch.nn.Module] = []
        for a, b in itertools.pairwise(sizes):
            layers += [torch.nn.Linear(a, b), torch.nn.SiLU()]
        self.net = torch.nn.Sequential(*layers[:-1])
        self.dim, self.sigma_data = int(dim), float(sigma_data)

    def forward(self, x: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        """The preconditioned denoiser; see the class docstring."""
        s = sigma.to(torch.float32).reshape(-1, 1)
        sd2 = self.sigma_data**2
        c_skip = sd2 / (s * s + sd2)
        c_out = s * self.sigma_data / (s * s + sd2).sqrt()
        c_in = 1 / (s * s + sd2).sqrt()
        xf = x.to(torch.float32)
        f = self.net(torch.cat([c_in * xf, s.log() / 4], dim=1))
        return (c_skip * xf + c_out * f).to(x.dtype)


def _data(task: Any, num_train: int, generator: torch.Generator) -> torch.Tensor:
    if isinstance(task, Dataset):
        x, _ = task.split("train")
        return torch.as_tensor(x, dtype=torch.float64)
    try:
        return torch.as_tensor(task.sample(int(num_train), generator=generator), dtype=torch.float64)
    except NotImplementedError as exc:
        raise ConfigError(
            f"the task {type(task).__name__} has no exact sampler; give a Dataset with a 'train' split.",
            key="task",
        ) from exc


@attrs.define(kw_only=True)
class PFGMPPDenoiser(Learner):
    """Train D_theta on the PFGM++ kernel at augmentation dimension D (see the module docstring).

    Inputs: ``task``, a Target with an exact sampler (``num_train`` draws form the training set) or a
    Dataset (its ``train`` split, ``ndarray[m, N]``).
    Hyperparameters: ``aug_dim``, ``hidden_sizes``, ``num_steps``, ``batch_size``, ``learning_rate``,
    ``p_mean``, ``p_std``, ``num_train``, ``log_every``; sigma_d is the training set's standard deviation.

    Returns ``Fitted`` with ``model`` an :class:`EDMPrecond`, ``history`` ``{"step", "loss"}`` (weighted
    loss, dimensionless) and ``info``: ``dim``, ``aug_dim``, ``sigma_data``, ``steps``.

    Units: x, y, sigma and sigma_d in the data's units; the weighted loss is dimensionless.

    Raises:
        ConfigError: D < 1, a task without data.

    Source: Xu et al. 2023 (PFGM++, ICML), sec. 4 and Algorithm 1; ``Newbeeer/pfgmpp``
    ``training/loss.py`` (beta draw, clipping of B to [1e-3, 1 - 1e-3], EDM weighting, P_mean = -1.2,
    P_std = 1.2); Karras et al. 2022, Table 1 (preconditioning).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Target, Dataset)}
    check_params: ClassVar[dict[str, Any]] = {"num_steps": 20, "batch_size": 32, "hidden_sizes": [16]}

    aug_dim: float = param(
        128.0,
        doc="augmentation dimension D (>= 1; inf = EDM)",
        validator=lambda i, a, v: check_aug_dim(v, a.name),
        infinite=True,
    )
    hidden_sizes: list = param(factory=lambda: [128, 128, 128], doc="MLP widths", validator=positive_int_list)
    num_steps: int = param(2000, doc="Adam steps (count)", validator=positive_int)
    batch_size: int = param(256, doc="points per step (count)", validator=int_at_least(2))
    learning_rate: float = param(1e-3, doc="Adam learning rate", validator=in_range(0, 1, low_open=True))
    p_mean: float = param(-1.2, doc="mean of log sigma during training")
    p_std: float = param(1.2, doc="std of log sigma during training", validator=positive)
    num_train: int = param(4096, doc="training draws from a Target task (count)", validator=int_at_least(2))
    log_every: int = param(100, doc="steps between logged losses (count)", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Minimise the weighted denoising loss; see the class docstring."""
        y_all = _data(task, int(self.num_train), generator)
        if y_all.ndim != 2 or y_all.shape[0] < 2:
            raise ConfigError(f"training data must be [m >= 2, N], got {tuple(y_all.shape)}.", key="task")
        dim = int(y_all.shape[1])
        sigma_data = float(y_all.std())
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int_seed(generator))
            model = EDMPrecond(dim, list(self.hidden_sizes), sigma_data)
        opt = torch.optim.Adam(model.parameters(), lr=float(self.learning_rate))
        history: dict[str, list] = {"step": [], "loss": []}
        progress.start(int(self.num_steps), "pfgmpp denoiser")
        with single_thread():
            for step in range(1, int(self.num_steps) + 1):
                idx = torch.randint(0, y_all.shape[0], (int(self.batch_size),), generator=generator)
                y = y_all[idx]
                n = torch.randn(y.shape[0], generator=generator, dtype=torch.float64)
                sigma = (self.p_mean + self.p_std * n).exp()
                x = perturb(y, sigma, float(self.aug_dim), generator)
                weight = (sigma**2 + sigma_data**2) / (sigma * sigma_data) ** 2
                err = model(x, sigma) - y
                loss = (weight[:, None] * err * err).sum(1).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                progress.advance(1)
                if step % int(self.log_every) == 0 or step == int(self.num_steps):
                    history["step"].append(step)
                    history["loss"].append(float(loss.detach()))
                    progress.log(step, loss=float(loss.detach()))
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        d = float(self.aug_dim)
        return Fitted(
            model=model,
            history=history,
            info={
                "dim": dim,
                "aug_dim": d if math.isfinite(d) else math.inf,
                "sigma_data": sigma_data,
                "steps": int(self.num_steps),
            },
        )
