"""Registration of quadriga-std's components (lazy: nothing heavy is imported here)."""

from __future__ import annotations

import quadriga

_P = "quadriga_std"

COMPONENTS = [
    # kind, name, "module:attr", summary, paper
    (
        "target",
        "gaussian",
        "targets.gaussian:Gaussian",
        "Multivariate Gaussian (mean/covariance, or dim with equicorrelation rho)",
        "",
    ),
    (
        "target",
        "gaussian-mixture",
        "targets.gaussian:GaussianMixture",
        "Gaussian mixture with exact log_prob, score, samples and noised (diffusion) score",
        "",
    ),
    (
        "target",
        "banana",
        "targets.analytic:Banana",
        "Banana-shaped (twisted Gaussian) 2-D target",
        "Haario, Saksman & Tamminen 1999",
    ),
    ("target", "funnel", "targets.analytic:Funnel", "Neal's funnel", "Neal 2003, Slice sampling, sec. 8"),
    (
        "target",
        "double-well",
        "targets.analytic:DoubleWell",
        "Double well exp(-(a x1 + b x1^2 + c x1^4) - |x_2:d|^2 / 2), normalised by quadrature",
        "Wu, Koehler & Noe 2020",
    ),
    (
        "target",
        "ising",
        "targets.ising:Ising",
        "Ising model on an LxL periodic lattice, exact enumeration up to 16 spins",
        "",
    ),
    (
        "target",
        "bayesian-logistic",
        "targets.logistic:BayesianLogistic",
        "Posterior of Bayesian logistic regression on load_breast_cancer",
        "",
    ),
    (
        "dataset",
        "sklearn-dataset",
        "tasks.datasets:SklearnDataset",
        "A bundled scikit-learn dataset with splits and an optional exponential-tilting covariate shift",
        "",
    ),
    ("environment", "gym-env", "tasks.gym:GymEnv", "A gymnasium environment by id (usable from torchrl)", ""),
    (
        "environment",
        "reward-wrapped-gym-env",
        "tasks.reward_wrappers:RewardWrappedGymEnv",
        "A gymnasium environment with Gaussian reward noise and a reward scale",
        "Farebrother et al. 2024 (arXiv 2403.03950)",
    ),
    (
        "sampler",
        "rwm",
        "samplers.mcmc:RWM",
        "Random-walk Metropolis with Gaussian proposals",
        "Metropolis et al. 1953",
    ),
    ("sampler", "ula", "samplers.mcmc:ULA", "Unadjusted Langevin algorithm", "Roberts & Tweedie 1996"),
    (
        "sampler",
        "mala",
        "samplers.mcmc:MALA",
        "Metropolis-adjusted Langevin algorithm",
        "Roberts & Tweedie 1996",
    ),
    ("sampler", "hmc", "samplers.mcmc:HMC", "Hamiltonian Monte Carlo with leapfrog integration", "Neal 2011"),
    (
        "sampler",
        "gibbs",
        "samplers.gibbs:Gibbs",
        "Heat-bath Gibbs sampler for spin systems",
        "Geman & Geman 1984",
    ),
    ("sampler", "iid", "samplers.simple:IID", "Exact i.i.d. samples from the target", ""),
    (
        "sampler",
        "random-subsample",
        "samplers.simple:RandomSubsample",
        "Uniform random subsample (without replacement) of a Samples artifact",
        "",
    ),
    (
        "sampler",
        "standard-thinning",
        "samplers.simple:StandardThinning",
        "Keep every k-th point of a Samples artifact",
        "",
    ),
    (
        "learner",
        "dqn",
        "learners.dqn:DQN",
        "Deep Q-network with a target network (torchrl)",
        "Mnih et al. 2015, Algorithm 1",
    ),
    (
        "learner",
        "dqn-online",
        "learners.dqn:DQNOnline",
        "DQN bootstrapping from the online network (no target network)",
        "Mnih et al. 2015 (ablation)",
    ),
    ("learner", "double-dqn", "learners.dqn:DoubleDQN", "Double DQN", "van Hasselt et al. 2016, eq. 4"),
    (
        "estimator",
        "split-conformal",
        "estimators.conformal:SplitConformal",
        "Split conformal regression intervals around a scikit-learn regressor",
        "Lei et al. 2018",
    ),
    (
        "estimator",
        "weighted-conformal",
        "estimators.conformal:WeightedConformal",
        "Weighted split conformal under covariate shift (given or classifier likelihood ratio)",
        "Tibshirani et al. 2019",
    ),
    (
        "evaluator",
        "energy-distance",
        "evaluators.distances:EnergyDistance",
        "Energy distance between sample sets",
        "Szekely & Rizzo 2013",
    ),
    (
        "evaluator",
        "mmd",
        "evaluators.distances:MMD",
        "Unbiased MMD^2 (Gaussian or IMQ kernel)",
        "Gretton et al. 2012, eq. 3",
    ),
    (
        "evaluator",
        "sliced-wasserstein",
        "evaluators.distances:SlicedWasserstein",
        "Sliced Wasserstein distance (POT)",
        "Bonneel et al. 2015",
    ),
    ("evaluator", "wasserstein", "evaluators.distances:Wasserstein", "Exact Wasserstein distance (POT)", ""),
    (
        "evaluator",
        "moment-error",
        "evaluators.mcmc:MomentError",
        "Mean and covariance error against exact moments",
        "",
    ),
    (
        "evaluator",
        "mode-coverage",
        "evaluators.mcmc:ModeCoverage",
        "Fraction of samples per mixture component against the true weights",
        "",
    ),
    (
        "evaluator",
        "ess",
        "evaluators.mcmc:ESS",
        "Effective sample size and integrated autocorrelation time",
        "Geyer 1992; Vehtari et al. 2021",
    ),
    ("evaluator", "episode-return", "evaluators.rl:EpisodeReturn", "Mean episode return of a policy", ""),
    (
        "evaluator",
        "return-curve",
        "evaluators.rl:ReturnCurve",
        "Learning curve, its area and a plot across seeds",
        "",
    ),
    (
        "evaluator",
        "q-overestimation",
        "evaluators.rl:QOverestimation",
        "Mean Q(s, a) minus the discounted Monte-Carlo return on greedy episodes",
        "van Hasselt et al. 2016, Fig. 3",
    ),
    (
        "evaluator",
        "interval-coverage",
        "evaluators.conformal:IntervalCoverage",
        "Empirical coverage and mean width of prediction intervals",
        "",
    ),
]

