"""The ``nero`` evaluator: metrics along group orbits, NERO plots and the orbit consensus."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.stage_names import replicate_base
from quadriga.threads import single_thread
from quadriga.validators import in_range, non_negative_int, positive_int
from quadriga_nero.orbits import GROUPS, group_elements, nero_curves, orbit_predictions, to_canvas

__all__ = ["NERO", "PER_SUBJECT"]

#: the per-subject values, ``"<subject>/<name>"``
PER_SUBJECT = (
    "accuracy",
    "orbit_accuracy",
    "orbit_min_accuracy",
    "curve_range",
    "orbit_variance",
    "orbit_consensus_label_accuracy",
    "orbit_consensus_accuracy",
    "orbit_consensus_mae",
    "orbit_consensus_correlation",
    "model_consensus_label_accuracy",
    "model_consensus_accuracy",
    "model_consensus_mae",
    "model_consensus_correlation",
)


def _replicate(name: str) -> int | None:
    base = replicate_base(name)
    return int(name[len(base) + 1 : -1]) if base != name else None


def _check_group(inst: Any, attribute: Any, value: Any) -> None:
    if value not in GROUPS:
        raise ConfigError(f"group must be one of {', '.join(GROUPS)}, got {value!r}.", key="group")


def _check_scales(inst: Any, attribute: Any, value: Any) -> None:
    try:
        ok = len(value) > 0 and all(float(v) > 0 for v in value)
    except (TypeError, ValueError):
        ok = False
    if isinstance(value, str) or not ok:
        raise ConfigError(
            f"scales must be a non-empty list of positive factors, e.g. [0.8, 1.0, 1.2], got {value!r}.",
            key="scales",
        )


def _label(e: Any) -> str:
    return f"{e[0]:+d},{e[1]:+d}" if isinstance(e, tuple) else f"{float(e):g}"


@attrs.define(kw_only=True)
class NERO(Evaluator):
    """Non-Equivariance Revealed on Orbits: a classifier's metric on every element of a group orbit.

    For each subject (a fitted classifier with ``predict(images[m, C, C]) -> probabilities[m, K]`` and
    ``info["canvas"]``, ``info["image_side"]``) and each test image ``x`` with label ``y`` it computes the
    NERO matrices ``N_x(g) = 1[argmax f(g . x) = y]`` (accuracy) and ``f(g . x)_y`` (true-class
    confidence) over the sampled group elements ``g`` (classification is invariant: ``g . y = y``).
    Two consensus labels stand in for ``y`` on unlabelled data: the **orbit consensus**
    ``c(x) = argmax_k mean_g f(g . x)_k`` (the orbit-aggregated prediction of the model itself) and
    the **model consensus** ``c(g, x) = argmax_k mean_m f_m(g . x)_k`` over the subjects ``m`` of one
    replicate (the paper's consensus of the models compared); each gives a consensus-based NERO
    matrix ``1[argmax f(g . x) = c]``.

    Values per subject ``s`` (a stage name such as ``cnn[3]``): ``s/accuracy`` (on the untransformed
    images, equal to the curve at the identity), ``s/orbit_accuracy`` (mean of the aggregate curve
    ``A(g) = mean_x N_x(g)``), ``s/orbit_min_accuracy`` (``min_g A(g)``), ``s/curve_range``
    (``max_g A(g) - min_g A(g)``: 0 for a flat NERO curve), ``s/orbit_variance`` (``mean_x Var_g
    f(g . x)_y``, the per-sample orbit variance of the confidence) and, for ``K`` = ``orbit`` and
    ``model``: ``s/K_consensus_label_accuracy`` (how often the consensus label is the true one),
    ``s/K_consensus_accuracy`` (mean of the consensus-based curve ``A_c(g)``), ``s/K_consensus_mae``
    (``mean_g |A_c(g) - A(g)|``) and ``s/K_consensus_correlation`` (Pearson correlation of ``A_c``
    and ``A`` over ``g``; left out when either curve is constant). Subjects with a replicate index
    are also pooled by the name before the last ``[i]``: ``"<group>/<value>"`` is the mean over its
    replicates. ``tables["curves"]`` holds the pooled curves per group and element,
    ``tables["classes"]`` the per-class accuracy curves; ``figures``: ``"nero"`` (polar plot for
    rotations, heatmaps for shifts, lines for scales; pooled and per class) and ``"consensus"``
    (``A`` against both ``A_c``).

    ``reference`` is the labelled Dataset (its ``split`` is used), or ``{name: Dataset}`` of a repeated
    task: subject ``x[i]`` is scored on replicate ``i``.

    Shapes:
        ``reference.split(split) -> (X[n, s*s], y[n])``; every orbit is ``n |G|`` images of ``C x C``.

    Units:
        angles in degrees (counter-clockwise), shifts in whole pixels ``(dx right, dy down)``, scales
        dimensionless; accuracies and confidences are fractions, ``orbit_variance`` squared probability.

    Raises:
        ConfigError: no reference, a subject without ``predict`` or ``info["canvas"]``, images whose side
            differs from the subject's, no reference replicate for a subject, bad group parameters.

    Source: Zhao, Matsuzawa, Irvine, Maire, Kindlmann 2023, arXiv 2305.19889, sec. 3 (NERO evaluation
    ``m(f(g . x), g . y)`` on orbits, the NERO plot, consensus in place of ground truth) and sec. 4.1
    (rotated MNIST digits).
    """

    input_types: ClassVar = {"subject": (Fitted,), "reference": (Dataset,)}
    check_params: ClassVar[dict] = {"angle_step": 90.0, "figures": False}
    check_inputs: ClassVar[dict] = {
        "task": {"data": {"use": "sklearn-dataset", "name": "digits", "standardize": False}},
        "stage": {
            "fit": {
                "use": "orbit-classifier",
                "inputs": {"task": "data"},
                "num_epochs": 1,
                "architecture": "mlp",
            }
        },
        "inputs": {"subject": "fit", "reference": "data"},
    }

    group: str = param("rotation", doc="rotation, shift or scale", validator=_check_group)
    angle_step: float = param(
        15.0, doc="rotation: degrees between orbit elements", validator=in_range(0, 360, low_open=True)
    )
    max_shift: int = param(3, doc="shift: largest |dx|, |dy| (pixels)", validator=non_negative_int)
    scales: list = param(
        factory=lambda: [0.6, 0.8, 1.0, 1.2, 1.4], doc="scale: the factors", validator=_check_scales
    )
    split: str = param("test", doc="the reference split evaluated")
    batch_size: int = param(8192, doc="images per predict call", validator=positive_int)
    figures: bool = param(True, doc="draw the NERO and consensus figures")

    def elements(self) -> list[Any]:
        """The sampled group elements, identity first (:func:`quadriga_nero.orbits.group_elements`)."""
        return group_elements(
            self.group, angle_step=self.angle_step, max_shift=self.max_shift, scales=self.scales
        )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Evaluate every subject on its orbits (see the class docstring); ``generator`` is unused."""
        if reference is None:
            raise ConfigError(
                'nero needs the labelled Dataset: inputs = { subject = ..., reference = "data" }.',
                key="reference",
            )
        refs = reference if isinstance(reference, dict) else {"": reference}
        by_index = {_replicate(n): ds for n, ds in refs.items()}
        elements = self.elements()
        values: dict[str, float] = {}
        groups: dict[str, dict[str, Any]] = {}
        runs: dict[str, tuple[torch.Tensor, np.ndarray, float]] = {}
        with single_thread():
            for name, fit in named(subject, "subject").items():
                predict = getattr(fit, "predict", None)
                info = getattr(fit, "info", {}) or {}
                if predict is None or "canvas" not in info:
                    raise ConfigError(
                        f"subject '{name}' is not an image classifier (needs predict and info['canvas']); "
                        "train it with orbit-classifier.",
                        key="subject",
                    )
                ds = refs[next(iter(refs))] if len(refs) == 1 else by_index.get(_replicate(name))
                if ds is None:
                    raise ConfigError(f"no reference replicate for subject '{name}'.", key="reference")
                X, y = ds.split(self.split)
                side = round(math.sqrt(np.asarray(X).shape[1]))
                if side != int(info.get("image_side", side)):
                    raise ConfigError(
                        f"subject '{name}' was trained on {info['image_side']}-pixel images, "
                        f"the data has {side}.",
                        key="reference",
                    )
                images = to_canvas(X, side, int(info["canvas"]))
                probs = orbit_predictions(predict, self.group, images, elements, batch_size=self.batch_size)
                with torch.no_grad():
                    plain = predict(images).argmax(-1).cpu().numpy()
                runs[name] = (probs, np.asarray(y), float(np.mean(plain == np.asarray(y))))
        # the cross-model consensus: mean probabilities of the subjects of one replicate at each g . x
        by_rep: dict[Any, list[str]] = {}
        for name in runs:
            by_rep.setdefault(_replicate(name), []).append(name)
        for names in by_rep.values():
            shapes = {tuple(runs[n][0].shape) for n in names}
            if len(shapes) > 1:
                raise ConfigError(
                    f"subjects {names} of one replicate have different orbit shapes {shapes}.", key="subject"
                )
            mean_probs = torch.stack([runs[n][0] for n in names]).mean(0)
            for name in names:
                probs, y, plain = runs[name]
                curves = nero_curves(probs, y, model_consensus=mean_probs)
                v = _subject_values(curves, plain)
                values.update({f"{name}/{k}": x for k, x in v.items()})
                g = groups.setdefault(replicate_base(name), {"values": [], "curves": [], "names": []})
                g["values"].append(v)
                g["curves"].append(curves)
                g["names"].append(name)
        tables = {"curves": [], "classes": []}
        pooled: dict[str, dict[str, np.ndarray]] = {}
        for base, g in groups.items():
            if base not in g["names"]:
                for k in PER_SUBJECT:
                    xs = [v[k] for v in g["values"] if k in v]
                    if xs:
                        values[f"{base}/{k}"] = float(np.mean(xs))
                values[f"{base}/replicates"] = float(len(g["names"]))
            cs = g["curves"]
            acc = np.mean([c.curve("accuracy") for c in cs], 0)
            conf = np.mean([c.curve("confidence") for c in cs], 0)
            agr = np.mean([c.curve("agreement") for c in cs], 0)
            magr = np.mean([c.curve("model_agreement") for c in cs], 0)
            classes = sorted(set(np.concatenate([c.labels for c in cs]).tolist()))
            per_class = {k: np.nanmean([c.curve("accuracy", k) for c in cs], 0) for k in classes}
            pooled[base] = {
                "accuracy": acc,
                "agreement": agr,
                "model_agreement": magr,
                **{f"class{k}": per_class[k] for k in classes},
            }
            for j, e in enumerate(elements):
                tables["curves"].append(
                    {
                        "subject": base,
                        "element": _label(e),
                        "accuracy": float(acc[j]),
                        "confidence": float(conf[j]),
                        "orbit_consensus_accuracy": float(agr[j]),
                        "model_consensus_accuracy": float(magr[j]),
                    }
                )
                for k in classes:
                    tables["classes"].append(
                        {
                            "subject": base,
                            "class": int(k),
                            "element": _label(e),
                            "accuracy": float(per_class[k][j]),
                        }
                    )
        figures = _figures(self.group, elements, pooled) if self.figures else {}
        return Metrics(
            values=values,
            tables=tables,
            figures=figures,
            info={"group": self.group, "elements": [_label(e) for e in elements], "split": self.split},
        )


def _subject_values(curves: Any, plain_accuracy: float) -> dict[str, float]:
    """The :data:`PER_SUBJECT` values of one subject's :class:`~quadriga_nero.orbits.OrbitCurves`."""
    a = curves.curve("accuracy")
    out = {
        "accuracy": plain_accuracy,
        "orbit_accuracy": float(a.mean()),
        "orbit_min_accuracy": float(a.min()),
        "curve_range": float(a.max() - a.min()),
        "orbit_variance": float(curves.confidence.var(0).mean()),
    }
    for kind, agreement, labels in (
        ("orbit", "agreement", curves.consensus[None]),
        ("model", "model_agreement", curves.model_consensus),
    ):
        c = curves.curve(agreement)
        out[f"{kind}_consensus_label_accuracy"] = float(np.mean(labels == curves.labels[None]))
        out[f"{kind}_consensus_accuracy"] = float(c.mean())
        out[f"{kind}_consensus_mae"] = float(np.abs(c - a).mean())
        if np.ptp(a) > 0 and np.ptp(c) > 0:
            out[f"{kind}_consensus_correlation"] = float(np.corrcoef(a, c)[0, 1])
    return out


def _figures(group: str, elements: list[Any], pooled: dict[str, dict[str, np.ndarray]]) -> dict[str, Any]:
    """The NERO plot (pooled and per class) and the consensus plot, one line or panel per subject group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bases = list(pooled)
    classes = sorted(k for k in next(iter(pooled.values())) if k.startswith("class"))
    if group == "shift":
        r = max(abs(e[0]) for e in elements)
        order = {e: j for j, e in enumerate(elements)}

        def grid(curve: np.ndarray) -> np.ndarray:
            m = np.zeros((2 * r + 1, 2 * r + 1))
            for e, j in order.items():
                m[e[1] + r, e[0] + r] = curve[j]
            return m

        fig, axes = plt.subplots(1, len(bases), figsize=(3.2 * len(bases), 3.0), squeeze=False)
        for ax, b in zip(axes[0], bases, strict=True):
            im = ax.imshow(
                grid(pooled[b]["accuracy"]),
                vmin=0,
                vmax=1,
                cmap="viridis",
                extent=(-r - 0.5, r + 0.5, r + 0.5, -r - 0.5),
            )
            ax.set_title(f"{b}: accuracy")
            ax.set_xlabel("dx (pixels)")
            ax.set_ylabel("dy (pixels)")
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8)
        cfig, caxes = plt.subplots(1, len(bases), figsize=(3.2 * len(bases), 3.0), squeeze=False)
        for ax, b in zip(caxes[0], bases, strict=True):
            ax.scatter(pooled[b]["accuracy"], pooled[b]["agreement"], s=10, label="orbit consensus")
            ax.scatter(pooled[b]["accuracy"], pooled[b]["model_agreement"], s=10, label="model consensus")
            ax.legend(fontsize=7)
            ax.plot([0, 1], [0, 1], "k:", lw=0.8)
            ax.set_title(b)
            ax.set_xlabel("accuracy (true labels)")
            ax.set_ylabel("accuracy (consensus labels)")
        cfig.tight_layout()
        return {"nero": fig, "consensus": cfig}
    x = np.asarray([float(e) for e in elements])
    order = np.argsort(x)
    polar = group == "rotation"
    kw = {"projection": "polar"} if polar else {}
    cols = 4
    rows = 1 + math.ceil(len(classes) / cols)
    fig = plt.figure(figsize=(3.0 * cols, 3.0 * rows))
    ax0 = fig.add_subplot(rows, 1, 1, **kw) if not polar else fig.add_subplot(rows, cols, (1, 2), **kw)

    def draw(ax: Any, key: str, title: str, legend: bool = False) -> None:
        for b in bases:
            xs, ys = x[order], pooled[b][key][order]
            if polar:
                xs, ys = np.deg2rad(np.append(xs, xs[0])), np.append(ys, ys[0])
            ax.plot(xs, ys, label=b, lw=1.2)
        ax.set_ylim(0, 1)
        ax.set_title(title, fontsize=9)
        if legend:
            ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(1.05, 0.0))

    draw(ax0, "accuracy", f"NERO: accuracy vs {group} (all classes)", legend=True)
    for j, k in enumerate(classes):
        ax = fig.add_subplot(rows, cols, cols + j + 1, **kw)
        draw(ax, k, f"digit {k[5:]}")
    fig.tight_layout()
    cfig = plt.figure(figsize=(4.5 * len(bases), 4.0))
    for j, b in enumerate(bases):
        ax = cfig.add_subplot(1, len(bases), j + 1, **kw)
        xs = x[order]
        for key, lab in (
            ("accuracy", "true labels"),
            ("agreement", "orbit consensus"),
            ("model_agreement", "model consensus"),
        ):
            ys = pooled[b][key][order]
            if polar:
                ax.plot(np.deg2rad(np.append(xs, xs[0])), np.append(ys, ys[0]), label=lab)
            else:
                ax.plot(xs, ys, label=lab)
        ax.set_ylim(0, 1)
        ax.set_title(b, fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    cfig.tight_layout()
    return {"nero": fig, "consensus": cfig}
