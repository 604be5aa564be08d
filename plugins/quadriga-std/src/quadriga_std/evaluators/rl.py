"""Reinforcement-learning metrics: greedy episode return, learning curves, Q-value overestimation.

Every evaluator takes one or several ``Fitted`` subjects (a Q-network ``model`` mapping
``Tensor[..., obs_dim]`` to ``Tensor[..., num_actions]``) and groups them by replicate of one
configuration (the stage name before its last ``[i]``, :func:`quadriga.stage_names.replicate_base`):
the stages ``dqn[0]``, ``dqn[1]``, ... of ``[stage.dqn] repeat = N`` form the group ``dqn`` with a
mean and a standard error across replicates, and ``dqn[learning_rate=0.001][i]`` and
``dqn[learning_rate=0.01][i]`` are two groups, never pooled because they share a component.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs

from quadriga import Evaluator, Metrics, named, param
from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Environment
from quadriga.seeding import child_numpy_rng
from quadriga.stage_names import replicate_groups
from quadriga.validators import positive_int

__all__ = ["EpisodeReturn", "QOverestimation", "ReturnCurve", "discounted_returns", "greedy_episodes"]


def _stderr(values: list[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _groups(subjects: dict[str, Any]) -> dict[str, list[str]]:
    return {base: list(members) for base, members in replicate_groups(subjects).items()}


def _q_network(name: str, artifact: Any) -> Any:
    import torch

    model = getattr(artifact, "model", None)
    if not isinstance(model, torch.nn.Module):
        raise ConfigError(
            f"subject '{name}' has no Q-network (Fitted.model is {type(model).__name__}); "
            "pass the output of a DQN-family learner.",
            key="subject",
        )
    return model


def _episode_seed(generator: Any) -> int:
    """Reset seed of the first evaluation episode, from the ``"episodes"`` stream of the stage generator.

    Every subject of a stage gets the same episodes (paired comparison); another root seed gives others.
    """
    return int(child_numpy_rng(generator, "episodes").integers(0, 2**31 - 2**20))


def greedy_episodes(
    q_network: Any, env_task: Any, *, num_episodes: int, seed: int, max_episode_steps: int | None = None
) -> list[dict[str, Any]]:
    """Roll out the greedy policy ``argmax_a Q(s, a)``.

    Args:
        q_network: ``nn.Module`` mapping ``Tensor[n, obs_dim]`` to ``Tensor[n, num_actions]``, on any
            device (each observation is moved to its parameters' device; the episodes stay on the CPU).
        env_task: an Environment task (``make(**overrides) -> gymnasium.Env``).
        num_episodes: episodes to run; episode ``i`` is reset with seed ``seed + i``.
        seed: base reset seed.
        max_episode_steps: time-limit override (``None`` keeps the task's).

    Returns:
        One dict per episode: ``obs`` ``Tensor[T, obs_dim]``, ``actions`` ``Tensor[T]`` (int64),
        ``q`` ``Tensor[T]`` (Q(s_t, a_t), return units), ``rewards`` ``list[float]`` (length T),
        ``terminated`` (bool).
    """
    import numpy as np
    import torch

    env = env_task.make(max_episode_steps=max_episode_steps) if max_episode_steps else env_task.make()
    # a network trained on a GPU acts there: each observation goes to its parameters' device
    device = next(q_network.parameters(), torch.empty(0)).device
    episodes = []
    try:
        for i in range(num_episodes):
            obs, _ = env.reset(seed=seed + i)
            states, actions, qs, rewards = [], [], [], []
            terminated = truncated = False
            while not (terminated or truncated):
                x = torch.as_tensor(np.asarray(obs), dtype=torch.float32)
                with torch.no_grad():
                    q = q_network(x.unsqueeze(0).to(device))[0]
                a = int(q.argmax())
                states.append(x)
                actions.append(a)
                qs.append(float(q[a]))
                obs, r, terminated, truncated, _ = env.step(a)
                rewards.append(float(r))
            episodes.append(
                {
                    "obs": torch.stack(states),
                    "actions": torch.tensor(actions),
                    "q": torch.tensor(qs),
                    "rewards": rewards,
                    "terminated": bool(terminated),
                }
            )
    finally:
        env.close()
    return episodes


def discounted_returns(rewards: list[float], gamma: float) -> list[float]:
    """Monte-Carlo discounted returns ``G_t = sum_{k >= t} gamma^(k - t) r_k`` (list of length T)."""
    out, acc = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def _plain_number(v: float) -> str:
    """A tick label in plain digits: ``-10``, ``0``, ``1,000``, ``0.1``; ``1e+06`` from a million on."""
    if v == 0:
        return "0"
    if abs(v) >= 1e6:
        return f"{v:.0e}"
    return f"{v:,.0f}" if abs(v) >= 1 else f"{v:g}"


def _bar_figure(title: str, ylabel: str, groups: dict[str, list[float]]) -> Any:
    """Bars of the mean over seeds, a +-1 s.e. whisker where n >= 3, and one dot per seed.

    With two seeds the standard error bar would span exactly the two dots, so it is left out;
    the caption under the title says what bar, whisker and dots are. A symmetric log axis is
    used when one group is 100 times larger than the smallest, with ticks only at 0 and at
    powers of ten outside the linear band (so none collide near zero), each labelled in plain
    digits (``-10``, ``0``, ``1,000``), and no minor ticks.
    """
    import math

    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullLocator

    fig = Figure(figsize=(5.2, 4.0), layout="constrained")
    ax = fig.add_subplot()
    scale = ""
    for i, vals in enumerate(groups.values()):
        whisker = _stderr(vals) if len(vals) >= 3 else None
        ax.bar(i, _mean(vals), yerr=whisker, alpha=0.6, capsize=4)
        ax.scatter([i] * len(vals), vals, color="k", s=12, zorder=3)
    ax.set_xticks(range(len(groups)), [f"{name}\n(n = {len(v)} seeds)" for name, v in groups.items()])
    magnitudes = [abs(v) for vals in groups.values() for v in vals if v != 0]
    if magnitudes and max(magnitudes) > 100 * max(min(magnitudes), 1.0):
        lin = 10.0 ** math.floor(math.log10(max(min(magnitudes), 1.0)))
        ax.set_yscale("symlog", linthresh=lin)  # one diverged method must not hide the rest
        top = math.ceil(math.log10(max(magnitudes)))
        ticks = [10.0**k for k in range(int(math.log10(lin)), top + 1)]
        lows = [v for vals in groups.values() for v in vals]
        ax.set_yticks([*(-t for t in ticks if -t >= min(min(lows), 0) - t / 2), 0.0, *ticks])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _plain_number(v)))
        ax.yaxis.set_minor_locator(NullLocator())  # symlog's minor ticks would be unlabelled marks
        scale = f"\naxis: linear within \u00b1{_plain_number(lin)}, logarithmic beyond"
    ax.set_ylabel(ylabel)
    ax.set_title(
        f"{title}\nbar: mean over seeds; dots: seeds; whisker: \u00b11 s.e. (only for n \u2265 3){scale}",
        fontsize=8,
    )
    return fig


def _summarise(
    values: dict[str, float], groups: dict[str, list[str]], per_subject: dict[str, float], key: str
) -> dict[str, list[float]]:
    by_comp = {}
    for comp, names in groups.items():
        vals = [per_subject[n] for n in names]
        by_comp[comp] = vals
        if len(names) > 1 or comp not in names:
            values[f"{comp}/{key}_mean"] = _mean(vals)
            values[f"{comp}/{key}_stderr"] = _stderr(vals)
    return by_comp


@attrs.define(kw_only=True)
class EpisodeReturn(Evaluator):
    """Mean undiscounted return of each subject's greedy policy on the reference environment.

    ``evaluate(subject, reference)``: ``subject`` one ``Fitted`` or ``{stage: Fitted}``, ``reference``
    the Environment. Values: ``<stage>/mean_return``, ``<stage>/stderr`` (over episodes), and per
    configuration with several replicates ``<base>/mean_return_mean`` / ``_stderr`` (over seeds).
    Table ``episode_return``; figure ``episode_return`` (bars per component, dots per seed).

    Shapes:
        Each subject's Q-network maps observations ``Tensor[..., obs_dim]`` to ``Tensor[..., num_actions]``;
        every value is a scalar.

    Units:
        Returns in the environment's reward units (undiscounted sum over an episode); ``stderr`` is the
        standard error over ``num_episodes`` episodes.

    Raises:
        ConfigError: no reference environment, or a subject without a Q-network.

    Source: the standard greedy-policy evaluation of DQN (Mnih et al. 2015, Methods, "Evaluation procedure").
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Environment,)}

    num_episodes: int = param(10, doc="greedy evaluation episodes per subject", validator=positive_int)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        if reference is None:
            raise ConfigError(
                'episode-return needs the environment: inputs = { subject = [...], reference = "<task>" }.',
                key="reference",
            )
        subjects = named(subject)
        values, rows, per = {}, [], {}
        for name, art in subjects.items():
            eps = greedy_episodes(
                _q_network(name, art),
                reference,
                num_episodes=self.num_episodes,
                seed=_episode_seed(generator),
            )
            rets = [sum(e["rewards"]) for e in eps]
            per[name] = _mean(rets)
            values[f"{name}/mean_return"], values[f"{name}/stderr"] = per[name], _stderr(rets)
            rows.append(
                {
                    "subject": name,
                    "component": art.info.get("component", name),
                    "mean_return": per[name],
                    "stderr": _stderr(rets),
                    "num_episodes": len(rets),
                }
            )
        groups = _groups(subjects)
        by_comp = _summarise(values, groups, per, "mean_return")
        fig = _bar_figure("Greedy episode return", "return (sum of rewards per episode)", by_comp)
        return Metrics(values=values, tables={"episode_return": rows}, figures={"episode_return": fig})


