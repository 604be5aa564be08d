"""The ``loss-distribution`` evaluator: per-sample train and test losses of fitted MLPs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.stage_names import replicate_base, replicate_index
from quadriga.validators import non_negative, probabilities
from quadriga_feasible_learning.feasible import CLASSIFICATION, loss_summary, sample_losses
from quadriga_feasible_learning.learners import prepare_arrays

__all__ = ["LossDistribution", "per_sample_losses"]


def per_sample_losses(fitted: Fitted, task: Any, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample losses and correctness (or squared errors) of a fitted model on one split.

    Regression targets are standardized with the train split's mean and scale, as in training.

    Shapes:
        returns ``losses`` ``ndarray[n]`` and ``hits`` ``ndarray[n]`` (1.0 for a correct class;
        for regression the squared error in original target units).

    Units: nats or squared standardized target units (``losses``).

    Raises:
        ConfigError: a subject that is not a fitted feasible-learning/erm model, or a missing split.

    Source: Ramirez et al. 2025, sec. 5 (per-sample loss distributions on train and test data).
    """
    task_type = fitted.info.get("task_type")
    if task_type is None or not isinstance(fitted.model, torch.nn.Module):
        raise ConfigError("subject must be a Fitted from feasible-learning or erm.", key="subject")
    data = prepare_arrays(task, task_type, split)
    param = next(fitted.model.parameters())
    with torch.no_grad():
        out = fitted.model(data["X"].to(param.device))
        losses = sample_losses(out, data["y"].to(param.device), task_type).detach().cpu().numpy()
        if task_type == CLASSIFICATION:
            hits = (out.argmax(dim=1).cpu() == data["y"]).double().numpy()
        else:
            hits = losses * data["y_scale"] ** 2
    return losses.astype(np.float64), hits


