"""Gaussian random designs, planted linear signals, ridge fits and their exact risks (numpy only).

Model: rows ``x_i ~ N(0, Sigma)`` i.i.d., ``Y = X B + E`` with ``E`` i.i.d. ``N(0, noise^2)``
entries, ``B`` of shape ``(d, k)``. Ridge with penalty ``lam`` minimises
``(1/n) |Y - X W|_F^2 + lam |W|_F^2``: ``W = (X^T X + n lam I)^{-1} X^T Y``; ``lam = 0`` is the
minimum-norm least-squares solution. The excess risk of ``W`` is
``E_x |x^T (W - B)|^2 = tr((W - B)^T Sigma (W - B))`` (summed over outputs).

Exact results used by tests and diagnostics:

- :func:`conditional_ridge_risk`: the risk given ``X``, averaged over the noise, in closed form
  (bias ``tr(((A X - I) B)^T Sigma (A X - I) B)``, variance ``k noise^2 tr(A^T Sigma A)`` with
  ``A`` the ridge's linear map ``Y -> W``).
- :func:`least_squares_expected_risk`: ``E[excess risk] = k noise^2 d / (n - d - 1)`` for
  ``n > d + 1`` and any ``Sigma`` (the mean of an inverse Wishart matrix; Anderson 2003, sec. 7.2).
- :func:`ridge_deterministic_equivalent`: the high-dimensional limit of the ridge risk
  (Hastie, Montanari, Rosset & Tibshirani 2022, Ann. Statist., Thm. 5 and its general-Sigma form;
  Bach 2024, SIAM J. Math. Data Sci., sec. 3): ``kappa`` solves
  ``kappa - lam = (kappa / n) sum_i s_i / (s_i + kappa)``, with ``df2 = sum_i s_i^2 / (s_i + kappa)^2``,
  bias ``kappa^2 sum_i theta_i^2 s_i / (s_i + kappa)^2 / (1 - df2 / n)`` and variance
  ``noise^2 df2 / (n - df2)`` per output (``s_i``, ``u_i`` the eigenpairs of ``Sigma``,
  ``theta_i = u_i^T b``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadriga.errors import ConfigError

__all__ = [
    "SIGNALS",
    "SPECTRA",
    "conditional_ridge_risk",
    "covariance",
    "excess_risk",
    "least_squares_expected_risk",
    "planted_signal",
    "ridge_coefficients",
    "ridge_deterministic_equivalent",
    "ridge_operator",
    "sample_design",
]

#: covariance spectra: I, (1 - rho) I + rho 1 1^T, diag(k^-exponent)
SPECTRA = ("isotropic", "equicorrelated", "power-law")
#: planted signals: a uniformly random direction, or power-law coefficients in the eigenbasis
SIGNALS = ("random", "power-law")


def covariance(spectrum: str, dim: int, *, rho: float = 0.5, exponent: float = 1.0) -> np.ndarray:
    """The design covariance ``Sigma`` of one spectrum.

    - ``isotropic``: ``I_d``;
    - ``equicorrelated``: ``(1 - rho) I + rho 1 1^T`` (eigenvalues ``1 + (d - 1) rho`` once and
      ``1 - rho`` ``d - 1`` times; positive definite for ``-1/(d-1) < rho < 1``);
    - ``power-law``: ``diag(1, 2^-a, ..., d^-a)`` with ``a = exponent`` (the source/capacity
      setting of Caponnetto & De Vito 2007; the canonical basis is the eigenbasis).

    Shapes: returns ``(dim, dim)``. Units: squared feature units.

    Raises:
        ConfigError: an unknown spectrum (key ``spectrum``), ``dim < 1``, ``rho`` outside the
            positive-definite range (key ``rho``), ``exponent < 0`` (key ``exponent``).

    Source: standard (e.g. Hastie et al. 2022, sec. 2; Bach 2024, sec. 3).
    """
    if spectrum not in SPECTRA:
        raise ConfigError(f"spectrum '{spectrum}' is not one of {', '.join(SPECTRA)}.", key="spectrum")
    if int(dim) < 1:
        raise ConfigError(f"dim must be >= 1, got {dim}.", key="dim")
    d = int(dim)
    if spectrum == "isotropic":
        return np.eye(d)
    if spectrum == "equicorrelated":
        low = -1.0 / (d - 1) if d > 1 else -np.inf
        if not low < rho < 1:
            raise ConfigError(
                f"rho = {rho} makes (1 - rho) I + rho 11^T singular or indefinite in dim {d}; "
                f"give {low:.4g} < rho < 1.",
                key="rho",
            )
        return (1.0 - rho) * np.eye(d) + rho * np.ones((d, d))
    if not exponent >= 0:
        raise ConfigError(f"exponent must be >= 0, got {exponent}.", key="exponent")
    return np.diag(np.arange(1, d + 1, dtype=float) ** -float(exponent))


def planted_signal(
    dim: int,
    rng: np.random.Generator,
    *,
    signal: str = "random",
    norm: float = 1.0,
    exponent: float = 1.0,
    num_outputs: int = 1,
) -> np.ndarray:
    """A planted coefficient matrix ``B`` with ``|B[:, j]| = norm`` for every output ``j``.

    - ``random``: each column a uniformly random direction (a normalised Gaussian);
    - ``power-law``: ``B[i, j] = c s_ij i^(-exponent / 2)`` with random signs ``s_ij`` (coefficients
      decaying along the canonical basis, the eigenbasis of the power-law covariance).

    Shapes: returns ``(dim, num_outputs)``. Units: target units per feature unit.

    Raises:
        ConfigError: an unknown signal (key ``signal``), ``norm < 0``, ``num_outputs < 1``.

    Source: the planted models of Hastie et al. 2022 (random direction) and of the source
    condition (Caponnetto & De Vito 2007).
    """
    if signal not in SIGNALS:
        raise ConfigError(f"signal '{signal}' is not one of {', '.join(SIGNALS)}.", key="signal")
    if not norm >= 0 or int(num_outputs) < 1:
        raise ConfigError("norm must be >= 0 and num_outputs >= 1.", key="signal_norm")
    d, k = int(dim), int(num_outputs)
    if signal == "random":
        b = rng.standard_normal((d, k))
    else:
        b = (
            rng.choice([-1.0, 1.0], size=(d, k))
            * (np.arange(1, d + 1, dtype=float) ** (-exponent / 2))[:, None]
        )
    return norm * b / np.linalg.norm(b, axis=0, keepdims=True)


def sample_design(n: int, cov: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. rows ``N(0, cov)`` as ``Z L^T`` with ``L`` the Cholesky factor.

    Shapes: ``cov`` ``(d, d)``; returns ``(n, d)``. Raises: numpy's LinAlgError for a covariance
    that is not positive definite. Source: standard.
    """
    z = rng.standard_normal((int(n), cov.shape[0]))
    return z @ np.linalg.cholesky(cov).T


