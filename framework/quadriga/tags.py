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
    "needs-score": "uses the target's score, the gradient of its log density",
    "needs-log-prob": "evaluates the target's (unnormalised) log density, or a posterior's likelihood",
    "gradient-free": "uses no gradient of the target (log density, conditionals or exact draws only)",
    "noised-score": "target: gives the score of its diffusion-noised versions; sampler: uses it",
    # what a task offers (and evaluators: what they compare against)
    "exact-target": "closed-form moments or exact samples; on an evaluator: compares against them",
    "ground-truth": "reference posterior moments (from long reference runs); evaluator: uses them",
    "posterior": "the posterior of a Bayesian model given data",
    "discrete-state": "a target or sampler over a discrete state space (spins)",
    "real-data": "built on a real data set (shipped with scikit-learn or the plugin)",
    "covariate-shift": "test covariates distributed differently from the training ones",
    # what a method produces
    "produces-weights": "weighted samples (importance weights to use in every estimate)",
    "trains-network": "trains a neural network (torch); slower on CPU, seeds matter",
    # families of methods
    "mcmc": "Markov chain Monte Carlo (or a diagnostic of its chains)",
    "smc": "sequential Monte Carlo: weighted particles, resampled along a path",
    "generative": "a generative model: diffusion, flow matching, interpolants, normalizing flows",
    "thinning": "selects a subset of an existing sample set",
    "rl": "reinforcement learning: environments, agents and their return metrics",
    "discrete-actions": "an environment or agent with a finite action set",
    "continuous-actions": "an environment or agent with a continuous (box) action space",
    "supervised": "supervised learning on labelled data (regression or classification)",
    "optimization": "a stochastic optimisation method, judged by suboptimality against passes",
    "conformal": "conformal prediction or selection (distribution-free finite-sample guarantees)",
    "fdr": "selection at a false discovery rate level (Benjamini-Hochberg)",
    "active-learning": "chooses which points to label (active learning, experimental design)",
    "two-sample": "a discrepancy between two sample sets (or data for estimating one)",
    "streaming": "works on data arriving in batches, in bounded memory",
    "equivariance": "symmetry: invariance or equivariance along group orbits",
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
