"""Heat-bath Gibbs sampler for targets on {-1, +1}^d, with the same kernel contract as the MCMC kernels."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Target
from quadriga.validators import one_of
from quadriga_std.samplers.mcmc import _DTYPES, ChainState, MCMCKernel, initial_points

__all__ = ["Gibbs", "check_spin_target"]


def check_spin_target(target: Any) -> None:
    """Refuse targets that are not spin systems on {-1, +1}^d.

    Accepted: an object with ``flip_log_ratios`` (e.g. ``ising``), or a plain object with
    ``dim`` and ``log_prob`` that is not a :class:`quadriga.interfaces.Target` (a hand-written
    log density over spins, which cannot be told apart from a continuous one).

    Raises:
        ConfigError: no ``dim``/``log_prob``, or a ``Target`` without ``flip_log_ratios``
            (a continuous target such as ``gaussian``).
    """
    if not hasattr(target, "log_prob") or not hasattr(target, "dim"):
        raise ConfigError(
            f"gibbs needs a target with dim and log_prob, got {type(target).__name__}.", key="target"
        )
    if isinstance(target, Target) and not callable(getattr(target, "flip_log_ratios", None)):
        raise ConfigError(
            f"gibbs samples spin systems on {{-1, +1}}^d (targets with flip_log_ratios, e.g. "
            f"'ising'), but {type(target).__name__} is a continuous target; use an MCMC sampler "
            "such as 'mala', 'hmc' or 'rwm' for it.",
            key="target",
        )


@attrs.define(kw_only=True)
class Gibbs(MCMCKernel):
    """Heat-bath (Glauber) Gibbs sampler for spin systems x in {-1, +1}^d.

    Site i is set to the flipped value with probability sigmoid(Delta_i), where
    Delta_i = log pi(x with spin i flipped) - log pi(x): an exact draw from the conditional
    pi(x_i | x_-i). One ``transition`` is one sweep: all d sites in order (``scan =
    "systematic"``) or d uniformly random sites (``scan = "random"``). Delta_i comes from
    ``target.flip_log_ratios(x)[:, i]`` when the target has that method, otherwise from
    ``target.log_prob`` evaluated at the flipped configuration (so any log_prob over
    {-1, +1}^d works, including a surrogate that changes between transitions).
    ``init = "normal"`` starts from uniformly random spins; ``"target"`` from exact draws.
    ``acceptance_rate`` is the fraction of site updates that flipped the spin; ``log_prob_evals``
    counts one per chain per site update (a flipped-configuration evaluation, or one column of
    ``flip_log_ratios`` on the fast path).

    Which targets ``sample`` accepts: a spin system, i.e. a target with ``flip_log_ratios``
    (``ising``), or a plain object with ``dim`` and ``log_prob`` that is not a quadriga
    ``Target`` (a hand-written spin log density). A registered ``Target`` without
    ``flip_log_ratios`` is continuous (``gaussian``, ``banana``, ...) and is refused.
    ``transition`` itself is duck-typed and checks nothing, so a kernel wrapper can run it on a
    surrogate of a spin target.

    Shapes: ``Samples.x: Tensor[num_chains * num_samples, d]`` (chain-major) and
    ``Samples.chains: Tensor[num_chains, num_samples, d]``, entries in {-1, +1} in ``dtype``.
    Units: spins are dimensionless (+-1); ``acceptance_rate`` is a fraction of site updates;
    ``*_evals`` and ``flips`` are counts; ``seconds`` is wall time.

    Raises:
        ConfigError: a target without ``dim``/``log_prob``; a quadriga ``Target`` that is not a
            spin system (no ``flip_log_ratios``); ``init = "target"`` on a target without exact
            samples, or whose exact samples are not all in {-1, +1} (all before any sweep);
            invalid parameters at build time.

    Source: Geman & Geman 1984, "Stochastic relaxation, Gibbs distributions, and the Bayesian
    restoration of images", IEEE TPAMI 6(6) (the Gibbs sampler); Glauber 1963 (heat-bath dynamics).
    """

    uses_score: ClassVar[bool] = False
    discrete: ClassVar[bool] = True
    scan: str = param(
        "systematic",
        doc="site order within a sweep: 'systematic' or 'random'",
        validator=one_of(("systematic", "random")),
    )

    def start(self, target: Any, generator: torch.Generator) -> tuple[ChainState, int]:
        """Uniformly random spins (``init = "normal"``) or exact target draws (``"target"``), and 0 redraws.

        Raises:
            ConfigError: ``init = "target"`` on a target whose exact samples are not spins.
        """
        if self.init == "target":
            x = initial_points(target, self.num_chains, "target", 1.0, _DTYPES[self.dtype], generator)
            if not bool(((x == 1) | (x == -1)).all()):
                raise ConfigError(
                    f"init = 'target': the exact samples of {type(target).__name__} are not spins "
                    "in {-1, +1}; gibbs samples spin systems only (e.g. target 'ising').",
                    key="target",
                )
        else:
            bits = torch.randint(0, 2, (self.num_chains, int(target.dim)), generator=generator)
            x = (2 * bits - 1).to(_DTYPES[self.dtype])
        return self.init_state(target, x), 0

    def transition(
        self, state: ChainState, target: Any, generator: torch.Generator
    ) -> tuple[ChainState, torch.Tensor, dict[str, int]]:
        """One sweep of heat-bath updates for all c chains (see :meth:`MCMCKernel.transition`).

        Returns:
            ``(new_state, flipped Tensor[c] bool (any spin flipped in the sweep), counters)``;
            counters also carry ``"site_updates"`` and ``"flips"`` for the acceptance rate.
        """
        x, lp = state.x.clone(), state.log_prob.clone()
        c, d = x.shape
        fast = hasattr(target, "flip_log_ratios")
        sites = (
            torch.arange(d) if self.scan == "systematic" else torch.randint(0, d, (d,), generator=generator)
        )
        u = torch.rand(d, c, generator=generator, dtype=x.dtype)
        rows = torch.arange(c)
        flips = torch.zeros(c, dtype=torch.long)
        nonfinite = 0
        for k, i in enumerate(sites.tolist()):
            if fast:
                delta = target.flip_log_ratios(x)[:, i]
                lp_new = lp + delta
            else:
                y = x.clone()
                y[:, i] = -y[:, i]
                lp_new = target.log_prob(y)
                delta = lp_new - lp
            bad = ~torch.isfinite(delta)
            nonfinite += int(bad.sum())
            flip = (u[k] < torch.sigmoid(delta)) & ~bad
            x[rows[flip], i] = -x[rows[flip], i]
            lp = torch.where(flip, lp_new, lp)
            flips += flip.long()
        new = ChainState(x, lp, None)
        return (
            new,
            flips > 0,
            {
                "score_evals": 0,
                "log_prob_evals": c * d,
                "rejected_nonfinite": nonfinite,
                "site_updates": c * d,
                "flips": int(flips.sum()),
            },
        )

    def sample(self, target: Any, *, generator: torch.Generator):
        """Run the chains (see the class docstring); ``acceptance_rate`` = flipped fraction of site updates.

        Raises:
            ConfigError: ``target`` is not a spin system (see the class docstring), before any sweep.
        """
        check_spin_target(target)
        out = super().sample(target, generator=generator)
        info = out.info
        if info.get("site_updates"):
            info["acceptance_rate"] = info["flips"] / info["site_updates"]
        return out
