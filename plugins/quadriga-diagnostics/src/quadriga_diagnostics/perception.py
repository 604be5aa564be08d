"""``diag-perception-lipschitz``: the Lipschitz constant of deterministic restorers along the
perception trade-off, on sklearn's 8x8 digits.

Prediction (Ohayon, Michaeli & Elad 2024, "The perception-robustness tradeoff in deterministic
image restoration", ICML, main theorem): the better a deterministic predictor's perceptual quality
(distance between the law of its outputs and the law of the images) and its consistency with the
measurements, the larger its Lipschitz constant must be; it tends to infinity as both reach
perfection. Along the trade-off the Lipschitz constant therefore rises as the perception index falls.

Test bed: images ``x`` (64 pixels in [0, 1]), measurements ``y = D x + noise_std z`` with ``D``
the 2x2 average pooling (2x super-resolution, 16 numbers; ``noise_std > 0`` adds denoising).
The restorers are linear (one affine layer, ``x_hat = mu + A (y - D mu)``), fitted in closed form
on a training split under a Gaussian model of the digits: the MMSE (Wiener) restorer, the
perception-optimal restorer in its range (optimal transport of its outputs to the images' law),
and their interpolations, which trace the distortion-perception frontier in the Gaussian case
(:func:`linear_frontier`). On held-out digits it measures

* perception index: the Fréchet (Gaussian W2^2) distance between outputs and images (pixel space);
* consistency: the RMS of ``D x_hat - y`` (pixel units);
* Lipschitz constant: the spectral norm of the Jacobian ``d x_hat / d y = A`` (exact: the map is affine).

Per replicate (a random split and noise draw) the Spearman rank correlation between the Lipschitz
constant and the perception index over the frontier positions is the measured number; the
prediction is a strongly negative correlation (the notes' rule: the constant increases along the
frontier, rank correlation beyond 0.7 in size).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import in_range, int_at_least

__all__ = [
    "SUBJECT",
    "PerceptionLipschitz",
    "frechet_distance",
    "frontier_sweep",
    "linear_frontier",
    "load_digits_pairs",
    "spearman",
    "sweep_summary",
]


#: the ``subject`` column of the per-replicate table: the evaluator has no subject input and names
#: itself (its registered name), so a claim's ``Rows`` reads the rows as arm "diag-perception-lipschitz"
SUBJECT = "diag-perception-lipschitz"


def load_digits_pairs(noise_std: float, rng: Any, test_fraction: float = 0.3) -> dict[str, Any]:
    """sklearn digits scaled to [0, 1], split, with 2x2-average-pooled noisy measurements.

    Shapes: ``x_train (n, 64)``, ``y_train (n, 16)``, ``x_test``, ``y_test`` float64 numpy arrays;
    ``pool (16, 64)`` the degradation matrix. Units: pixel intensity in [0, 1].
    Raises: ConfigError: ``noise_std < 0``.
    Source: sklearn ``load_digits`` (UCI optical digits, 8x8); average pooling as the degradation.
    """
    from sklearn.datasets import load_digits

    if noise_std < 0:
        raise ConfigError(f"noise_std must be >= 0, got {noise_std}.", key="noise_std")
    x = load_digits().data / 16.0
    pool = np.zeros((16, 64))
    for i in range(4):
        for j in range(4):
            for di in range(2):
                for dj in range(2):
                    pool[4 * i + j, 8 * (2 * i + di) + 2 * j + dj] = 0.25
    perm = rng.permutation(len(x))
    n_test = round(test_fraction * len(x))
    x = x[perm]
    y = x @ pool.T + noise_std * rng.normal(size=(len(x), 16))
    return {
        "x_train": x[n_test:],
        "y_train": y[n_test:],
        "x_test": x[:n_test],
        "y_test": y[:n_test],
        "pool": pool,
    }


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance of Gaussians fitted to two samples: ``|dm|^2 + tr(S_a + S_b - 2 (S_a S_b)^{1/2})``.

    Shapes: ``a (n, d)``, ``b (m, d)``; returns a float. Units: squared units of x.
    Raises: nothing (a tiny negative value from rounding is clipped to 0).
    Source: Dowson & Landau 1982; the FID of Heusel et al. 2017 (eq. 6) without the feature network.
    """
    ma, mb = a.mean(0), b.mean(0)
    sa, sb = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    # tr (S_a S_b)^{1/2} = sum sqrt(eig(S_a^{1/2} S_b S_a^{1/2})), symmetric PSD (eigh, no sqrtm)
    ea, va = np.linalg.eigh(sa)
    root_a = (va * np.sqrt(np.clip(ea, 0.0, None))) @ va.T
    cross = np.sqrt(np.clip(np.linalg.eigvalsh(root_a @ sb @ root_a), 0.0, None)).sum()
    value = float(((ma - mb) ** 2).sum() + np.trace(sa) + np.trace(sb) - 2.0 * cross)
    return max(value, 0.0)


