"""``compile = true`` on std's MCMC kernels: the compiled chains against the eager ones at fixed seeds.

The random numbers are drawn outside the compiled region in the eager order, so the two paths
consume the generator alike; inductor's own C++ loops round differently from ATen's kernels, so
the compiled chain equals the eager one to rounding (float64: within 1e-10 here, where a chain
that amplified rounding would differ at order 1) with the same accept decisions and counters. On
the machine these tests were written on (torch 2.13 CPU, x86_64 AVX2) the chains came out equal
bit for bit; the tolerance is for CPUs where inductor vectorises a reduction differently.
The eager fallback runs the very same operations as ``transition`` and is equal bit for bit.
"""

from __future__ import annotations

import os
import warnings

import pytest
import torch
from quadriga_std.samplers import compiled as compiled_mod
from quadriga_std.samplers.mcmc import HMC, MALA, RWM, ULA, ChainState
from quadriga_std.targets.gaussian import Gaussian

from quadriga.errors import ConfigError
from quadriga.stats.mcmc import ess

# d = 6 correlated Gaussian; compile_steps = 4 with 5 + 20 * 2 = 45 transitions: eleven compiled
# blocks and an eager tail of 1, burn-in and thinning falling inside blocks (compile_steps is kept
# small: compilation time grows with the unrolled steps)
COMMON = {"num_chains": 3, "num_samples": 20, "burn_in": 5, "thin": 2}


def _target():
    return Gaussian(dim=6, equicorrelation=0.4)


def _run(kernel):
    return kernel.sample(_target(), generator=torch.Generator().manual_seed(11))


def _compiler_here() -> bool:
    return compiled_mod.compiler_problem() is None


@pytest.fixture(autouse=True)
def _fresh_fallback():
    compiled_mod.reset_fallback()
    yield
    compiled_mod.reset_fallback()


def _same_chain(eager, comp, *, exact: bool):
    assert comp.chains.shape == eager.chains.shape == (3, 20, 6)
    if exact:
        assert torch.equal(comp.chains, eager.chains)
    else:
        diff = (comp.chains - eager.chains).abs().max().item()
        assert diff <= 1e-10, f"compiled chain differs from the eager one by {diff:g}"
    for key in ("acceptance_rate", "score_evals", "log_prob_evals", "rejected_nonfinite", "transitions"):
        assert comp.info[key] == eager.info[key], key


#: each compilation takes 1-3 minutes of CPU on a 2-core machine: the suite compiles MALA only, the
#: other kernels when QUADRIGA_COMPILE_TESTS=1 (docs/testing.md)
ALL_KERNELS = pytest.mark.skipif(
    not os.environ.get("QUADRIGA_COMPILE_TESTS"),
    reason="compiles for minutes; set QUADRIGA_COMPILE_TESTS=1 to compile every kernel",
)


@pytest.mark.slow  # compilation: 1-3 minutes on a loaded 2-core machine
@pytest.mark.parametrize(
    "kernel",
    [
        pytest.param(lambda **kw: MALA(step_size=0.3, **kw), id="mala"),
        pytest.param(
            lambda **kw: HMC(step_size=0.25, num_leapfrog_steps=3, **kw), id="hmc", marks=ALL_KERNELS
        ),
    ],
)
def test_compiled_chain_equals_eager_chain(kernel):
    eager = _run(kernel(**COMMON))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a fallback here would hide the compiled path
        comp = _run(kernel(compile=True, compile_steps=4, **COMMON))
    if _compiler_here():
        assert not compiled_mod._FALLBACK, compiled_mod._FALLBACK
    _same_chain(eager, comp, exact=not _compiler_here())
    # a chain mixing at all, and the same ESS per gradient evaluation to rounding
    assert 0.2 < eager.info["acceptance_rate"] < 1.0
    per_grad = [ess(s.chains.numpy())["ess"] / s.info["score_evals"] for s in (eager, comp)]
    assert per_grad[0] == pytest.approx(per_grad[1], rel=1e-6)


@pytest.mark.slow
@ALL_KERNELS
def test_rwm_and_ula_compile_too():
    for make in (lambda **kw: RWM(step_size=0.8, **kw), lambda **kw: ULA(step_size=0.05, **kw)):
        eager = _run(make(**COMMON))
        comp = _run(make(compile=True, compile_steps=4, **COMMON))
        _same_chain(eager, comp, exact=not _compiler_here())


def test_unusable_compiler_falls_back_to_the_same_chain_with_one_warning(monkeypatch):
    def broken(fn, **kwargs):
        def call(*args, **kw):
            raise RuntimeError("no C++ compiler found\nsecond line of the compiler's complaint")

        return call

    monkeypatch.setattr(torch, "compile", broken)
    monkeypatch.setattr(compiled_mod, "_CACHE", {})
    eager = _run(MALA(step_size=0.3, **COMMON))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _run(MALA(step_size=0.3, compile=True, compile_steps=4, **COMMON))
        second = _run(MALA(step_size=0.3, compile=True, compile_steps=4, **COMMON))
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1, said
    assert "no C++ compiler found" in said[0] and "eagerly" in said[0] and "\n" not in said[0]
    _same_chain(eager, first, exact=True)
    _same_chain(eager, second, exact=True)


