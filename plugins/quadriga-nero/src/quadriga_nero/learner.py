"""Small image classifiers for orbit evaluation: an MLP, a CNN and an orbit-augmented CNN.

The learner reads ``split("train")`` of a Dataset of flattened square images (``load_digits``:
8x8, pixel values 0-16, through ``sklearn-dataset`` with ``standardize = false``), centres them on
a zero ``canvas`` (12x12 by default, room for rotated corners and small shifts), and trains with
Adam on the cross-entropy. With ``augment = "rotation"`` every batch is rotated by angles drawn
uniformly in [0, 360) degrees, with ``"shift"`` translated by integer pixels in
``[-max_shift, max_shift]^2`` (the NERO paper's ``aug-eqv`` model). With ``average = "c4"`` the
prediction is the mean of the probabilities over the four quarter turns of the input, an exactly
C4-invariant model (group averaging).

Source: Zhao et al. 2023, arXiv 2305.19889, sec. 4.1 (MNIST: a non-equivariant CNN and the same
CNN trained with rotation augmentation; Adam, batch 64).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import torch
from torch import nn

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import (
    non_negative,
    non_negative_int,
    one_of,
    positive,
    positive_int,
    positive_int_list,
    probability,
)
from quadriga_nero.orbits import rotate, shift, to_canvas

__all__ = ["DigitNet", "OrbitClassifier", "build_network"]

_ARCHITECTURES = ("mlp", "cnn", "cnn-pool")
_AUGMENT = ("none", "rotation", "shift")
_AVERAGE = ("none", "c4")


def build_network(
    architecture: str, canvas: int, classes: int, *, hidden_sizes: Sequence[int] = (128,), channels: int = 16
) -> nn.Module:
    """The network on ``Tensor[n, 1, C, C]`` (pixels / 16) returning logits ``Tensor[n, K]``.

    ``"mlp"``: flatten, ``C^2 -> hidden_sizes... -> K`` with ReLU. ``"cnn"``: two 3x3 convolutions
    (``channels``, ``2 channels``; padding 1, ReLU, each followed by 2x2 max pooling), then dense
    ReLU layers of ``hidden_sizes`` and a linear layer (LeNet-style): the convolutions are
    translation-equivariant up to the border and the pooling grid, the dense layers are not.
    ``"cnn-pool"``: the same two convolutions without the strided pooling, then global max pooling
    over the plane (``2 channels`` features) and the dense layers: translation-invariant for integer
    shifts that keep the image's support (and the 3x3 receptive fields around it) on the zero canvas,
    since zero padding and the zero canvas look alike to the convolutions (the invariance NERO's
    shift experiment probes; Zhao et al. 2023, sec. 4.2).

    Raises:
        ConfigError: unknown architecture.
    """
    if architecture == "mlp":
        trunk: list[nn.Module] = [nn.Flatten()]
        width = canvas * canvas
    elif architecture == "cnn":
        c = channels
        trunk = [
            nn.Conv2d(1, c, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
        ]
        width = 2 * c * (canvas // 4) ** 2
    elif architecture == "cnn-pool":
        c = channels
        trunk = [
            nn.Conv2d(1, c, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveMaxPool2d(1),
            nn.Flatten(),
        ]
        width = 2 * c
    else:
        raise ConfigError(f"architecture must be one of {', '.join(_ARCHITECTURES)}, got {architecture!r}.")
    for size in hidden_sizes:
        trunk += [nn.Linear(width, int(size)), nn.ReLU()]
        width = int(size)
    return nn.Sequential(*trunk, nn.Linear(width, classes))


class DigitNet(nn.Module):
    """A trained network with its input convention: ``forward(images[n, C, C]) -> probabilities[n, K]``.

    Shapes: ``images`` is ``Tensor[n, C, C]`` in pixel units (``load_digits``: 0-16), centred on the
    canvas as :func:`quadriga_nero.orbits.to_canvas` does; the output rows sum to 1.
    With ``average = "c4"`` the output is ``mean_k softmax(net(rot90^k x))`` (exactly C4-invariant).
    """

    def __init__(self, net: nn.Module, *, pixel_scale: float, average: str = "none") -> None:
        super().__init__()
        self.net = net
        self.pixel_scale = float(pixel_scale)
        self.average = average

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Class probabilities ``Tensor[n, K]`` of ``images: Tensor[n, C, C]``."""
        x = images[:, None].to(torch.float32) / self.pixel_scale
        if self.average == "c4":
            return torch.stack([self.net(torch.rot90(x, k, (-2, -1))).softmax(-1) for k in range(4)]).mean(0)
        return self.net(x).softmax(-1)