@attrs.define(kw_only=True)
class ReturnCurve(Evaluator):
    """Learning curves from ``Fitted.history`` (``env_step``, ``episode_return``), their area and a plot.

    The curve of a subject at environment step g is the mean return of its last ``smoothing_episodes``
    training episodes that ended at or before g (before its first episode ends: that episode's return).
    All subjects share the grid of ``num_points`` steps up to the smallest final step among them.
    The area under the curve is normalised by the step range (trapezoid rule / range), i.e. the
    average return level over training (return units).

    Values: ``<stage>/auc``, ``<stage>/final_return``; per configuration with several replicates
    ``<component>/auc_mean``, ``<component>/auc_stderr``, ``<component>/final_return_mean``/``_stderr``.
    Table ``return_curve`` (one row per subject); figure ``return_curve``: mean across a component's
    subjects against env steps with a band of +- one standard error.

    Shapes:
        ``history["env_step"]`` and ``history["episode_return"]``: lists of equal length (one entry per
        finished episode); the common grid has ``num_points`` steps; every value is a scalar.

    Units:
        Environment steps on the x axis; returns (reward units) on the y axis; ``auc`` is a mean return.

    Raises:
        ConfigError: a subject without ``env_step``/``episode_return`` history or without any episode.

    Source: the normalised area under the return curve, the learning-speed summary used to compare
    target rules (e.g. Hendawy et al. 2025, MINTO, arXiv 2510.02590).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Environment,)}

    num_points: int = param(100, doc="grid points on the env-step axis", validator=positive_int)
    smoothing_episodes: int = param(10, doc="episodes averaged at each grid point", validator=positive_int)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        import numpy as np

        subjects = named(subject)
        hist = {}
        for name, art in subjects.items():
            steps, rets = art.history.get("env_step", []), art.history.get("episode_return", [])
            if not steps or len(steps) != len(rets):
                raise ConfigError(
                    f"subject '{name}' has no episode history (needs Fitted.history['env_step'] and "
                    "['episode_return'] of equal length); train it longer.",
                    key="subject",
                )
            last = art.info.get("env_steps", steps[-1])
            hist[name] = (np.asarray(steps, float), np.asarray(rets, float), float(last))
        end = min(h[2] for h in hist.values())
        grid = np.linspace(end / self.num_points, end, self.num_points)
        curves, values, rows = {}, {}, []
        for name, (steps, rets, _) in hist.items():
            counts = np.searchsorted(steps, grid, side="right")
            csum = np.concatenate([[0.0], np.cumsum(rets)])
            lo = np.maximum(counts - self.smoothing_episodes, 0)
            n = counts - lo
            curve = np.where(n > 0, (csum[counts] - csum[lo]) / np.maximum(n, 1), rets[0])
            curves[name] = curve
            auc = (
                float(np.trapezoid(curve, grid) / (grid[-1] - grid[0])) if len(grid) > 1 else float(curve[0])
            )
            values[f"{name}/auc"], values[f"{name}/final_return"] = auc, float(curve[-1])
            rows.append(
                {
                    "subject": name,
                    "component": subjects[name].info.get("component", name),
                    "auc": auc,
                    "final_return": float(curve[-1]),
                    "episodes": len(rets),
                }
            )
        groups = _groups(subjects)
        _summarise(values, groups, {n: values[f"{n}/auc"] for n in subjects}, "auc")
        _summarise(values, groups, {n: values[f"{n}/final_return"] for n in subjects}, "final_return")
        return Metrics(
            values=values,
            tables={"return_curve": rows},
            figures={"return_curve": self._figure(grid, curves, groups)},
            info={"grid_end": end},
        )

    def _figure(self, grid: Any, curves: dict[str, Any], groups: dict[str, list[str]]) -> Any:
        import numpy as np
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        for comp, names in groups.items():
            stack = np.stack([curves[n] for n in names])
            mean = stack.mean(0)
            se = stack.std(0, ddof=1) / np.sqrt(len(names)) if len(names) > 1 else np.zeros_like(mean)
            (line,) = ax.plot(grid, mean, label=f"{comp} (n={len(names)})")
            ax.fill_between(grid, mean - se, mean + se, color=line.get_color(), alpha=0.25)
        ax.set_xlabel("environment steps")
        ax.set_ylabel(f"return (mean of last {self.smoothing_episodes} episodes)")
        ax.legend()
        ax.set_title("Learning curves: line = mean over seeds, band = +-1 s.e. (none at n = 1)", fontsize=9)
        fig.tight_layout()
        return fig


@attrs.define(kw_only=True)
class QOverestimation(Evaluator):
    """Mean of Q(s, a) minus the discounted Monte-Carlo return obtained from s, on greedy episodes.

    For each subject, ``num_episodes`` greedy episodes are run on the reference environment; every
    state s_t of the first ``time limit`` steps enters with its greedy action a_t and
    ``G_t = sum_k gamma^k r_{t+k}``. So that the time limit does not cut the returns short, the
    rollouts are extended past the limit by ``tail_steps`` (default: the smallest k with
    gamma^k < 0.01), whose states are not scored. Values: ``<stage>/q_overestimation`` (mean of
    Q - G, return units), ``<stage>/q_overestimation_stderr`` (over episodes' means),
    ``<stage>/q_mean``, ``<stage>/mc_return_mean``; per configuration with several replicates
    ``<component>/q_overestimation_mean`` / ``_stderr`` (over seeds). Table and bar figure
    ``q_overestimation``.

    Shapes:
        Q-networks map ``Tensor[..., obs_dim]`` to ``Tensor[..., num_actions]``; every value is a scalar
        averaged over the scored states.

    Units:
        Discounted return units (reward units, discount ``gamma`` per environment step).

    Raises:
        ConfigError: no reference environment, or a subject without a Q-network.

    Source: the value-overestimation diagnostic of van Hasselt, Guez & Silver 2016 (Double DQN, Fig. 3):
    estimated values against the discounted returns actually obtained.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Environment,)}

    num_episodes: int = param(5, doc="greedy episodes per subject", validator=positive_int)
    gamma: float | None = param(None, doc="discount; None uses the subject's info['gamma'] (else 0.99)")
    tail_steps: int | None = param(None, doc="extra steps past the time limit (None: gamma^k < 0.01)")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        if reference is None:
            raise ConfigError(
                'q-overestimation needs the environment: inputs = { subject = [...], reference = "<task>" }.',
                key="reference",
            )
        subjects = named(subject)
        values, rows, per = {}, [], {}
        for name, art in subjects.items():
            gamma = float(self.gamma if self.gamma is not None else art.info.get("gamma", 0.99))
            limit = getattr(reference, "time_limit", None)
            tail = (
                self.tail_steps
                if self.tail_steps is not None
                else (0 if gamma == 0 else math.ceil(math.log(0.01) / math.log(gamma)) if gamma < 1 else 1000)
            )
            eps = greedy_episodes(
                _q_network(name, art),
                reference,
                num_episodes=self.num_episodes,
                seed=_episode_seed(generator),
                max_episode_steps=(limit + tail) if limit else None,
            )
            gaps, ep_means, qs, gs = [], [], [], []
            for e in eps:
                g = discounted_returns(e["rewards"], gamma)
                keep = len(g) if not limit else min(limit, len(g))
                d = [float(e["q"][t]) - g[t] for t in range(keep)]
                gaps += d
                ep_means.append(_mean(d))
                qs += [float(e["q"][t]) for t in range(keep)]
                gs += g[:keep]
            per[name] = _mean(gaps)
            row = {
                "subject": name,
                "component": art.info.get("component", name),
                "q_overestimation": per[name],
                "q_overestimation_stderr": _stderr(ep_means),
                "q_mean": _mean(qs),
                "mc_return_mean": _mean(gs),
                "states": len(gaps),
            }
            rows.append(row)
            for k in ("q_overestimation", "q_overestimation_stderr", "q_mean", "mc_return_mean"):
                values[f"{name}/{k}"] = row[k]
        groups = _groups(subjects)
        by_comp = _summarise(values, groups, per, "q_overestimation")
        fig = _bar_figure(
            "Q overestimation on greedy episodes", "mean Q(s, a) - G(s) (reward units)", by_comp
        )
        return Metrics(values=values, tables={"q_overestimation": rows}, figures={"q_overestimation": fig})
