"""Kernels for kernel thinning, in one bandwidth convention, with their power kernels.

Every kernel here is a function of the distance ``r = ||x - y||`` (same units as
``x``) and a bandwidth ``sigma`` (same units as ``x``), normalised so that
``k(x, x) = 1``:

- ``gaussian``: ``exp(-r^2 / (2 sigma^2))``;
- ``imq``:      ``(1 + r^2 / sigma^2)^(-nu)`` (inverse multiquadric, ``nu > 0``);
- ``laplace``:  ``exp(-r / sigma)`` (the Matérn kernel of smoothness 1/2);
- ``matern``:   ``2^(1-nu) / Gamma(nu) * (s r)^nu * K_nu(s r)`` with ``s = sqrt(2 nu) / sigma``
  (the scikit-learn convention; ``nu = 1/2`` is ``laplace``).

goodpoints itself mixes conventions (``exp(-r^2 / k_params)`` in its Compress++
Cython kernels, ``exp(-r^2 / (2 var))`` in its examples); this module is the one
place where quadriga's convention is turned into numbers.

Power kernels (Dwivedi & Mackey, *Generalized Kernel Thinning*, ICLR 2022, Table 1 and
App. on power kernels): the alpha-power ``k_alpha`` of ``k`` has Fourier transform
``hat(k)^alpha``; up to a constant factor, which KT-SPLIT ignores,

- gaussian(sigma) -> gaussian(sigma * sqrt(alpha)) (alpha = 1/2 is the square-root kernel of KT);
- Matérn of smoothness ``nu`` and inverse length ``s`` -> Matérn of smoothness
  ``alpha (nu + d/2) - d/2`` and the same ``s``; it exists when that is positive,
  i.e. ``alpha > d / (2 nu + d)`` (so Laplace has no square-root kernel for d >= 1);
- imq(nu) -> only alpha = 1/2: imq with exponent ``d/4 + nu/2`` and the same sigma
  (Dwivedi & Mackey, *Kernel Thinning*, JMLR 2024, eq. 117 of the arXiv version).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

__all__ = ["KERNEL_NAMES", "Kernel", "Term", "make_kernel", "min_power", "power_kernel", "sum_kernel"]

KERNEL_NAMES = ("gaussian", "imq", "laplace", "matern")

_BLOCK_ELEMENTS = 4_000_000  # entries of one temporary distance block (32 MB in float64)


@dataclass(frozen=True)
class Term:
    """One normalised radial kernel ``phi(r)`` with ``phi(0) = 1``.

    Attributes:
        family: ``"gaussian"``, ``"imq"`` or ``"matern"``.
        sigma: bandwidth (units of x) for gaussian/imq.
        nu: imq exponent or Matérn order (dimensionless).
        inv_length: Matérn inverse length ``s`` (1 / units of x).
    """

    family: str
    sigma: float = 1.0
    nu: float = 0.0
    inv_length: float = 1.0

    def of_sqdist(self, sq: np.ndarray) -> np.ndarray:
        """Evaluate the kernel on squared distances ``sq`` (any shape, units of x squared); same shape out."""
        if self.family == "gaussian":
            return np.exp(sq * (-0.5 / self.sigma**2))
        if self.family == "imq":
            return (1.0 + sq / self.sigma**2) ** (-self.nu)
        z = np.sqrt(sq) * self.inv_length
        if self.nu == 0.5:
            return np.exp(-z)
        if self.nu == 1.5:
            return (1.0 + z) * np.exp(-z)
        if self.nu == 2.5:
            return (1.0 + z + z * z / 3.0) * np.exp(-z)
        out = np.ones_like(z)
        pos = z > 1e-12
        zp = z[pos]
        out[pos] = (2.0 ** (1.0 - self.nu) / special.gamma(self.nu)) * zp**self.nu * special.kv(self.nu, zp)
        return out

    def apply_inplace(self, sq: np.ndarray) -> np.ndarray:
        """Overwrite the float64 array of squared distances ``sq`` with kernel values (no temporaries
        for gaussian, imq and half-integer Matérn); returns ``sq``."""
        if self.family == "gaussian":
            sq *= -0.5 / self.sigma**2
            return np.exp(sq, out=sq)
        if self.family == "imq":
            sq *= 1.0 / self.sigma**2
            sq += 1.0
            return np.power(sq, -self.nu, out=sq)
        if self.nu == 0.5:
            np.sqrt(sq, out=sq)
            sq *= -self.inv_length
            return np.exp(sq, out=sq)
        sq[...] = self.of_sqdist(sq)
        return sq


@dataclass(frozen=True)
class Kernel:
    """A sum of normalised radial terms (one term except for the KT+ split kernel).

    Attributes:
        terms: the terms; ``k(x, y) = sum_t phi_t(||x - y||)``.
        label: a short human-readable description.
    """

    terms: tuple[Term, ...]
    label: str = field(default="", compare=False)

    def of_sqdist(self, sq: np.ndarray) -> np.ndarray:
        """Sum of the terms on squared distances ``sq``; same shape out."""
        out = self.terms[0].of_sqdist(sq)
        for term in self.terms[1:]:
            out = out + term.of_sqdist(sq)
        return out

    def rows(self, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """goodpoints' kernel signature: ``y[1 or n, d]``, ``x[n, d]`` -> ``k(y_i, x_i)`` as ``[n]``."""
        diff = x - y
        return self.of_sqdist(np.einsum("ij,ij->i", diff, diff))

    def matrix(self, x: np.ndarray, y: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix ``K[i, j] = k(x_i, y_j)``.

        Args:
            x: ``[n, d]`` float64; y: ``[m, d]`` or ``None`` for ``x``.
            out: optional preallocated ``[n, m]`` float64 array, filled in place.

        Returns:
            ``[n, m]`` float64, computed in row blocks so that the temporaries stay small.
        """
        y = x if y is None else y
        n, m = x.shape[0], y.shape[0]
        if out is None:
            out = np.empty((n, m))
        xx = np.einsum("ij,ij->i", x, x)
        yy = xx if y is x else np.einsum("ij,ij->i", y, y)
        step = max(1, _BLOCK_ELEMENTS // max(m, 1))
        for start in range(0, n, step):
            stop = min(n, start + step)
            sq = out[start:stop]  # a view: everything below happens in place
            np.matmul(x[start:stop], y.T, out=sq)
            sq *= -2.0
            sq += xx[start:stop, None]
            sq += yy[None, :]
            np.maximum(sq, 0.0, out=sq)
            if y is x:  # exact zeros on the diagonal
                idx = np.arange(start, stop)
                sq[idx - start, idx] = 0.0
            self.apply_inplace(sq)
        return out

    def apply_inplace(self, sq: np.ndarray) -> np.ndarray:
        """Overwrite squared distances ``sq`` (float64, any shape) with ``k``; returns ``sq``."""
        if len(self.terms) == 1:
            return self.terms[0].apply_inplace(sq)
        dist = sq.copy()
        self.terms[0].apply_inplace(sq)
        for term in self.terms[1:]:
            sq += term.apply_inplace(dist.copy())
        return sq

    def row_means(self, x: np.ndarray) -> np.ndarray:
        """``meanK[i] = mean_j k(x_i, x_j)`` as ``[n]``, in blocks (O(n) memory)."""
        n = x.shape[0]
        means = np.empty(n)
        step = max(1, _BLOCK_ELEMENTS // max(n, 1))
        for start in range(0, n, step):
            stop = min(n, start + step)
            means[start:stop] = self.matrix(x[start:stop], x).mean(axis=1)
        return means


def make_kernel(name: str, bandwidth: float, nu: float | None = None) -> Kernel:
    """The user-facing kernel ``name`` with bandwidth ``bandwidth`` (units of x).

    Args:
        name: one of :data:`KERNEL_NAMES`.
        bandwidth: ``sigma > 0``.
        nu: imq exponent (default 0.5) or Matérn smoothness (default 1.5); ignored otherwise.

    Returns:
        A one-term :class:`Kernel`.

    Raises:
        ValueError: unknown name or non-positive parameters.
    """
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be > 0, got {bandwidth}")
    if name == "gaussian":
        return Kernel((Term("gaussian", sigma=bandwidth),), f"gaussian(sigma={bandwidth:.4g})")
    if name == "imq":
        nu = 0.5 if nu is None else float(nu)
        return Kernel((Term("imq", sigma=bandwidth, nu=nu),), f"imq(sigma={bandwidth:.4g}, nu={nu:g})")
    if name == "laplace":
        return Kernel(
            (Term("matern", nu=0.5, inv_length=1.0 / bandwidth),), f"laplace(sigma={bandwidth:.4g})"
        )
    if name == "matern":
        nu = 1.5 if nu is None else float(nu)
        if not nu > 0:
            raise ValueError(f"nu must be > 0, got {nu}")
        return Kernel(
            (Term("matern", nu=nu, inv_length=math.sqrt(2 * nu) / bandwidth),),
            f"matern(sigma={bandwidth:.4g}, nu={nu:g})",
        )
    raise ValueError(f"unknown kernel '{name}'; use one of {', '.join(KERNEL_NAMES)}")


def min_power(kernel: Kernel, dim: int) -> float:
    """The infimum of valid powers alpha for ``kernel`` in dimension ``dim`` (0 when any alpha > 0 works).

    For imq only alpha in {1/2, 1} is available; this returns 0.5 then.
    """
    term = kernel.terms[0]
    if term.family == "matern":
        return dim / (2.0 * term.nu + dim)
    return 0.0 if term.family == "gaussian" else 0.5


def power_kernel(kernel: Kernel, alpha: float, dim: int) -> Kernel:
    """The alpha-power kernel of a one-term kernel in dimension ``dim`` (see the module docstring).

    Args:
        kernel: from :func:`make_kernel`.
        alpha: the power, in (0, 1]; 1 returns ``kernel``.
        dim: the dimension d of the points.

    Returns:
        A one-term :class:`Kernel` proportional to the alpha-power kernel.

    Raises:
        ValueError: when the power kernel does not exist (Matérn with alpha <= d / (2 nu + d))
            or is not implemented (imq with alpha not in {1/2, 1}).

    Source: Dwivedi & Mackey, Generalized Kernel Thinning (ICLR 2022), Table 1.
    """
    if alpha == 1.0:
        return kernel
    term = kernel.terms[0]
    if term.family == "gaussian":
        return Kernel((Term("gaussian", sigma=term.sigma * math.sqrt(alpha)),), f"{kernel.label}^{alpha:g}")
    if term.family == "imq":
        if alpha != 0.5:
            raise ValueError(
                f"the imq kernel's power kernel is available for alpha = 0.5 only, got {alpha:g}"
            )
        return Kernel((Term("imq", sigma=term.sigma, nu=dim / 4.0 + term.nu / 2.0),), f"{kernel.label}^0.5")
    order = alpha * (term.nu + dim / 2.0) - dim / 2.0
    if order <= 0:
        raise ValueError(
            f"the {kernel.label} kernel has no {alpha:g}-power kernel in d = {dim}: "
            f"alpha must exceed d / (2 nu + d) = {min_power(kernel, dim):.4g}"
        )
    return Kernel((Term("matern", nu=order, inv_length=term.inv_length),), f"{kernel.label}^{alpha:g}")


def sum_kernel(a: Kernel, b: Kernel) -> Kernel:
    """``k = a + b`` (the KT+ split kernel ``k + k_alpha``)."""
    return Kernel(a.terms + b.terms, f"{a.label} + {b.label}")
