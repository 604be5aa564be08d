"""Feynman-Kac corrector samplers ``fkc`` and the naive score-mixing baseline ``fkc-naive``.

Forward process: the variance-preserving SDE ``dx = f_t(x) dt + g_t dW`` with ``f_t(x) = -b(t) x / 2``,
``g_t^2 = b(t) = b_min + (b_max - b_min) t`` on ``t in [0, 1]``, so
``alpha_bar(t) = exp(-(b_min t + (b_max - b_min) t^2 / 2))`` and the noised expert laws ``q_t^i`` have
the exact scores ``s_i = expert.noised_score(x, alpha_bar(t))`` (quadriga-std gaussian-mixture).

For the target ``prod_i (q_t^i)^{e_i}`` with ``S = sum_i e_i s_i``, reverse time ``tau = 1 - t`` and
noise ``sigma_tau``, FKC simulates (Skreta et al. 2025, Prop. 3.1 / eq. 9 for annealing, Prop. 3.3 /
eq. 15 for products, and their common general form, the weighted SDE of eqs. 6-7)::

    dx     = [ -f_t(x) + (g_t^2 + sigma^2) / 2 * S(x) ] dtau + sigma dW
    dlog w = [ (sum_i e_i - 1) div f_t + g_t^2 / 2 * ( |S|^2 - sum_i e_i |s_i|^2 ) ] dtau

(annealing: ``g^2 beta (beta - 1) |s|^2 / 2``; product of two: ``g^2 <s_1, s_2>``). ``noise =
"target-score"`` takes ``sigma = g``; ``"tempered"`` takes ``sigma^2 = g^2 / sum_i e_i`` (the
tempered-noise SDE of eq. 10). The weights cost no score evaluation beyond the drift's. Particles
start from ``N(0, I / sum_i e_i)`` with the exact initial correction
``log w_0 = sum_i e_i log q_1^i(x) - log N(x; 0, I / sum e_i)``, and are resampled systematically
(Kitagawa 1996; Douc, Cappé & Moulines 2005) whenever the ESS ``(sum w)^2 / sum w^2`` falls below
``resample_threshold * K`` (log-weights reset to 0). The weights are integrated by the left-point
(Euler) rule with the scores of the drift.

``fkc-naive`` runs the same SDE with the same mixed score and no weights at all (the
classifier-free-guidance-style heuristic), and no resampling.

Source: Skreta, Akhound-Sadegh, Ohanesian, ..., Tong & Neklyudov 2025, "Feynman-Kac Correctors in
Diffusion: Annealing, Guidance, and Product of Experts" (arXiv 2503.02819), secs. 3.1-3.3; Song et al.
2021 (VP SDE, eqs. 11 and 29).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.seeding import child_generator
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least, one_of, positive, positive_int, probability

__all__ = ["NOISES", "FKCorrector", "NaiveScoreMixing", "alpha_bar", "ess", "systematic_resample"]

NOISES = ("target-score", "tempered")

_CHECK_INPUTS: dict[str, Any] = {
    "task": {
        "composed": {
            "use": "fkc-target",
            "composition": "product",
            "experts": [{"means": [[-1.0], [1.0]], "scale": 0.5}, {"means": [[0.5]], "scale": 1.0}],
        }
    },
    "inputs": {"target": "composed"},
}


def alpha_bar(t: float, b_min: float, b_max: float) -> float:
    """``exp(-(b_min t + (b_max - b_min) t^2 / 2))`` of the linear VP schedule (Song et al. 2021, eq. 29)."""
    return math.exp(-(b_min * t + 0.5 * (b_max - b_min) * t * t))


def ess(log_w: torch.Tensor) -> float:
    """Effective sample size ``(sum w)^2 / sum w^2`` of ``Tensor[K]`` log-weights (Kong 1992), in [1, K]."""
    return float(torch.exp(2 * torch.logsumexp(log_w, 0) - torch.logsumexp(2 * log_w, 0)))


def systematic_resample(log_w: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Ancestor indices ``Tensor[K]`` (long) by systematic resampling of ``Tensor[K]`` log-weights.

    ``u_k = (U + k) / K`` with one ``U ~ U(0, 1)``; index ``k`` gets the first ``j`` with
    ``cumsum(w)_j > u_k`` (unbiased: ``E[#copies of j] = K w_j``). Source: Kitagawa 1996; Douc,
    Cappé & Moulines 2005, sec. 2.4.
    """
    k = log_w.shape[0]
    w = torch.softmax(log_w, 0)
    u = (
        torch.rand((), generator=generator, dtype=w.dtype, device=w.device)
        + torch.arange(k, dtype=w.dtype, device=w.device)
    ) / k
    return torch.searchsorted(torch.cumsum(w, 0), u, right=True).clamp(max=k - 1)


