"""``mlp-zoo``: small MLPs on scikit-learn's digits, trained on demand and cached on disk.

The zoo is a :class:`~quadriga.interfaces.Dataset` (``load_digits``: 1797 images of 8 x 8 pixels,
scaled to [0, 1], split into train / validation / test) that also trains its members when asked:

- :meth:`MLPZoo.pair`: two networks of one architecture from independent seeds, on the same
  training data (``pairing = "seeds"``) or on disjoint random halves of it (``"halves"``): the
  endpoints of Git Re-Basin's linear-mode-connectivity experiments;
- :meth:`MLPZoo.suite`: a base network trained on all ten classes and one fine-tune per task of
  :data:`TASKS` (all layers learn; each task has its own freshly initialised head): the inputs of
  model merging (task arithmetic, TIES, isotropic merging);
- :meth:`MLPZoo.member`: one network, for kits that grow or compress it (zero-padding expansion).

Every member is a pure function of (the zoo's recipe, the data split, the width, its seed): it
is trained once and stored under ``$QUADRIGA_CACHE_DIR/weightspace`` (default
``~/.cache/quadriga/weightspace``), one file per member named by the hash of that key, so repeated
pipelines and claims pay for training once. Stages draw the member seed from their own generator
(:func:`quadriga.seeding.int_seed`): replicate ``i`` of every arm then gets the same members
(common random numbers).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.errors import ConfigError, suggest
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import derive_seed, int_seed, make_generator
from quadriga.validators import in_range, one_of, positive, positive_int, positive_int_list
from quadriga_std._paths import cache_root
from quadriga_std.weightspace.mlp import Params, init_params, train

__all__ = ["CHECK_ZOO", "TASKS", "MLPZoo", "Suite", "cache_dir", "digit_task"]

_FORMAT = 1  # bump when a member's training changes, so old cache files are not reused


#: a zoo that trains in a blink (no disk cache): the conformance checks' task for the kit's components
CHECK_ZOO: dict[str, Any] = {
    "use": "mlp-zoo",
    "hidden_sizes": [8],
    "num_epochs": 1,
    "num_finetune_steps": 2,
    "tasks": ["parity", "low-digits"],
    "cache": False,
}


def _rotate(x: np.ndarray) -> np.ndarray:
    return np.rot90(x.reshape(-1, 8, 8), k=1, axes=(1, 2)).reshape(-1, 64)


#: name -> (input transform, label map, kept labels or None, number of classes); the transform of
#: "noisy" adds N(0, 0.3^2) pixel noise drawn from a fixed stream of the split seed
TASKS: dict[str, tuple[Callable[..., np.ndarray], Callable[[np.ndarray], np.ndarray], tuple | None, int]] = {
    "parity": (lambda x, r: x, lambda y: y % 2, None, 2),
    "at-least-5": (lambda x, r: x, lambda y: (y >= 5).astype(np.int64), None, 2),
    "mod-3": (lambda x, r: x, lambda y: y % 3, None, 3),
    "low-digits": (lambda x, r: x, lambda y: y, (0, 1, 2, 3, 4), 5),
    "high-digits": (lambda x, r: x, lambda y: y - 5, (5, 6, 7, 8, 9), 5),
    "rotated": (lambda x, r: _rotate(x), lambda y: y, None, 10),
    "inverted": (lambda x, r: 1.0 - x, lambda y: y, None, 10),
    "noisy": (lambda x, r: np.clip(x + r.normal(0, 0.3, x.shape), 0, 1), lambda y: y, None, 10),
}


def digit_task(
    name: str, x: np.ndarray, y: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Task ``name`` of :data:`TASKS` on digits ``x: ndarray[n, 64]`` in [0, 1], labels ``y: ndarray[n]``.

    Returns ``(x_t: ndarray[m, 64] float32, y_t: ndarray[m] int64)``, ``m <= n`` (rows of kept labels).

    Raises:
        ConfigError: an unknown task name (close matches suggested).
    """
    if name not in TASKS:
        raise ConfigError(
            f"unknown task '{name}'; tasks: {', '.join(TASKS)}.{suggest(name, TASKS)}", key="tasks"
        )
    transform, relabel, kept, _ = TASKS[name]
    rows = np.ones(len(y), bool) if kept is None else np.isin(y, kept)
    return transform(x[rows], rng).astype(np.float32), relabel(y[rows]).astype(np.int64)


def cache_dir() -> Path:
    """``$QUADRIGA_CACHE_DIR/weightspace`` (default ``$XDG_CACHE_HOME/quadriga`` or ``~/.cache/quadriga``)."""
    return cache_root() / "weightspace"


@attrs.frozen
class Suite:
    """A base network and its task fine-tunes.

    Attributes:
        base: the network trained on all ten digits (``Params``, 10 outputs).
        finetuned: ``{task: Params}``, each with the base's hidden layers fine-tuned and its own
            head (output layer) of ``TASKS[task][3]`` classes.
        tasks: the task names, in the zoo's order.
    """

    base: Params
    finetuned: dict[str, Params]
    tasks: tuple[str, ...]


