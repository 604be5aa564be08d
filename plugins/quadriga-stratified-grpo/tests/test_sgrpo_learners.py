"""GRPO / Stratified GRPO learners: determinism, learning, equivalence at alpha = 0, KL, errors."""

import pytest
import torch
from quadriga_stratified_grpo.grpo import GRPO, StratifiedGRPO, _k3_kl, make_policy
from quadriga_stratified_grpo.task import SearchAgent

from quadriga import ConfigError
from quadriga.progress import StageProgress

SMALL = {"num_updates": 3, "num_prompts": 2, "group_size": 4, "hidden_sizes": [16]}


def _fit(learner, task=None, seed=0, stage="s"):
    records: list[dict] = []
    progress = StageProgress(stage, on_log=records.append)
    fitted = learner.fit(
        task or SearchAgent(), generator=torch.Generator().manual_seed(seed), progress=progress
    )
    return fitted, records


def test_same_seed_same_numbers_and_history_layout():
    a, records = _fit(StratifiedGRPO(**SMALL))
    b, _ = _fit(StratifiedGRPO(**SMALL))
    assert a.history == b.history
    assert a.history["step"] == [1, 2, 3] and len(a.history["mean_return"]) == 3
    assert [r["step"] for r in records] == [1, 2, 3]
    assert {"mean_return", "tool_calls"} <= set(records[0])
    assert a.info["label"] == "stratified-grpo(alpha=0.5)" and a.info["episodes"] == 24
    c, _ = _fit(StratifiedGRPO(**SMALL), seed=1)
    assert c.history != a.history


def test_alpha_zero_is_exactly_grpo():
    g, _ = _fit(GRPO(**SMALL))
    s, _ = _fit(StratifiedGRPO(alpha=0.0, **SMALL))
    assert g.history == s.history
    for p, q in zip(g.model.parameters(), s.model.parameters(), strict=False):
        assert torch.equal(p, q)


@pytest.mark.parametrize("cls", [GRPO, StratifiedGRPO])
def test_learns_a_known_answer(cls):
    # one question whose answer is always 0 and a useless tool: the optimum is to answer 0 at once (return 1)
    task = SearchAgent(prior_accuracy=[1.0], clue_quality=[0.0], tool_cost=0.2)
    fitted, _ = _fit(cls(num_updates=40, num_prompts=2, group_size=8, learning_rate=0.01), task=task)
    first, last = fitted.history["mean_return"][0], fitted.history["mean_return"][-5:]
    assert first < 0.5  # the near-uniform initial policy answers right about 1/5 of the time
    assert sum(last) / 5 > 0.85
    assert sum(fitted.history["tool_calls"][-5:]) / 5 < 0.1


def test_kl_penalty_runs_and_k3_estimates_kl():
    fitted, _ = _fit(GRPO(kl_coeff=0.1, **SMALL))
    assert len(fitted.history["mean_return"]) == 3
    gen = torch.Generator().manual_seed(0)
    policy, reference = make_policy(5, 3, [8], gen), make_policy(5, 3, [8], gen)
    for p in reference.parameters():  # make the reference clearly different
        p.data.mul_(50)
    obs = torch.rand(1, 5, generator=gen).repeat(3, 1)
    actions = torch.arange(3)
    with torch.no_grad():
        k3 = _k3_kl(policy, reference, obs, actions)
        logp, logq = torch.log_softmax(policy(obs[:1]), -1)[0], torch.log_softmax(reference(obs[:1]), -1)[0]
    # E_{a ~ pi}[k3] = KL(pi || pi_ref), summed exactly over the 3 actions
    assert float((logp.exp() * k3).sum()) == pytest.approx(
        float((logp.exp() * (logp - logq)).sum()), rel=1e-5
    )
    with torch.no_grad():
        assert float(_k3_kl(policy, policy, obs, actions).abs().max()) == 0.0


