"""Shift scenarios on 8x8 digit images: corruptions and non-i.i.d. batch streams (pure numpy/scipy).

Images are rows of ``X: ndarray[n, 64]`` with pixels in ``[0, 1]`` (load_digits' 0..16 divided by
16), read as 8x8 images in row-major order. A *stream* is an order of the test rows; a stream is
consumed in consecutive batches of ``batch_size`` rows (the last batch may be shorter).

Source: the scenario design of Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, "Parameter-free
online test-time adaptation", CVPR, sec. 4 (i.i.d., covariate shift, non-i.i.d. class-sorted and
class-imbalanced batches); corruptions after Hendrycks & Dietterich 2019 (Gaussian noise, blur).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CORRUPTIONS",
    "blur",
    "class_sorted_order",
    "corrupt",
    "dirichlet_order",
    "gaussian_noise",
    "rotate",
]

SIDE = 8


def _images(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != SIDE * SIDE:
        raise ValueError(f"expected X of shape [n, {SIDE * SIDE}] (8x8 images), got {X.shape}")
    return X.reshape(-1, SIDE, SIDE)


def gaussian_noise(X: np.ndarray, std: float, rng: np.random.Generator) -> np.ndarray:
    """``clip(X + std * N(0, 1), 0, 1)``: additive Gaussian pixel noise.

    Args:
        X: ``ndarray[n, 64]`` pixels in [0, 1]; std: noise standard deviation (pixel units, >= 0).
        rng: ``numpy.random.Generator``.

    Returns:
        ``ndarray[n, 64]`` in [0, 1].
    """
    _images(X)
    return np.clip(X + std * rng.standard_normal(np.shape(X)), 0.0, 1.0)


def blur(X: np.ndarray, size: int = 3) -> np.ndarray:
    """Box blur: each pixel becomes the mean of its ``size x size`` neighbourhood (zero padding).

    Args:
        X: ``ndarray[n, 64]``; size: odd window side in pixels (3 gives the 3x3 blur).

    Returns:
        ``ndarray[n, 64]``; a constant image's interior pixels are unchanged, total mass shrinks at
        the border (zero padding).
    """
    from scipy.ndimage import uniform_filter

    img = _images(X)
    out = uniform_filter(img, size=(1, size, size), mode="constant", cval=0.0)
    return out.reshape(len(img), -1)


def rotate(X: np.ndarray, degrees: float) -> np.ndarray:
    """Rotate every image by ``degrees`` (counter-clockwise) about its centre, bilinear, zero fill.

    Args:
        X: ``ndarray[n, 64]``; degrees: angle in degrees.

    Returns:
        ``ndarray[n, 64]`` clipped to [0, 1]; a rotation by 90 degrees permutes pixels exactly.
    """
    from scipy.ndimage import rotate as nd_rotate

    img = _images(X)
    out = nd_rotate(img, degrees, axes=(2, 1), reshape=False, order=1, mode="constant", cval=0.0)
    return np.clip(out, 0.0, 1.0).reshape(len(img), -1)


CORRUPTIONS = ("noise", "blur", "rotation")


def corrupt(
    X: np.ndarray, kind: str, *, rng: np.random.Generator, noise_std: float, rotation: float
) -> np.ndarray:
    """One covariate shift of :data:`CORRUPTIONS` applied to ``X[n, 64]`` (see each function).

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "noise":
        return gaussian_noise(X, noise_std, rng)
    if kind == "blur":
        return blur(X)
    if kind == "rotation":
        return rotate(X, rotation)
    raise ValueError(f"unknown corruption '{kind}'; choose one of {', '.join(CORRUPTIONS)}")


def class_sorted_order(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A stream sorted by class (classes in random order, rows shuffled within each class).

    Consecutive batches then hold one or two classes: the non-i.i.d. stream of LAME's sec. 4.

    Args:
        y: ``ndarray[n]`` integer labels.

    Returns:
        ``ndarray[n]`` a permutation of ``range(n)``.
    """
    y = np.asarray(y)
    classes = rng.permutation(np.unique(y))
    return np.concatenate([rng.permutation(np.flatnonzero(y == c)) for c in classes])


def dirichlet_order(
    y: np.ndarray, batch_size: int, concentration: float, rng: np.random.Generator
) -> np.ndarray:
    """A class-imbalanced stream: each batch's class proportions are drawn from ``Dir(concentration)``.

    For each of ``ceil(n / batch_size)`` batches: ``pi ~ Dirichlet(concentration * 1_C)``, labels
    ``c_1..c_b ~ Categorical(pi)``, and each row is drawn uniformly (with replacement) among the
    rows of its class. Small ``concentration`` (0.1) gives batches dominated by one or two
    classes; large values approach i.i.d. batches.

    Args:
        y: ``ndarray[n]`` integer labels; batch_size: rows per batch; concentration: > 0.

    Returns:
        ``ndarray[n]`` row indices (with repeats).
    """
    y = np.asarray(y)
    classes = np.unique(y)
    members = [np.flatnonzero(y == c) for c in classes]
    n = len(y)
    out = []
    for start in range(0, n, batch_size):
        b = min(batch_size, n - start)
        pi = rng.dirichlet(np.full(len(classes), float(concentration)))
        labels = rng.choice(len(classes), size=b, p=pi)
        out.append(np.array([members[c][rng.integers(len(members[c]))] for c in labels]))
    return np.concatenate(out)