def _check_tasks(instance: Any, attribute: Any, value: Any) -> None:
    unknown = [t for t in value if t not in TASKS]
    if not value or unknown or len(set(value)) != len(value):
        raise ConfigError(
            f"tasks must be distinct names from {', '.join(TASKS)}; got {value!r}.", key=attribute.name
        )


@attrs.define(kw_only=True)
class MLPZoo(Dataset):
    """load_digits with a zoo of MLPs 64-h-...-h-out trained on it on demand (cached on disk).

    Splits (``split(name) -> (X: ndarray[n, 64] float32 in [0, 1], y: ndarray[n] int64)``):
    ``"train"``, ``"validation"``, ``"test"`` (fractions ``1 - validation - test``, ``validation``,
    ``test`` of the 1797 images, drawn once in :meth:`prepare`). :meth:`task_data` gives the same
    splits transformed for one fine-tuning task. Members (``Params``, see
    :mod:`quadriga_std.weightspace.mlp`) come from :meth:`pair`, :meth:`suite` and :meth:`member`.

    Shapes: a member with ``width = h`` has ``W_1: [h, 64]``, ``W_2 .. W_{L-1}: [h, h]``,
    ``W_L: [classes, h]`` with ``L - 1 = len(hidden_sizes)`` hidden layers.
    Units: learning rates per Adam step; ``num_epochs`` passes over the member's training rows.

    Raises:
        ConfigError: a bad parameter (when built), an unknown task, a call before ``prepare``.

    Source: Ainsworth et al. 2023 (Git Re-Basin), sec. 5.1 (MLPs from independent seeds, disjoint
    halves); Ilharco et al. 2023 (task arithmetic), sec. 2 (fine-tunes of one base); data: scikit-learn
    ``load_digits`` (UCI optical digits, test part).
    """

    hidden_sizes: list[int] = param(
        factory=lambda: [128, 128],
        doc="hidden widths (a stage's width replaces each)",
        validator=positive_int_list,
    )
    pairing: str = param(
        "seeds",
        doc="pairs: 'seeds' (same data) or 'halves' (disjoint halves)",
        validator=one_of(("seeds", "halves")),
    )
    num_epochs: int = param(30, doc="epochs of a member's training", validator=positive_int)
    num_finetune_steps: int = param(200, doc="Adam steps of each task fine-tune", validator=positive_int)
    learning_rate: float = param(1e-3, doc="Adam step size (members and fine-tunes)", validator=positive)
    batch_size: int = param(64, doc="minibatch size", validator=positive_int)
    tasks: list[str] = param(
        factory=lambda: list(TASKS), doc="fine-tuning tasks of a suite", validator=_check_tasks
    )
    validation: float = param(
        0.15, doc="fraction of images in the validation split", validator=in_range(0, 0.5, low_open=True)
    )
    test: float = param(
        0.25, doc="fraction of images in the test split", validator=in_range(0, 0.5, low_open=True)
    )
    cache: bool = param(True, doc="store trained members on disk (under cache_dir())")

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)
    _split_seed: int = attrs.field(default=-1, init=False, repr=False)
    _memo: dict = attrs.field(factory=dict, init=False, repr=False)

    check_params: ClassVar[dict[str, Any]] = {
        "hidden_sizes": [8],
        "num_epochs": 1,
        "num_finetune_steps": 2,
        "cache": False,
    }

    def prepare(self, *, generator: torch.Generator) -> None:
        """Load the digits and draw the train / validation / test split from ``generator``."""
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = (np.asarray(digits.data, np.float32) / 16.0).astype(np.float32)
        y = np.asarray(digits.target, np.int64)
        self._split_seed = int_seed(generator)
        order = np.random.default_rng(self._split_seed).permutation(len(y))
        n_test, n_val = round(self.test * len(y)), round(self.validation * len(y))
        parts = {
            "test": order[:n_test],
            "validation": order[n_test : n_test + n_val],
            "train": order[n_test + n_val :],
        }
        self._splits = {k: (x[v], y[v]) for k, v in parts.items()}
        self._memo = {}

    # ------------------------------------------------------------------ data
    def data(self, split: str, task: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(X: Tensor[n, 64] float32, y: LongTensor[n])`` of ``split``, for ``task`` (None: the ten digits).

        Raises:
            ConfigError: before :meth:`prepare`, or an unknown task. KeyError: an unknown split.
        """
        key = ("data", split, task)
        if key not in self._memo:
            x, y = self.split(split)
            if task is not None:
                rng = np.random.default_rng(derive_seed(self._split_seed, f"{task}/{split}"))
                x, y = digit_task(task, x, y, rng)
            self._memo[key] = (torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y))
        return self._memo[key]

    def task_data(self, task: str, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Task ``task`` (:data:`TASKS`) on ``split``: ``(Tensor[m, 64], LongTensor[m])``."""
        return self.data(split, task)

    def sizes(self, width: int | None, classes: int = 10) -> list[int]:
        """Layer widths ``[64, h, ..., h, classes]`` (``hidden_sizes`` when ``width`` is None)."""
        hidden = list(self.hidden_sizes) if width is None else [int(width)] * len(self.hidden_sizes)
        return [64, *hidden, classes]

    # ------------------------------------------------------------------ members
    def member(self, width: int | None, seed: int, part: str = "all") -> Params:
        """One network trained on the ten digits from ``seed``.

        Args:
            width: hidden width (None: ``hidden_sizes``).
            seed: any int; the initialisation and minibatch order derive from it.
            part: ``"all"`` training rows, or ``"first"`` / ``"second"`` half (disjoint, random).

        Raises:
            ConfigError: before :meth:`prepare`.
        """
        sizes = self.sizes(width)

        def fit() -> Params:
            x, y = self.data("train")
            if part != "all":
                half = np.random.default_rng(derive_seed(self._split_seed, "halves")).permutation(len(y))
                rows = half[: len(y) // 2] if part == "first" else half[len(y) // 2 :]
                x, y = x[torch.from_numpy(rows)], y[torch.from_numpy(rows)]
            gen = make_generator(derive_seed(seed, "member"))
            steps = self.num_epochs * math.ceil(len(y) / self.batch_size)
            params, _ = train(
                init_params(sizes, generator=gen),
                x,
                y,
                num_steps=steps,
                learning_rate=self.learning_rate,
                batch_size=self.batch_size,
                generator=gen,
            )
            return params

        return self._cached({"role": "member", "sizes": sizes, "seed": int(seed), "part": part}, fit)

    def pair(self, width: int | None, seed: int) -> tuple[Params, Params]:
        """Two members from seeds derived from ``seed`` (on disjoint halves with ``pairing = "halves"``)."""
        parts = ("first", "second") if self.pairing == "halves" else ("all", "all")
        return (
            self.member(width, derive_seed(seed, "a"), parts[0]),
            self.member(width, derive_seed(seed, "b"), parts[1]),
        )

    def suite(self, width: int | None, seed: int, tasks: list[str] | None = None) -> Suite:
        """A base member and one fine-tune per task (its own head, every layer trained).

        Args:
            width: hidden width (None: ``hidden_sizes``).
            seed: the base's seed; each fine-tune's head and minibatches derive from it and the task.
            tasks: a subset of the zoo's ``tasks`` (default: all of them), in the given order.

        Raises:
            ConfigError: a task that is not one of the zoo's.
        """
        tasks = list(self.tasks) if tasks is None else list(tasks)
        extra = [t for t in tasks if t not in self.tasks]
        if extra:
            raise ConfigError(f"tasks {extra} are not in the zoo's tasks {self.tasks}.", key="tasks")
        base = self.member(width, seed, "all")
        finetuned = {}
        for task in tasks:

            def fit(task: str = task) -> Params:
                gen = make_generator(derive_seed(seed, f"finetune/{task}"))
                classes = TASKS[task][3]
                head = init_params([int(base["weights"][-1].shape[1]), classes], generator=gen)
                start = {k: [*base[k][:-1], head[k][0]] for k in ("weights", "biases")}
                x, y = self.task_data(task, "train")
                params, _ = train(
                    start,
                    x,
                    y,
                    num_steps=self.num_finetune_steps,
                    learning_rate=self.learning_rate,
                    batch_size=self.batch_size,
                    generator=gen,
                )
                return params

            key = {
                "role": "finetune",
                "sizes": self.sizes(width),
                "seed": int(seed),
                "task": task,
                "steps": self.num_finetune_steps,
            }
            finetuned[task] = self._cached(key, fit)
        return Suite(base=base, finetuned=finetuned, tasks=tuple(tasks))

    def _cached(self, key: dict[str, Any], fit: Callable[[], Params]) -> Params:
        """``fit()`` memoised in memory and, with ``cache``, on disk under the hash of the full key."""
        if self._split_seed < 0:
            raise ConfigError("the zoo has no data yet: call prepare(generator=...) first.")
        full = {
            **key,
            "format": _FORMAT,
            "split_seed": self._split_seed,
            "epochs": self.num_epochs,
            "lr": self.learning_rate,
            "batch": self.batch_size,
            "validation": self.validation,
            "test": self.test,
            "torch": torch.__version__.split("+")[0],
        }
        digest = hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()[:32]
        if digest in self._memo:
            return self._memo[digest]
        path = cache_dir() / f"{digest}.pt"
        params = None
        if self.cache and path.is_file():
            try:
                params = torch.load(path, weights_only=True)
            except Exception:  # a torn or foreign file: train again and overwrite it
                params = None
        if params is None:
            params = fit()
            if self.cache:
                from quadriga.fileio import atomic_path

                with atomic_path(path) as tmp:
                    torch.save(params, tmp)
        self._memo[digest] = params
        return params
