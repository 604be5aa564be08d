"""Learner ``score-network``: a small MLP score network with a pluggable regression target.

Variance-preserving noising x_t = alpha x_0 + sigma z, alpha = sqrt(1 - sigma^2), z ~ N(0, I), with
the noise level sigma drawn log-uniformly in [sigma_min, sigma_max]. The network predicts the noise
(eps-parameterisation, Ho et al. 2020 eq. 11: eps_hat = -sigma s_theta), and the loss is

    L(theta) = E | eps_theta(x_t, sigma) + sigma * target |^2 = E sigma^2 | s_theta(x_t) - target |^2

with ``target`` a random vector whose conditional mean given x_t is the noised score grad log p_t(x_t)
(the weighting lambda(sigma) = sigma^2 of Song et al. 2021, eq. 7). The target is the one method a
variant overrides, :meth:`ScoreNetwork.regression_target`; here it is denoising score matching
(Vincent 2011, eq. 5 and the Denoising Score Identity of De Bortoli et al. 2024, eq. 2):

    target_DSM = grad_{x_t} log p(x_t | x_0) = -z / sigma.

Subclasses (target score matching, QCSBM, PFGM++ perturbations) change ``regression_target`` and,
when they need the clean score grad log p_0(x_0) of the training points, set
``needs_clean_score = True``; everything else (data, network, noise levels, optimiser, random
stream) is shared, so two learners of the same seed see the same x_0, z and sigma: a paired,
equal-budget comparison of regression targets.
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
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least, positive, positive_int, positive_int_list

__all__ = ["ScoreMLP", "ScoreNetwork"]


class ScoreMLP(torch.nn.Module):
    """``eps_theta(x, alpha_bar)``: an MLP on ``[x, log sigma, sin/cos(f log sigma)]`` with SiLU activations.

    The time input is the cumulative alpha_bar = alpha^2 (``NetworkScore``'s ``time_input="alpha_bar"``);
    the network reads it as log sigma = log(1 - alpha_bar) / 2, computed in float64 so that the small
    noise levels (alpha_bar within 1e-4 of 1) stay distinct.

    Shapes: ``x: Tensor[n, d]``, ``alpha_bar`` a float or ``Tensor[n]`` in (0, 1); returns ``Tensor[n, d]``
    (the predicted noise, dimensionless) in ``x``'s dtype.

    Raises:
        ValueError: ``x`` without two dimensions or alpha_bar outside (0, 1).

    Source: the time-conditioned MLP of the research notes (methods-wave3 section 6(d)), eps-parameterised
    as in Ho et al. 2020, eq. 11.
    """

    freqs: torch.Tensor

    def __init__(self, dim: int, hidden: list[int], num_frequencies: int = 3) -> None:
        super().__init__()
        self.dim = int(dim)
        self.register_buffer("freqs", torch.arange(1, num_frequencies + 1, dtype=torch.float32) * 0.5)
        layers: list[torch.nn.Module] = []
        width = self.dim + 1 + 2 * num_frequencies
        for h in hidden:
            layers += [torch.nn.Linear(width, h), torch.nn.SiLU()]
            width = h
        layers.append(torch.nn.Linear(width, self.dim))
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """The predicted noise at ``(x, alpha_bar)`` (see the class docstring)."""
        if x.ndim != 2:
            raise ValueError(f"x must be Tensor[n, d], got shape {tuple(x.shape)}")
        ab = torch.as_tensor(alpha_bar, dtype=torch.float64, device=x.device).reshape(-1, 1)
        if ((ab <= 0) | (ab >= 1)).any():
            raise ValueError("alpha_bar must lie in (0, 1)")
        log_sigma = (0.5 * torch.log1p(-ab)).to(self.freqs.dtype).expand(x.shape[0], 1)
        feats = [x.to(self.freqs.dtype), log_sigma, torch.sin(log_sigma * self.freqs)]
        feats.append(torch.cos(log_sigma * self.freqs))
        return self.net(torch.cat(feats, -1)).to(x.dtype)


@attrs.define(kw_only=True)
class ScoreNetwork(Learner):
    """Train :class:`ScoreMLP` on draws of a target by score matching with a pluggable regression target.

    The task must give exact draws (``sample``); a variant with ``needs_clean_score`` also uses its
    ``score`` at the draws. ``Fitted.model(x, alpha_bar)`` predicts the noise; ``Fitted.info`` carries
    ``parameterization="eps"``, ``time_input="alpha_bar"`` and ``dim``, so quadriga-ddpm's samplers and
    the ``score-error`` evaluator read it as a score model (score = -eps / sigma).

    Shapes: training draws ``Tensor[num_train, d]``; a batch ``Tensor[batch_size, d]``.
    Units: sigma is the VP noise standard deviation (units of x for unit-scale data); ``loss`` is the
    sigma^2-weighted squared error (dimensionless), one history entry per ``log_every`` steps.

    Raises:
        ConfigError: invalid parameters, sigma_min >= sigma_max, or a task without an exact sampler
            (or without a score when the target needs one).

    Source: Vincent 2011 (denoising score matching, eq. 5); Song et al. 2021 (eq. 7, weighting sigma^2);
    De Bortoli, Hutchinson, Wirnsberger & Doucet 2024, "Target score matching" (arXiv 2402.08667),
    eq. 2 (the Denoising Score Identity that makes -z / sigma an unbiased target).
    """

    #: whether :meth:`regression_target` reads the clean score grad log p_0(x_0) of the draws
    needs_clean_score: ClassVar[bool] = False
    #: the name written to ``Fitted.info["regression_target"]``
    target_name: ClassVar[str] = "dsm"

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Target,)}
    check_params: ClassVar[dict[str, Any]] = {
        "num_steps": 20,
        "num_train": 256,
        "batch_size": 64,
        "hidden_sizes": [16],
    }
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"gmm": {"use": "gaussian-mixture", "means": [[-2.0], [2.0]], "scale": 0.5}},
        "inputs": {"task": "gmm"},
    }

    hidden_sizes: list[int] = param(
        [64, 64], doc="hidden layer widths (count each)", validator=positive_int_list
    )
    num_steps: int = param(3000, doc="Adam steps (count)", validator=positive_int)
    batch_size: int = param(256, doc="minibatch size (count)", validator=positive_int)
    num_train: int = param(10000, doc="training draws from the target (count)", validator=int_at_least(2))
    learning_rate: float = param(2e-3, doc="Adam learning rate (cosine-annealed to 0)", validator=positive)
    sigma_min: float = param(
        0.005,
        doc="smallest training noise level (VP sigma, log-uniform)",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )
    sigma_max: float = param(
        0.995,
        doc="largest training noise level (VP sigma; alpha = sqrt(1 - sigma^2) >= 0.1 at the default)",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )
    log_every: int = param(100, doc="steps between history entries (count)", validator=positive_int)

    def __attrs_post_init__(self) -> None:
        if float(self.sigma_min) >= float(self.sigma_max):
            raise ConfigError(
                f"need sigma_min < sigma_max, got {self.sigma_min} and {self.sigma_max}.", key="sigma_min"
            )

    # ------------------------------------------------------------------ the one method variants change
    def regression_target(
        self,
        x0: torch.Tensor,
        z: torch.Tensor,
        score0: torch.Tensor | None,
        alpha: torch.Tensor,
        sigma: torch.Tensor,
    ) -> torch.Tensor:
        """Denoising score matching target -z / sigma (Vincent 2011, eq. 5; De Bortoli et al. 2024, eq. 2).

        Args:
            x0: clean draws ``Tensor[b, d]``; z: the noise ``Tensor[b, d]``; score0: grad log p_0(x0)
                ``Tensor[b, d]`` (None unless ``needs_clean_score``); alpha, sigma: ``Tensor[b, 1]``.

        Returns:
            ``Tensor[b, d]`` whose mean given x_t = alpha x0 + sigma z is grad log p_t(x_t) (units 1 / x).
        """
        return -z / sigma

    # ------------------------------------------------------------------ training
    def _draw(self, task: Any, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The training draws ``Tensor[num_train, d]`` float32 and, if needed, their clean scores."""
        try:
            x0 = torch.as_tensor(task.sample(int(self.num_train), generator=generator), dtype=torch.float64)
        except (NotImplementedError, AttributeError, TypeError) as exc:
            raise ConfigError(f"{type(task).__name__} has no exact sampler ({exc}).", key="task") from None
        score0 = None
        if self.needs_clean_score:
            if not callable(getattr(task, "score", None)):
                raise ConfigError(
                    f"the '{self.target_name}' target needs the clean score: "
                    f"{type(task).__name__} has no score(x).",
                    key="task",
                )
            score0 = torch.as_tensor(task.score(x0), dtype=torch.float64).to(torch.float32)
        return x0.to(torch.float32), score0

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Draw the training set, train by the loss of the module docstring, return the network.

        Runs on one intra-op thread (small MLP: threads cost more in synchronisation than they save).
        """
        with single_thread():
            return self._fit(task, generator, progress)

    def _fit(self, task: Any, generator: torch.Generator, progress: Any) -> Fitted:
        """The training loop of :meth:`fit`."""
        x_data, s_data = self._draw(task, generator)
        dev = generator.device
        x_data = x_data.to(dev)
        s_data = s_data.to(dev) if s_data is not None else None
        d = int(x_data.shape[1])
        init_seed = int(torch.randint(0, 2**62, (), generator=generator))
        with torch.random.fork_rng(devices=[]):  # initial weights from the stage generator, global state kept
            torch.manual_seed(init_seed)
            model = ScoreMLP(d, list(self.hidden_sizes)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=float(self.learning_rate))
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=int(self.num_steps))
        log_lo, log_hi = math.log(float(self.sigma_min)), math.log(float(self.sigma_max))
        history: dict[str, list] = {"step": [], "loss": []}
        if progress is not None:
            progress.start(int(self.num_steps))
        b, running = int(self.batch_size), 0.0
        for step in range(1, int(self.num_steps) + 1):
            idx = torch.randint(0, x_data.shape[0], (b,), generator=generator, device=dev)
            z = torch.randn(b, d, generator=generator, device=dev)
            u = torch.rand(b, 1, generator=generator, device=dev, dtype=torch.float64)
            sigma64 = torch.exp(log_lo + (log_hi - log_lo) * u)
            alpha_bar = 1.0 - sigma64 * sigma64
            sigma, alpha = sigma64.float(), alpha_bar.sqrt().float()
            x0 = x_data[idx]
            xt = alpha * x0 + sigma * z
            target = self.regression_target(x0, z, s_data[idx] if s_data is not None else None, alpha, sigma)
            loss = (model(xt, alpha_bar) + sigma * target).square().sum(-1).mean()
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
            info={
                "parameterization": "eps",
                "time_input": "alpha_bar",
                "dim": d,
                "regression_target": self.target_name,
                "num_train": int(x_data.shape[0]),
                "final_loss": history["loss"][-1],
            },
        )