def ridge_operator(X: np.ndarray, lam: float) -> np.ndarray:
    """The linear map ``A`` with ridge coefficients ``W = A Y``: ``(X^T X + n lam I)^{-1} X^T``;
    the pseudo-inverse ``X^+`` (minimum-norm least squares) when ``lam = 0``.

    Shapes: ``X`` ``(n, d)``; returns ``(d, n)``. Raises: ConfigError for ``lam < 0`` (key
    ``penalty``). Source: Hoerl & Kennard 1970; Penrose 1955.
    """
    if not lam >= 0:
        raise ConfigError(f"the ridge penalty must be >= 0, got {lam}.", key="penalty")
    n, d = X.shape
    if lam == 0:
        return np.linalg.pinv(X)
    if d <= n:
        return np.linalg.solve(X.T @ X + n * lam * np.eye(d), X.T)
    return X.T @ np.linalg.inv(X @ X.T + n * lam * np.eye(n))


def ridge_coefficients(X: np.ndarray, Y: np.ndarray, lam: float) -> np.ndarray:
    """Ridge coefficients ``argmin_W (1/n)|Y - X W|_F^2 + lam |W|_F^2`` (``lam = 0``: minimum-norm
    least squares, by ``numpy.linalg.lstsq``).

    Shapes: ``X`` ``(n, d)``, ``Y`` ``(n,)`` or ``(n, k)``; returns ``(d,)`` or ``(d, k)``.
    Raises: ConfigError for ``lam < 0``. Source: Hoerl & Kennard 1970.
    """
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    if not lam >= 0:
        raise ConfigError(f"the ridge penalty must be >= 0, got {lam}.", key="penalty")
    if lam == 0:
        return np.linalg.lstsq(X, Y, rcond=None)[0]
    n, d = X.shape
    if d <= n:
        return np.linalg.solve(X.T @ X + n * lam * np.eye(d), X.T @ Y)
    return X.T @ np.linalg.solve(X @ X.T + n * lam * np.eye(n), Y)


def excess_risk(coef: np.ndarray, beta: np.ndarray, cov: np.ndarray) -> float:
    """``tr((W - B)^T Sigma (W - B))``: the excess squared-error risk of ``x -> x^T W`` (summed
    over outputs).

    Shapes: ``coef``, ``beta`` ``(d,)`` or ``(d, k)``; ``cov`` ``(d, d)``. Units: squared target
    units. Raises: nothing. Source: standard.
    """
    beta = np.asarray(beta, float)
    diff = np.asarray(coef, float).reshape(beta.shape[0], -1) - beta.reshape(beta.shape[0], -1)
    return float(np.sum(diff * (cov @ diff)))


