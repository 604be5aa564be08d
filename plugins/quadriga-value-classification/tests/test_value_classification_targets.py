"""The target histograms and the cross-entropy loss against closed forms (no environment steps)."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_value_classification.learner import CategoricalQNetwork, DQNHLGauss, DQNTwoHot
from quadriga_value_classification.targets import (
    bin_centres,
    bin_edges,
    clip_to,
    expected_value,
    hl_gauss,
    two_hot,
)
from scipy.stats import norm

from quadriga.errors import ConfigError

EDGES = bin_edges(-10.0, 10.0, 51, dtype=torch.float64)
CENTRES = bin_centres(EDGES)
ZETA = 20.0 / 51


def test_bins_follow_the_papers_edge_convention():
    assert EDGES.shape == (52,) and CENTRES.shape == (51,)
    assert EDGES[0] == -10.0 and EDGES[-1] == 10.0
    torch.testing.assert_close(CENTRES[1:] - CENTRES[:-1], torch.full((50,), ZETA, dtype=torch.float64))
    torch.testing.assert_close(CENTRES[0], torch.tensor(-10.0 + ZETA / 2, dtype=torch.float64))


def test_hl_gauss_at_a_bin_centre_with_vanishing_sigma_is_one_hot():
    y = CENTRES[[0, 7, 25, 50]]
    p = hl_gauss(y, EDGES, sigma=1e-4 * ZETA)
    torch.testing.assert_close(p, torch.eye(51, dtype=torch.float64)[[0, 7, 25, 50]])


def test_hl_gauss_matches_normal_bin_masses_renormalised():
    y, sigma = torch.tensor([1.3], dtype=torch.float64), 0.75 * ZETA
    e = EDGES.numpy()
    mass = norm.cdf(e[1:], loc=1.3, scale=sigma) - norm.cdf(e[:-1], loc=1.3, scale=sigma)
    expected = mass / (norm.cdf(10.0, 1.3, sigma) - norm.cdf(-10.0, 1.3, sigma))
    torch.testing.assert_close(
        hl_gauss(y, EDGES, sigma)[0], torch.from_numpy(expected), atol=1e-12, rtol=1e-9
    )


def test_hl_gauss_mean_equals_the_target_inside_the_support():
    sigma = 0.75 * ZETA
    # four sigma (and more) inside the support the mean is the target to 1e-4
    y = torch.linspace(-10 + 4 * sigma, 10 - 4 * sigma, 301, dtype=torch.float64)
    p = hl_gauss(y, EDGES, sigma)
    torch.testing.assert_close(p.sum(-1), torch.ones_like(y))
    assert (p >= 0).all()
    assert (expected_value(p, CENTRES) - y).abs().max() < 1e-4
    # nearer the edges the truncation pulls the mean inwards: it follows the mean of N(y, sigma^2)
    # truncated to [-10, 10] (closed form y + sigma (phi(a) - phi(b)) / (Phi(b) - Phi(a))) up to the
    # binning of the outermost bins (below 2.5e-3 from two sigma inside, 0.036 at the edge itself)
    y = torch.linspace(0.0, 9.999, 200, dtype=torch.float64)
    a, b = (-10 - y.numpy()) / sigma, (10 - y.numpy()) / sigma
    truncated = y.numpy() + sigma * (norm.pdf(a) - norm.pdf(b)) / (norm.cdf(b) - norm.cdf(a))
    got = expected_value(hl_gauss(y, EDGES, sigma), CENTRES).numpy()
    inside = y.numpy() <= 10 - 2 * sigma
    assert abs(got - truncated)[inside].max() < 2.5e-3 and abs(got - truncated).max() < 0.04
    assert (got <= y.numpy() + 1e-4).all() and got[-1] < 9.999 - 0.25


def test_two_hot_is_exact_between_bins_and_one_hot_on_centres():
    y = torch.tensor([-9.7, -3.21, 0.0, 4.5, 9.6], dtype=torch.float64)
    p = two_hot(y, CENTRES)
    torch.testing.assert_close(p.sum(-1), torch.ones(5, dtype=torch.float64))
    torch.testing.assert_close(expected_value(p, CENTRES), y, atol=1e-12, rtol=0)
    assert ((p > 0).sum(-1) <= 2).all()
    # the two weights are the linear interpolation between the neighbouring centres
    k = int(torch.searchsorted(CENTRES, torch.tensor(-3.21, dtype=torch.float64))) - 1
    w = (CENTRES[k + 1] - (-3.21)) / ZETA
    torch.testing.assert_close(p[1, k], w)
    torch.testing.assert_close(p[1, k + 1], 1 - w)
    on = two_hot(CENTRES[[3, 50]], CENTRES)
    torch.testing.assert_close(on, torch.eye(51, dtype=torch.float64)[[3, 50]])
    # outside [c_0, c_{m-1}] the target is clipped to the end centre
    torch.testing.assert_close(
        two_hot(torch.tensor([50.0], dtype=torch.float64), CENTRES)[0, -1],
        torch.tensor(1.0, dtype=torch.float64),
    )


def test_clip_counts_the_targets_outside_the_range():
    y, n = clip_to(torch.tensor([-12.0, 0.0, 3.0, 11.0, 10.0]), -10.0, 10.0)
    assert int(n) == 2
    torch.testing.assert_close(y, torch.tensor([-10.0, 0.0, 3.0, 10.0, 10.0]))


def test_cross_entropy_gradient_on_a_hand_built_batch_is_softmax_minus_target():
    # d/dz mean_b [-sum_k p_bk log softmax(z_b)_k] = (softmax(z_b) - p_b) / B
    edges = bin_edges(0.0, 4.0, 4, dtype=torch.float64)  # centres 0.5, 1.5, 2.5, 3.5
    logits = torch.tensor(
        [[0.0, 1.0, -1.0, 2.0], [0.5, 0.5, 0.5, 0.5]], dtype=torch.float64, requires_grad=True
    )
    targets = two_hot(torch.tensor([2.0, 3.5], dtype=torch.float64), bin_centres(edges))
    torch.testing.assert_close(
        targets, torch.tensor([[0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=torch.float64)
    )
    loss = torch.nn.functional.cross_entropy(logits, targets)
    loss.backward()
    z = logits.detach().numpy()
    soft = [[math.exp(v) / sum(math.exp(u) for u in row) for v in row] for row in z]
    expected = (torch.tensor(soft, dtype=torch.float64) - targets) / 2
    torch.testing.assert_close(logits.grad, expected)
    # the loss itself: row 0 is -(log s_1 + log s_2) / 2, row 1 is -log(1/4)
    ls0 = [math.log(s) for s in soft[0]]
    assert float(loss.detach()) == pytest.approx(
        (-(0.5 * ls0[1] + 0.5 * ls0[2]) + math.log(4)) / 2, rel=1e-12
    )


def test_loss_module_gradient_on_a_hand_built_batch():
    # CrossEntropyTDLoss with the target y = r: the gradient with respect to the last layer's bias of
    # action a, bin k is (1 / B) sum_b 1[a_b = a] (softmax(z(s_b, a))_k - p_k(clip(y_b)))
    from quadriga_std.learners.dqn import periodic_hard_update
    from quadriga_value_classification.learner import CrossEntropyTDLoss
    from tensordict import TensorDict
    from torchrl.data import Categorical
    from torchrl.modules import QValueActor

    torch.manual_seed(0)
    edges = bin_edges(0.0, 4.0, 4)
    net = CategoricalQNetwork(2, 2, [3], edges)
    actor = QValueActor(net, in_keys=["observation"], spec=Categorical(2))
    loss_module = CrossEntropyTDLoss(
        actor,
        q_network=net,
        projection=lambda y: two_hot(y, bin_centres(edges)),
        low=0.5,
        high=3.5,
        td_target=lambda qo, qt, r, d, g: (r, {}),
        gamma=0.9,
        needs_online=False,
        needs_target=True,
    )
    periodic_hard_update(loss_module, 100)  # associates the target network, as dqn does
    obs = torch.tensor([[0.1, -0.2], [1.0, 0.5], [-0.3, 0.8]])
    reward = torch.tensor([2.0, 3.0, 7.0])  # 7 is outside [0.5, 3.5]: clipped to 3.5 and counted
    batch = TensorDict(
        {
            "observation": obs,
            "action": torch.tensor([0, 1, 0]),
            "next": {
                "observation": obs,
                "reward": reward[:, None],
                "terminated": torch.zeros(3, 1, dtype=torch.bool),
            },
        },
        batch_size=[3],
    )
    out = loss_module(batch)
    params = dict(loss_module.value_network_params.flatten_keys().items())
    (bias_key,) = [k for k, v in params.items() if v.shape == (8,)]
    (grad,) = torch.autograd.grad(out["loss"], [params[bias_key]])
    z = net.logits(obs).detach()
    p = two_hot(torch.tensor([2.0, 3.0, 3.5]), bin_centres(edges))
    expected = torch.zeros(2, 4)
    for b, a in enumerate([0, 1, 0]):
        expected[a] += (z[b, a].softmax(-1) - p[b]) / 3
    torch.testing.assert_close(grad, expected.reshape(8))
    assert int(loss_module.targets_clipped) == 1 and int(loss_module.targets_seen) == 3
    torch.testing.assert_close(out["clipped_fraction"], torch.tensor(1 / 3))


def test_categorical_network_gives_the_mean_of_its_bins():
    torch.manual_seed(0)
    net = CategoricalQNetwork(3, 2, [8], bin_edges(-10.0, 10.0, 51))
    obs = torch.randn(5, 3)
    z = net.logits(obs)
    assert z.shape == (5, 2, 51)
    torch.testing.assert_close(net(obs), (z.softmax(-1) * net.centres).sum(-1))
    assert ((net(obs) > -10) & (net(obs) < 10)).all()


def test_learners_validate_their_support_and_sigma():
    with pytest.raises(ConfigError, match="v_min"):
        DQNHLGauss(v_min=5.0, v_max=1.0)
    with pytest.raises(ConfigError, match="num_bins"):
        DQNTwoHot(num_bins=1)
    with pytest.raises(ConfigError, match="sigma_ratio"):
        DQNHLGauss(sigma_ratio=0.0)
    with pytest.raises(ConfigError, match="loss_function"):
        DQNHLGauss(loss_function="l2")
    h = DQNHLGauss(v_min=-10.0, v_max=110.0, num_bins=60)
    assert h.bin_width == pytest.approx(2.0) and h.sigma == pytest.approx(1.5)
    t = DQNTwoHot(v_min=-10.0, v_max=110.0, num_bins=60)
    assert t.target_range() == pytest.approx((-9.0, 109.0))
