"""Sampler-quality evaluators: moment error, mixture-mode coverage, effective sample size.

Each evaluator takes one ``Samples`` subject or several (``{stage: Samples}``), writes its
values as ``"<subject>/<metric>"`` and returns one table ``tables["summary"]`` with a row
per subject (plus figures where stated).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga import named, param
from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target
from quadriga.validators import in_range, one_of, positive_int
from quadriga_std.evaluators.distances import draws_label

__all__ = ["ESS", "ModeCoverage", "MomentError", "autocorrelation", "ess"]


def _subjects(subject: Any, who: str) -> dict[str, Samples]:
    subs = named(subject)
    for name, s in subs.items():
        if not isinstance(s, Samples):
            raise ConfigError(
                f"evaluator '{who}' scores Samples; subject '{name}' is a {type(s).__name__}.", key="inputs"
            )
    return subs


def _weights(s: Samples) -> torch.Tensor:
    """Normalised weights ``Tensor[n]`` float64 (uniform when ``log_weights`` is None)."""
    if s.log_weights is None:
        return torch.full((s.num_samples,), 1.0 / s.num_samples, dtype=torch.float64)
    lw = torch.as_tensor(s.log_weights, dtype=torch.float64)
    return (lw - torch.logsumexp(lw, 0)).exp()


def _finish(values: dict[str, float], rows: list[dict[str, Any]], **kw: Any) -> Metrics:
    return Metrics(values=values, tables={"summary": rows}, **kw)


@attrs.define(kw_only=True)
class MomentError(Evaluator):
    """Error of the sample mean and covariance against the reference's exact moments.

    Metrics per subject: ``mean_mse`` = (1/d) |xbar - mu|^2, ``cov_error`` = ||S - Sigma||_F
    (Frobenius; S the (weighted) sample covariance), and for subjects with ``chains``
    ``chain_mean_mse`` = the per-chain ``mean_mse`` averaged over chains.

    Shapes: subject ``x: Tensor[n, d]`` (``chains: Tensor[m, n / m, d]``, ``log_weights: Tensor[n]``
    optional); reference ``mean: Tensor[d]``, ``covariance: Tensor[d, d]``; every value is a float.
    Units: ``mean_mse`` and ``chain_mean_mse`` in units of x squared; ``cov_error`` in units of x
    squared (a Frobenius norm of covariances).

    Raises:
        ConfigError: the reference has no exact ``mean``/``covariance``, a subject is not ``Samples``,
            or dimensions differ.

    Source: none beyond standard estimators: the weighted mean sum_i w_i x_i and the weighted
    covariance with the unbiased normalisation 1 / (1 - sum_i w_i^2) (1 / (n - 1) for uniform weights).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compare each subject's moments with ``reference.mean`` (Tensor[d]) and ``.covariance``."""
        try:
            mu = torch.as_tensor(reference.mean, dtype=torch.float64)
            sigma = torch.as_tensor(reference.covariance, dtype=torch.float64)
        except (AttributeError, NotImplementedError, ValueError, TypeError) as exc:
            raise ConfigError(
                "moment-error needs a reference target with exact 'mean' and 'covariance' "
                f"({type(reference).__name__}: {exc}).",
                key="reference",
            ) from None
        values, rows = {}, []
        for name, s in _subjects(subject, "moment-error").items():
            x = torch.as_tensor(s.x, dtype=torch.float64)
            if x.shape[1] != mu.shape[0]:
                raise ConfigError(
                    f"subject '{name}' has dimension {x.shape[1]}, the reference {mu.shape[0]}.", key="inputs"
                )
            w = _weights(s)
            m = w @ x
            xc = x - m
            cov = (xc * w[:, None]).T @ xc / (1.0 - (w * w).sum()).clamp_min(1e-300)
            row = {
                "subject": name,
                "mean_mse": float(((m - mu) ** 2).mean()),
                "cov_error": float(torch.linalg.matrix_norm(cov - sigma)),
            }
            if s.chains is not None and s.log_weights is None:
                cm = torch.as_tensor(s.chains, dtype=torch.float64).mean(1)
                row["chain_mean_mse"] = float(((cm - mu) ** 2).mean(-1).mean())
            rows.append(row)
            values.update({f"{name}/{k}": v for k, v in row.items() if k != "subject"})
        return _finish(values, rows)


