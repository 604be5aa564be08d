"""GDC: distributional policy gradient towards the moment-constrained EBM, and its REINFORCE baseline.

The target is the minimal-KL distribution ``p(x) ∝ P(x) = a(x) exp(lambda phi(x))`` meeting the
moment ``E_p[phi] = mu_bar`` (Khalifa et al. 2021, eq. 1-2); ``lambda`` is fitted by
self-normalised importance sampling on draws from ``a`` (:func:`fit_lambda_snis`, the
``compute_optimal_lambdas`` of the official code). The update of :class:`GDC` (Algorithm 1/2)::

    x ~ q                                              # proposal, batch of sequences
    log_P = log a(x) + lambda * phi(x)                 # unnormalised target
    w = exp(log_P - log q(x)) / Z_hat                  # importance weight P / (Z q)
    loss = -(w * log pi_theta(x)).mean()               # DPG: grad = E_q[(P/Zq) grad log pi]   (eq. 3)
    every q_update_interval steps:                     # adaptive q (Algorithm 2)
        if KL_hat(p || pi) < KL_hat(p || q): q <- pi   # both estimated by importance sampling

:class:`Reinforce` maximises ``E_pi[lambda phi(x)] - beta KL(pi || a)`` by REINFORCE with a mean
baseline (the paper's "REINFORCE" baseline on the reward ``phi``; ``beta > 0`` is the KL-penalised
variant of Ziegler et al. 2019); its advantage and loss are quadriga-std's shared policy-gradient
baselines (:mod:`quadriga_std.sequences.policy_gradient`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.sequences.models import TabularAutoregressive
from quadriga_std.sequences.policy_gradient import mean_baseline_advantages, reinforce_loss
from quadriga_std.sequences.space import SequenceSpace

from quadriga import Fitted, Learner, param
from quadriga.errors import ConfigError
from quadriga.seeding import child_generator
from quadriga.validators import int_at_least, non_negative, positive, positive_int

__all__ = ["GDC", "Reinforce", "fit_lambda_snis"]


def fit_lambda_snis(
    phi: torch.Tensor,
    target_moment: float,
    *,
    step_size: float = 0.5,
    tolerance: float = 0.01,
    max_iterations: int = 1000,
) -> tuple[float, int]:
    """``lambda`` with ``sum w phi / sum w = mu_bar``, ``w = exp(lambda phi)``, on draws ``x ~ a``.

    Iterates ``lambda <- lambda + step_size (mu_bar - mu_hat(lambda))`` until
    ``|mu_bar - mu_hat| < tolerance`` or ``max_iterations``.

    Shapes: ``phi Tensor[n]`` (the feature on ``n`` draws from ``a``). Returns ``(lambda, iterations)``.

    Raises:
        ConfigError: every draw has the same feature value (no draw meets the constraint, or every
            one does): self-normalised IS cannot move the moment; draw more samples.

    Source: Khalifa et al. 2021, sec. 2.2 (SNIS for lambda); official code ``dpg/gdc/gdc.py``
    ``compute_optimal_lambdas`` (step 0.5, tolerance 0.01, 1000 iterations).
    """
    phi = phi.double()
    if float(phi.max()) == float(phi.min()):
        raise ConfigError(
            "every draw from a has the same feature value: SNIS cannot fit lambda; raise moment_sample_size.",
            key="moment_sample_size",
        )
    lam = 0.0
    for it in range(1, max_iterations + 1):
        w = torch.softmax(lam * phi, 0)
        gap = target_moment - float((w * phi).sum())
        if abs(gap) < tolerance:
            return lam, it
        lam += step_size * gap
    return lam, max_iterations


def _task(task: Any) -> SequenceSpace:
    if not isinstance(task, SequenceSpace):
        raise ConfigError(
            "this learner needs a sequence-space task (quadriga-std's 'sequence-space').", key="task"
        )
    return task


@attrs.define(kw_only=True)
class _SequenceLearner(Learner):
    """Parameters shared by the two learners: same budget, same policy class and initialisation."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (SequenceSpace,)}
    check_params: ClassVar[dict[str, Any]] = {"num_updates": 3, "batch_size": 16, "moment_sample_size": 256}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"space": {"use": "sequence-space", "vocab_size": 3, "length": 3, "min_count": 1}},
        "inputs": {"task": "space"},
    }

    num_updates: int = param(300, doc="gradient steps", validator=positive_int)
    batch_size: int = param(256, doc="sequences drawn per step", validator=int_at_least(2))
    learning_rate: float = param(0.2, doc="SGD step size on the tabular logits", validator=positive)
    moment_sample_size: int = param(
        10240, doc="draws from a for the SNIS fit of lambda", validator=int_at_least(2)
    )

    def _setup(self, task: Any, generator: torch.Generator) -> tuple[Any, Any, Any, float, int]:
        """Base model, its log-probabilities and the feature on every sequence, and lambda by SNIS.

        The space is enumerated, so a batch is drawn as indices into it (``torch.multinomial`` on the
        sequence probabilities: the same law as ancestral sampling) and ``log pi`` of the batch is
        read from one pass over all sequences.
        """
        task = _task(task)
        base = task.base()
        draws = base.sample(self.moment_sample_size, generator=child_generator(generator, "moments"))
        lam, iters = fit_lambda_snis(task.feature(draws), task.target_moment)
        seqs = task.sequences()
        return base, task.base_log_probs(), task.feature(seqs).to(torch.float64), lam, iters

    @staticmethod
    def _draw(log_probs: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
        """``n`` sequence indices drawn from ``softmax(log_probs)`` (``LongTensor[n]``)."""
        return torch.multinomial(
            torch.softmax(log_probs.detach(), 0), n, replacement=True, generator=generator
        )


@attrs.define(kw_only=True)
class GDC(_SequenceLearner):
    """Generation with Distributional Control: DPG towards ``p ∝ a exp(lambda phi)`` (adaptive proposal).

    The policy ``pi_theta`` is a full-context :class:`TabularAutoregressive` initialised at ``a``
    (as the paper initialises from the pretrained model); ``Fitted.model`` is it. History per
    step: ``loss``, ``z_hat`` (running mean of ``P/q``, the partition function), ``kl_p_pi_hat``
    (IS estimate of KL(p || pi) at the q checks). ``info``: ``lambda``, ``snis_iterations``,
    ``proposal_updates``, ``num_sequences`` (the sample budget).

    Shapes:
        Batches ``LongTensor[batch_size, L]``; weights ``Tensor[batch_size]``.

    Units:
        Log-probabilities and KL in nats.

    Raises:
        ConfigError: a task that is not a ``sequence-space``; SNIS draws with a constant feature.

    Source: Khalifa, Elsahar, Dymetman 2021, "A Distributional Approach to Controlled Text
    Generation", ICLR, arXiv 2012.11635: eq. (1)-(2) (the EBM), eq. (3) (the DPG gradient),
    Algorithm 1 (DPG with the adaptive proposal q, the KL criterion of the code's
    ``q_update_criterion = "kld"``); official code ``naver/gdc`` ``dpg/gdc/gdc.py``.
    """

    adaptive_proposal: bool = param(True, doc="replace q by pi when pi is closer to p (Algorithm 1)")
    q_update_interval: int = param(10, doc="steps between proposal checks", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """See the class docstring."""
        base, log_a, phi, lam, iters = self._setup(task, generator)
        seqs = _task(task).sequences()
        policy = TabularAutoregressive.copy_of(base)
        log_q_all = log_a.clone()  # the proposal q, starting at a
        log_P_all = log_a + lam * phi  # unnormalised target P = a exp(lambda phi), eq. (2)
        opt = torch.optim.SGD(policy.parameters(), lr=self.learning_rate)
        draws = child_generator(generator, "draws")
        z_sum, z_count, updates = 0.0, 0, 0
        history: dict[str, list] = {"step": [], "loss": [], "z_hat": [], "kl_p_pi_hat": []}
        progress.start(self.num_updates)
        for step in range(1, self.num_updates + 1):
            x = self._draw(log_q_all, self.batch_size, draws)  # x ~ q (indices of sequences)
            log_pi_all = policy.log_prob(seqs)
            with torch.no_grad():
                log_P, log_q = log_P_all[x], log_q_all[x]
                ratio = torch.exp(log_P - log_q)  # P / q
                z_sum, z_count = z_sum + float(ratio.sum()), z_count + len(x)
                z_hat = z_sum / z_count  # running IS estimate of Z = sum_x P(x)
                w = ratio / z_hat
            loss = -(w * log_pi_all[x]).mean()  # DPG, eq. (3)
            opt.zero_grad()
            loss.backward()
            opt.step()
            kl_hat = float("nan")
            if self.adaptive_proposal and step % self.q_update_interval == 0:
                with torch.no_grad():
                    log_p = log_P - math.log(z_hat)
                    kl_pi = float((w * (log_p - log_pi_all[x])).mean())  # KL(p||pi) by IS from q
                    kl_q = float((w * (log_p - log_q)).mean())
                kl_hat = kl_pi
                if kl_pi < kl_q:
                    log_q_all = policy.log_prob(seqs).detach()
                    updates += 1
            for k, v in (
                ("step", step),
                ("loss", float(loss.detach())),
                ("z_hat", z_hat),
                ("kl_p_pi_hat", kl_hat),
            ):
                history[k].append(v)
            progress.advance()
        info = {
            "lambda": lam,
            "snis_iterations": iters,
            "proposal_updates": updates,
            "num_sequences": self.num_updates * self.batch_size,
        }
        return Fitted(model=policy.requires_grad_(False), history=history, info=info)


@attrs.define(kw_only=True)
class Reinforce(_SequenceLearner):
    """REINFORCE with a mean baseline on the reward ``lambda phi(x)``, optionally KL-penalised towards ``a``.

    Per step: ``x ~ pi``, ``r = lambda phi(x) - beta (log pi(x) - log a(x))`` (detached),
    ``loss = -((r - mean r) log pi(x)).mean()``
    (:func:`~quadriga_std.sequences.policy_gradient.mean_baseline_advantages`: the batch mean with
    the sample itself included, so the expected gradient is ``(1 - 1/n)`` times the exact one; and
    :func:`~quadriga_std.sequences.policy_gradient.reinforce_loss`). With ``kl_coefficient = 0``
    (the paper's REINFORCE baseline) it maximises ``E_pi[phi]`` and overshoots the moment; with
    ``kl_coefficient = 1`` its optimum is ``a exp(lambda phi) / Z = p`` itself (Korbak et al. 2022,
    "RL with KL penalties is better viewed as Bayesian inference"). ``lambda`` comes from the same
    SNIS fit as GDC's.

    Shapes:
        Batches ``LongTensor[batch_size, L]``; rewards ``Tensor[batch_size]``.

    Units:
        Reward in units of ``lambda phi`` (nats); KL in nats.

    Raises:
        ConfigError: a task that is not a ``sequence-space``; SNIS draws with a constant feature.

    Source: Williams 1992 (REINFORCE); the baseline of Khalifa et al. 2021, sec. 3.1 ("REINFORCE"
    on ``phi``, and ``Ziegler`` with a KL penalty); official code ``dpg/gdc/pg.py``.
    """

    kl_coefficient: float = param(
        0.0, doc="beta of the KL(pi || a) penalty (0: plain REINFORCE)", validator=non_negative
    )

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """See the class docstring."""
        base, log_a, phi, lam, iters = self._setup(task, generator)
        seqs = _task(task).sequences()
        policy = TabularAutoregressive.copy_of(base)
        opt = torch.optim.SGD(policy.parameters(), lr=self.learning_rate)
        draws = child_generator(generator, "draws")
        history: dict[str, list] = {"step": [], "loss": [], "reward": []}
        progress.start(self.num_updates)
        for step in range(1, self.num_updates + 1):
            log_pi_all = policy.log_prob(seqs)
            x = self._draw(log_pi_all, self.batch_size, draws)  # x ~ pi (indices of sequences)
            log_pi = log_pi_all[x]
            with torch.no_grad():
                reward = lam * phi[x] - self.kl_coefficient * (log_pi - log_a[x])
            loss = reinforce_loss(log_pi, mean_baseline_advantages(reward))
            opt.zero_grad()
            loss.backward()
            opt.step()
            for k, v in (("step", step), ("loss", float(loss.detach())), ("reward", float(reward.mean()))):
                history[k].append(v)
            progress.advance()
        info = {"lambda": lam, "snis_iterations": iters, "num_sequences": self.num_updates * self.batch_size}
        return Fitted(model=policy.requires_grad_(False), history=history, info=info)
