"""read_replicates reads an evaluator stage, or the replicates of an evaluator repeated with the arms."""

from __future__ import annotations

import types

import pytest

from quadriga.claims import read_replicates
from quadriga.errors import ConfigError


def _result(stages):
    return types.SimpleNamespace(results={"stages": stages})


def test_one_evaluator_stage():
    res = _result({"acc": {"values": {"a[0]/m": 1.0, "a[1]/m": 2.0, "b[0]/m": 3.0, "b[1]/m": 4.0}}})
    assert read_replicates(res, "acc", ["a", "b"], "m") == {"a": [1.0, 2.0], "b": [3.0, 4.0]}


def test_an_evaluator_repeated_with_the_arms_is_pooled():
    res = _result({"acc[0]": {"values": {"a[0]/m": 1.0}}, "acc[1]": {"values": {"a[1]/m": 2.0}}})
    assert read_replicates(res, "acc", ["a"], "m") == {"a": [1.0, 2.0]}
    with pytest.raises(ConfigError, match="b"):
        read_replicates(res, "acc", ["b"], "m")
    with pytest.raises(ConfigError, match="no results"):
        read_replicates(res, "other", ["a"], "m")
