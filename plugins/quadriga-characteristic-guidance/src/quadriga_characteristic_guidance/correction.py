"""The non-linear correction of characteristic guidance: its fixed point, solved per sample.

At a noise level with alpha_bar (VP: x_t = sqrt(alpha_bar) x_0 + sigma eps, sigma^2 = 1 - alpha_bar),
conditional and unconditional scores s_c, s_u and guidance weight w, characteristic guidance
(Zheng & Lan 2024) evaluates the two models at points shifted by a correction Delta x:

    s_CH(x) = (1 + w) s_c(x + w Dx) - w s_u(x + (1 + w) Dx),                           (output)
    Dx = P[ sigma^2 (s_c(x + w Dx) - s_u(x + (1 + w) Dx)) ]                          (fixed point)

(paper: eps_CH = (1 + w) eps_c(x + w Dx) - w eps_u(x + (1 + w) Dx) with
Dx = P[sqrt(1 - alpha_bar) (eps_u(x + (1 + w) Dx) - eps_c(x + w Dx))], eps = -sigma s; the official
web-UI code, ``scripts/CharaIte.py``, evaluates the conditional model at x + (h - 1) Dx and the
unconditional one at x + h Dx with h = 1 + w and forms ``ggg = (eps_u - eps_c) * scale / c_in``,
the same map in k-diffusion units). Dx = 0 is plain classifier-free guidance; w = 0 and w = -1 give
the conditional and unconditional scores exactly whatever Dx is (their shifts are 0 Dx).

P is a projection: ``"identity"`` (the paper's correction) or ``"cfg-direction"`` (the code's
one-basis least-squares projection onto the classifier-free direction sigma^2 (s_c - s_u)(x)), each
shrunk by 1 / (1 + regularization) (the code's regularised least squares; ``regularization`` -> inf
gives CFG). The fixed point is found per sample by Anderson acceleration (memory m, step size beta;
m = 0 is the damped Picard iteration Dx <- Dx + beta (G(Dx) - Dx)), from a warm start; a sample is
*converged* when the RMS of its residual G(Dx) - Dx over the d coordinates is at most
``tol * sigma`` (the residual in units of the noise scale). A sample that does not converge within
``max_iterations`` falls back to plain CFG (Dx = 0), as in the official code.

Source: Zheng & Lan 2024, "Characteristic Guidance: Non-linear Correction for Diffusion Model at Large
Guidance Scale", ICML 2024 (arXiv 2312.07586), sec. 5 (the corrected denoiser and its fixed point);
Anderson acceleration: Walker & Ni 2011, "Anderson acceleration for fixed-point iterations", SIAM J.
Numer. Anal. 49(4), Algorithm AA (the type-II least-squares form).
"""

from __future__ import annotations

from typing import Any

import attrs
import torch

__all__ = ["PROJECTIONS", "Correction", "characteristic_correction"]

PROJECTIONS = ("identity", "cfg-direction")


@attrs.frozen
class Correction:
    """The result of one correction solve.

    Attributes:
        score: ``Tensor[n, d]`` the guided score s_CH (CFG where not converged), units 1 / x.
        dx: ``Tensor[n, d]`` the correction used (0 where not converged), units of x.
        converged: ``Tensor[n]`` bool.
        iterations: ``Tensor[n]`` long, iterations until convergence (max_iterations if never).
        residual: ``Tensor[n]`` final RMS residual / sigma (dimensionless).
        evals: rows evaluated by the two models together (the cost).
    """

    score: torch.Tensor
    dx: torch.Tensor
    converged: torch.Tensor
    iterations: torch.Tensor
    residual: torch.Tensor
    evals: int


def _project(b: torch.Tensor, direction: torch.Tensor | None, shrink: float) -> torch.Tensor:
    """P(b): ``b`` itself or its component along the unit ``direction`` (rows), times ``shrink``."""
    if direction is None:
        return shrink * b
    return shrink * (b * direction).sum(-1, keepdim=True) * direction


