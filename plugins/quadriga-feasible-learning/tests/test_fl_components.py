"""The evaluator's closed forms and the errors on bad input (conformance: test_fl_conformance.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_feasible_learning.evaluators import LossDistribution
from quadriga_feasible_learning.learners import FeasibleLearning

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.seeding import make_generator


def _identity_fit(multipliers=None):
    model = torch.nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(1.0)
        model.bias.fill_(0.0)
    info = {"task_type": "regression", "epsilon": 0.5}
    if multipliers is not None:
        info["multipliers"] = torch.tensor(multipliers)
    return Fitted(model=model, info=info)


def test_loss_distribution_closed_form(array_dataset):
    # y has mean 0 and std 1, so standardisation leaves it unchanged; prediction = x
    X, y = np.array([[-1.0], [1.0], [1.0], [1.0]]), np.array([-1.0, 1.0, -1.0, 1.0])
    data = array_dataset({"train": (X, y), "test": (X, y)})
    subjects = {"fl[0]": _identity_fit([0.0, 0.0, 2.0, 0.0]), "erm[0]": _identity_fit()}
    m = LossDistribution(baseline="erm").evaluate(subjects, data, generator=make_generator(0))
    v = m.values
    assert v["fl[0]/train_mean"] == 1.0 and v["fl[0]/train_max"] == 4.0
    assert v["fl[0]/train_feasible_fraction"] == 0.75 and v["erm[0]/test_mse"] == 1.0
    assert v["fl[0]/train_q99"] == pytest.approx(4.0 - 0.03 * 4.0)  # linear between 0 and 4 at 0.99 * 3
    assert v["fl[0]/multiplier_nonzero_fraction"] == 0.25 and v["fl[0]/multiplier_top10_share"] == 1.0
    assert v["fl[0]/multiplier_spearman_baseline"] == pytest.approx(1.0)
    assert "erm[0]/multiplier_mean" not in v
    assert set(m.figures) == {"losses", "multipliers"} and m.problems() == []


def test_loss_distribution_matches_subjects_to_replicate_datasets(array_dataset, progress):
    rng = np.random.default_rng(0)
    sets = {
        f"d[{i}]": array_dataset(
            {
                "train": (rng.normal(size=(20, 3)), rng.normal(size=20)),
                "test": (rng.normal(size=(10, 3)), rng.normal(size=10)),
            }
        )
        for i in range(2)
    }
    fits = {
        f"fl[{i}]": FeasibleLearning(hidden_sizes=[4], num_epochs=2, epsilon=0.5).fit(
            sets[f"d[{i}]"], generator=make_generator(i), progress=progress
        )
        for i in range(2)
    }
    v = LossDistribution().evaluate(fits, sets, generator=make_generator(0)).values
    assert v["fl[0]/train_mean"] != v["fl[1]/train_mean"]
    with pytest.raises(ConfigError, match="replicate index"):
        LossDistribution().evaluate({"fl[5]": fits["fl[0]"]}, sets, generator=make_generator(0))
    with pytest.raises(ConfigError, match="reference"):
        LossDistribution().evaluate(fits, None, generator=make_generator(0))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("epsilon", -1.0),
        ("dual_learning_rate", 0.0),
        ("hidden_sizes", []),
        ("task_type", "ranking"),
        ("alpha", float("nan")),
    ],
)
def test_bad_parameters_name_the_key(key, value):
    with pytest.raises(ConfigError) as err:
        FeasibleLearning(**{key: value})
    assert key in str(err.value)


def test_task_without_train_split_is_a_config_error(array_dataset, progress):
    with pytest.raises(ConfigError, match="train"):
        FeasibleLearning(num_epochs=1).fit(
            array_dataset({"test": (np.zeros((2, 1)), np.zeros(2))}),
            generator=make_generator(0),
            progress=progress,
        )