def _sqrtm_psd(m: np.ndarray) -> np.ndarray:
    """Symmetric square root of a positive semi-definite matrix (``eigh``, negative rounding clipped)."""
    e, v = np.linalg.eigh(0.5 * (m + m.T))
    return (v * np.sqrt(np.clip(e, 0.0, None))) @ v.T


def linear_frontier(data: dict[str, Any], noise_std: float, ridge: float = 1e-4) -> dict[str, np.ndarray]:
    """The MMSE linear restorer and the perception-optimal one in its range, from the training split.

    With ``mu``, ``S = cov(x_train) + ridge I`` and ``S_y = D S D' + noise_std^2 I``: the linear MMSE
    (Wiener) restorer ``A = S D' S_y^{-1}``, ``x* = mu + A (y - D mu)``; its outputs have covariance
    ``C* = A S_y A'`` of rank 16 in the range ``Q`` (orthonormal, 64 x 16) of ``A``. The perception-
    optimal restorer in that range maps ``x*`` by the Gaussian optimal-transport map from
    ``N(0, Q'C*Q)`` to the images' ``N(0, Q'SQ)``: ``T = C^{-1/2} (C^{1/2} S_Q C^{1/2})^{1/2} C^{-1/2}``,
    ``A_P = Q T Q' A``. The trade-off is traced by ``A_a = (1 - a) A + a A_P``, a in [0, 1].

    Shapes: returns ``mu (64,)``, ``mmse (64, 16)``, ``perceptual (64, 16)``. Units: pixels per pixel.
    Raises: numpy's LinAlgError for a singular measurement covariance (ridge 0 and no noise).
    Source: Freirich, Michaeli & Meir 2021, "A theory of the distortion-perception tradeoff in
    Wasserstein space" (NeurIPS), Theorem 4 (Gaussian case: the optimal estimators interpolate
    linearly between the MMSE estimator and its optimal transport to the data law); Dowson &
    Landau 1982 for the Gaussian W2 map.
    """
    x, pool = data["x_train"], data["pool"]
    mu = x.mean(0)
    cov = np.cov(x, rowvar=False) + ridge * np.eye(64)
    cov_y = pool @ cov @ pool.T + noise_std**2 * np.eye(16)
    mmse = cov @ pool.T @ np.linalg.inv(cov_y)
    out_cov = mmse @ cov_y @ mmse.T
    q, _ = np.linalg.qr(mmse)
    c, s_q = q.T @ out_cov @ q, q.T @ cov @ q
    c_half = _sqrtm_psd(c)
    c_inv_half = np.linalg.inv(c_half)
    t = c_inv_half @ _sqrtm_psd(c_half @ s_q @ c_half) @ c_inv_half
    return {"mu": mu, "mmse": mmse, "perceptual": q @ t @ q.T @ mmse}