def characteristic_correction(
    conditional: Any,
    unconditional: Any,
    x: torch.Tensor,
    t: int,
    alpha_bar: float,
    w: float,
    *,
    dx0: torch.Tensor | None = None,
    max_iterations: int = 50,
    tol: float = 1e-4,
    memory: int = 2,
    step_size: float = 1.0,
    projection: str = "identity",
    regularization: float = 0.0,
) -> Correction:
    """Solve the fixed point of the correction and return the corrected score (module docstring).

    Args:
        conditional, unconditional: score models ``(x: Tensor[n, d], t, alpha_bar) -> Tensor[n, d]``.
        x: ``Tensor[n, d]`` the state; t: the step index passed to the models; alpha_bar in (0, 1].
        w: guidance weight (>= -1).
        dx0: ``Tensor[n, d]`` warm start (default 0).
        max_iterations: map evaluations at most (0: plain CFG).
        tol: convergence tolerance on RMS residual / sigma.
        memory: Anderson memory m (0: damped Picard).
        step_size: beta in (0, 1] (1: undamped).
        projection: ``"identity"`` or ``"cfg-direction"``; regularization: >= 0.

    Returns:
        :class:`Correction`.

    Raises:
        ValueError: an unknown projection or alpha_bar outside (0, 1].
    """
    if projection not in PROJECTIONS:
        raise ValueError(f"unknown projection '{projection}'; use one of {', '.join(PROJECTIONS)}")
    ab = float(alpha_bar)
    if not 0.0 < ab <= 1.0:
        raise ValueError(f"alpha_bar must lie in (0, 1], got {ab}")
    w = float(w)
    sigma2 = 1.0 - ab
    sigma = sigma2**0.5
    n, d = x.shape
    shrink = 1.0 / (1.0 + float(regularization))
    evals = 0

    def pair(rows: torch.Tensor, dx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal evals
        evals += 2 * int(rows.shape[0])
        xr = x[rows]
        return conditional(xr + w * dx, t, ab), unconditional(xr + (1.0 + w) * dx, t, ab)

    everyone = torch.arange(n)
    direction = None
    if projection == "cfg-direction":
        sc0, su0 = pair(everyone, torch.zeros_like(x))
        g0 = sc0 - su0
        norm = g0.norm(dim=-1, keepdim=True)
        direction = torch.where(norm > 0, g0 / norm.clamp_min(1e-300), torch.zeros_like(g0))

    dx = torch.zeros_like(x) if dx0 is None else dx0.to(x).clone()
    converged = torch.zeros(n, dtype=torch.bool)
    iterations = torch.full((n,), int(max_iterations), dtype=torch.long)
    residual = torch.full((n,), float("inf"), dtype=x.dtype)
    sc_out = torch.zeros_like(x)
    su_out = torch.zeros_like(x)
    hist_x: list[torch.Tensor] = []  # Dx_k of the active rows
    hist_f: list[torch.Tensor] = []  # residuals f_k = G(Dx_k) - Dx_k
    active = everyone
    for k in range(int(max_iterations)):
        if active.numel() == 0:
            break
        cur = dx[active]
        sc, su = pair(active, cur)
        direction_a = None if direction is None else direction[active]
        g = _project(sigma2 * (sc - su), direction_a, shrink)
        f = g - cur
        res = f.pow(2).mean(-1).sqrt() / max(sigma, 1e-300)
        residual[active] = res
        done = res <= float(tol)
        if done.any():
            rows = active[done]
            converged[rows] = True
            iterations[rows] = k + 1
            sc_out[rows], su_out[rows] = sc[done], su[done]
        keep = ~done
        # Anderson (type II) on the rows still active
        hist_x = [h[keep] for h in hist_x]
        hist_f = [h[keep] for h in hist_f]
        cur, f = cur[keep], f[keep]
        active = active[keep]
        new = cur + float(step_size) * f
        if hist_x and int(memory) > 0:
            dX = torch.stack([cur - h for h in hist_x], -1)  # [a, d, m_k]
            dF = torch.stack([f - h for h in hist_f], -1)
            gram = dF.transpose(-1, -2) @ dF
            scale = gram.diagonal(dim1=-2, dim2=-1).sum(-1).clamp_min(1e-300)[:, None, None]
            eye = torch.eye(gram.shape[-1], dtype=x.dtype)
            gamma = torch.linalg.solve(gram + 1e-10 * scale * eye, dF.transpose(-1, -2) @ f.unsqueeze(-1))
            new = new - ((dX + float(step_size) * dF) @ gamma).squeeze(-1)
        hist_x.append(cur)
        hist_f.append(f)
        if len(hist_x) > int(memory):
            hist_x.pop(0)
            hist_f.pop(0)
        dx[active] = new
    dx = torch.where(converged[:, None], dx, torch.zeros_like(dx))
    fallback = (~converged).nonzero().flatten()
    if fallback.numel():
        sc, su = pair(fallback, torch.zeros(int(fallback.numel()), d, dtype=x.dtype))
        sc_out[fallback], su_out[fallback] = sc, su
    score = (1.0 + w) * sc_out - w * su_out
    return Correction(
        score=score, dx=dx, converged=converged, iterations=iterations, residual=residual, evals=evals
    )
