"""Registration of quadriga-std's components (lazy: nothing heavy is imported here)."""

from __future__ import annotations

import quadriga
from quadriga_std import _regions_register as regions_kit
from quadriga_std.attribution import _register as attribution_kit
from quadriga_std.randomdesign import _register as randomdesign_kit
from quadriga_std.rl import _register as rl_kit
from quadriga_std.sequences import _register as sequences_kit
from quadriga_std.shift import _register as shift_kit
from quadriga_std.weightspace import _register as weightspace_kit

_P = "quadriga_std"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register quadriga-std's components and pipelines."""
    registry.add(
        "target",
        "gaussian",
        f"{_P}.targets.gaussian:Gaussian",
        summary="Multivariate Gaussian (mean/covariance, or dim with equicorrelation rho)",
        tags=("exact-target",),
    )
    registry.add(
        "target",
        "gaussian-mixture",
        f"{_P}.targets.gaussian:GaussianMixture",
        summary="Gaussian mixture with exact log_prob, score, samples and noised (diffusion) score",
        tags=("exact-target", "noised-score"),
    )
    registry.add(
        "target",
        "banana",
        f"{_P}.targets.analytic:Banana",
        summary="Banana-shaped (twisted Gaussian) 2-D target",
        paper="Haario, Saksman & Tamminen 1999",
        tags=("exact-target",),
    )
    registry.add(
        "target",
        "funnel",
        f"{_P}.targets.analytic:Funnel",
        summary="Neal's funnel",
        paper="Neal 2003, Slice sampling, sec. 8",
        tags=("exact-target",),
    )
    registry.add(
        "target",
        "double-well",
        f"{_P}.targets.analytic:DoubleWell",
        summary="Double well exp(-(a x1 + b x1^2 + c x1^4) - |x_2:d|^2 / 2), normalised by quadrature",
        paper="Wu, Koehler & Noe 2020",
        tags=("exact-target",),
    )
    registry.add(
        "target",
        "ising",
        f"{_P}.targets.ising:Ising",
        summary="Ising model on an LxL periodic lattice, exact enumeration up to 16 spins",
        tags=("discrete-state", "exact-target"),
    )
    registry.add(
        "target",
        "bayesian-logistic",
        f"{_P}.targets.logistic:BayesianLogistic",
        summary="Posterior of Bayesian logistic regression on load_breast_cancer",
        tags=("posterior", "real-data"),
    )
    registry.add(
        "dataset",
        "sklearn-dataset",
        f"{_P}.tasks.datasets:SklearnDataset",
        summary=(
            "A bundled scikit-learn dataset with splits and an optional exponential-tilting covariate shift"
        ),
        tags=("covariate-shift", "real-data", "supervised"),
    )
    registry.add(
        "environment",
        "gym-env",
        f"{_P}.tasks.gym:GymEnv",
        summary="A gymnasium environment by id (usable from torchrl)",
        tags=("continuous-actions", "discrete-actions", "rl"),
    )
    registry.add(
        "environment",
        "reward-wrapped-gym-env",
        f"{_P}.tasks.reward_wrappers:RewardWrappedGymEnv",
        summary="A gymnasium environment with Gaussian reward noise and a reward scale",
        paper="Farebrother et al. 2024 (arXiv 2403.03950)",
        tags=("continuous-actions", "discrete-actions", "rl"),
    )
    registry.add(
        "sampler",
        "rwm",
        f"{_P}.samplers.mcmc:RWM",
        summary="Random-walk Metropolis with Gaussian proposals",
        paper="Metropolis et al. 1953",
        tags=("gradient-free", "mcmc", "needs-log-prob"),
    )
    registry.add(
        "sampler",
        "ula",
        f"{_P}.samplers.mcmc:ULA",
        summary="Unadjusted Langevin algorithm",
        paper="Roberts & Tweedie 1996",
        tags=("mcmc", "needs-score"),
    )
    registry.add(
        "sampler",
        "mala",
        f"{_P}.samplers.mcmc:MALA",
        summary="Metropolis-adjusted Langevin algorithm",
        paper="Roberts & Tweedie 1996",
        tags=("mcmc", "needs-log-prob", "needs-score"),
    )
    registry.add(
        "sampler",
        "hmc",
        f"{_P}.samplers.mcmc:HMC",
        summary="Hamiltonian Monte Carlo with leapfrog integration",
        paper="Neal 2011",
        tags=("mcmc", "needs-log-prob", "needs-score"),
    )
    registry.add(
        "sampler",
        "gibbs",
        f"{_P}.samplers.gibbs:Gibbs",
        summary="Heat-bath Gibbs sampler for spin systems",
        paper="Geman & Geman 1984",
        tags=("discrete-state", "gradient-free", "mcmc"),
    )
    registry.add(
        "sampler",
        "iid",
        f"{_P}.samplers.simple:IID",
        summary="Exact i.i.d. samples from the target",
        tags=("exact-target", "gradient-free"),
    )
    registry.add(
        "sampler",
        "random-subsample",
        f"{_P}.samplers.simple:RandomSubsample",
        summary="Uniform random subsample (without replacement) of a Samples artifact",
        tags=("gradient-free", "thinning"),
    )
    registry.add(
        "sampler",
        "standard-thinning",
        f"{_P}.samplers.simple:StandardThinning",
        summary="Keep every k-th point of a Samples artifact",
        tags=("gradient-free", "mcmc", "thinning"),
    )
    registry.add(
        "learner",
        "dqn",
        f"{_P}.learners.dqn:DQN",
        summary="Deep Q-network with a target network (torchrl)",
        paper="Mnih et al. 2015, Algorithm 1",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "learner",
        "dqn-online",
        f"{_P}.learners.dqn:DQNOnline",
        summary="DQN bootstrapping from the online network (no target network)",
        paper="Mnih et al. 2015 (ablation)",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "learner",
        "double-dqn",
        f"{_P}.learners.dqn:DoubleDQN",
        summary="Double DQN",
        paper="van Hasselt et al. 2016, eq. 4",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "estimator",
        "split-conformal",
        f"{_P}.estimators.conformal:SplitConformal",
        summary="Split conformal regression intervals around a scikit-learn regressor",
        paper="Lei et al. 2018",
        tags=("conformal", "supervised"),
    )
    registry.add(
        "estimator",
        "weighted-conformal",
        f"{_P}.estimators.conformal:WeightedConformal",
        summary="Weighted split conformal under covariate shift (given or classifier likelihood ratio)",
        paper="Tibshirani et al. 2019",
        tags=("conformal", "covariate-shift", "supervised"),
    )
    registry.add(
        "evaluator",
        "energy-distance",
        f"{_P}.evaluators.distances:EnergyDistance",
        summary="Energy distance between sample sets",
        paper="Szekely & Rizzo 2013",
        tags=("two-sample",),
    )
    registry.add(
        "evaluator",
        "mmd",
        f"{_P}.evaluators.distances:MMD",
        summary="Unbiased MMD^2 (Gaussian or IMQ kernel)",
        paper="Gretton et al. 2012, eq. 3",
        tags=("two-sample",),
    )
    registry.add(
        "evaluator",
        "sliced-wasserstein",
        f"{_P}.evaluators.distances:SlicedWasserstein",
        summary="Sliced Wasserstein distance (POT)",
        paper="Bonneel et al. 2015",
        tags=("two-sample",),
    )
    registry.add(
        "evaluator",
        "wasserstein",
        f"{_P}.evaluators.distances:Wasserstein",
        summary="Exact Wasserstein distance (POT)",
        tags=("two-sample",),
    )
    registry.add(
        "evaluator",
        "moment-error",
        f"{_P}.evaluators.mcmc:MomentError",
        summary="Mean and covariance error against exact moments",
        tags=("exact-target",),
    )
    registry.add(
        "evaluator",
        "mode-coverage",
        f"{_P}.evaluators.mcmc:ModeCoverage",
        summary="Fraction of samples per mixture component against the true weights",
        tags=("exact-target",),
    )
    registry.add(
        "evaluator",
        "ess",
        f"{_P}.evaluators.mcmc:ESS",
        summary="Effective sample size and integrated autocorrelation time",
        paper="Geyer 1992; Vehtari et al. 2021",
        tags=("mcmc",),
    )
    registry.add(
        "evaluator",
        "episode-return",
        f"{_P}.evaluators.rl:EpisodeReturn",
        summary="Mean episode return of a policy",
        tags=("rl",),
    )
    registry.add(
        "evaluator",
        "return-curve",
        f"{_P}.evaluators.rl:ReturnCurve",
        summary="Learning curve, its area and a plot across seeds",
        tags=("rl",),
    )
    registry.add(
        "evaluator",
        "q-overestimation",
        f"{_P}.evaluators.rl:QOverestimation",
        summary="Mean Q(s, a) minus the discounted Monte-Carlo return on greedy episodes",
        paper="van Hasselt et al. 2016, Fig. 3",
        tags=("discrete-actions", "rl"),
    )
    registry.add(
        "evaluator",
        "interval-coverage",
        f"{_P}.evaluators.conformal:IntervalCoverage",
        summary="Empirical coverage and mean width of prediction intervals",
        tags=("conformal",),
    )
    registry.add_pipelines(__package__)
    shift_kit.register(registry)
    regions_kit.register(registry)
    rl_kit.register(registry)
    weightspace_kit.register(registry)
    attribution_kit.register(registry)
    sequences_kit.register(registry)
    randomdesign_kit.register(registry)


@quadriga.hookimpl
def quadriga_check_tasks():
    """The small tasks quadriga.testing gives components: a 2-D Gaussian, diabetes, CartPole-v1."""
    return {
        "Target": {"use": "gaussian", "dim": 2},
        "Dataset": {"use": "sklearn-dataset", "name": "diabetes"},
        "Environment": {"use": "gym-env", "env_id": "CartPole-v1"},
    }