def test_an_error_of_the_target_is_raised_as_its_own_not_as_a_fallback(monkeypatch):
    calls = []

    class Broken(Gaussian):
        def log_prob_and_score(self, x):
            calls.append(1)
            if len(calls) > 1:  # the starting points pass; the first transition fails
                raise ValueError("the target's own bug")
            return super().log_prob_and_score(x)

    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # compiles to itself: errors pass
    monkeypatch.setattr(compiled_mod, "_CACHE", {})
    kernel = MALA(step_size=0.3, compile=True, compile_steps=4, num_chains=2, num_samples=4, burn_in=0)
    with pytest.raises(ValueError, match="own bug"):
        kernel.sample(Broken(dim=2), generator=torch.Generator().manual_seed(0))
    assert len(calls) == 3  # start, the compiled call, its eager rerun
    assert not compiled_mod._FALLBACK


def test_compile_on_a_kernel_with_its_own_transition_is_a_config_error():
    class Custom(MALA):
        def transition(self, state, target, generator):
            return super().transition(state, target, generator)

    assert MALA.compilable() and HMC.compilable() and not Custom.compilable()
    Custom(compile=False)
    with pytest.raises(ConfigError, match="compile = false") as err:
        Custom(compile=True)
    assert err.value.key == "compile"


@pytest.mark.parametrize("make", [MALA, HMC, RWM, ULA], ids=["mala", "hmc", "rwm", "ula"])
@pytest.mark.parametrize(
    ("chains", "dim", "dtype"),
    [(1, 10, torch.float64), (1, 3, torch.float64), (64, 10, torch.float64), (3, 7, torch.float32)],
)
def test_draw_block_is_the_stacked_draws_bit_for_bit(make, chains, dim, dtype):
    # 64 x 10 takes ATen's vectorised normal path (>= 16 numbers), the others its serial one;
    # an odd normal drawn first leaves the generator's cached second Box-Muller value in use
    kernel = make(num_chains=chains)
    x = torch.zeros(chains, dim, dtype=dtype)
    state = ChainState(x, torch.zeros(chains, dtype=dtype), x)
    for seed in range(3):
        fast, slow = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        torch.randn(1, generator=fast, dtype=torch.float64)
        torch.randn(1, generator=slow, dtype=torch.float64)
        block = kernel.draw_block(state, fast, 5)
        per_step = [kernel.draw(state, slow) for _ in range(5)]
        assert len(block) == len(per_step[0])
        for i, tensor in enumerate(block):
            assert tensor.shape == (5, *per_step[0][i].shape) and tensor.dtype == dtype
            assert torch.equal(tensor, torch.stack([draws[i] for draws in per_step]))
        assert torch.equal(fast.get_state(), slow.get_state())  # the generator ends in the same place
        assert not torch.equal(block[0][0], block[0][1])  # fresh numbers per step


def test_a_subclass_with_its_own_draw_is_drawn_with_it(monkeypatch):
    class Halved(MALA):  # inherits MALA's draw_block, which would not match this draw
        def draw(self, state, generator):
            noise, u = super().draw(state, generator)
            return 0.5 * noise, u

    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # the compiled path, run eagerly
    monkeypatch.setattr(compiled_mod, "_CACHE", {})
    eager = _run(Halved(step_size=0.3, **COMMON))
    comp = _run(Halved(step_size=0.3, compile=True, compile_steps=4, **COMMON))
    _same_chain(eager, comp, exact=True)
    assert not torch.equal(eager.chains, _run(MALA(step_size=0.3, **COMMON)).chains)


@pytest.mark.parametrize(
    ("burn_in", "thin", "steps"), [(0, 1, 4), (5, 2, 4), (3, 3, 4), (7, 1, 3), (0, 5, 2), (9, 4, 16)]
)
def test_the_compiled_blocks_keep_the_eager_draws(monkeypatch, burn_in, thin, steps):
    # the kept transitions of each block are copied at once: same draws as the eager loop keeps,
    # for burn-in and thinning falling anywhere in a block and an eager tail or none
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)
    monkeypatch.setattr(compiled_mod, "_CACHE", {})
    common = {"num_chains": 2, "num_samples": 7, "burn_in": burn_in, "thin": thin, "step_size": 0.3}
    eager = MALA(**common).sample(_target(), generator=torch.Generator().manual_seed(3))
    comp = MALA(compile=True, compile_steps=steps, **common).sample(
        _target(), generator=torch.Generator().manual_seed(3)
    )
    assert comp.chains.shape == eager.chains.shape == (2, 7, 6)
    assert torch.equal(comp.chains, eager.chains)
    assert comp.info["acceptance_rate"] == eager.info["acceptance_rate"]