@attrs.define(kw_only=True)
class ModeCoverage(Evaluator):
    """Share of samples per mixture component (Bayes assignment) against the true weights.

    Metrics per subject: ``tv`` = (1/2) sum_k |f_k - w_k| (total variation between the
    assigned fractions f and the weights w), ``modes_visited`` = #{k: f_k >= min_fraction},
    ``fraction_<k>`` for each component, and for subjects with ``chains`` the mean number of
    modes visited per chain (``chain_modes_visited``). ``info["true_values"]`` holds each
    ``fraction_<k>``'s true value (the weight ``w_k``) and ``tv``'s (0), for reference lines.
    For 2-D targets, figure ``samples`` shows each subject over the density contours (one panel
    per subject).

    Shapes: subject ``x: Tensor[n, d]`` (``chains: Tensor[m, n / m, d]``, ``log_weights: Tensor[n]``
    optional); reference ``assign: Tensor[n, d] -> Tensor[n]`` and ``mixture_weights: Tensor[K]``;
    every value is a float.
    Units: ``tv`` and ``fraction_<k>`` are fractions (``tv`` in [0, 1]); ``modes_visited`` and
    ``chain_modes_visited`` are counts (the latter a mean over chains).

    Raises:
        ConfigError: the reference has no ``assign``/``mixture_weights`` (not a mixture), or a
            subject is not ``Samples``.

    Source: none beyond definitions: the total variation distance (1/2) sum_k |f_k - w_k| between
    discrete laws, with each point assigned by the Bayes rule argmax_k w_k N(x; mu_k, Sigma_k).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    metrics_doc: ClassVar[dict[str, str]] = {
        "tv": "total variation between the share of samples per mode and the mixture weights (0 to 1)",
        "modes_visited": "modes holding at least min_fraction of the samples (count)",
        "chain_modes_visited": "modes each chain visits, mean over chains (count)",
        "fraction_<k>": "share of samples assigned to mode k; the mixture weight is its true value",
    }
    min_fraction: float = param(
        0.01,
        doc="share of samples for a mode to count as visited (fraction)",
        validator=in_range(0, 1, high_open=True),
    )
    max_points_plotted: int = param(2000, doc="points drawn per panel", validator=positive_int)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Assign samples with ``reference.assign``; compare with ``reference.mixture_weights``."""
        if not (hasattr(reference, "assign") and hasattr(reference, "mixture_weights")):
            raise ConfigError(
                "mode-coverage needs a mixture reference target with 'assign' and "
                f"'mixture_weights' (e.g. gaussian-mixture), not {type(reference).__name__}.",
                key="reference",
            )
        wk = torch.as_tensor(reference.mixture_weights, dtype=torch.float64)
        K = wk.shape[0]
        subs = _subjects(subject, "mode-coverage")
        values, rows = {}, []
        for name, s in subs.items():
            x = torch.as_tensor(s.x, dtype=torch.float64)
            lab = reference.assign(x)
            frac = torch.zeros(K, dtype=torch.float64).index_add_(0, lab, _weights(s))
            row = {
                "subject": name,
                "tv": 0.5 * float((frac - wk).abs().sum()),
                "modes_visited": int((frac >= self.min_fraction).sum()),
            }
            if s.chains is not None:
                ch = torch.as_tensor(s.chains, dtype=torch.float64)
                per = reference.assign(ch.reshape(-1, ch.shape[-1])).reshape(ch.shape[:2])
                counts = torch.stack([torch.bincount(p, minlength=K) for p in per]).double() / ch.shape[1]
                row["chain_modes_visited"] = float((counts >= self.min_fraction).sum(-1).double().mean())
            row.update({f"fraction_{k}": float(frac[k]) for k in range(K)})
            rows.append(row)
            values.update({f"{name}/{k}": float(v) for k, v in row.items() if k != "subject"})
        figures = {}
        if int(reference.dim) == 2:
            figures["samples"] = self._figure(subs, reference)
        true_values = {f"fraction_{k}": float(wk[k]) for k in range(K)} | {"tv": 0.0}
        return _finish(values, rows, figures=figures, info={"true_values": true_values})

    def _figure(self, subs: dict[str, Samples], reference: Any) -> Any:
        from matplotlib.figure import Figure

        mu = torch.as_tensor(reference.component_means, dtype=torch.float64)
        sd = float(torch.as_tensor(reference.component_covariances).diagonal(dim1=-2, dim2=-1).max().sqrt())
        lo, hi = mu.min(0).values - 4 * sd, mu.max(0).values + 4 * sd
        gx, gy = (
            torch.linspace(float(lo[0]), float(hi[0]), 150),
            torch.linspace(float(lo[1]), float(hi[1]), 150),
        )
        X, Y = torch.meshgrid(gx, gy, indexing="xy")
        Z = reference.log_prob(torch.stack([X.reshape(-1), Y.reshape(-1)], -1).double()).reshape(X.shape)
        fig = Figure(figsize=(3.2 * len(subs), 3.4), layout="constrained")
        fig.suptitle("samples over the target density (grey contours)", fontsize=10)
        axes = fig.subplots(1, len(subs), squeeze=False)[0]
        for ax, (name, s) in zip(axes, subs.items(), strict=True):
            ax.contour(X.numpy(), Y.numpy(), Z.exp().numpy(), levels=8, colors="0.6", linewidths=0.7)
            x = torch.as_tensor(s.x, dtype=torch.float64)
            step = max(1, x.shape[0] // self.max_points_plotted)
            ax.scatter(x[::step, 0].numpy(), x[::step, 1].numpy(), s=3, alpha=0.5)
            shown = f"\n1 draw in {step} plotted" if step > 1 else ""
            ax.set_title(f"{name}\n{draws_label(s)}{shown}", fontsize=7.5)
            ax.set_xlabel("x1")
            ax.set_ylabel("x2")
            ax.set_xlim(float(lo[0]), float(hi[0]))
            ax.set_ylim(float(lo[1]), float(hi[1]))
            ax.set_aspect("equal")
        return fig


def autocorrelation(x: np.ndarray) -> np.ndarray:
    """Biased autocovariance of each chain via FFT: ``[m, n, ...] -> [m, n, ...]`` (lag along axis 1)."""
    n = x.shape[1]
    xc = x - x.mean(1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(xc, n=size, axis=1)
    return np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n


def ess(
    chains: np.ndarray, *, split: bool = True, rank_normalize: bool = False, tail: bool = False
) -> np.ndarray:
    """Effective sample size of each coordinate from m chains (arviz, through :func:`quadriga.stats.ess`).

    Args:
        chains: ``[m, n, d]`` draws (m chains of n draws); ``[m, n]`` is one coordinate.
        split: kept for compatibility; arviz always splits chains in two halves.
        rank_normalize: rank-normalised ("bulk") ESS; otherwise the ESS of the mean on raw values.
        tail: the tail ESS (minimum of the 5% and 95% quantile ESS) instead.

    Returns:
        ``ndarray[d]``. A chain that never moves counts one draw (arviz alone would count all
        its draws: zero variance reads as independence); ESS may exceed m n for antithetic chains.

    Raises:
        ConfigError: fewer than 4 draws per chain, non-finite draws.

    Source: Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, "Rank-normalization, folding,
    and localization", eqs. 9-11 and sec. 3.2-3.3 (arviz ``ess``); Geyer 1992, sec. 3.3.
    """
    from quadriga.stats import ess as arviz_ess

    method = "tail" if tail else ("bulk" if rank_normalize else "mean")
    return arviz_ess(np.asarray(chains, dtype=np.float64), method=method)["ess"]


@attrs.define(kw_only=True)
class ESS(Evaluator):
    """Effective sample size and integrated autocorrelation time per coordinate.

    Uses ``subject.chains`` (``[m, n, d]``) when present, else treats ``x`` as one chain.
    Metrics per subject: ``ess_min``, ``ess_median``, ``ess_mean`` (draws), ``iact_max`` =
    N / ess_min (transitions), ``ess_tail_min`` (tail ESS), ``stuck_chains`` (chains whose draws never
    change: each counts one draw, and ``info["notes"]`` says so), ``rhat_max`` (rank-normalised
    split R-hat, several moving chains only; a note above 1.01), and when ``info`` has them
    ``ess_min_per_second`` and
    ``ess_min_per_1k_score_evals``. ``info["ess"][subject]`` lists the per-coordinate ESS.
    Computed by arviz through :func:`quadriga.stats.ess` and :func:`quadriga.stats.rhat`.

    Shapes: subject ``chains: Tensor[m, n, d]`` (or ``x: Tensor[n, d]`` as one chain); every value
    is a float; ``info["ess"][subject]`` is a list of d floats.
    Units: ESS in draws (a count; above m n only for antithetic chains, and at most
    m n log10(m n)); ``iact_max`` in transitions per independent
    draw; ``ess_min_per_second`` per second of wall time; ``ess_min_per_1k_score_evals`` per
    1000 score evaluations.

    Raises:
        ConfigError: a subject that is not ``Samples``, or one with fewer than 8 draws per chain.

    Source: Geyer 1992, "Practical Markov chain Monte Carlo", Statistical Science 7(4) (initial
    monotone sequence estimator); Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021,
    "Rank-normalization, folding, and localization: an improved R-hat", Bayesian Analysis, sec. 3
    (split chains, rank normalisation, multi-chain ESS).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Samples,),
        "reference": (Target, Samples),
    }
    method: str = param(
        "bulk",
        doc="'bulk' (rank-normalised split chains) or 'basic' (split chains, raw values)",
        validator=one_of(("bulk", "basic")),
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compute ESS for each subject (the reference is not used)."""
        values, rows, per, notes = {}, [], {}, []
        for name, s in _subjects(subject, "ess").items():
            ch = s.chains if s.chains is not None else s.x[None]
            ch = torch.as_tensor(ch, dtype=torch.float64).numpy()
            if ch.shape[1] < 8:
                raise ConfigError(
                    f"subject '{name}' has {ch.shape[1]} draws per chain; ESS needs at least 8.", key="inputs"
                )
            from quadriga import stats

            diag = stats.ess(ch, method="bulk" if self.method == "bulk" else "mean")
            e = diag["ess"]
            tail = stats.ess(ch, method="tail")["ess"]
            total = ch.shape[0] * ch.shape[1]
            row = {
                "subject": name,
                "ess_min": float(np.min(e)),
                "ess_median": float(np.median(e)),
                "ess_mean": float(np.mean(e)),
                "ess_tail_min": float(np.min(tail)),
                "iact_max": total / float(np.min(e)),
                "stuck_chains": float(diag["stuck_chains"]),
            }
            if ch.shape[0] > 1 and diag["stuck_chains"] == 0:
                with warnings.catch_warnings():  # said once below, naming the subject
                    warnings.simplefilter("ignore", UserWarning)
                    rhat = stats.rhat(ch)
                row["rhat_max"] = float(np.max(rhat["rhat"]))
                if rhat["note"]:
                    notes.append(f"{name}: {rhat['note']}")
                    warnings.warn(f"subject {name}: {rhat['note']}", UserWarning, stacklevel=2)
            if diag["note"]:
                notes.append(f"{name}: {diag['note']}")
            if s.info.get("seconds"):
                row["ess_min_per_second"] = row["ess_min"] / float(s.info["seconds"])
            if s.info.get("score_evals"):
                row["ess_min_per_1k_score_evals"] = 1000.0 * row["ess_min"] / float(s.info["score_evals"])
            rows.append(row)
            per[name] = e.tolist()
            values.update({f"{name}/{k}": v for k, v in row.items() if k != "subject"})
        return _finish(values, rows, info={"ess": per, **({"notes": notes} if notes else {})})