def conditional_ridge_risk(
    X: np.ndarray, beta: np.ndarray, cov: np.ndarray, noise: float, lam: float
) -> dict[str, float]:
    """Exact ridge excess risk given the design ``X``, averaged over the label noise.

    With ``A`` = :func:`ridge_operator`: bias ``tr(((A X - I) B)^T Sigma (A X - I) B)``, variance
    ``k noise^2 tr(A^T Sigma A)`` (``k`` outputs).

    Shapes: ``X`` ``(n, d)``, ``beta`` ``(d,)`` or ``(d, k)``, ``cov`` ``(d, d)``; returns
    ``{"bias": float, "variance": float, "risk": float}``. Units: squared target units.
    Raises: ConfigError for ``lam < 0``. Source: the bias-variance decomposition of a linear
    smoother (Hastie et al. 2022, sec. 2).
    """
    A = ridge_operator(X, lam)
    b = np.asarray(beta, float).reshape(X.shape[1], -1)
    shrink = A @ X - np.eye(X.shape[1])
    bias = excess_risk(shrink @ b, np.zeros_like(b), cov)
    variance = b.shape[1] * noise**2 * float(np.trace(A.T @ cov @ A))
    return {"bias": bias, "variance": variance, "risk": bias + variance}


def least_squares_expected_risk(n: int, dim: int, noise: float, num_outputs: int = 1) -> float:
    """``E[excess risk] = k noise^2 d / (n - d - 1)`` of least squares on ``n`` Gaussian rows,
    for any covariance (no bias: ``n > d``).

    Raises: ConfigError unless ``n > d + 1`` (the mean is infinite otherwise; key ``n_train``).
    Source: ``E[(X^T X)^{-1}] = Sigma^{-1} / (n - d - 1)`` (inverse Wishart mean; Anderson 2003,
    "An Introduction to Multivariate Statistical Analysis", sec. 7.2).
    """
    if not n > dim + 1:
        raise ConfigError(
            f"least squares has finite expected risk only for n > d + 1 (n = {n}, d = {dim}).", key="n_train"
        )
    return num_outputs * noise**2 * dim / (n - dim - 1)


def ridge_deterministic_equivalent(
    eigenvalues: Any, signal_coords: Any, noise: float, lam: float, n: int
) -> dict[str, float]:
    """High-dimensional (deterministic-equivalent) ridge excess risk for one output.

    ``kappa`` solves ``1 - lam / kappa = (1/n) sum_i s_i / (s_i + kappa)`` (``kappa = 0`` for
    ``lam = 0`` and ``n >= d``); ``df2 = sum_i s_i^2 / (s_i + kappa)^2``;
    ``bias = kappa^2 sum_i theta_i^2 s_i / (s_i + kappa)^2 / (1 - df2 / n)``;
    ``variance = noise^2 df2 / (n - df2)``.

    Shapes: ``eigenvalues`` ``(d,)`` (positive), ``signal_coords`` ``(d,)`` (``theta = U^T b``);
    returns ``{"kappa", "df2", "bias", "variance", "risk"}``. Units: squared target units.

    Raises:
        ConfigError: non-positive eigenvalues, ``lam < 0``, ``lam = 0`` with ``n = d`` (the
            interpolation threshold, infinite risk).

    Source: Hastie et al. 2022 (Ann. Statist.), Thm. 5 (general covariance); Bach 2024 (SIAM J.
    Math. Data Sci.), "High-dimensional analysis of double descent", sec. 3, eqs. for the
    effective regularisation ``kappa`` and degrees of freedom.
    """
    from scipy.optimize import brentq

    s = np.asarray(eigenvalues, float)
    theta = np.asarray(signal_coords, float)
    if np.any(s <= 0) or not lam >= 0:
        raise ConfigError("eigenvalues must be positive and lam >= 0.", key="penalty")
    d = len(s)
    if lam == 0 and n == d:
        raise ConfigError("ridgeless regression at n = d has infinite risk; change n or lam.", key="penalty")

    def g(kappa: float) -> float:
        return 1.0 - lam / kappa - float(np.sum(s / (s + kappa))) / n

    if lam == 0 and n > d:
        kappa = 0.0
    else:
        hi = lam + float(s.sum()) / n + 1.0
        kappa = float(brentq(g, 1e-14 * (1.0 + s.max()), hi, xtol=1e-15, rtol=1e-13, maxiter=500))
    df2 = float(np.sum(s**2 / (s + kappa) ** 2))
    bias = kappa**2 * float(np.sum(theta**2 * s / (s + kappa) ** 2)) / (1.0 - df2 / n)
    variance = noise**2 * df2 / (n - df2)
    return {"kappa": kappa, "df2": df2, "bias": bias, "variance": variance, "risk": bias + variance}
