"""Cost of the ``interpolant-sampler`` (torchsde / torchdiffeq) against a direct torch loop, and of
training the stochastic interpolant (velocity + denoiser) against flow matching (velocity only).

Setting: moons -> checkerboard, one model (3 x 128 SiLU MLPs trained for ``--train-steps`` steps),
n = 2000 points, 200 steps. Baselines, timed in the same run, interleaved, best of ``--repeats``:

- SDE: Euler-Maruyama X <- X + (b + eps s) dt + sqrt(2 eps dt) Z written inline (no torchsde);
- ODE: classical RK4 with the same 200 steps written inline (no torchdiffeq);
- training: ``flow-matching`` with the same steps, batch and widths.

Prints the times and the ratios (component / direct loop; interpolant / flow matching).

Run: ``nice .venv/bin/python plugins/quadriga-stochastic-interpolants/benchmarks/bench_si_speed.py``
"""

from __future__ import annotations

import argparse
import timeit

import torch
from quadriga_stochastic_interpolants.datasets import Checkerboard, TwoMoons
from quadriga_stochastic_interpolants.learner import FlowMatching, StochasticInterpolant
from quadriga_stochastic_interpolants.sampler import InterpolantSampler

from quadriga.progress import StageProgress
from quadriga.threads import single_thread


def direct_em(model, x, eps, steps, gen, t_clip=0.01):
    """Euler-Maruyama of dX = (b + eps(t) s) dt + sqrt(2 eps(t)) dW, the sampler's SDE."""
    dt = 1.0 / steps
    for k in range(steps):
        t = k * dt
        e = eps if t_clip <= t <= 1 - t_clip else 0.0
        drift = model.velocity(t, x)
        if e > 0:
            drift = drift + e * model.score(t, x)
        x = x + drift * dt + (2 * e * dt) ** 0.5 * torch.randn(x.shape, generator=gen)
    return x


def direct_rk4(model, x, steps):
    """Classical RK4 of dX/dt = b(t, X) with a fixed step."""
    h = 1.0 / steps
    for k in range(steps):
        t = k * h
        k1 = model.velocity(t, x)
        k2 = model.velocity(t + h / 2, x + h / 2 * k1)
        k3 = model.velocity(t + h / 2, x + h / 2 * k2)
        k4 = model.velocity(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def _best(fn, repeats) -> float:
    """The shortest of ``repeats`` wall-clock times of ``fn()`` (seconds; garbage collection left on)."""
    return min(timeit.repeat(fn, setup="gc.enable()", number=1, repeat=repeats))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-steps", type=int, default=200)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    moons, board = TwoMoons(), Checkerboard()
    moons.prepare(generator=torch.Generator().manual_seed(0))
    board.prepare(generator=torch.Generator().manual_seed(1))
    kw = dict(num_steps=args.train_steps, batch_size=1000)
    t_si = _best(
        lambda: StochasticInterpolant(**kw).fit(
            board, moons, generator=torch.Generator().manual_seed(2), progress=StageProgress()
        ),
        1,
    )
    t_fm = _best(
        lambda: FlowMatching(**kw).fit(
            board, moons, generator=torch.Generator().manual_seed(2), progress=StageProgress()
        ),
        1,
    )
    fit = StochasticInterpolant(**kw).fit(
        board, moons, generator=torch.Generator().manual_seed(2), progress=StageProgress()
    )
    x0 = torch.as_tensor(moons.split("test")[0][: args.samples], dtype=torch.float32)
    sde = InterpolantSampler(epsilon=0.5, num_steps=args.steps, num_samples=args.samples)
    ode = InterpolantSampler(epsilon=0.0, ode_method="rk4", num_steps=args.steps, num_samples=args.samples)
    with torch.no_grad(), single_thread():
        res = {
            "sde component": _best(
                lambda: sde.sample(fit, moons, generator=torch.Generator().manual_seed(3)), args.repeats
            ),
            "sde direct": _best(
                lambda: direct_em(fit.model, x0, 0.5, args.steps, torch.Generator().manual_seed(3)),
                args.repeats,
            ),
            "ode component": _best(lambda: ode.sample(fit, moons, generator=torch.Generator()), args.repeats),
            "ode direct": _best(lambda: direct_rk4(fit.model, x0, args.steps), args.repeats),
        }
    print(f"n={args.samples} steps={args.steps} train_steps={args.train_steps} (single thread)")
    for k, v in res.items():
        print(f"{k:14s}: {v:.3f} s")
    print(f"SDE torchsde / direct Euler-Maruyama : {res['sde component'] / res['sde direct']:.2f}")
    print(f"ODE torchdiffeq rk4 / direct rk4     : {res['ode component'] / res['ode direct']:.2f}")
    print(f"training: interpolant {t_si:.1f} s, flow matching {t_fm:.1f} s, ratio {t_si / t_fm:.2f}")


if __name__ == "__main__":
    main()
