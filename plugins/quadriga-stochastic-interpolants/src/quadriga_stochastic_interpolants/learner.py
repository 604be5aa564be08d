"""Learners: the stochastic interpolant (velocity and denoiser) and its flow-matching special case.

One training step (Albergo, Boffi & Vanden-Eijnden 2023, Sec. 2.2 and their Algorithm 1)::

    x0 ~ rho_0 (a batch of the source's "train" split, or N(0, I)),  x1 ~ rho_1 ("train" split of task)
    t ~ U[t_clip, 1 - t_clip],  z ~ N(0, I)
    loss = L_b[b^] + L_eta[eta^]        (quadriga_stochastic_interpolants.interpolants.objectives)
    Adam step on both networks; StepLR decay of the learning rate.

x0 and x1 are drawn independently (the product coupling).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least, positive_int, positive_int_list
from quadriga_stochastic_interpolants.interpolants import PATHS, Interpolant, objectives
from quadriga_stochastic_interpolants.model import InterpolantModel

__all__ = ["FlowMatching", "StochasticInterpolant"]

_CHECK_INPUTS: dict[str, Any] = {
    "task": {
        "ring": {"use": "gaussian-mixture-points", "num_train": 256, "num_test": 64},
        "moons": {"use": "two-moons", "num_train": 256, "num_test": 64},
    },
    "inputs": {"task": "ring", "source": "moons"},
}


def _points(dataset: Any, split: str, role: str, device: Any) -> torch.Tensor:
    try:
        x, _ = dataset.split(split)
    except KeyError as exc:
        raise ConfigError(f"the {role} dataset has no split '{split}' ({exc}).", key="train_split") from None
    x = torch.as_tensor(x, dtype=torch.float32, device=device)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ConfigError(
            f"the {role} dataset's '{split}' split must be a 2-D array with at least 2 rows "
            f"(got shape {tuple(x.shape)}).",
            key=role,
        )
    return x


@attrs.define(kw_only=True)
class _InterpolantLearner(Learner):
    """Shared training loop; subclasses fix the interpolant (see :class:`StochasticInterpolant`).

    Raises:
        ConfigError: a dataset without the training split, or source and task of different dimensions.
    """

    input_types: ClassVar[dict] = {"task": (Dataset,), "source": (Dataset,)}
    check_params: ClassVar[dict] = {"num_steps": 20, "batch_size": 64, "hidden_sizes": [16]}
    check_inputs: ClassVar[dict] = _CHECK_INPUTS

    hidden_sizes: list = param(
        factory=lambda: [128, 128, 128], doc="hidden widths of each MLP", validator=positive_int_list
    )
    num_steps: int = param(3000, doc="Adam steps (count)", validator=positive_int)
    batch_size: int = param(1000, doc="pairs (x0, x1) per step (count)", validator=int_at_least(2))
    learning_rate: float = param(2e-3, doc="Adam learning rate", validator=in_range(0, 1, low_open=True))
    learning_rate_decay_every: int = param(1500, doc="StepLR period (steps)", validator=positive_int)
    learning_rate_decay: float = param(
        0.4, doc="StepLR factor (dimensionless)", validator=in_range(0, 1, low_open=True)
    )
    t_clip: float = param(
        1e-3, doc="t ~ U[t_clip, 1 - t_clip] (dimensionless)", validator=in_range(0, 0.5, high_open=True)
    )
    train_split: str = param("train", doc="split of task (and source) to train on")
    log_every: int = param(100, doc="steps between logged losses (count)", validator=positive_int)

    def _interpolant(self, gaussian_source: bool) -> Interpolant:
        raise NotImplementedError

    def _learn_score(self) -> bool:
        raise NotImplementedError

    def fit(self, task: Any, source: Any = None, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Minimise L_b (and L_eta) over MLPs on independent pairs (x0, x1).

        Args:
            task: a ``Dataset`` of rho_1 points: ``split(train_split) -> (X1: ndarray[n1, d], None)``.
            source: a ``Dataset`` of rho_0 points (``ndarray[n0, d]``), or ``None`` for x0 ~ N(0, I)
                (the Gaussian-base, generative case).
            generator: the only randomness (network initialisation, batches, t, z).
            progress: the stage's progress (``start``, ``advance``, ``log``).

        Returns:
            ``Fitted`` with ``model`` an :class:`InterpolantModel`, ``history`` ``{"step", "loss_b",
            "loss_eta"}`` (batch objectives, units of x^2) and ``info`` (dim, path, gamma_scale,
            gaussian_source, steps).

        Raises:
            ConfigError: missing split, fewer than 2 points, or source and task dimensions differ.
        """
        device = generator.device
        x1_all = _points(task, self.train_split, "task", device)
        x0_all = None if source is None else _points(source, self.train_split, "source", device)
        d = x1_all.shape[1]
        if x0_all is not None and x0_all.shape[1] != d:
            raise ConfigError(
                f"source points have dimension {x0_all.shape[1]} but task points {d}; "
                "bridge two densities on the same space.",
                key="source",
            )
        interpolant = self._interpolant(source is None)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int_seed(generator))
            model = InterpolantModel(interpolant, d, list(self.hidden_sizes), self._learn_score()).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=self.learning_rate)
        sched = torch.optim.lr_scheduler.StepLR(
            opt, step_size=self.learning_rate_decay_every, gamma=self.learning_rate_decay
        )
        history: dict[str, list] = {"step": [], "loss_b": [], "loss_eta": []}
        denoiser = model.denoiser if model.denoiser_net is not None else None
        progress.start(self.num_steps, "stochastic interpolant")
        with single_thread():
            for step in range(1, self.num_steps + 1):
                i1 = torch.randint(0, x1_all.shape[0], (self.batch_size,), generator=generator, device=device)
                x1 = x1_all[i1]
                if x0_all is None:
                    x0 = torch.randn(x1.shape, generator=generator, device=device)
                else:
                    i0 = torch.randint(
                        0, x0_all.shape[0], (self.batch_size,), generator=generator, device=device
                    )
                    x0 = x0_all[i0]
                losses = objectives(
                    interpolant, model.velocity, denoiser, x0, x1, generator=generator, t_clip=self.t_clip
                )
                loss = sum(losses.values())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                progress.advance(1)
                if step % self.log_every == 0 or step == self.num_steps:
                    rec = {k: float(v.detach()) for k, v in losses.items()}
                    history["step"].append(step)
                    history["loss_b"].append(rec["loss_b"])
                    history["loss_eta"].append(rec.get("loss_eta", float("nan")))
                    progress.log(step, **rec)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        return Fitted(
            model=model,
            history=history,
            info={
                "dim": d,
                "path": interpolant.path,
                "gamma_scale": float(interpolant.gamma_scale),
                "gaussian_source": source is None,
                "learned_score": model.has_score,
                "steps": self.num_steps,
            },
        )


