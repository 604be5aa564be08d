"""Access to inference-gym's NumPy backend: models, bundled data, ground truth, reference densities.

Everything here imports ``inference_gym.using_numpy`` (and so tensorflow-probability's NumPy
substrate) on first use, never at module import. TensorFlow itself is not needed.

A model is wrapped in inference-gym's ``VectorModel`` with flattened sample transformations, so
its event is one vector ``[d]`` (the unconstrained space is the same vector mapped through the
default event-space bijector) and its ``identity`` sample transformation is one vector ``[k]``.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError

__all__ = ["GroundTruth", "dataset", "ground_truth", "reference_log_density", "vector_model"]


@functools.cache
def vector_model(model: str, **options: Any) -> Any:
    """inference-gym's ``VectorModel`` of ``inference_gym.using_numpy.targets.<model>(**options)`` (cached).

    ``options`` are the model's own arguments, e.g. ``use_markov_chain=True`` for its vectorised
    form (the same density; the time series models evaluate it far faster that way).

    Raises:
        ConfigError: inference-gym is not installed, or it has no model of that name.
    """
    try:
        from inference_gym import using_numpy as gym
    except ImportError as exc:  # pragma: no cover - a dependency of this plugin
        raise ConfigError(
            f"inference-gym's NumPy backend failed to import ({exc}); "
            "install it with pip install -c constraints.txt inference-gym tensorflow-probability.",
            key="model",
        ) from None
    cls = getattr(gym.targets, model, None)
    if cls is None:
        raise ConfigError(f"inference-gym has no target '{model}'.", key="model")
    return gym.targets.VectorModel(cls(**options), flatten_sample_transformations=True)


def dataset(name: str, **kwargs: Any) -> dict[str, Any]:
    """A dataset bundled with inference-gym: ``inference_gym.internal.data.<name>(**kwargs)``.

    Read through the NumPy backend's rewritten module (the plain module imports TensorFlow).

    Raises:
        ConfigError: inference-gym is not installed.
    """
    vector_model("Banana")  # imports inference_gym.using_numpy, which installs the rewritten modules
    from inference_gym.dynamic.backend_numpy.internal import data

    return dict(getattr(data, name)(**kwargs))


@attrs.frozen
class GroundTruth:
    """Ground truth of a model's ``identity`` sample transformation, as inference-gym ships it.

    Attributes:
        mean: ``ndarray[k]`` posterior mean of each coordinate of the transformation.
        std: ``ndarray[k]`` posterior standard deviation.
        mean_stderr: ``ndarray[k]`` Monte Carlo standard error of ``mean`` (from the long
            reference chains inference-gym ran), or ``None`` for analytic ground truth.
        permutation: ``ndarray[k]`` int: coordinate ``j`` of the transformation is coordinate
            ``permutation[j]`` of the constrained event vector (the transformation only reorders).
    """

    mean: np.ndarray
    std: np.ndarray
    mean_stderr: np.ndarray | None
    permutation: np.ndarray


@functools.cache
def ground_truth(model: str) -> GroundTruth:
    """The ground truth of ``model``'s ``identity`` transformation and its coordinate order (cached).

    The order is read off inference-gym itself: the transformation is applied to the constrained
    vector ``(1, 2, ..., d)`` and must return a permutation of it.

    Raises:
        ConfigError: the model ships no ground truth, or its ``identity`` transformation is not a
            reordering of the event vector.
    """
    vm = vector_model(model)
    st = vm.sample_transformations["identity"]
    if st.ground_truth_mean is None or st.ground_truth_standard_deviation is None:
        raise ConfigError(f"inference-gym ships no ground truth for '{model}'.", key="model")
    d = int(vm.event_shape[0])
    probe = np.arange(1, d + 1, dtype=np.float64)
    out = np.asarray(st(probe.astype(vm.dtype)), dtype=np.float64).reshape(-1)
    perm = np.rint(out).astype(np.int64) - 1
    if out.shape != (d,) or sorted(perm.tolist()) != list(range(d)) or not np.allclose(out, perm + 1):
        raise ConfigError(f"the identity transformation of '{model}' is not a reordering.", key="model")
    se = st.ground_truth_mean_standard_error
    return GroundTruth(
        mean=np.asarray(st.ground_truth_mean, dtype=np.float64).reshape(-1),
        std=np.asarray(st.ground_truth_standard_deviation, dtype=np.float64).reshape(-1),
        mean_stderr=None if se is None else np.asarray(se, dtype=np.float64).reshape(-1),
        permutation=perm,
    )


def reference_log_density(model: str, z: np.ndarray, **options: Any) -> np.ndarray:
    """inference-gym's log density in the unconstrained space: ``ndarray[n, d] -> ndarray[n]`` (nats).

    ``log p(b(z)) + log |det J_b(z)|`` with ``b`` the model's default event-space bijector, all
    computed by inference-gym's NumPy backend (in the model's dtype, float32 for most models);
    ``options`` go to the model (:func:`vector_model`).
    """
    vm = vector_model(model, **options)
    b = vm.default_event_space_bijector
    z = np.asarray(z).astype(vm.dtype)
    lp = vm.unnormalized_log_prob(b(z)) + b.forward_log_det_jacobian(z, 1)
    return np.asarray(lp, dtype=np.float64)