def test_missing_stratum_key_names_the_stage():
    with pytest.raises(ConfigError, match=r"stage 'sgrpo-s3'.*'num_searches' is missing"):
        _fit(StratifiedGRPO(stratum_key="num_searches", **SMALL), stage="sgrpo-s3")


def test_bad_hyperparameters_fail_when_built():
    with pytest.raises(ConfigError, match="group_size"):
        GRPO(group_size=1)
    with pytest.raises(ConfigError, match="alpha"):
        StratifiedGRPO(alpha=1.2)
    with pytest.raises(ConfigError, match="clip_epsilon"):
        GRPO(clip_epsilon=0.0)
    with pytest.raises(ConfigError, match="hidden_sizes"):
        GRPO(hidden_sizes=[])


@pytest.mark.parametrize("name", ["grpo", "stratified-grpo"])
def test_pipeline_wiring_a_dataset_to_task_is_refused_when_checked(name):
    from quadriga.pipeline import load_pipeline
    from quadriga.registry import Registry

    registry = Registry()
    datasets = sorted(c.name for c in registry.components() if c.kind == "dataset")
    if not datasets:
        pytest.skip("no dataset component installed")
    stage = {"use": name, "inputs": {"task": "data"}, **SMALL}
    with pytest.raises(ConfigError, match="accepts Environment") as info:
        load_pipeline(
            {
                "pipeline": {"name": "p", "seed": 0},
                "task": {"data": {"use": datasets[0]}},
                "stage": {"learner": stage},
            },
            registry,
        )
    assert info.value.key == "inputs.task"
    ok = load_pipeline(
        {
            "pipeline": {"name": "p", "seed": 0},
            "task": {"env": {"use": "search-agent"}},
            "stage": {"learner": {**stage, "inputs": {"task": "env"}}},
        },
        registry,
    )
    assert ok.stages["learner"].inputs == {"task": "env"}


def test_greedy_evaluation_is_shared_and_between_share_is_a_fraction():
    from quadriga_stratified_grpo.task import MultiHopSearch

    small = {**SMALL, "greedy_episodes": 6}
    g, _ = _fit(GRPO(**small), task=MultiHopSearch())
    s, _ = _fit(StratifiedGRPO(alpha=0.0, **small), task=MultiHopSearch(), seed=0)
    # alpha = 0 is GRPO update for update, and both are evaluated on the same fixed episodes
    assert g.info["greedy_return"] == s.info["greedy_return"]
    assert 0.0 <= g.info["greedy_accuracy"] <= 1.0 and 0.0 <= g.info["greedy_tool_calls"] <= 2.0
    # returns are correct - 0.1 * calls on 6 questions x 6 episodes
    assert g.info["greedy_return"] == pytest.approx(
        g.info["greedy_accuracy"] - 0.1 * g.info["greedy_tool_calls"], abs=1e-6
    )
    assert len(g.history["between_share"]) == 3
    assert all(0.0 <= v <= 1.0 for v in g.history["between_share"])
    assert any(v > 0.0 for v in g.history["between_share"])
    off, _ = _fit(GRPO(**{**SMALL, "greedy_episodes": 0}), task=MultiHopSearch())
    assert "greedy_return" not in off.info


@pytest.mark.parametrize("cls", [GRPO, StratifiedGRPO])
def test_nan_reward_is_an_error_naming_the_update(cls, monkeypatch):
    # a NaN return would make its whole group's advantages NaN (or zero after nan_to_num): refuse it
    import quadriga_stratified_grpo.rollout as grpo_module

    from quadriga.errors import NonFiniteError

    real = grpo_module.collect_groups
    calls = {"n": 0}

    def poisoned(*args, **kwargs):
        batch = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 2:
            batch.returns[0] = float("nan")
        return batch

    monkeypatch.setattr(grpo_module, "collect_groups", poisoned)
    with pytest.raises(NonFiniteError, match="rollout rewards at step 2"):
        _fit(cls(**SMALL), stage="grpo")
