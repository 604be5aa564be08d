"""``diag-hier-labels``: samples to 90 % test accuracy on depth-``r`` composed sparse parities for a
residual MLP trained layerwise on granular (intermediate) labels against the same network trained
end to end on the top label only.

Row 000:9 (the seed abstract; authors and equation numbers not in our notes): with a label
hierarchy ``L_1 ⊆ L_2 ⊆ ... ⊆ L_r``, labels in ``L_1`` simple functions of the input and those in
``L_i`` simple functions of labels in ``L_{i-1}``, layerwise SGD on residual networks learns the
model efficiently; a teacher's granular labels reveal such a hierarchy.

Test bed: ``x`` uniform on ``{-1, +1}^d``; a binary tree over ``2^r`` distinct input coordinates
(drawn per replicate); level ``0`` labels are those coordinates, a level-``l`` label is the product
of its two children at level ``l - 1`` (``2^{r-l}`` labels per level); the top label (level ``r``)
is the parity of ``2^r`` bits, uncorrelated with every set of fewer than ``2^r`` coordinates.

Network (both arms): residual stream ``s_0 = [x, 0]`` (width ``stream``), blocks
``s_l = s_{l-1} + B_l ReLU(A_l s_{l-1} + c_l)`` (hidden width ``block_width``), linear heads per block.

- ``layerwise``: stage ``l`` trains block ``l`` and head ``l`` (earlier blocks frozen) on all
  labels of levels ``1..l`` (the nested label sets ``L_l``), logistic loss; the top label is read
  from head ``r``.
- ``end-to-end``: all blocks and head ``r`` trained jointly on the top label only.

Both arms get the same optimiser (Adam, ``learning_rate``), batch and total number of steps (``r`` stages of
``steps`` for layerwise, ``r * steps`` for end to end) and the same samples (nested prefixes of one
stream); samples to 90 % = the training size at which the top-label test accuracy first reaches
0.9, interpolated in ``log n`` on a geometric grid; a run that misses 0.9 at the largest grid size
is censored there (so a ratio end-to-end / layerwise is then a lower bound) and, to save the
end-to-end arm's cost, is not run at the smaller sizes (accuracy at a fixed step budget taken as
non-decreasing in ``n``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = [
    "ARMS",
    "HierarchicalLabels",
    "composed_parity_labels",
    "samples_to_accuracy",
    "train_accuracy",
]

#: the arms, in report order
ARMS = ("layerwise", "end-to-end")


def composed_parity_labels(x: np.ndarray, leaves: np.ndarray) -> list[np.ndarray]:
    """Labels of every level of the binary parity tree over ``x[:, leaves]``.

    Shapes: ``x`` ``(n, d)`` in ``{-1, +1}``; ``leaves`` ``(2^r,)`` distinct column indices;
    returns ``[level 1, ..., level r]``, level ``l`` of shape ``(n, 2^{r-l})`` in ``{-1, +1}``
    (level ``r`` is ``(n, 1)``, the parity of all leaves).
    Raises: ValueError when ``len(leaves)`` is not a power of two >= 2.
    Source: the hierarchical label model of row 000:9 (each level a simple function of the last).
    """
    m = len(leaves)
    if m < 2 or m & (m - 1):
        raise ValueError(f"leaves must have a power-of-two length >= 2, got {m}.")
    level = x[:, leaves]
    out = []
    while level.shape[1] > 1:
        level = level[:, 0::2] * level[:, 1::2]
        out.append(level)
    return out


def samples_to_accuracy(ns: np.ndarray, accuracies: np.ndarray, target: float) -> float:
    """Training size at which the accuracy first reaches ``target`` (log-linear interpolation
    between grid points; ``nan`` when never): :func:`quadriga_diagnostics.hier_poly.samples_to_error`
    on the error ``1 - accuracy``.

    Shapes: ``(k,)`` each. Units: samples. Raises: nothing.
    """
    from quadriga_diagnostics.hier_poly import samples_to_error

    return samples_to_error(ns, 1.0 - np.asarray(accuracies), 1.0 - target)


def train_accuracy(
    arm: str,
    x: np.ndarray,
    levels: list[np.ndarray],
    x_test: np.ndarray,
    top_test: np.ndarray,
    *,
    stream: int,
    block_width: int,
    steps: int,
    batch: int,
    learning_rate: float,
    seed: int,
) -> float:
    """Train one arm on ``(x, levels)`` and return the top-label test accuracy.

    Shapes: ``x`` ``(n, d)``; ``levels`` as :func:`composed_parity_labels` (length ``r``);
    ``x_test`` ``(m, d)``; ``top_test`` ``(m,)`` in ``{-1, +1}``. Units: accuracy in [0, 1].
    Raises: ValueError for an unknown arm. Source: module docstring (layerwise SGD on residual
    networks, row 000:9).
    """
    import torch
    from torch import nn

    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; use one of {ARMS}.")
    torch.manual_seed(seed)
    r, d = len(levels), x.shape[1]
    blocks = nn.ModuleList(
        nn.Sequential(nn.Linear(stream, block_width), nn.ReLU(), nn.Linear(block_width, stream))
        for _ in range(r)
    )
    widths = np.cumsum([lv.shape[1] for lv in levels])
    heads = nn.ModuleList(nn.Linear(stream, int(w)) for w in widths)
    xt = torch.zeros(len(x), stream)
    xt[:, :d] = torch.as_tensor(x, dtype=torch.float32)
    targets = torch.as_tensor((np.concatenate(levels, 1) + 1) / 2, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    loss_fn = nn.BCEWithLogitsLoss()

    def run(s: torch.Tensor, upto: int) -> torch.Tensor:
        for block in blocks[:upto]:
            s = s + block(s)
        return s

    def fit(params: list[Any], inputs: torch.Tensor, first: int, upto: int, cols: slice, total: int) -> None:
        """Adam on blocks ``first..upto`` (from ``inputs``, the stream before block ``first``)."""
        opt = torch.optim.Adam(params, lr=learning_rate)
        for _ in range(total):
            idx = torch.randint(len(inputs), (min(batch, len(inputs)),), generator=gen)
            s = inputs[idx]
            for block in blocks[first:upto]:
                s = s + block(s)
            loss = loss_fn(heads[upto - 1](s)[:, cols], targets[idx][:, cols])
            opt.zero_grad()
            loss.backward()
            opt.step()

    if arm == "layerwise":
        for lvl in range(1, r + 1):
            with torch.no_grad():  # earlier blocks are frozen: their stream is computed once
                frozen = run(xt, lvl - 1)
            params = [*blocks[lvl - 1].parameters(), *heads[lvl - 1].parameters()]
            fit(params, frozen, lvl - 1, lvl, slice(0, int(widths[lvl - 1])), steps)
    else:
        top = int(widths[-1])
        fit([*blocks.parameters(), *heads[-1].parameters()], xt, 0, r, slice(top - 1, top), r * steps)
    with torch.no_grad():
        st = torch.zeros(len(x_test), stream)
        st[:, :d] = torch.as_tensor(x_test, dtype=torch.float32)
        logit = heads[-1](run(st, r))[:, -1].numpy()
    return float(np.mean(np.where(logit > 0, 1.0, -1.0) == top_test))


def _curve(
    arm: str,
    ns: np.ndarray,
    x: np.ndarray,
    levels: list[np.ndarray],
    xt: np.ndarray,
    top: np.ndarray,
    **kw: Any,
) -> tuple[float, dict[int, float]]:
    """Samples to 90 % and the accuracies tried (``{n: accuracy}``).

    The largest size is tried first: a miss there is returned as ``nan`` without the smaller
    sizes (accuracy at a fixed step budget is taken as non-decreasing in ``n``, so they would miss
    too); otherwise the grid is walked upwards to the first size at or above 0.9.
    """

    def acc(n: int) -> float:
        return train_accuracy(arm, x[:n], [lv[:n] for lv in levels], xt, top, **kw)

    tried = {int(ns[-1]): acc(int(ns[-1]))}
    if tried[int(ns[-1])] < 0.9:
        return float("nan"), tried
    for n in ns[:-1]:
        tried[int(n)] = acc(int(n))
        if tried[int(n)] >= 0.9:
            break
    grid = np.array(sorted(tried))
    return samples_to_accuracy(grid, np.array([tried[n] for n in grid]), 0.9), tried


@attrs.define(kw_only=True)
class HierarchicalLabels(Evaluator):
    """Samples to 90 % top-label test accuracy on composed sparse parities of depth ``r``, for a
    residual MLP trained layerwise on the granular labels and end to end on the top label.

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): per depth ``r``: ``n90/<arm>/<r>`` (geometric mean over replicates of
    the samples to 90 %, censored at the largest grid size), ``reached/<arm>/<r>`` (share of
    replicates reaching 90 %), ``log_ratio/<r>`` (mean over paired replicates of
    ``log(n90 end-to-end / n90 layerwise)``; predicted ``>= log 5``) with ``log_ratio_low/<r>``,
    ``log_ratio_high/<r>`` (95 % t interval, :func:`quadriga.stats.interval`).

    Shapes:
        scalars.

    Units:
        samples; log ratios dimensionless.

    Raises:
        ConfigError: a depth below 1 or with more leaves than input bits (at build time).

    Source: row 000:9's abstract (hierarchical label sets ``L_1 ⊆ ... ⊆ L_r``, layerwise SGD on
    residual networks; no equation numbers available to us); the composed-parity bed and the 5x
    rule are the research notes' (Appendix C).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {
        "depths": [2],
        "dim": 8,
        "n_grid": [64, 128],
        "steps": 20,
        "replicates": 2,
    }

    depths: list[int] = param(factory=lambda: [2, 3], doc="tree depths r (2^r leaves)")
    dim: int = param(30, doc="input bits d", validator=int_at_least(2))
    n_grid: list[int] = param(
        factory=lambda: [128 * 2**j for j in range(7)], doc="training sizes tried (geometric grid)"
    )
    n_test: int = param(2000, doc="test points", validator=int_at_least(10))
    stream: int = param(64, doc="residual stream width (>= dim)", validator=int_at_least(2))
    block_width: int = param(128, doc="hidden units per block", validator=int_at_least(2))
    steps: int = param(
        300, doc="Adam steps per layerwise stage (end to end: r times this)", validator=int_at_least(1)
    )
    batch: int = param(128, doc="minibatch size", validator=int_at_least(1))
    learning_rate: float = param(3e-3, doc="Adam learning rate (both arms)", validator=positive)
    replicates: int = param(
        3, doc="paired replicates per depth (>= 2 for an interval)", validator=int_at_least(2)
    )

    def __attrs_post_init__(self) -> None:
        """Refuse depths whose trees do not fit the input, and a stream narrower than the input."""
        from quadriga.errors import ConfigError

        if any(int(r) < 1 or 2 ** int(r) > self.dim for r in self.depths):
            raise ConfigError(f"every depth r needs 1 <= r and 2^r <= dim ({self.dim}).", key="depths")
        if self.stream < self.dim:
            raise ConfigError(f"stream ({self.stream}) must be >= dim ({self.dim}).", key="stream")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run every depth on paired seeds; see the class docstring."""
        from quadriga import stats
        from quadriga.seeding import derive_seed, numpy_rng

        del subject, reference
        base = int(numpy_rng(generator).integers(2**31))
        values: dict[str, float] = {}
        for r in (int(r) for r in self.depths):
            n90: dict[str, list[float]] = {a: [] for a in ARMS}
            for rep in range(self.replicates):
                out = hier_label_counts(
                    r,
                    dim=self.dim,
                    n_grid=[int(n) for n in self.n_grid],
                    n_test=self.n_test,
                    seed=derive_seed(base, f"hier-labels/{r}/{rep}"),
                    stream=self.stream,
                    block_width=self.block_width,
                    steps=self.steps,
                    batch=self.batch,
                    learning_rate=self.learning_rate,
                )
                for a in ARMS:
                    n90[a].append(out["n90"][a])
            for a in ARMS:
                arr = np.array(n90[a])
                values[f"reached/{a}/{r}"] = float(np.mean(np.isfinite(arr)))
                cens = np.where(np.isfinite(arr), arr, max(self.n_grid))
                values[f"n90/{a}/{r}"] = float(np.exp(np.mean(np.log(cens))))
                n90[a] = list(cens)
            ci = stats.interval(np.log(n90["end-to-end"]) - np.log(n90["layerwise"]), "mean")
            values[f"log_ratio/{r}"], values[f"log_ratio_low/{r}"] = ci.estimate, ci.low
            values[f"log_ratio_high/{r}"] = ci.high
        return Metrics(values=values)


def hier_label_counts(
    r: int, *, dim: int, n_grid: list[int], n_test: int, seed: int, **train: Any
) -> dict[str, Any]:
    """One paired replicate at depth ``r``: each arm's samples to 90 % (``nan`` when the largest
    size misses) and the accuracies it tried (see :func:`_curve`).

    Returns ``{"n90": {arm: float}, "accuracy": {arm: {n: float}}}``. Units: samples; accuracy.
    Raises: nothing. Source: module docstring.
    """
    rng = np.random.default_rng(seed)
    n_max = max(n_grid)
    leaves = rng.choice(dim, 2**r, replace=False)
    x = rng.choice([-1.0, 1.0], (n_max, dim))
    x_test = rng.choice([-1.0, 1.0], (n_test, dim))
    levels = composed_parity_labels(x, leaves)
    top_test = composed_parity_labels(x_test, leaves)[-1][:, 0]
    ns = np.array(sorted(n_grid))
    out: dict[str, Any] = {"n90": {}, "accuracy": {}}
    for arm in ARMS:
        out["n90"][arm], out["accuracy"][arm] = _curve(
            arm, ns, x, levels, x_test, top_test, seed=seed, **train
        )
    return out