@attrs.define(kw_only=True)
class FKCorrector(Sampler):
    """FKC: the weighted reverse SDE of a composed target with SMC over ``num_particles`` particles.

    Shapes: returns ``Samples(x: Tensor[K, d] float64, log_weights: Tensor[K])``; ``info`` holds
    ``score_evals`` (expert score evaluations, count = experts x K x num_steps), ``num_resamples``,
    ``ess_min`` and ``ess_mean`` (fractions of K over the steps), ``ess_final`` (fraction) and
    ``ess_per_step`` (list of fractions of K, before any resampling at that step).
    Units: time in the VP SDE's unit interval; ``b_min``, ``b_max`` per unit time.

    Raises:
        ConfigError: the target is not a composed target (``fkc-target``); ``num_particles < 2``;
            ``num_steps < 1``; ``resample_threshold`` outside [0, 1]; unknown ``noise``;
            ``t_min`` outside (0, 0.5); ``b_max < b_min``.

    Source: Skreta et al. 2025 (arXiv 2503.02819), eqs. 6-7, 9-10 and 15 (see the module docstring).
    """

    correct: ClassVar[bool] = True
    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target,)}
    check_inputs: ClassVar[dict[str, Any]] = _CHECK_INPUTS
    check_params: ClassVar[dict[str, Any]] = {"num_particles": 32, "num_steps": 20}

    num_particles: int = param(1024, doc="particles K (count), >= 2", validator=int_at_least(2))
    num_steps: int = param(200, doc="Euler-Maruyama steps of the reverse SDE (count)", validator=positive_int)
    resample_threshold: float = param(
        0.5,
        doc="resample when ESS < threshold * K (fraction; 1 = every step, 0 = never)",
        validator=probability,
    )
    noise: str = param(
        "target-score",
        doc="'target-score' (sigma = g) or 'tempered' (sigma^2 = g^2 / sum e_i)",
        validator=one_of(NOISES),
    )
    b_min: float = param(0.1, doc="VP schedule b(0) (per unit time)", validator=positive)
    b_max: float = param(20.0, doc="VP schedule b(1) (per unit time)", validator=positive)
    t_min: float = param(
        1e-3, doc="last time of the reverse SDE", validator=in_range(0.0, 0.5, low_open=True, high_open=True)
    )

    def __attrs_post_init__(self) -> None:
        if self.b_max < self.b_min:
            raise ConfigError(f"b_max ({self.b_max}) must be >= b_min ({self.b_min}).", key="b_max")

    def _experts(self, target: Any) -> tuple[list, tuple[float, ...]]:
        if not getattr(type(target), "fk_composable", False):
            raise ConfigError(
                f"the target {type(target).__name__} is not a composed target; use a task "
                "'fkc-target' (experts with exact noised scores, composition, beta/weights).",
                key="target",
            )
        return target.expert_models, target.exponents

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Run the reverse SDE from ``t = 1`` to ``t_min`` (see the class and module docstrings).

        Runs on one CPU thread (small tensors: thread start-up costs more than it saves).
        """
        experts, exps = self._experts(target)
        with single_thread():
            return self._sample(target, experts, exps, generator)

    def _sample(
        self, target: Any, experts: list, exps: tuple[float, ...], generator: torch.Generator
    ) -> Samples:
        total = float(sum(exps))
        k, d, n = self.num_particles, target.dim, self.num_steps
        dev = generator.device
        x = torch.randn(k, d, generator=generator, dtype=torch.float64, device=dev) / math.sqrt(total)
        log_w = torch.zeros(k, dtype=torch.float64, device=dev)
        rs = child_generator(generator, "resampling")
        if self.correct:
            a1 = alpha_bar(1.0, self.b_min, self.b_max)
            log_target = sum(e * p.noised_log_prob(x, a1) for p, e in zip(experts, exps, strict=True))
            log_prior = -0.5 * total * (x * x).sum(-1) + 0.5 * d * math.log(total / (2 * math.pi))
            log_w = log_target - log_prior
        times = torch.linspace(1.0, self.t_min, n + 1, dtype=torch.float64).tolist()
        tempered = self.noise == "tempered"
        ess_steps: list[float] = []
        resamples = 0
        for t, t_next in itertools.pairwise(times):
            h = t - t_next
            b = self.b_min + (self.b_max - self.b_min) * t
            ab = alpha_bar(t, self.b_min, self.b_max)
            scores = [p.noised_score(x, ab) for p in experts]
            s = sum(e * si for si, e in zip(scores, exps, strict=True))
            sig2 = b / total if tempered else b
            if self.correct:
                div_f = -0.5 * b * d
                sq = sum(e * (si * si).sum(-1) for si, e in zip(scores, exps, strict=True))
                log_w = log_w + h * ((total - 1) * div_f + 0.5 * b * ((s * s).sum(-1) - sq))
            z = torch.randn(k, d, generator=generator, dtype=torch.float64, device=dev)
            x = x + h * (0.5 * b * x + 0.5 * (b + sig2) * s) + math.sqrt(sig2 * h) * z
            if self.correct:
                frac = ess(log_w) / k
                ess_steps.append(frac)
                if frac < self.resample_threshold:
                    idx = systematic_resample(log_w, rs)
                    x, log_w = x[idx], torch.zeros_like(log_w)
                    resamples += 1
        info: dict[str, Any] = {
            "score_evals": len(experts) * k * n,
            "num_particles": k,
            "num_steps": n,
            "num_resamples": resamples,
        }
        if self.correct:
            info.update(
                ess_min=min(ess_steps),
                ess_mean=sum(ess_steps) / len(ess_steps),
                ess_final=ess(log_w) / k,
                ess_per_step=[round(v, 6) for v in ess_steps],
            )
        return Samples(
            x=x, log_weights=(log_w - torch.logsumexp(log_w, 0)) if self.correct else None, info=info
        )


@attrs.define(kw_only=True)
class NaiveScoreMixing(FKCorrector):
    """Naive score mixing: :class:`FKCorrector`'s SDE with the mixed score ``S``, no weights, no resampling.

    Shapes: returns ``Samples(x: Tensor[K, d] float64, log_weights=None)``; ``info`` holds
    ``score_evals`` (= experts x K x num_steps, as FKC's) and ``num_resamples = 0``.

    Raises:
        ConfigError: as :class:`FKCorrector`.

    Source: the uncorrected baseline of Skreta et al. 2025 (arXiv 2503.02819), sec. 3 (the
    classifier-free-guidance-style score combination; Ho & Salimans 2022, eq. 6).
    """

    correct: ClassVar[bool] = False
