"""Parameter-updating test-time adaptation baselines: TENT and pseudo-labelling.

Both adapt only the affine parameters of the BatchNorm layers of a copy of the frozen network,
with BatchNorm normalising by the statistics of each test batch (running statistics dropped), one
Adam step per batch, online along the stream (state carried from batch to batch within one
``predict`` call, reset between calls). Each batch's prediction is the forward pass before that
batch's update, as in TENT's ``forward_and_adapt``.

- **TENT** minimises the mean Shannon entropy of the batch's predictions.
- **Pseudo-labelling** minimises the cross-entropy to the argmax labels of the rows whose top
  probability is at least ``threshold`` (no update when none is).

Source: Wang, Shelhamer, Liu, Olshausen & Darrell 2021, "Tent: fully test-time adaptation by
entropy minimization", ICLR, sec. 3 (eq. 1, BatchNorm affine parameters, batch statistics);
Lee 2013, "Pseudo-label", ICML workshop; both as configured in Boudiaf et al. 2022, CVPR, sec. 4.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.threads import single_thread
from quadriga.validators import in_range
from quadriga_lame.lame import _check_model

__all__ = ["PseudoLabel", "Tent", "adaptable_copy", "entropy_loss", "pseudo_label_loss"]


def adaptable_copy(net: Any) -> tuple[Any, list[Any]]:
    """A copy of ``net`` whose BatchNorm layers use batch statistics, and their affine parameters.

    Every other parameter is frozen (``requires_grad = False``); the copy is in train mode.

    Returns:
        ``(module, [weight, bias, ...])``: the parameters an optimiser updates.
    """
    import torch

    net = copy.deepcopy(net)
    net.train()
    net.requires_grad_(False)
    params = []
    for m in net.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.track_running_stats = False
            m.running_mean, m.running_var = None, None
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
            params += [m.weight, m.bias]
    return net, params


def entropy_loss(logits: Any, threshold: float = 0.0) -> Any:
    """TENT's loss: the mean over rows of ``H(softmax(logits)) = -sum_c p_c log p_c`` (nats)."""
    logp = logits.log_softmax(-1)
    return -(logp.exp() * logp).sum(-1).mean()


def pseudo_label_loss(logits: Any, threshold: float) -> Any:
    """Cross-entropy to the argmax labels of rows with top probability ``>= threshold`` (0 if none)."""
    logp = logits.log_softmax(-1)
    top, label = logp.detach().max(-1)
    keep = top.exp() >= threshold
    if not bool(keep.any()):
        return logits.sum() * 0.0
    return -logp[keep].gather(1, label[keep, None]).mean()


def _stream_predictor(net: Any, loss_fn: Any, learning_rate: float, threshold: float) -> Any:
    def predict(X: np.ndarray, batches: list[slice]) -> np.ndarray:
        import torch

        model, params = adaptable_copy(net)
        opt = torch.optim.Adam(params, lr=learning_rate)
        out = []
        with single_thread():
            for b in batches:
                x = torch.as_tensor(X[b], dtype=torch.float32)
                if len(x) < 2:  # batch statistics need two rows: predict without adapting
                    with torch.no_grad():
                        frozen = copy.deepcopy(net).eval()
                        out.append(frozen(x).softmax(-1).detach())
                    continue
                logits = model(x)
                out.append(logits.softmax(-1).detach())
                loss = loss_fn(logits, threshold)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return torch.cat(out).double().numpy()

    return predict


@attrs.define(kw_only=True)
class Tent(Learner):
    """TENT: online entropy minimisation of the BatchNorm affine parameters (see the module docstring).

    ``fit(task, model)`` returns ``Fitted(model = the source network, predict = stream predictor,
    info = {classes, learning_rate})``; ``task`` is not read.

    Shapes: ``predict(X[n, p], batches: list[slice]) -> ndarray[n, C]``.
    Units: ``learning_rate`` per Adam step (one step per batch).

    Raises:
        ConfigError: a non-positive learning rate, a ``model`` without features/head and classes.

    Source: Wang et al. 2021, ICLR, sec. 3, eq. (1) (entropy objective) and sec. 3.2 (modulation
    parameters: BatchNorm scale and shift; test-batch statistics).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,), "model": (Fitted,)}

    learning_rate: float = param(1e-3, doc="Adam step size", validator=in_range(0, low_open=True))

    def fit(self, task: Any, model: Any, *, generator: Any, progress: Any) -> Fitted:
        """Wrap ``model``'s network in TENT's stream predictor."""
        net = _check_model(model)
        return Fitted(
            model=net,
            info={"classes": list(model.info["classes"]), "learning_rate": self.learning_rate},
            predict=_stream_predictor(net, entropy_loss, self.learning_rate, 0.0),
        )


@attrs.define(kw_only=True)
class PseudoLabel(Learner):
    """Pseudo-labelling: online cross-entropy to confident argmax labels, BatchNorm affine parameters.

    ``fit(task, model)`` returns ``Fitted(model = the source network, predict = stream predictor,
    info = {classes, learning_rate, threshold})``; ``task`` is not read.

    Shapes: ``predict(X[n, p], batches: list[slice]) -> ndarray[n, C]``.
    Units: ``learning_rate`` per Adam step; ``threshold`` a probability.

    Raises:
        ConfigError: a non-positive learning rate, a threshold outside [0, 1], a bad ``model``.

    Source: Lee 2013, "Pseudo-label: the simple and efficient semi-supervised learning method for
    deep neural networks", ICML workshop; as a test-time baseline in Boudiaf et al. 2022, sec. 4.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,), "model": (Fitted,)}

    learning_rate: float = param(1e-3, doc="Adam step size", validator=in_range(0, low_open=True))
    threshold: float = param(
        0.9, doc="minimum top probability of a pseudo-labelled row", validator=in_range(0, 1)
    )

    def fit(self, task: Any, model: Any, *, generator: Any, progress: Any) -> Fitted:
        """Wrap ``model``'s network in the pseudo-labelling stream predictor."""
        net = _check_model(model)
        return Fitted(
            model=net,
            info={
                "classes": list(model.info["classes"]),
                "learning_rate": self.learning_rate,
                "threshold": self.threshold,
            },
            predict=_stream_predictor(net, pseudo_label_loss, self.learning_rate, self.threshold),
        )
