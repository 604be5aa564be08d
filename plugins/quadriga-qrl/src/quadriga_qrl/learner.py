"""QRL and its temporal-difference baseline, offline on random-walk data of a graph environment.

Both learners take a graph task of quadriga-std's RL kit (``grid-maze``,
``discretized-mountain-car``), draw the same offline data set (``num_walks`` uniform random-policy
walks of ``walk_length`` steps, stream ``"data"``) and train for ``num_updates`` Adam steps on
minibatches of ``batch_size`` transitions with networks of ``hidden_sizes``: the same budget.

**QRL** (:class:`QRL`): encoder ``z = f(s)``, quasimetric ``d(s, g) = IQE(h(f(s)), h(f(g)))``
(:mod:`quadriga_qrl.iqe`), latent dynamics ``T(z, a) = z + t([z, onehot(a)])``. Per minibatch of
transitions ``(s, a, s')`` and random goals ``g`` (data states)::

    push       = mean softplus(offset - d(s, g); beta)        # = -phi(d), phi concave, saturating
    violation  = mean relu(d(s, s') - cost)^2 - epsilon^2      # local constraint, <= 0 when met
    lam        = softplus(raw_lam)                              # Lagrange multiplier >= 0
    dynamics   = mean d(T(z, a), f(s'))^2 + d(f(s'), T(z, a))^2
    loss_theta = push + lam * violation + w_dyn * dynamics      # gradient descent on theta
    loss_lam   = -lam * violation (violation detached)          # gradient ascent on lam (dual)

i.e. ``max_theta E[phi(d(s, g))]`` subject to ``E[relu(d(s, s') - c)^2] <= epsilon^2``, solved on the
Lagrangian with the multiplier updated by dual ascent (the official code flips the multiplier's
gradient with ``grad_mul(lam, -1)`` inside the critic's optimizer; here the ascent step has its own
Adam with step size ``dual_learning_rate``, so lambda settles within a short budget). The policy is
``a* = argmin_a d(T(f(s), a), f(g))`` (one-step planning in latent space).

**Baseline** (:class:`GoalConditionedTD`): a goal-conditioned action-distance network
``Q(s, a, g)`` (an MLP on ``[s, g]``, no quasimetric structure) trained by hindsight-relabelled
temporal differences on the same data: ``Q(s, a, g) <- c + [s' != g] min_a' Q_target(s', a', g)``
(the steps-to-go Bellman equation), goals relabelled to the next state, a future state of the same
walk or a random data state (Andrychowicz et al. 2017); ``d(s, g) = min_a Q(s, a, g)``, policy
``argmin_a Q(s, a, g)``.

Source: Wang, Torralba, Isola & Zhang 2023, "Optimal Goal-Reaching Reinforcement Learning via
Quasimetric Learning" (ICML, arXiv 2304.01203), the QRL objective (maximise the
distance of random pairs subject to one-step distances at most the cost, its Lagrangian, and the
latent dynamics for acting; section and equation numbers not checked against the PDF); code
``quasimetric_rl/modules/quasimetric_critic/losses/
{global_push,local_constraint,latent_dynamics}.py`` (phi, epsilon = 0.25, multiplier initial 0.01).
Baseline: Kaelbling 1993; Andrychowicz et al. 2017 (HER) with a DQN-style target network (Mnih et
al. 2015).
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import attrs
import torch
import torch.nn.functional as F
from torch import nn

from quadriga import Learner, param
from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Environment
from quadriga.seeding import child_generator, child_numpy_rng
from quadriga.threads import single_thread
from quadriga.validators import (
    in_range,
    int_at_least,
    non_negative,
    positive,
    positive_int,
    positive_int_list,
)
from quadriga_qrl.iqe import IQE

__all__ = ["QRL", "GoalConditionedTD", "QuasimetricCritic", "TDDistance"]


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class QuasimetricCritic(nn.Module):
    """QRL's critic: encoder, IQE quasimetric head and latent dynamics.

    Args:
        obs_dim: ``d`` observation size.
        num_actions: ``A``.
        hidden_sizes: hidden widths of the encoder, the projector and the dynamics MLPs.
        latent_dim: size of ``z = f(s)``.
        num_components: IQE components ``k``; the projector outputs ``k * component_dim``.
        component_dim: coordinates ``m`` per IQE component.

    Shapes:
        ``distance(obs Tensor[n, d], goal Tensor[n, d]) -> Tensor[n]`` (steps);
        ``act(obs, goal) -> Tensor[n]`` int64 actions; ``encode(obs) -> Tensor[n, latent_dim]``.

    Source: Wang et al. 2023 (QRL), Section 4 (critic and latent dynamics); IQE of Wang & Isola 2022.
    """

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        hidden_sizes: list[int],
        latent_dim: int,
        num_components: int,
        component_dim: int,
    ) -> None:
        super().__init__()
        self.num_actions = int(num_actions)
        self.encoder = _mlp([obs_dim, *hidden_sizes, latent_dim])
        self.projector = _mlp([latent_dim, *hidden_sizes, num_components * component_dim])
        self.quasimetric = IQE(num_components)
        self.dynamics = _mlp([latent_dim + num_actions, *hidden_sizes, latent_dim])

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """``z = f(obs)``."""
        return self.encoder(obs)

    def latent_distance(self, z: torch.Tensor, zg: torch.Tensor) -> torch.Tensor:
        """``d = IQE(h(z), h(zg))`` on latents ``[..., latent_dim]``."""
        return self.quasimetric(self.projector(z), self.projector(zg))

    def transition(self, z: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """``T(z, a) = z + t([z, onehot(a)])``."""
        onehot = F.one_hot(action, self.num_actions).to(z.dtype)
        return z + self.dynamics(torch.cat([z, onehot], -1))

    def distance(self, obs: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """Learned steps-to-go from ``obs`` to ``goal``."""
        return self.latent_distance(self.encode(obs), self.encode(goal))

    def act(self, obs: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """``argmin_a d(T(f(obs), a), f(goal))``."""
        z, zg = self.encode(obs), self.encode(goal)
        n = z.shape[0]
        acts = torch.arange(self.num_actions).repeat(n)
        z_next = self.transition(z.repeat_interleave(self.num_actions, 0), acts)
        d = self.latent_distance(z_next, zg.repeat_interleave(self.num_actions, 0))
        return d.reshape(n, self.num_actions).argmin(-1)


class TDDistance(nn.Module):
    """The baseline's goal-conditioned action distance ``Q(s, a, g)`` (MLP on ``[s, g]``).

    Shapes:
        ``forward(obs Tensor[n, d], goal Tensor[n, d]) -> Tensor[n, A]``; ``distance -> Tensor[n]``
        (``min_a Q``, steps); ``act -> Tensor[n]`` int64 (``argmin_a Q``).

    Source: Kaelbling 1993 (steps-to-go); Andrychowicz et al. 2017 (``[s, g]`` input).
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden_sizes: list[int]) -> None:
        super().__init__()
        self.net = _mlp([2 * obs_dim, *hidden_sizes, num_actions])

    def forward(self, obs: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """``Q(s, ., g)``: ``Tensor[n, A]``."""
        return self.net(torch.cat([obs, goal], -1))

    def distance(self, obs: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """``min_a Q(s, a, g)``."""
        return self(obs, goal).min(-1).values

    def act(self, obs: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """``argmin_a Q(s, a, g)``."""
        return self(obs, goal).argmin(-1)


@attrs.define(kw_only=True)
class _OfflineGoalLearner(Learner):
    """Shared surface: the graph task, the random-walk data set and the common budget."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Environment,)}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"maze": {"use": "grid-maze", "layout": ["#####", "#...#", "#.#.#", "#...#", "#####"]}},
        "inputs": {"task": "maze"},
    }
    check_params: ClassVar[dict[str, Any]] = {"num_updates": 5, "num_walks": 4, "walk_length": 10}

    num_walks: int = param(200, doc="random-policy walks in the offline data set", validator=positive_int)
    walk_length: int = param(50, doc="steps per walk", validator=int_at_least(2))
    num_updates: int = param(1000, doc="gradient steps", validator=positive_int)
    batch_size: int = param(256, doc="transitions per minibatch", validator=int_at_least(2))
    learning_rate: float = param(1e-3, doc="Adam step size", validator=positive)
    hidden_sizes: list[int] = param(
        factory=lambda: [64, 64], doc="hidden widths of every MLP", validator=positive_int_list
    )
    step_cost: float = param(1.0, doc="cost c of one transition (steps)", validator=positive)

    def _data(self, task: Any, generator: torch.Generator) -> dict[str, Any]:
        graph = getattr(task, "graph", None)
        if not callable(graph):
            raise ConfigError(
                f"{type(self).__name__} needs a graph environment (grid-maze, discretized-mountain-car) "
                "with graph(); got " + type(task).__name__ + ".",
                key="task",
            )
        g = graph()
        states, actions = g.random_walks(self.num_walks, self.walk_length, child_numpy_rng(generator, "data"))
        return {
            "graph": g,
            "obs": torch.as_tensor(g.observations),
            "states": torch.as_tensor(states),
            "actions": torch.as_tensor(actions),
        }

    def _batch(self, data: dict[str, Any], draws: torch.Generator) -> tuple[torch.Tensor, ...]:
        """Indices ``(walk, t)`` of ``batch_size`` transitions and a random data state per row."""
        W, T = data["actions"].shape
        w = torch.randint(0, W, (self.batch_size,), generator=draws)
        t = torch.randint(0, T, (self.batch_size,), generator=draws)
        flat = data["states"].reshape(-1)
        rand = flat[torch.randint(0, flat.numel(), (self.batch_size,), generator=draws)]
        return w, t, rand


@attrs.define(kw_only=True)
class QRL(_OfflineGoalLearner):
    """Quasimetric RL: an IQE critic trained by the constrained push objective, with latent planning.

    ``fit(task)`` returns ``Fitted(model=QuasimetricCritic)`` (``model.distance``, ``model.act``);
    ``history`` logs ``push``, ``violation``, ``lagrange_multiplier``, ``dynamics``, ``mean_distance``
    every ``log_interval`` steps; ``info``: ``transitions``, ``updates``, ``seconds``,
    ``final_violation``, ``lagrange_multiplier``.

    Shapes:
        Data ``[num_walks, walk_length]`` transitions; minibatches ``[batch_size, d]``.

    Units:
        Distances in environment steps (the constraint pins one transition to ``step_cost``).

    Raises:
        ConfigError: a task without ``graph()``; bad hyperparameters (named).

    Source: Wang, Torralba, Isola & Zhang 2023 (ICML), Section 4; see the module docstring.
    """

    latent_dim: int = param(32, doc="encoder output size", validator=positive_int)
    num_components: int = param(8, doc="IQE components k", validator=positive_int)
    component_dim: int = param(8, doc="coordinates m per IQE component", validator=positive_int)
    push_offset: float = param(
        15.0, doc="offset of phi(d) = -softplus(offset - d; beta) (steps)", validator=positive
    )
    push_beta: float = param(0.1, doc="beta of the softplus in phi (1/steps)", validator=positive)
    epsilon: float = param(0.25, doc="tolerance of the local constraint (steps)", validator=positive)
    initial_multiplier: float = param(0.01, doc="initial Lagrange multiplier", validator=positive)
    dual_learning_rate: float = param(
        0.05,
        doc="Adam step size of the multiplier's raw parameter (the code shares the critic's; a faster "
        "dual step lets lambda settle within a budget of 1000 updates)",
        validator=positive,
    )
    dynamics_weight: float = param(
        1.0, doc="weight of the latent dynamics loss (code default 0.1; 1.0 tuned)", validator=non_negative
    )
    log_interval: int = param(50, doc="steps between history records", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Train the critic on the task's random-walk data; see the class docstring."""
        t0 = time.perf_counter()
        with single_thread(), torch.random.fork_rng(devices=[]):  # initialise from the stage's stream
            torch.manual_seed(
                int(torch.randint(0, 2**31 - 1, (1,), generator=child_generator(generator, "init")))
            )
            data = self._data(task, generator)
            obs, states, actions = data["obs"], data["states"], data["actions"]
            critic = QuasimetricCritic(
                obs.shape[1],
                data["graph"].num_actions,
                list(self.hidden_sizes),
                self.latent_dim,
                self.num_components,
                self.component_dim,
            )
            raw_lam = nn.Parameter(torch.tensor(math.log(math.expm1(self.initial_multiplier))))
            opt = torch.optim.Adam(critic.parameters(), lr=self.learning_rate)
            dual_opt = torch.optim.Adam([raw_lam], lr=self.dual_learning_rate)
            draws = child_generator(generator, "batches")
            history: dict[str, list] = {
                k: []
                for k in ("step", "push", "violation", "lagrange_multiplier", "dynamics", "mean_distance")
            }
            progress.start(self.num_updates)
            for step in range(1, self.num_updates + 1):
                w, t, rand = self._batch(data, draws)
                s, s_next, g = obs[states[w, t]], obs[states[w, t + 1]], obs[rand]
                z, z_next, zg = critic.encode(torch.cat([s, s_next, g])).chunk(3)
                z_pred = critic.transition(z, actions[w, t])  # T(z, a)
                p, p_next, p_goal, p_pred = critic.projector(torch.cat([z, z_next, zg, z_pred])).chunk(4)
                d_goal = critic.quasimetric(p, p_goal)  # d(s, g), g a random data state
                push = F.softplus(self.push_offset - d_goal, beta=self.push_beta).mean()  # -phi(d(s, g))
                d_local = critic.quasimetric(p, p_next)  # d(s, s')
                violation = (d_local - self.step_cost).relu().square().mean() - self.epsilon**2
                lam = F.softplus(raw_lam)
                dyn = (
                    critic.quasimetric(p_pred, p_next).square() + critic.quasimetric(p_next, p_pred).square()
                ).mean()
                loss = push + lam.detach() * violation + self.dynamics_weight * dyn
                opt.zero_grad()
                loss.backward()
                opt.step()
                dual_opt.zero_grad()
                (-F.softplus(raw_lam) * violation.detach()).backward()  # dual ascent on lam
                dual_opt.step()
                if step % self.log_interval == 0 or step == self.num_updates:
                    for k, v in (
                        ("step", step),
                        ("push", push),
                        ("violation", violation),
                        ("lagrange_multiplier", lam),
                        ("dynamics", dyn),
                        ("mean_distance", d_goal.mean()),
                    ):
                        history[k].append(float(v.detach()) if torch.is_tensor(v) else float(v))
                progress.advance()
        info = {
            "transitions": int(actions.numel()),
            "updates": self.num_updates,
            "seconds": time.perf_counter() - t0,
            "final_violation": history["violation"][-1],
            "lagrange_multiplier": float(F.softplus(raw_lam.detach())),
        }
        return Fitted(model=critic.eval().requires_grad_(False), history=history, info=info)


@attrs.define(kw_only=True)
class GoalConditionedTD(_OfflineGoalLearner):
    """Goal-conditioned TD distance with hindsight relabelling: QRL's baseline without quasimetric structure.

    ``fit(task)`` returns ``Fitted(model=TDDistance)`` (``model.distance``, ``model.act``) trained
    on the same data and budget as :class:`QRL`; ``history`` logs ``td_loss`` and ``mean_distance``.

    Shapes:
        ``Q(s, ., g)`` is ``Tensor[batch_size, A]``.

    Units:
        Distances in environment steps (``step_cost`` per transition).

    Raises:
        ConfigError: a task without ``graph()``; relabelling fractions that sum above 1.

    Source: Kaelbling 1993; Andrychowicz et al. 2017 (HER, "future" relabelling); Mnih et al. 2015
    (target network, here Polyak averaging).
    """

    next_goal_fraction: float = param(
        0.2, doc="goals set to s' (grounds d = c)", validator=in_range(0.0, 1.0)
    )
    future_goal_fraction: float = param(
        0.5, doc="goals set to a later state of the same walk", validator=in_range(0.0, 1.0)
    )
    target_update_rate: float = param(
        0.05, doc="Polyak rate tau of the target network", validator=in_range(0.0, 1.0)
    )
    log_interval: int = param(50, doc="steps between history records", validator=positive_int)

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Train ``Q(s, a, g)`` by relabelled TD on the task's random-walk data; see the class docstring."""
        if self.next_goal_fraction + self.future_goal_fraction > 1:
            raise ConfigError(
                "next_goal_fraction + future_goal_fraction must be at most 1, got "
                f"{self.next_goal_fraction} + {self.future_goal_fraction}.",
                key="future_goal_fraction",
            )
        t0 = time.perf_counter()
        with single_thread(), torch.random.fork_rng(devices=[]):  # initialise from the stage's stream
            torch.manual_seed(
                int(torch.randint(0, 2**31 - 1, (1,), generator=child_generator(generator, "init")))
            )
            data = self._data(task, generator)
            obs, states, actions = data["obs"], data["states"], data["actions"]
            A = data["graph"].num_actions
            q_net = TDDistance(obs.shape[1], A, list(self.hidden_sizes))
            target = TDDistance(obs.shape[1], A, list(self.hidden_sizes)).requires_grad_(False)
            target.load_state_dict(q_net.state_dict())
            opt = torch.optim.Adam(q_net.parameters(), lr=self.learning_rate)
            draws = child_generator(generator, "batches")
            T = actions.shape[1]
            history: dict[str, list] = {"step": [], "td_loss": [], "mean_distance": []}
            progress.start(self.num_updates)
            for step in range(1, self.num_updates + 1):
                w, t, rand = self._batch(data, draws)
                u = torch.rand(self.batch_size, generator=draws)
                later = t + 1 + (torch.rand(self.batch_size, generator=draws) * (T - t)).long()  # in (t, T]
                goal_state = torch.where(
                    u < self.next_goal_fraction,
                    states[w, t + 1],
                    torch.where(
                        u < self.next_goal_fraction + self.future_goal_fraction, states[w, later], rand
                    ),
                )
                s, s_next, g = obs[states[w, t]], obs[states[w, t + 1]], obs[goal_state]
                with torch.no_grad():
                    reached = (states[w, t + 1] == goal_state).float()
                    td_target = self.step_cost + (1 - reached) * target(s_next, g).min(-1).values
                q = q_net(s, g).gather(1, actions[w, t, None]).squeeze(1)
                loss = F.smooth_l1_loss(q, td_target)
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    for p_t, p in zip(target.parameters(), q_net.parameters(), strict=True):
                        p_t.lerp_(p, self.target_update_rate)
                if step % self.log_interval == 0 or step == self.num_updates:
                    history["step"].append(step)
                    history["td_loss"].append(float(loss.detach()))
                    history["mean_distance"].append(float(q.detach().mean()))
                progress.advance()
        info = {
            "transitions": int(actions.numel()),
            "updates": self.num_updates,
            "seconds": time.perf_counter() - t0,
        }
        return Fitted(model=q_net.eval().requires_grad_(False), history=history, info=info)
