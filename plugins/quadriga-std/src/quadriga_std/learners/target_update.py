"""The target-network copy of DQN, every ``period`` updates exactly (torchrl's ``HardUpdate`` made exact).

Imports torchrl only when called, so that importing the DQN learner module stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["periodic_hard_update"]


def periodic_hard_update(loss_module: Any, period: int) -> Any:
    """A torchrl ``HardUpdate`` that copies the online network into the target every ``period`` updates.

    torchrl's ``HardUpdate`` copies when its counter equals the interval and then resets it to 0,
    i.e. every ``period + 1`` calls (3 copies in 2000 updates at period 500). Here the counter is
    advanced first, so ``n`` calls of ``step()`` make exactly ``floor(n / period)`` copies, at
    updates ``period, 2 period, ...`` as in Mnih et al. 2015 (Algorithm 1, "every C steps reset
    Q_hat = Q"). ``copies`` counts them.

    Args:
        loss_module: a torchrl loss with target parameters (``DQNLoss`` or a subclass).
        period: updates between copies (>= 1).

    Returns:
        The updater (call ``step()`` after each optimiser step).

    Source: Mnih et al. 2015, "Human-level control through deep reinforcement learning", Alg. 1.
    """
    from torchrl.objectives import HardUpdate
    from torchrl.objectives.utils import TargetNetUpdater

    class PeriodicHardUpdate(HardUpdate):
        copies = 0

        def step(self) -> None:
            self.counter += 1
            if self.counter >= self.value_network_update_interval:
                self.counter = self.value_network_update_interval  # HardUpdate._step copies at equality
                TargetNetUpdater.step(self)
                self.counter = 0
                self.copies += 1

    return PeriodicHardUpdate(loss_module, value_network_update_interval=int(period))