@attrs.define(kw_only=True)
class OrbitClassifier(Learner):
    """Trains an MLP or a CNN on square images, optionally with orbit augmentation (``orbit-classifier``).

    The fitted model's ``predict(images: Tensor[n, C, C]) -> Tensor[n, K]`` gives class
    probabilities; ``info`` holds ``canvas`` (``C``), ``image_side`` (``s``), ``classes`` (``K``),
    ``pixel_scale`` and the training accuracy; ``history`` the mean loss per epoch.

    Shapes:
        ``task.split("train") -> (X[n, s*s], y[n])`` with integer labels ``0..K-1``.

    Units:
        pixels as in the data (non-negative), divided by ``pixel_scale`` inside the network;
        ``learning_rate`` per Adam step; loss in nats.

    Raises:
        ConfigError: a task without a ``"train"`` split, rows that are not square images, negative
            pixels (a standardized dataset: use ``standardize = false``), a canvas smaller than the
            image, unknown architecture/augment/average.

    Source: Zhao et al. 2023, arXiv 2305.19889, sec. 4.1 (``non-eqv`` CNN and ``aug-eqv``, the same CNN
    trained on randomly rotated digits).
    """

    input_types: ClassVar = {"task": (Dataset,)}
    check_params: ClassVar[dict] = {"num_epochs": 1}
    check_inputs: ClassVar[dict] = {
        "task": {"data": {"use": "sklearn-dataset", "name": "digits", "standardize": False}},
        "stage": {},
        "inputs": {"task": "data"},
    }

    architecture: str = param(
        "cnn", doc="mlp, cnn or cnn-pool (global max pooling)", validator=one_of(_ARCHITECTURES)
    )
    augment_fraction: float = param(
        1.0, doc="fraction of each batch that is augmented", validator=probability
    )
    augment: str = param(
        "none", doc="none, rotation (uniform angle) or shift (integer pixels)", validator=one_of(_AUGMENT)
    )
    average: str = param(
        "none",
        doc="none, or c4: average the prediction over the four quarter turns",
        validator=one_of(_AVERAGE),
    )
    canvas: int = param(
        12, doc="side of the zero canvas the images are centred on (pixels)", validator=positive_int
    )
    max_shift: int = param(
        2, doc="largest |dx|, |dy| of shift augmentation (pixels)", validator=non_negative_int
    )
    num_epochs: int = param(30, doc="passes over the training split", validator=positive_int)
    batch_size: int = param(64, doc="images per Adam step", validator=positive_int)
    learning_rate: float = param(3e-3, doc="Adam learning rate", validator=positive)
    weight_decay: float = param(1e-5, doc="Adam weight decay", validator=non_negative)
    hidden_sizes: list[int] = param(
        factory=lambda: [128],
        doc="widths of the dense ReLU layers before the output",
        validator=positive_int_list,
    )
    channels: int = param(16, doc="CNN channels of the first convolution", validator=positive_int)
    pixel_scale: float = param(16.0, doc="pixels are divided by this inside the network", validator=positive)

    def _augment(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if self.augment == "none":
            return x
        keep = torch.rand(x.shape[0], generator=generator) >= self.augment_fraction
        out = self._transform(x, generator)
        out[keep] = x[keep]
        return out

    def _transform(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if self.augment == "rotation":
            return rotate(x, torch.rand(x.shape[0], generator=generator, dtype=torch.float64) * 360.0)
        if self.augment == "shift":
            r = self.max_shift
            return shift(x, torch.randint(-r, r + 1, (x.shape[0], 2), generator=generator))
        return x

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Train (see the class docstring); returns :class:`~quadriga.artifacts.Fitted`."""
        try:
            X, y = task.split("train")
        except KeyError as exc:
            raise ConfigError(
                f"orbit-classifier needs a dataset with a 'train' split ({exc}).", key="task"
            ) from exc
        X = np.asarray(X, dtype=np.float64)
        side = round(math.sqrt(X.shape[1]))
        if side * side != X.shape[1]:
            raise ConfigError(f"rows of {X.shape[1]} pixels are not square images.", key="task")
        if X.min() < 0:
            raise ConfigError(
                "the images have negative pixels (a standardized dataset); "
                "set standardize = false on the task.",
                key="task",
            )
        if self.canvas < side:
            raise ConfigError(
                f"canvas ({self.canvas}) must be at least the image side ({side}).", key="canvas"
            )
        labels = torch.as_tensor(np.asarray(y), dtype=torch.int64)
        classes = int(labels.max()) + 1
        images = to_canvas(X, side, self.canvas)
        cpu = torch.Generator().manual_seed(int_seed(generator))
        with single_thread(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(int_seed(cpu))
            net = build_network(
                self.architecture,
                self.canvas,
                classes,
                hidden_sizes=self.hidden_sizes,
                channels=self.channels,
            )
            model = DigitNet(net, pixel_scale=self.pixel_scale, average="none")
            opt = torch.optim.Adam(net.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
            n = images.shape[0]
            losses = []
            progress.start(self.num_epochs)
            for epoch in range(self.num_epochs):
                perm = torch.randperm(n, generator=cpu)
                total = 0.0
                for i in range(0, n, self.batch_size):
                    idx = perm[i : i + self.batch_size]
                    xb = self._augment(images[idx], cpu)
                    loss = nn.functional.cross_entropy(net(xb[:, None] / self.pixel_scale), labels[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += float(loss.detach()) * len(idx)
                losses.append(total / n)
                progress.advance(1)
                progress.log(epoch, loss=losses[-1])
            net.eval()
            model.average = self.average
            with torch.no_grad():
                train_acc = float((model(images).argmax(-1) == labels).double().mean())
        return Fitted(
            model=model,
            history={"epoch": list(range(self.num_epochs)), "loss": losses},
            info={
                "architecture": self.architecture,
                "augment": self.augment,
                "average": self.average,
                "canvas": self.canvas,
                "image_side": side,
                "classes": classes,
                "pixel_scale": self.pixel_scale,
                "train_accuracy": train_acc,
            },
            predict=model,
        )
