"""Tabular conditional density models of the return, one law per cell ``c = s * A + a``.

FLE's function class is any conditional generative model fitted by maximum likelihood; on a finite
MDP a conditional model is one law per state-action cell, so "fit by MLE" is one fit per cell (all
cells at once here, vectorised over the data). Two classes, both with ``fit`` (the MLE step),
``sample`` (the draws of the next target) and ``quantiles`` (the estimated law, as an answer):

- :class:`CellMixture`: a ``J``-component Gaussian mixture per cell, fitted by EM (Dempster, Laird
  & Rubin 1977; Bishop 2006, Section 9.2.2), warm-started from the previous fit;
- :class:`CellHistogram`: a histogram density on fixed bins of ``[low, high]`` per cell, whose MLE
  is the bin frequencies divided by the bin width (the "categorical" model of the paper).

A cell without data keeps its previous law (the model is not identified there; the coverage
diagnostic reports such cells). Returns are scalar (return units).

Source: Wu, Uehara & Sun 2023, "Distributional Offline Policy Evaluation with Predictive Error
Guarantees" (ICML, arXiv 2302.09456), Section 4: the MLE step over a generic function class;
Gaussian mixtures and categorical models are the paper's tabular instances [recalled].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["CellHistogram", "CellMixture", "mixture_quantiles", "quantile_levels"]


def quantile_levels(num: int) -> np.ndarray:
    """Mid-point levels ``(i + 1/2) / num``, ``i = 0..num-1`` (``ndarray[num]``)."""
    return (np.arange(num) + 0.5) / num


def _bincount2(cells: np.ndarray, weights: np.ndarray, num_cells: int) -> np.ndarray:
    """``out[c, j] = sum_{i: cells_i = c} weights[i, j]`` for ``weights [N, J]`` (``ndarray[C, J]``)."""
    J = weights.shape[1]
    idx = cells[:, None] * J + np.arange(J)
    return np.bincount(idx.ravel(), weights.ravel(), minlength=num_cells * J).reshape(num_cells, J)


def mixture_quantiles(
    weights: np.ndarray, mu: np.ndarray, sd: np.ndarray, levels: np.ndarray, grid_points: int = 20001
) -> np.ndarray:
    """Quantiles of the Gaussian mixture ``sum_j weights_j N(mu_j, sd_j^2)`` (all ``ndarray[J]``).

    The CDF is evaluated on a uniform grid over ``[min(mu - 8 sd), max(mu + 8 sd)]`` and inverted by
    linear interpolation (error below the grid step).

    Returns:
        ``ndarray[len(levels)]``.
    """
    keep = weights > 0
    w, m, s = weights[keep] / weights[keep].sum(), mu[keep], sd[keep]
    grid = np.linspace(float(np.min(m - 8 * s)), float(np.max(m + 8 * s)), grid_points)
    cdf = (w * ndtr((grid[:, None] - m) / s)).sum(-1)
    return np.interp(levels, cdf, grid)


@dataclass
class CellMixture:
    """``J``-component Gaussian mixture per cell: ``p(z | c) = sum_j w[c, j] N(z; mu[c, j], sd[c, j]^2)``.

    Attributes:
        w, mu, sd: ``ndarray[C, J]`` weights (rows sum to 1), means and standard deviations
            (return units; ``sd >= min_sd``).
        min_sd: the floor on ``sd`` (keeps the likelihood bounded when a cell's targets coincide).
        em_steps: EM iterations per :meth:`fit`.

    Source: EM for Gaussian mixtures, Bishop 2006, Section 9.2.2 (eq. 9.23-9.27).
    """

    w: np.ndarray
    mu: np.ndarray
    sd: np.ndarray
    min_sd: float = 1e-3
    em_steps: int = 10

    @classmethod
    def point_mass(
        cls, num_cells: int, components: int, *, min_sd: float = 1e-3, em_steps: int = 10
    ) -> CellMixture:
        """The initial law ``delta_0`` in every cell (as ``N(0, min_sd^2)``): FLE's ``p^0``."""
        shape = (num_cells, components)
        return cls(
            np.full(shape, 1.0 / components), np.zeros(shape), np.full(shape, min_sd), min_sd, em_steps
        )

    @property
    def num_cells(self) -> int:
        """``C``."""
        return int(self.w.shape[0])

    def sample(self, cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw ``z ~ p(. | c)`` per entry of ``cells`` (any shape; same shape out)."""
        flat = np.asarray(cells).ravel()
        cdf = self.w[flat].cumsum(-1)
        j = np.minimum((rng.random((flat.size, 1)) > cdf).sum(-1), self.w.shape[1] - 1)
        z = self.mu[flat, j] + self.sd[flat, j] * rng.standard_normal(flat.size)
        return z.reshape(np.shape(cells))

    def fit(self, cells: np.ndarray, z: np.ndarray) -> CellMixture:
        """Maximum-likelihood fit (EM) of every cell's mixture to the pairs ``(cells_i, z_i)``.

        Warm-started from ``self`` where it is spread (``sd > min_sd``), else from moments: the
        cell's mean plus its standard deviation times the normal quantiles at ``(j + 1/2) / J``.
        Cells without data keep their law; a component left without weight keeps its place.

        Args:
            cells: ``ndarray[N]`` int cell indices.
            z: ``ndarray[N]`` targets (return units).

        Returns:
            A new :class:`CellMixture`.
        """
        C, J = self.w.shape
        n_c = np.bincount(cells, minlength=C).astype(float)
        has = n_c > 0
        mean = np.bincount(cells, z, minlength=C) / np.maximum(n_c, 1)
        var = np.bincount(cells, z * z, minlength=C) / np.maximum(n_c, 1) - mean**2
        std = np.sqrt(np.maximum(var, self.min_sd**2))
        fresh = self.sd.max(-1) <= self.min_sd * (1 + 1e-9)
        w, mu, sd = self.w.copy(), self.mu.copy(), self.sd.copy()
        offsets = ndtri(quantile_levels(J))
        mu[fresh] = mean[fresh, None] + std[fresh, None] * offsets
        sd[fresh] = std[fresh, None] / np.sqrt(J)
        sd[fresh] = np.maximum(sd[fresh], self.min_sd)
        w[fresh] = 1.0 / J
        for _ in range(self.em_steps):
            m, s, lw = mu[cells], sd[cells], np.log(np.maximum(w[cells], 1e-300))
            logp = lw - 0.5 * ((z[:, None] - m) / s) ** 2 - np.log(s)
            resp = np.exp(logp - logp.max(1, keepdims=True))
            resp /= resp.sum(1, keepdims=True)  # [N, J] responsibilities, eq. 9.23
            nk = _bincount2(cells, resp, C)  # [C, J]
            sz = _bincount2(cells, resp * z[:, None], C)
            szz = _bincount2(cells, resp * (z * z)[:, None], C)
            alive = nk > 1e-8
            mu_new = np.where(alive, sz / np.maximum(nk, 1e-300), mu)  # eq. 9.24
            var_new = np.where(alive, szz / np.maximum(nk, 1e-300) - mu_new**2, sd**2)  # eq. 9.25
            mu = np.where(has[:, None], mu_new, mu)
            sd = np.where(has[:, None], np.sqrt(np.maximum(var_new, self.min_sd**2)), sd)
            w = np.where(has[:, None], nk / np.maximum(n_c[:, None], 1e-300), w)  # eq. 9.26
        return CellMixture(w, mu, sd, self.min_sd, self.em_steps)

    def mean(self, cells: np.ndarray) -> np.ndarray:
        """Means ``sum_j w mu`` of the cells' laws (same shape as ``cells``)."""
        return (self.w * self.mu).sum(-1)[cells]

    def quantiles(self, cell_weights: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Quantiles of the mixture ``sum_c cell_weights[c] p(. | c)`` (``cell_weights ndarray[C]``)."""
        cw = (np.asarray(cell_weights)[:, None] * self.w).ravel()
        return mixture_quantiles(cw, self.mu.ravel(), self.sd.ravel(), levels)


@dataclass
class CellHistogram:
    """Histogram density per cell on ``B`` equal bins of ``[low, high]``: ``probs ndarray[C, B]``.

    ``p(z | c) = probs[c, b] / width`` on bin ``b``; targets outside ``[low, high]`` are clipped into
    the edge bins. The MLE of a histogram density is the bin frequency (per cell).

    Source: the categorical (histogram) model class of FLE [recalled]; Scott 1979 for histogram MLE.
    """

    probs: np.ndarray
    low: float
    high: float

    @classmethod
    def point_mass(cls, num_cells: int, bins: int, low: float, high: float) -> CellHistogram:
        """All mass in the bin that holds 0 (FLE's ``p^0 = delta_0``, to a bin width).

        Raises:
            ValueError: ``low >= high``, or 0 outside ``[low, high]``.
        """
        if not low < 0.0 < high:
            raise ValueError(f"the histogram support [low, high] must contain 0, got [{low}, {high}]")
        probs = np.zeros((num_cells, bins))
        probs[:, min(int((0.0 - low) / (high - low) * bins), bins - 1)] = 1.0
        return cls(probs, float(low), float(high))

    @property
    def edges(self) -> np.ndarray:
        """``ndarray[B + 1]`` bin edges."""
        return np.linspace(self.low, self.high, self.probs.shape[1] + 1)

    def _bin(self, z: np.ndarray) -> np.ndarray:
        B = self.probs.shape[1]
        return np.clip(((z - self.low) / (self.high - self.low) * B).astype(int), 0, B - 1)

    def sample(self, cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw per entry of ``cells``: a bin by its probability, then uniform inside it."""
        flat = np.asarray(cells).ravel()
        cdf = self.probs[flat].cumsum(-1)
        B = self.probs.shape[1]
        b = np.minimum((rng.random((flat.size, 1)) > cdf).sum(-1), B - 1)
        width = (self.high - self.low) / B
        z = self.low + (b + rng.random(flat.size)) * width
        return z.reshape(np.shape(cells))

    def fit(self, cells: np.ndarray, z: np.ndarray) -> CellHistogram:
        """Bin frequencies per cell (the histogram MLE); cells without data keep their law."""
        C, B = self.probs.shape
        idx = cells * B + self._bin(z)
        counts = np.bincount(idx, minlength=C * B).reshape(C, B).astype(float)
        tot = counts.sum(-1, keepdims=True)
        probs = np.where(tot > 0, counts / np.maximum(tot, 1), self.probs)
        return CellHistogram(probs, self.low, self.high)

    def mean(self, cells: np.ndarray) -> np.ndarray:
        """Means of the cells' laws (bin mid-points weighted)."""
        mid = 0.5 * (self.edges[1:] + self.edges[:-1])
        return (self.probs @ mid)[cells]

    def quantiles(self, cell_weights: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Quantiles of ``sum_c cell_weights[c] p(. | c)``: the CDF is piecewise linear on the edges."""
        p = np.asarray(cell_weights) @ self.probs
        cdf = np.concatenate([[0.0], np.cumsum(p) / p.sum()])
        edges = self.edges
        keep = np.concatenate([[True], np.diff(cdf) > 0])  # strictly increasing for interp
        return np.interp(levels, cdf[keep], edges[keep])