PIPELINES = [
    (
        "gmm-mcmc-baselines",
        "pipelines/gmm-mcmc-baselines.toml",
        "RWM, MALA and HMC on the 4-mode 2-D mixture",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("target", "gaussian"): ("exact-target",),
    ("target", "gaussian-mixture"): ("exact-target", "noised-score"),
    ("target", "banana"): ("exact-target",),
    ("target", "funnel"): ("exact-target",),
    ("target", "double-well"): ("exact-target",),
    ("target", "ising"): ("discrete-state", "exact-target"),
    ("target", "bayesian-logistic"): ("posterior", "real-data"),
    ("dataset", "sklearn-dataset"): ("covariate-shift", "real-data", "supervised"),
    ("environment", "gym-env"): ("continuous-actions", "discrete-actions", "rl"),
    ("environment", "reward-wrapped-gym-env"): ("continuous-actions", "discrete-actions", "rl"),
    ("sampler", "rwm"): ("gradient-free", "mcmc", "needs-log-prob"),
    ("sampler", "ula"): ("mcmc", "needs-score"),
    ("sampler", "mala"): ("mcmc", "needs-log-prob", "needs-score"),
    ("sampler", "hmc"): ("mcmc", "needs-log-prob", "needs-score"),
    ("sampler", "gibbs"): ("discrete-state", "gradient-free", "mcmc"),
    ("sampler", "iid"): ("exact-target", "gradient-free"),
    ("sampler", "random-subsample"): ("gradient-free", "thinning"),
    ("sampler", "standard-thinning"): ("gradient-free", "mcmc", "thinning"),
    ("learner", "dqn"): ("discrete-actions", "rl", "trains-network"),
    ("learner", "dqn-online"): ("discrete-actions", "rl", "trains-network"),
    ("learner", "double-dqn"): ("discrete-actions", "rl", "trains-network"),
    ("estimator", "split-conformal"): ("conformal", "supervised"),
    ("estimator", "weighted-conformal"): ("conformal", "covariate-shift", "supervised"),
    ("evaluator", "energy-distance"): ("two-sample",),
    ("evaluator", "mmd"): ("two-sample",),
    ("evaluator", "sliced-wasserstein"): ("two-sample",),
    ("evaluator", "wasserstein"): ("two-sample",),
    ("evaluator", "moment-error"): ("exact-target",),
    ("evaluator", "mode-coverage"): ("exact-target",),
    ("evaluator", "ess"): ("mcmc",),
    ("evaluator", "episode-return"): ("rl",),
    ("evaluator", "return-curve"): ("rl",),
    ("evaluator", "q-overestimation"): ("discrete-actions", "rl"),
    ("evaluator", "interval-coverage"): ("conformal",),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register quadriga-std's components and pipelines."""
    for kind, name, target, summary, paper in COMPONENTS:
        registry.add(
            kind,
            name,
            f"{_P}.{target}",
            summary=summary,
            paper=paper,
            tags=TAGS.get((kind, name), ()),
        )
    for name, path, summary in PIPELINES:
        registry.add_pipeline(name, f"{_P}:{path}", summary=summary)


@quadriga.hookimpl
def quadriga_check_tasks():
    """The small tasks quadriga.testing gives components: a 2-D Gaussian, diabetes, CartPole-v1."""
    return {
        "Target": {"use": "gaussian", "dim": 2},
        "Dataset": {"use": "sklearn-dataset", "name": "diabetes"},
        "Environment": {"use": "gym-env", "env_id": "CartPole-v1"},
    }
