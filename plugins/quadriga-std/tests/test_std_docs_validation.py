"""Documentation conformance of the std components, and parameter checks found by the conformance kit."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_std.samplers.gibbs import Gibbs
from quadriga_std.targets.analytic import DoubleWell
from quadriga_std.targets.gaussian import Gaussian
from quadriga_std.targets.ising import Ising

from quadriga.components import build_component
from quadriga.errors import ConfigError
from quadriga.registry import Registry
from quadriga.testing import docstring_problems

#: the components of this plugin that are documented to the full contract (shapes, units, errors, source)
DOCUMENTED = (
    "gibbs",
    "hmc",
    "iid",
    "mala",
    "random-subsample",
    "rwm",
    "standard-thinning",
    "ula",
    "split-conformal",
    "weighted-conformal",
    "energy-distance",
    "ess",
    "interval-coverage",
    "mmd",
    "mode-coverage",
    "moment-error",
    "sliced-wasserstein",
    "wasserstein",
    "banana",
    "bayesian-logistic",
    "double-well",
    "funnel",
    "gaussian",
    "gaussian-mixture",
    "ising",
    "sklearn-dataset",
)
_REGISTRY = Registry()


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_has_every_section(name):
    spec = next(s for s in _REGISTRY.components() if s.name == name and s.distribution == "quadriga-std")
    assert docstring_problems(_REGISTRY.load_class(spec), spec.kind) == []


# ---------------------------------------------------------------- gaussian equicorrelation
@pytest.mark.parametrize(
    ("dim", "rho"),
    [(2, math.nan), (2, math.inf), (2, -1.0), (2, 1.0), (3, -0.5), (5, -0.26), (4, 1.5), (2, "high")],
)
def test_gaussian_equicorrelation_out_of_range_names_the_parameter(dim, rho):
    with pytest.raises(ConfigError) as info:
        Gaussian(dim=dim, equicorrelation=rho)
    assert info.value.key == "equicorrelation"
    with pytest.raises(ConfigError, match="equicorrelation"):  # the path the pipeline and the kit take
        build_component(_REGISTRY, "gaussian", {"dim": dim, "equicorrelation": rho}, kinds=("target",))


@pytest.mark.parametrize(("dim", "rho"), [(2, -0.99), (3, -0.49), (5, -0.24), (4, 0.99), (1, 7.0)])
def test_gaussian_equicorrelation_inside_the_range_has_the_closed_form_spectrum(dim, rho):
    cov = Gaussian(dim=dim, equicorrelation=rho).covariance
    evals = torch.linalg.eigvalsh(cov)
    if dim == 1:
        expected = torch.ones(1, dtype=torch.float64)
    else:  # eigenvalues 1 - rho (d - 1 times) and 1 + (d - 1) rho
        expected = torch.sort(
            torch.tensor([1 - rho] * (dim - 1) + [1 + (dim - 1) * rho], dtype=torch.float64)
        ).values
    torch.testing.assert_close(evals, expected, atol=1e-12, rtol=0)


def test_gaussian_equicorrelation_with_explicit_covariance_must_still_be_a_number():
    g = Gaussian(covariance=[[2.0, 0.5], [0.5, 1.0]], equicorrelation=0.9)  # ignored when covariance is given
    assert float(g.covariance[0, 1]) == 0.5
    with pytest.raises(ConfigError) as info:
        Gaussian(covariance=[[2.0, 0.5], [0.5, 1.0]], equicorrelation=math.nan)
    assert info.value.key == "equicorrelation"


# ---------------------------------------------------------------- gibbs on non-spin targets
class _CountingGaussian(Gaussian):
    calls = 0

    def log_prob(self, x):
        type(self).calls += 1
        return super().log_prob(x)


def test_gibbs_refuses_a_continuous_target_before_sampling():
    target = _CountingGaussian(dim=2)
    with pytest.raises(ConfigError, match="spin") as info:
        Gibbs(num_samples=5, burn_in=0).sample(target, generator=_gen(0))
    assert info.value.key == "target"
    assert _CountingGaussian.calls == 0
    with pytest.raises(ConfigError, match="spin"):
        Gibbs(num_samples=5, burn_in=0).sample(DoubleWell(), generator=_gen(0))


def test_gibbs_refuses_exact_draws_that_are_not_spins():
    gauss = Gaussian(dim=3)

    class Continuous:  # duck-typed: not a Target, so only its draws can show it is not a spin system
        dim = 3

        def log_prob(self, x):
            return gauss.log_prob(x)

        def sample(self, n, *, generator):
            return gauss.sample(n, generator=generator)

    with pytest.raises(ConfigError, match="spins") as info:
        Gibbs(num_samples=5, burn_in=0, init="target").sample(Continuous(), generator=_gen(1))
    assert info.value.key == "target"


def test_gibbs_still_runs_on_spin_targets_and_duck_typed_spin_densities():
    ising = Ising(size=3, coupling=0.3)
    out = Gibbs(num_chains=3, num_samples=4, burn_in=1, init="target").sample(ising, generator=_gen(2))
    assert set(out.x.unique().tolist()) <= {-1.0, 1.0}

    class Surrogate:  # what a kernel wrapper passes: log_prob over spins, no flip_log_ratios, not a Target
        dim = 9

        def log_prob(self, x):
            return ising.log_prob(x) + 0.1 * x.sum(-1)

    out = Gibbs(num_chains=3, num_samples=4, burn_in=1).sample(Surrogate(), generator=_gen(3))
    assert out.x.shape == (12, 9)
    assert set(out.x.unique().tolist()) <= {-1.0, 1.0}


# ---------------------------------------------------------------- finite coefficients
@pytest.mark.parametrize(
    ("cls", "key"), [(Ising, "coupling"), (Ising, "field"), (DoubleWell, "a"), (DoubleWell, "b")]
)
def test_non_finite_coefficients_are_refused(cls, key):
    with pytest.raises(ConfigError) as info:
        cls(**{key: math.nan})
    assert info.value.key == key
