"""Stochastic normalizing flows on ``normflows``: the model, its path weights and its path-KL loss.

A flow maps ``z_0 ~ q_0 = N(0, I)`` through ``K`` blocks; block ``k`` is a RealNVP coupling
(``normflows.flows.MaskedAffineFlow`` with alternating masks, ``normflows.nets.MLP`` scale and
shift) followed, in a stochastic flow, by ``m`` Metropolis steps
(``normflows.flows.MetropolisHastings`` with ``normflows.distributions.DiagGaussianProposal``)
that leave the intermediate density ``p_k ∝ q_0^{1 - λ_k} π^{λ_k}``, ``λ_k = k / K``, invariant.

Path weight (Wu, Köhler & Noé 2020, eq. 9 and Table 1): for a path ``z_0 -> ... -> x``,

    log w = log π̃(x) - log q_0(z_0) + Σ_couplings log|det J| + Σ_MH [log p_k(y) - log p_k(y')]

where each accepted Metropolis move ``y -> y'`` contributes the energy difference of its
intermediate target (detailed balance makes the forward/backward path-probability ratio an
energy difference; normflows returns exactly this as the layer's ``log_det``). ``normflows``'
``NormalizingFlow.sample`` accumulates ``log_q = log q_0(z_0) - Σ log_det``, so
``log w = log π̃(x) - log_q``. With zero Metropolis steps it is the flow's exact density ratio
``log π̃(x) - log q_θ(x)``. The training loss is the path KL ``E[-log w]`` (KL between the
forward and backward path measures up to ``log Z``; eq. 10 "KL by energy"), using only
``log π̃``; ``normflows.core.NormalizingFlow.reverse_kld`` computes it.

normflows draws its noise from torch's global generator; :func:`seeded` forks that state and
seeds it from the stage generator so runs are reproducible and the caller's state is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import normflows as nf
import torch

__all__ = ["InterpolatedTarget", "TargetDensity", "build_flow", "kish_ess", "path_sample", "seeded"]


@contextlib.contextmanager
def seeded(generator: torch.Generator) -> Iterator[None]:
    """Run the body with torch's global CPU generator seeded from ``generator`` (state restored after)."""
    seed = int(torch.randint(0, 2**62, (), generator=generator))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


class TargetDensity(torch.nn.Module):
    """``log π̃`` of a quadriga Target as a normflows target: ``log_prob(Tensor[n, d]) -> Tensor[n]``.

    Evaluates the target in float64 and returns the input's dtype (gradients flow through the casts).
    Units: nats.
    """

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Unnormalised log density of the target at ``x`` (nats)."""
        return self.target.log_prob(x.to(torch.float64)).to(x.dtype)


class InterpolatedTarget(torch.nn.Module):
    """``log p_λ = (1 - λ) log q_0 + λ log π̃``: the invariant density of a stochastic block.

    Source: Wu, Köhler & Noé 2020, sec. 4 (interpolated energies); ``snf_code/snf.py:InterpolatedEnergy``.
    """

    def __init__(self, prior: Any, target: TargetDensity, lam: float) -> None:
        super().__init__()
        self.prior, self.target, self.lam = prior, target, float(lam)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """``Tensor[n, d] -> Tensor[n]`` (nats, unnormalised)."""
        return (1.0 - self.lam) * self.prior.log_prob(x) + self.lam * self.target.log_prob(x)


def build_flow(
    target: Any,
    *,
    num_couplings: int,
    hidden: list[int],
    mcmc_steps: int,
    step_size: float,
    generator: torch.Generator,
) -> nf.NormalizingFlow:
    """A (stochastic) RealNVP flow for ``target`` (module docstring); float32 parameters.

    Args:
        target: a quadriga Target with ``dim`` and ``log_prob``.
        num_couplings: K coupling layers (masks alternate between the two halves of the coordinates).
        hidden: hidden widths of each scale and shift MLP.
        mcmc_steps: Metropolis steps after each coupling (0: a pure normalizing flow).
        step_size: standard deviation of the Gaussian random-walk proposal (units of x).
        generator: seeds the initial weights (global RNG state kept).

    Returns:
        ``normflows.NormalizingFlow`` with ``q0 = DiagGaussian(d, trainable=False)`` and ``p`` the target.

    Source: Dinh, Sohl-Dickstein & Bengio 2017 (RealNVP); Wu, Köhler & Noé 2020, Fig. 1.
    """
    d = int(target.dim)
    mask = torch.tensor([(i % 2) for i in range(d)], dtype=torch.float32)
    density = TargetDensity(target)
    with seeded(generator):
        q0 = nf.distributions.DiagGaussian(d, trainable=False)
        flows: list[torch.nn.Module] = []
        for k in range(int(num_couplings)):
            b = mask if k % 2 == 0 else 1 - mask
            s = nf.nets.MLP([d, *hidden, d], init_zeros=True)
            t = nf.nets.MLP([d, *hidden, d], init_zeros=True)
            flows.append(nf.flows.MaskedAffineFlow(b, t, s))
            if mcmc_steps > 0:
                lam = (k + 1) / int(num_couplings)
                proposal = nf.distributions.DiagGaussianProposal((d,), [float(step_size)] * d)
                flows.append(
                    nf.flows.MetropolisHastings(
                        InterpolatedTarget(q0, density, lam), proposal, int(mcmc_steps)
                    )
                )
        return nf.NormalizingFlow(q0=q0, flows=flows, p=density)


def path_sample(model: nf.NormalizingFlow, num_samples: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``x: Tensor[n, d]`` and the path log weights ``log w = log π̃(x) - log_q``: ``Tensor[n]`` (nats).

    Uses torch's global generator (wrap in :func:`seeded`). ``mean(-log w)`` estimates the path KL
    plus ``log Z``; ``log mean exp(log w)`` estimates ``log Z`` (unbiased in ``Z``).
    """
    x, log_q = model.sample(int(num_samples))
    return x, model.p.log_prob(x) - log_q


def kish_ess(log_w: torch.Tensor) -> float:
    """Kish's effective sample size ``(Σ w)^2 / Σ w^2`` of ``log_w: Tensor[n]`` (count, in [1, n]).

    Source: Kish 1965, *Survey Sampling*, eq. 11.7.7; Kong, Liu & Wong 1994.
    """
    lw = log_w.detach().to(torch.float64)
    return float(torch.exp(2 * torch.logsumexp(lw, 0) - torch.logsumexp(2 * lw, 0)))
