"""The score-tilted surrogate target pi_theta(x) proportional to pi(x) exp(-alpha theta^T s(x)).

Two flavours share one small surface (``dim``, ``log_prob``, ``score``), so that any base kernel written
against the target
contract runs on the surrogate unchanged:

* :class:`GradientTilt` for continuous targets, s = grad log pi. Its ``score`` is the
  surrogate drift, either ``exact`` (s(x) - alpha H(x) theta, a Hessian-vector product by
  reverse-mode autograd of the target's score) or ``shifted`` (s(x - alpha theta), the official
  code's first-order approximation; the log density stays exact so MH-adjusted kernels stay
  exact for pi_theta).
* :class:`FlipTilt` for spin systems, with the discrete score
  s_i(x) = pi(x with spin i flipped) / pi(x) - 1 (zero mean under pi, Prop. 3.6).

Both expose ``log_prob`` and ``score`` (contract of quadriga-std's MCMC kernels);
theta is ``Tensor[c, d]``, one row per chain, so inputs must have exactly ``c`` rows.
Both keep a tiny cache of the base target's values at the last points they saw, and
count every base evaluation (``log_prob_evals``, ``score_evals``, ``hvp_evals`` in rows).
Non-finite values are passed through: the base kernels reject (and count) a move whose log
acceptance ratio is not finite.

Source: Hu et al. 2026, "Score-Repellent Monte Carlo", arXiv 2604.22948, Sec. 3 (surrogate
target, SR-MH acceptance, surrogate drift) and Prop. 3.6 (discrete score).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

__all__ = ["FlipTilt", "GradientTilt", "discrete_score", "flip_log_ratios"]


def flip_log_ratios(target: Any, x: torch.Tensor) -> torch.Tensor:
    """log pi(x^(i)) - log pi(x) for every site i (x^(i): spin i flipped).

    Args:
        target: has ``log_prob(Tensor[n, d]) -> Tensor[n]``; its ``flip_log_ratios`` is used if present.
        x: ``Tensor[n, d]`` of spins in {-1, +1}.

    Returns:
        ``Tensor[n, d]`` (nats). Without a fast path this costs ``n * (d + 1)`` log_prob rows.
    """
    fast = getattr(target, "flip_log_ratios", None)
    if fast is not None:
        return fast(x)
    n, d = x.shape
    flips = x.unsqueeze(1).repeat(1, d, 1)
    idx = torch.arange(d)
    flips[:, idx, idx] = -flips[:, idx, idx]
    return target.log_prob(flips.reshape(n * d, d)).reshape(n, d) - target.log_prob(x).unsqueeze(-1)


def discrete_score(target: Any, x: torch.Tensor) -> torch.Tensor:
    """Discrete score s_i(x) = pi(x^(i)) / pi(x) - 1 = expm1(flip log ratio).

    Args:
        target: as for :func:`flip_log_ratios`; its ``discrete_score`` is used if present.
        x: ``Tensor[n, d]`` spins in {-1, +1}.

    Returns:
        ``Tensor[n, d]`` (dimensionless, >= -1); E_pi[s(x)] = 0 (Hu et al. 2026, Prop. 3.6).
    """
    fast = getattr(target, "discrete_score", None)
    if fast is not None:
        return fast(x)
    return torch.expm1(flip_log_ratios(target, x))


class _Tilt:
    """State shared by both tilts: theta, alpha, counters and a two-entry cache."""

    def __init__(self, target: Any, theta: torch.Tensor, counters: Counter | None = None) -> None:
        self.target = target
        self.theta = theta
        self.alpha = 0.0
        self.counters: Counter = Counter() if counters is None else counters
        self._cache: list[tuple[torch.Tensor, int, torch.Tensor, torch.Tensor | None]] = []
        self.last_proposal: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None = None
        self._shifted: tuple[torch.Tensor, int, torch.Tensor] | None = None

    @property
    def dim(self) -> int:
        """Dimension d of the base target."""
        return int(self.target.dim)

    def set(self, theta: torch.Tensor, alpha: float) -> None:
        """Use history ``theta`` (``Tensor[c, d]``) and strength ``alpha`` (float >= 0) from now on."""
        self.theta, self.alpha = theta, float(alpha)
        self._shifted = None

    def _check_rows(self, x: torch.Tensor) -> None:
        if x.ndim != 2 or x.shape[0] != self.theta.shape[0]:
            raise ValueError(
                f"the surrogate of chain c uses theta[c]: x must have shape "
                f"[{self.theta.shape[0]}, {self.dim}] (one row per chain), got {tuple(x.shape)}"
            )

    def _lookup(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        for ref, version, lp, s in self._cache:
            if ref is x and x._version == version:
                return lp, s
        return None

    def remember(self, x: torch.Tensor, lp: torch.Tensor, s: torch.Tensor | None) -> None:
        """Cache the base values ``log pi(x)`` (``Tensor[c]``) and ``s(x)`` (``Tensor[c, d]`` or None)."""
        self._cache = [*[e for e in self._cache if e[0] is not x][-1:], (x, x._version, lp, s)]

    def base(self, x: torch.Tensor, *, need_score: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Base ``(log pi(x) Tensor[c], s(x) Tensor[c, d] or None)``, from the cache when possible."""
        hit = self._lookup(x)
        if hit is not None and (hit[1] is not None or not need_score):
            return hit
        s: torch.Tensor | None
        if hit is None and need_score:
            lp, s = self._log_prob_and_score(x)
        else:
            lp = hit[0] if hit is not None else self._log_prob(x)
            s = self._score(x) if need_score else None
        self.remember(x, lp, s)
        return lp, s

    def _log_prob_and_score(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._log_prob(x), self._score(x)

    def _log_prob(self, x: torch.Tensor) -> torch.Tensor:
        self.counters["log_prob_evals"] += x.shape[0]
        return self.target.log_prob(x)

    def _score(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Surrogate log pi(x) - alpha theta[c]^T s(x[c]): ``Tensor[c, d] -> Tensor[c]``.

        Units: nats, up to a constant.

        Non-finite values are returned as they are: the kernels of quadriga-std reject a move
        whose log acceptance ratio is not finite and count it in ``rejected_nonfinite``.

        Raises:
            ValueError: when x does not have one row per chain.
        """
        self._check_rows(x)
        lp, s = self.base(x, need_score=self.alpha != 0.0)
        out = lp if s is None else lp - self.alpha * (self.theta * s).sum(-1)
        self.last_proposal = (x, lp, s)
        return out


class GradientTilt(_Tilt):
    """Surrogate of a continuous target; ``score`` is the drift of pi_theta.

    Args:
        target: ``log_prob: Tensor[c, d] -> Tensor[c]``, ``score: Tensor[c, d] -> Tensor[c, d]``, ``dim``.
        theta: ``Tensor[c, d]`` history, one row per chain.
        drift: ``"exact"`` (s(x) - alpha H(x) theta, the Hessian-vector product as the reverse-mode
            vector-Jacobian product theta^T J_s(x) of ``target.score`` (H is symmetric); measured much
            cheaper per call than ``torch.func.jvp`` or ``torch.autograd.forward_ad``); if the score cannot be
            differentiated a central finite difference with step 1e-5 |theta| is used and
            counted as ``hvp_fallbacks``) or ``"shifted"`` (s(x - alpha theta)).
        counters: a ``collections.Counter`` to add evaluation counts to.

    Set ``prefetch = True`` for kernels that evaluate ``log_prob(y)`` and then ``score(y)`` at
    each proposal (MALA, ULA): with the shifted drift, s(y) and s(y - alpha theta) then come
    from one batched call of the target's score (same count of score rows, one call fewer).

    Source: Hu et al. 2026, Sec. 3 (grad log pi_theta = s - alpha grad^2 log pi theta); the shifted
    form is the official code's ``use_shifted_gradient``.
    """

    def __init__(
        self, target: Any, theta: torch.Tensor, *, drift: str = "exact", counters: Counter | None = None
    ) -> None:
        super().__init__(target, theta, counters)
        if drift not in ("exact", "shifted"):
            raise ValueError(f"drift must be 'exact' or 'shifted', got {drift!r}")
        self.drift = drift
        self._jvp_ok = True
        self.prefetch = False

    def _score(self, x: torch.Tensor) -> torch.Tensor:
        self.counters["score_evals"] += x.shape[0]
        if self.prefetch and self.drift == "shifted" and self.alpha != 0.0:
            # a MALA-type kernel asks for the drift at the same point next: one batched call
            both = self.target.score(torch.cat([x, x - self.alpha * self.theta]))
            self.counters["score_evals"] += x.shape[0]
            c = x.shape[0]
            self._shifted = (x, x._version, both[c:])
            return both[:c]
        return self.target.score(x)

    def _log_prob_and_score(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Base ``(log pi(x), s(x))``, through the target's ``log_prob_and_score`` when it has one
        that speaks for its ``log_prob`` and ``score`` (quadriga-std's ``fused_evaluator``: not one
        a subclass inherits while overriding either).

        With the shifted drift and ``prefetch``, the shifted points x - alpha theta ride in the
        same call (their log densities are a by-product and not counted).
        """
        from quadriga_std.samplers.mcmc import fused_evaluator

        both = fused_evaluator(self.target)
        if both is None:
            return self._log_prob(x), self._score(x)
        c = x.shape[0]
        self.counters["log_prob_evals"] += c
        self.counters["score_evals"] += c
        if self.prefetch and self.drift == "shifted" and self.alpha != 0.0:
            lp, s = both(torch.cat([x, x - self.alpha * self.theta]))
            self.counters["score_evals"] += c
            self._shifted = (x, x._version, s[c:])
            return lp[:c], s[:c]
        return both(x)

    def _hvp(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(s(x), H(x) theta)`` per row, both ``Tensor[c, d]``."""
        self.counters["hvp_evals"] += x.shape[0]
        if self._jvp_ok:
            try:
                # reverse mode through the target's score: J_s(x)^T theta = H(x) theta (H is symmetric)
                with torch.enable_grad():
                    xr = x.detach().requires_grad_(True)
                    s = self.target.score(xr)
                    (hv,) = torch.autograd.grad(s, xr, grad_outputs=self.theta.to(x.dtype), allow_unused=True)
                s = s.detach()
                hv = torch.zeros_like(s) if hv is None else hv
                self.counters["score_evals"] += x.shape[0]
                return s, hv
            except Exception:
                self._jvp_ok = False
        _, s = self.base(x)
        norm = self.theta.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        eps = 1e-5 / norm
        hv = (self._score(x + eps * self.theta) - self._score(x - eps * self.theta)) / (2 * eps)
        self.counters["hvp_fallbacks"] += x.shape[0]
        return s, hv

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Surrogate drift: ``Tensor[c, d] -> Tensor[c, d]`` (units of 1/x).

        Raises:
            ValueError: when x does not have one row per chain.
        """
        self._check_rows(x)
        if self.alpha == 0.0:
            return self.base(x)[1]
        if self.drift == "shifted":
            pre, self._shifted = self._shifted, None
            if pre is not None and pre[0] is x and pre[1] == x._version:
                return pre[2]
            self.counters["score_evals"] += x.shape[0]
            return self.target.score(x - self.alpha * self.theta)
        hit = self._lookup(x)
        s, hv = self._hvp(x)
        if hit is not None:
            self.remember(x, hit[0], s)
        return s - self.alpha * hv


class FlipTilt(_Tilt):
    """Surrogate of a spin system with the discrete score.

    It deliberately has no ``flip_log_ratios`` method: a heat-bath kernel then evaluates
    ``log_prob`` at the one flipped state it needs (c rows of the discrete score per site
    update) instead of all d flips of every site (c d rows). :meth:`all_flip_log_ratios` gives
    the full matrix when it is wanted.

    Args:
        target: ``log_prob: Tensor[n, d] -> Tensor[n]`` on spins in {-1, +1}, ``dim``, and
            optionally ``flip_log_ratios``/``discrete_score`` fast paths.
        theta: ``Tensor[c, d]`` history, one row per chain.
        counters: a ``collections.Counter`` to add evaluation counts to (``score_evals`` counts
            rows of the discrete score, each worth d flip ratios).

    Source: Hu et al. 2026, Sec. 3 and Prop. 3.6.
    """

    def _score(self, x: torch.Tensor) -> torch.Tensor:
        self.counters["score_evals"] += x.shape[0]
        return discrete_score(self.target, x)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """The base target's discrete score (no tilt): ``Tensor[c, d] -> Tensor[c, d]``."""
        self._check_rows(x)
        return self.base(x)[1]

    def all_flip_log_ratios(self, x: torch.Tensor) -> torch.Tensor:
        """log pi_theta(x^(j)) - log pi_theta(x) for every site j: ``Tensor[c, d] -> Tensor[c, d]`` (nats).

        Equals the base ratio minus alpha theta^T (s(x^(j)) - s(x)); the d flipped states are
        scored in one batch (c * d rows). Non-finite entries become ``-inf`` (never flipped) and
        are counted in ``counters["nonfinite_log_prob"]``.

        Raises:
            ValueError: when x does not have one row per chain.
        """
        self._check_rows(x)
        self.counters["flip_ratio_evals"] += x.shape[0]
        base = flip_log_ratios(self.target, x)
        if self.alpha != 0.0:
            c, d = x.shape
            _, s = self.base(x)
            flips = x.unsqueeze(1).repeat(1, d, 1)
            idx = torch.arange(d)
            flips[:, idx, idx] = -flips[:, idx, idx]
            s_flip = self._score(flips.reshape(c * d, d)).reshape(c, d, d)
            tilt = torch.einsum("cjd,cd->cj", s_flip, self.theta) - (self.theta * s).sum(-1, keepdim=True)
            base = base - self.alpha * tilt
        bad = ~torch.isfinite(base)
        if bad.any():
            self.counters["nonfinite_log_prob"] += int(bad.sum())
            base = torch.where(bad, torch.full_like(base, -torch.inf), base)
        return base
