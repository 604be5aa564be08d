"""A small BatchNorm MLP classifier for shift scenarios, and the stream-predictor protocol.

A *stream predictor* is the ``predict`` of a :class:`~quadriga.artifacts.Fitted` made for shift
scenarios: ``predict(X: ndarray[n, p], batches: list[slice]) -> ndarray[n, C]`` class
probabilities, computed batch by batch in the given order from a fresh state (a test-time
adaptation method may carry state from one batch to the next within one call, never between
calls). ``Fitted.info["classes"]`` lists the labels of the C columns. Shift evaluators
(:mod:`quadriga_std.shift.evaluators`) score every subject through this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least, positive_int_list

__all__ = ["MLPClassifier", "build_net", "frozen_stream_predictor"]


def build_net(num_inputs: int, hidden: Sequence[int], num_classes: int) -> Any:
    """``Linear -> BatchNorm1d -> ReLU`` per hidden width, then a linear head (a ``torch.nn.Module``).

    The module has ``features(x) -> Tensor[n, hidden[-1]]`` (penultimate activations) and
    ``forward(x) -> Tensor[n, num_classes]`` logits.
    """
    import torch
    from torch import nn

    class _Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            width = num_inputs
            for h in hidden:
                layers += [nn.Linear(width, h), nn.BatchNorm1d(h), nn.ReLU()]
                width = h
            self.body = nn.Sequential(*layers)
            self.head = nn.Linear(width, num_classes)

        def features(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.body(x))

    return _Net()


def frozen_stream_predictor(net: Any) -> Any:
    """The stream predictor of a frozen network (no adaptation: eval-mode BatchNorm statistics)."""
    import torch

    def predict(X: np.ndarray, batches: list[slice]) -> np.ndarray:
        net.eval()
        with torch.no_grad(), single_thread():
            out = [net(torch.as_tensor(X[b], dtype=torch.float32)).softmax(-1) for b in batches]
        return torch.cat(out).double().numpy()

    return predict


@attrs.define(kw_only=True)
class MLPClassifier(Learner):
    """A BatchNorm MLP trained by cross-entropy (Adam) on a dataset's ``"train"`` split.

    Returns ``Fitted(model = the network (torch.nn.Module, eval mode), history = {"epoch",
    "loss"}, info = {"classes": labels of the output columns, "train_accuracy"}, predict = a
    stream predictor without adaptation)`` (see the module docstring). The labels are
    ``np.unique`` of the training labels, so held-out classes are absent.

    Shapes: ``split("train") -> (X: ndarray[n, p], y: ndarray[n] int)``.

    Units: ``learning_rate`` per Adam step; ``loss`` in nats per row; ``train_accuracy`` a fraction.

    Raises:
        ConfigError: a task without a ``"train"`` split, or a split with a single class.

    Source: the source model of Boudiaf et al. 2022's test-time adaptation setting (any network
    with normalisation layers; TENT needs them, Wang et al. 2021, ICLR, sec. 3).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,)}

    hidden_sizes: list[int] = param(
        factory=lambda: [128, 64], doc="hidden widths", validator=positive_int_list
    )
    num_epochs: int = param(60, doc="passes over the training split", validator=int_at_least(1))
    batch_size: int = param(64, doc="rows per optimisation step", validator=int_at_least(2))
    learning_rate: float = param(3e-3, doc="Adam step size", validator=in_range(0, low_open=True))
    weight_decay: float = param(1e-4, doc="Adam weight decay", validator=in_range(0))

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Train on ``task.split("train")`` (see the class docstring)."""
        import torch

        try:
            X, y = task.split("train")
        except KeyError as exc:
            raise ConfigError(f"the task has no 'train' split ({exc}).", key="task") from exc
        classes = np.unique(y)
        if len(classes) < 2:
            raise ConfigError("the 'train' split holds a single class.", key="task")
        Xt = torch.as_tensor(X, dtype=torch.float32)
        yt = torch.as_tensor(np.searchsorted(classes, y), dtype=torch.long)
        with torch.random.fork_rng(devices=[]), single_thread():
            torch.manual_seed(int_seed(generator))
            net = build_net(X.shape[1], self.hidden_sizes, len(classes))
            opt = torch.optim.Adam(net.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
            history: dict[str, list] = {"epoch": [], "loss": []}
            progress.start(self.num_epochs)
            for epoch in range(self.num_epochs):
                net.train()
                perm = torch.randperm(len(yt), generator=generator)
                total = 0.0
                for s in range(0, len(yt), self.batch_size):
                    idx = perm[s : s + self.batch_size]
                    if len(idx) < 2:  # BatchNorm needs two rows
                        continue
                    loss = torch.nn.functional.cross_entropy(net(Xt[idx]), yt[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += loss.item() * len(idx)
                history["epoch"].append(epoch + 1)
                history["loss"].append(total / len(yt))
                progress.advance(1)
            net.eval()
            with torch.no_grad():
                acc = float((net(Xt).argmax(-1) == yt).double().mean())
        return Fitted(
            model=net,
            history=history,
            info={"classes": [int(c) for c in classes], "train_accuracy": acc},
            predict=frozen_stream_predictor(net),
        )
