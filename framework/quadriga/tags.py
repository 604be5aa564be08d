"""The capability tags a component can declare, each with its one-line meaning.

A plugin declares a component's tags when it registers it
(``registry.add("sampler", "mala", "pkg.mod:MALA", tags=("mcmc", "needs-score"))``), so that
``quadriga list --where TAG`` finds it without importing the component. A tag says what a
component needs from its task, what it produces or which family of methods it belongs to;
the kind (sampler, learner, ...) is not a tag (``quadriga list --kind`` filters on it).

A tag outside :data:`TAGS` is refused at registration (the plugin is reported as broken, with
the closest known tags); a new tag is added here, with its meaning, and to ``docs/cli.md``.

This module imports nothing; the registry imports it only when a plugin declares tags.
"""

from __future__ import annotations

from collections.abc import Iterable

from quadriga.errors import QuadrigaError, suggest

__all__ = ["TAGS", "TAG_DOCS", "check_tags", "unknown_tags"]

#: where the vocabulary is documented for users
TAG_DOCS = "docs/cli.md (section 'Capability tags') or `quadriga list --tags`"

#: every tag a component may declare -> what it means (one line each)
TAGS: dict[str, str] = {
    # what a method needs from its target
    "needs-score": "uses the target's score (gradient of log density)",
    "needs-log-prob": "evaluates the target's log density (or a likelihood)",
    "gradient-free": "uses no gradient of the target",
    "noised-score": "score of diffusion-noised targets (gives or uses)",
    # what a task offers (and evaluators: what they compare against)
    "exact-target": "closed-form moments or exact samples (or uses them)",
    "ground-truth": "posterior moments from reference runs (or uses them)",
    "posterior": "the posterior of a Bayesian model given data",
    "discrete-state": "over a discrete state space (spin systems)",
    "real-data": "built on a real data set (scikit-learn's or bundled)",
    "covariate-shift": "test covariates distributed unlike training ones",
    # what a method produces
    "produces-weights": "weighted samples: estimates must use the weights",
    "trains-network": "trains a neural network (torch); slower on a CPU",
    # families of methods
    "mcmc": "Markov chain Monte Carlo (or a diagnostic of chains)",
    "smc": "sequential Monte Carlo: weighted resampled particles",
    "generative": "generative model: diffusion, flows, interpolants",
    "thinning": "selects a subset of an existing sample set",
    "rl": "reinforcement learning: environments, agents, return",
    "discrete-actions": "an environment or agent with a finite action set",
    "continuous-actions": "an environment or agent with continuous actions",
    "supervised": "supervised learning on labelled data",
    "optimization": "stochastic optimisation: suboptimality vs passes",
    "conformal": "conformal prediction or selection (finite-sample)",
    "fdr": "selection at a target false discovery rate (BH)",
    "active-learning": "chooses which points to label (experimental design)",
    "two-sample": "a distance between two sample sets, or data for one",
    "streaming": "data arriving in batches, in bounded memory",
    "equivariance": "invariance or equivariance along group orbits",
    "weight-space": "acts on trained weights: alignment, merging",
    "attribution": "effects of training points on predictions",
    "dynamics": "simulates a dynamical system (ODE or recursion)",
}


def unknown_tags(tags: Iterable[str]) -> list[str]:
    """The entries of ``tags`` that are not in :data:`TAGS`, in the order given."""
    return [t for t in tags if t not in TAGS]


def check_tags(tags: Iterable[str], where: str) -> tuple[str, ...]:
    """Return ``tags`` as a sorted tuple without repeats, after checking each against :data:`TAGS`.

    Args:
        tags: the tags declared (an iterable of strings; a single string is refused, since
            iterating it would give its letters).
        where: who declared them, e.g. ``"plugin 'std' (quadriga-std), sampler 'mala'"``.

    Raises:
        QuadrigaError: ``tags`` is a string, or holds something that is not a known tag; the
            message names ``where``, the tag and the closest known tags.
    """
    if isinstance(tags, str):
        raise QuadrigaError(f"{where}: tags must be a tuple of strings, e.g. tags=({tags!r},), not a string.")
    tags = list(tags)
    for tag in tags:
        if not isinstance(tag, str) or tag not in TAGS:
            hint = suggest(tag, TAGS) if isinstance(tag, str) else ""
            raise QuadrigaError(
                f"{where}: unknown tag {tag!r}.{hint} Known tags are listed in {TAG_DOCS}; "
                "a new tag is added to quadriga.tags.TAGS with its meaning."
            )
    return tuple(sorted(set(tags)))