@attrs.define(kw_only=True)
class StochasticInterpolant(_InterpolantLearner):
    """Learn the velocity b(t, x) and the denoiser eta(t, x) (hence the score) of a stochastic interpolant.

    x_t = alpha(t) x0 + beta(t) x1 + gamma(t) z with gamma(t) = sqrt(a t (1 - t)), x0 from ``source``
    (or N(0, I)), x1 from ``task``; b^ minimises L_b and eta^ minimises L_eta (Sec. 2.2, eq. 2.12),
    both estimated on antithetic pairs. The score is s^ = -eta^ / gamma (one-sided: -eta^ / alpha).

    Shapes: ``Fitted.model.velocity(t, x: Tensor[n, d]) -> Tensor[n, d]``; ``score`` likewise.
    Units: t in [0, 1]; x in the datasets' units; losses in x^2.

    Raises:
        ConfigError: unknown ``path``, ``gamma_scale < 0``, ``gamma_scale = 0`` with
            ``learn_score`` between two data densities (no score exists), or bad datasets.

    Source: Albergo, Boffi & Vanden-Eijnden 2023, "Stochastic interpolants: a unifying framework for
    flows and diffusions" (arXiv 2303.08797), Definition 2.1, Sec. 2.2 (eq. 2.12), Algorithm 1;
    defaults after the authors' ``notebooks/checker-with-score.ipynb`` (Adam 2e-3, StepLR(1500, 0.4),
    batch 1000), shrunk to 3 x 128 SiLU MLPs and 3000 steps for CPUs.
    """

    path: str = param("linear", doc=f"(alpha, beta) pair: {', '.join(PATHS)}")
    gamma_scale: float = param(1.0, doc="a in gamma(t) = sqrt(a t (1 - t)) (units of x^2)")
    learn_score: bool = param(True, doc="also learn the denoiser (needed for SDE sampling)")

    def __attrs_post_init__(self) -> None:
        Interpolant(path=self.path, gamma_scale=self.gamma_scale)  # validates both

    def _interpolant(self, gaussian_source: bool) -> Interpolant:
        itp = Interpolant(path=self.path, gamma_scale=self.gamma_scale, gaussian_source=gaussian_source)
        if self.learn_score and not itp.has_score:
            raise ConfigError(
                "gamma_scale = 0 between two data densities has no score; set gamma_scale > 0 "
                "or learn_score = false (ODE sampling only).",
                key="gamma_scale",
            )
        return itp

    def _learn_score(self) -> bool:
        return bool(self.learn_score)


@attrs.define(kw_only=True)
class FlowMatching(_InterpolantLearner):
    """Conditional flow matching: the linear interpolant with gamma = 0, velocity only.

    x_t = (1 - t) x0 + t x1 and b^ regresses x1 - x0 (L_b with alpha = 1 - t, beta = t, gamma = 0),
    i.e. conditional flow matching with sigma_min = 0 / rectified flow. The baseline of the
    Gaussian-base comparison; sample it with ``epsilon = 0`` (it learns no score).

    Shapes: ``Fitted.model.velocity(t, x: Tensor[n, d]) -> Tensor[n, d]``.
    Units: t in [0, 1]; x in the datasets' units; loss in x^2.

    Raises:
        ConfigError: bad datasets (missing split, dimensions that differ).

    Source: Lipman, Chen, Ben-Hamu, Nickel & Le 2023, "Flow matching for generative modeling", eq. 23
    (sigma_min = 0); Liu, Gong & Liu 2023 (rectified flow); as the gamma = 0 case of Albergo, Boffi &
    Vanden-Eijnden 2023, Sec. 2.2.
    """

    def _interpolant(self, gaussian_source: bool) -> Interpolant:
        return Interpolant(path="linear", gamma_scale=0.0, gaussian_source=gaussian_source)

    def _learn_score(self) -> bool:
        return False