def frontier_sweep(
    positions: list[float], *, noise_std: float, rng: Any, ridge: float = 1e-4
) -> list[dict[str, float]]:
    """Restorers ``A_a`` at every position ``a`` of the trade-off, measured on held-out digits.

    One random split (``rng``) and measurement-noise draw per call. Per position: ``position``,
    ``perception`` (Fréchet distance between outputs and held-out images), ``consistency`` (RMS of
    ``D x_hat - y``), ``distortion`` (RMS of ``x_hat - x``), ``lipschitz`` (spectral norm of the
    Jacobian ``A_a``, exact for a linear restorer).

    Shapes: one dict of floats per position. Units: as in the module docstring.
    Raises: ConfigError: a position outside [0, 1]. Source: :func:`linear_frontier`.
    """
    if any(not 0.0 <= float(a) <= 1.0 for a in positions):
        raise ConfigError(f"positions must lie in [0, 1], got {positions}.", key="positions")
    data = load_digits_pairs(noise_std, rng)
    f = linear_frontier(data, noise_std, ridge)
    rows = []
    for a in positions:
        jac = (1.0 - float(a)) * f["mmse"] + float(a) * f["perceptual"]
        out = f["mu"] + (data["y_test"] - data["pool"] @ f["mu"]) @ jac.T
        rows.append(
            {
                "position": float(a),
                "perception": frechet_distance(out, data["x_test"]),
                "consistency": float(np.sqrt(np.mean((out @ data["pool"].T - data["y_test"]) ** 2))),
                "distortion": float(np.sqrt(np.mean((out - data["x_test"]) ** 2))),
                "lipschitz": float(np.linalg.norm(jac, 2)),
            }
        )
    return rows


def spearman(a: Any, b: Any) -> float:
    """Spearman rank correlation (``scipy.stats.spearmanr``); NaN for a constant input.

    Shapes: two ``(k,)`` sequences; returns a float in [-1, 1]. Units: dimensionless.
    Raises: nothing. Source: Spearman 1904.
    """
    from scipy.stats import spearmanr

    if np.ptp(np.asarray(a, dtype=float)) == 0 or np.ptp(np.asarray(b, dtype=float)) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


@attrs.define(kw_only=True)
class PerceptionLipschitz(Evaluator):
    """Lipschitz constant against perception index of digit restorers along the perception trade-off:
    Spearman correlation per replicate (predicted strongly negative), with a t interval over replicates.

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``spearman`` (mean over replicates of the rank correlation between the
    Lipschitz constant and the perception index), ``spearman_low`` / ``spearman_high`` (95 % t
    interval over replicates), ``spearman_position_lipschitz`` (mean rank correlation of the
    frontier position with the Lipschitz constant), ``perception_drop`` (largest, over
    replicates, of ``perception(last position) / perception(MMSE)``: below 1 when the sweep moves
    along the trade-off), ``consistency_ratio`` (largest, over replicates, of the same ratio of the
    consistency RMS: below 1 when consistency improves too, as it does with noisy measurements),
    ``lipschitz/a=<a>``, ``perception/a=<a>``, ``consistency/a=<a>``, ``distortion/a=<a>`` (means
    over replicates); table ``sweep`` (replicate, position and the
    measured numbers); table ``replicates`` (one row per replicate: ``subject`` = :data:`SUBJECT`,
    ``replicate`` its index, ``spearman`` its rank correlation, whose mean over the rows is
    ``spearman``, ``spearman_position_lipschitz``, ``perception_ratio`` and ``consistency_ratio``,
    the last position's perception index and consistency RMS over the MMSE restorer's).

    Shapes:
        ``positions``: at least 3 increasing numbers in [0, 1]; every value a float.

    Units:
        perception index in squared pixel units (Fréchet distance); consistency and distortion RMS
        in pixel units; Lipschitz constants in output pixels per input pixel.

    Raises:
        ConfigError: fewer than 3, unsorted or out-of-range positions (at build time).

    Source: Ohayon, Michaeli & Elad 2024, "The perception-robustness tradeoff in deterministic
    image restoration", ICML, main theorem (Lipschitz lower bound growing as perception and
    consistency improve), on their 2x super-resolution setting (noisy and noiseless); the
    Gaussian frontier of Freirich, Michaeli & Meir 2021 (NeurIPS), Theorem 4.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"positions": [0.0, 0.5, 1.0], "num_replicates": 2}

    positions: list[float] = param(
        factory=lambda: [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        doc="frontier positions a in [0, 1], increasing, >= 3 (0: MMSE restorer, 1: perception-optimal)",
        validator=attrs.validators.instance_of((list, tuple)),
    )
    noise_std: float = param(
        0.0,
        doc="measurement noise std in pixel units (0: noiseless 2x super-resolution)",
        validator=in_range(0.0, 1.0),
    )
    ridge: float = param(
        1e-4,
        doc="added to the digits' covariance (squared pixel units)",
        validator=in_range(0.0, 1.0, low_open=True),
    )
    num_replicates: int = param(
        10, doc="independent splits and noise draws (the replicates)", validator=int_at_least(2)
    )

    def __attrs_post_init__(self) -> None:
        """Refuse short, unsorted or out-of-range positions when the component is built (ConfigError)."""
        a = [float(v) for v in self.positions]
        if len(a) < 3 or a != sorted(set(a)) or a[0] < 0 or a[-1] > 1:
            raise ConfigError(
                f"positions needs at least 3 increasing values in [0, 1], got {a}.", key="positions"
            )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Sweep the frontier for every replicate and correlate; see the class docstring."""
        from quadriga import stats
        from quadriga.seeding import child_generator, numpy_rng

        del subject, reference
        rows = []
        for r in range(self.num_replicates):
            rng = numpy_rng(child_generator(generator, f"replicate/{r}"))
            for row in frontier_sweep(
                list(self.positions), noise_std=self.noise_std, rng=rng, ridge=self.ridge
            ):
                rows.append({"replicate": r, **row})
        summary = sweep_summary(rows)
        fit = stats.interval(np.asarray(summary["per_replicate"]), "mean")
        values = {
            "spearman": float(fit.estimate),
            "spearman_low": float(fit.low),
            "spearman_high": float(fit.high),
            **summary["values"],
        }
        per_replicate = [{"subject": SUBJECT, **r} for r in summary["replicate_rows"]]
        return Metrics(values=values, tables={"sweep": rows, "replicates": per_replicate})


