"""Test helpers: a tiny in-memory dataset and a silent progress object."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

from quadriga.interfaces import Dataset


@attrs.define
class ArrayDataset(Dataset):
    """A dataset from given arrays: ``split(name) -> (X, y)`` (test helper, not registered)."""

    splits: dict[str, tuple[Any, Any]]

    def split(self, name: str):
        X, y = self.splits[name]
        return np.asarray(X).copy(), np.asarray(y).copy()


class Silent:
    """A progress object that records what the learner logs."""

    def __init__(self):
        self.logged = []

    def start(self, total):
        self.total = total

    def advance(self, n):
        pass

    def log(self, step, **metrics):
        self.logged.append((step, metrics))


@pytest.fixture
def array_dataset():
    """The :class:`ArrayDataset` class (build it with ``array_dataset({"train": (X, y)})``)."""
    return ArrayDataset


@pytest.fixture
def progress():
    """A fresh :class:`Silent` progress object."""
    return Silent()