@attrs.define(kw_only=True)
class LossDistribution(Evaluator):
    """Distribution of per-sample losses on the train and test splits, and the multipliers.

    For every subject ``s`` and split ``k`` in ``splits``: ``s/k_mean``, ``s/k_max``, ``s/k_qXX``
    (the ``quantiles``), ``s/k_cvar10`` (mean of the largest 10%), ``s/k_feasible_fraction``
    (share with ``l_i <= eps``), and ``s/k_accuracy`` (classification) or ``s/k_mse``
    (regression, squared standardized target units, so a constant predictor scores about 1).
    Subjects with multipliers add ``s/multiplier_mean``, ``s/multiplier_max``,
    ``s/multiplier_nonzero_fraction``, ``s/multiplier_top10_share`` (share of the total weight held
    by the 10% largest) and, when ``baseline`` names a stage, ``s/multiplier_spearman_baseline``:
    the Spearman rank correlation of ``lam_i`` with the baseline replicate's per-sample train loss
    (which samples get weight). Figures: ``multipliers`` and ``losses`` (first replicate of each
    configuration). The reference may be one dataset or one per replicate (``data[*]``), matched
    to subjects by their replicate index. The evaluator uses no randomness (``generator`` unused).

    Shapes:
        per-sample losses ``ndarray[n_split]``; multipliers ``Tensor[n_train]``.

    Units: losses in nats or squared standardized target units; fractions in [0, 1].

    Raises:
        ConfigError: no reference dataset, a subject without a matching dataset, a non-Fitted subject.

    Source: Ramirez et al. 2025, "Feasible Learning", arXiv 2501.14912, sec. 5 (Fig. 1-3: loss
    distributions, multiplier distributions and their relation to sample difficulty).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"data": {"use": "sklearn-dataset", "name": "diabetes"}},
        "stage": {
            "fl": {
                "use": "feasible-learning",
                "inputs": {"task": "data"},
                "num_epochs": 3,
                "hidden_sizes": [8],
                "epsilon": 0.5,
            }
        },
        "inputs": {"subject": "fl", "reference": "data"},
    }

    splits: list = param(factory=lambda: ["train", "test"], doc="dataset splits scored")
    quantiles: list = param(
        factory=lambda: [0.5, 0.9, 0.95, 0.99],
        doc="loss quantiles reported (in [0, 1])",
        validator=probabilities,
    )
    epsilon: float = param(
        0.0, doc="threshold for the feasible fraction (0: each subject's own epsilon)", validator=non_negative
    )
    baseline: str = param(
        "",
        doc="base name of the stage whose train losses the multipliers are ranked "
        "against (e.g. 'erm'); '' for none",
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject (see the class docstring).

        Shapes:
            ``subject``: ``Fitted`` or ``{name: Fitted}``; ``reference``: ``Dataset`` or ``{name: Dataset}``.

        Units: as in the class docstring.

        Raises:
            ConfigError: missing or unmatched reference, a subject that is not a fitted MLP.

        Source: Ramirez et al. 2025, sec. 5.
        """
        from scipy.stats import spearmanr

        subjects = named(subject)
        if reference is None:
            raise ConfigError(
                "loss-distribution needs reference = the dataset the models were fit on.", key="reference"
            )
        refs = dict(reference) if isinstance(reference, Mapping) else None
        values: dict[str, float] = {}
        rows: list[dict[str, Any]] = []
        train_losses: dict[str, np.ndarray] = {}
        for name, fit in subjects.items():
            task = reference if refs is None else self._match(name, refs)
            eps = self.epsilon or float(fit.info.get("epsilon", 0.0))
            row: dict[str, Any] = {"subject": name}
            for split in self.splits:
                losses, hits = per_sample_losses(fit, task, split)
                if split == "train":
                    train_losses[name] = losses
                stats = loss_summary(losses, eps, tuple(float(q) for q in self.quantiles))
                key = "accuracy" if fit.info["task_type"] == CLASSIFICATION else "mse"
                stats[key] = float(hits.mean()) if key == "accuracy" else float(np.mean(losses))
                for k, v in stats.items():
                    values[f"{name}/{split}_{k}"] = v
                    row[f"{split}_{k}"] = v
            lam = fit.info.get("multipliers")
            if lam is not None:
                lam = np.asarray(torch.as_tensor(lam).cpu(), np.float64)
                total = lam.sum()
                top = np.sort(lam)[::-1][: max(1, math.ceil(0.1 * lam.size))]
                for k, v in {
                    "multiplier_mean": lam.mean(),
                    "multiplier_max": lam.max(),
                    "multiplier_nonzero_fraction": (lam > 0).mean(),
                    "multiplier_top10_share": top.sum() / total if total > 0 else 0.0,
                }.items():
                    values[f"{name}/{k}"] = float(v)
            rows.append(row)
        if self.baseline:
            for name, fit in subjects.items():
                lam = fit.info.get("multipliers")
                partner = self._partner(name, subjects)
                if lam is None or partner is None:
                    continue
                lam = np.asarray(torch.as_tensor(lam).cpu(), np.float64)
                rho = spearmanr(lam, train_losses[partner]).statistic if np.ptp(lam) > 0 else 0.0
                values[f"{name}/multiplier_spearman_baseline"] = float(rho)
        figures = self._figures(subjects, train_losses)
        return Metrics(
            values=values,
            tables={"loss_distribution": rows},
            figures=figures,
            info={"splits": list(self.splits), "baseline": self.baseline},
        )

    def _match(self, name: str, refs: dict[str, Any]) -> Any:
        if len(refs) == 1:
            return next(iter(refs.values()))
        i = replicate_index(name)
        found = [t for r, t in refs.items() if i is not None and replicate_index(r) == i]
        if len(found) != 1:
            raise ConfigError(
                f"cannot match subject '{name}' to one of the datasets {', '.join(refs)} by replicate index; "
                "repeat the task and the learners the same number of times.",
                key="reference",
            )
        return found[0]

    def _partner(self, name: str, subjects: dict[str, Any]) -> str | None:
        i = replicate_index(name)
        for other in subjects:
            if replicate_base(other) == self.baseline or other == self.baseline:
                if i is None or replicate_index(other) == i:
                    return other
        return None

    def _figures(self, subjects: dict[str, Any], train_losses: dict[str, np.ndarray]) -> dict[str, Any]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        firsts: dict[str, str] = {}
        for name in subjects:
            firsts.setdefault(replicate_base(name), name)
        fig_l, ax = plt.subplots(figsize=(5.5, 3.5))
        for base, name in firsts.items():
            x = np.sort(train_losses[name])
            ax.plot(x, 1.0 - np.arange(x.size) / x.size, label=base)
        ax.set_xscale("symlog", linthresh=1e-3)
        ax.set_yscale("log")
        ax.set_xlabel("per-sample train loss")
        ax.set_ylabel("fraction of samples with loss >= x")
        ax.legend()
        fig_l.tight_layout()
        figures = {"losses": fig_l}
        with_lam = [(b, n) for b, n in firsts.items() if subjects[n].info.get("multipliers") is not None]
        if with_lam:
            fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
            for base, name in with_lam:
                lam = np.asarray(torch.as_tensor(subjects[name].info["multipliers"]).cpu(), np.float64)
                axes[0].plot(np.sort(lam)[::-1], label=base)
                partner = self._partner(name, subjects) if self.baseline else None
                ref = train_losses[partner] if partner else train_losses[name]
                axes[1].scatter(ref, lam, s=4, alpha=0.5, label=base)
                axes[1].set_xlabel(f"per-sample train loss of {replicate_base(partner) if partner else base}")
            axes[0].set_xlabel("samples, sorted by multiplier")
            axes[0].set_ylabel("multiplier lambda_i")
            axes[0].set_yscale("symlog", linthresh=1e-4)
            axes[1].set_ylabel("multiplier lambda_i")
            axes[1].set_xscale("symlog", linthresh=1e-3)
            for a in axes:
                a.legend()
            fig.tight_layout()
            figures["multipliers"] = fig
        return figures