def sweep_summary(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Per-replicate Spearman correlations and the means per position (see :class:`PerceptionLipschitz`).

    Shapes: ``per_replicate`` a list (one per replicate); ``values`` a dict of floats;
    ``replicate_rows`` one dict per replicate (``replicate``, ``spearman``,
    ``spearman_position_lipschitz``, ``perception_ratio``, ``consistency_ratio``).
    Units: as in the class. Raises: nothing. Source: the module docstring.
    """
    reps = sorted({int(r["replicate"]) for r in rows})
    per_rep, per_rep_a, drops, cons = [], [], [], []
    for k in reps:
        sub = [r for r in rows if int(r["replicate"]) == k]
        per_rep.append(spearman([r["lipschitz"] for r in sub], [r["perception"] for r in sub]))
        per_rep_a.append(spearman([r["position"] for r in sub], [r["lipschitz"] for r in sub]))
        drops.append(sub[-1]["perception"] / sub[0]["perception"])
        cons.append(sub[-1]["consistency"] / max(sub[0]["consistency"], 1e-300))
    values: dict[str, float] = {
        "spearman_position_lipschitz": float(np.mean(per_rep_a)),
        "perception_drop": float(max(drops)),
        "consistency_ratio": float(max(cons)),
    }
    for a in sorted({r["position"] for r in rows}):
        sub = [r for r in rows if r["position"] == a]
        for key in ("lipschitz", "perception", "consistency", "distortion"):
            values[f"{key}/a={a:g}"] = float(np.mean([r[key] for r in sub]))
    replicate_rows = [
        {
            "replicate": k,
            "spearman": per_rep[i],
            "spearman_position_lipschitz": per_rep_a[i],
            "perception_ratio": float(drops[i]),
            "consistency_ratio": float(cons[i]),
        }
        for i, k in enumerate(reps)
    ]
    return {"per_replicate": per_rep, "values": values, "replicate_rows": replicate_rows}
