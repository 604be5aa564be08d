"""What a tracker plugin's tests run (quadriga-mlflow, quadriga-tensorboard): known numbers, a failure.

- :class:`CountDown`: a learner that streams ``loss = 1 / (step + 1)`` per step, so every logged
  metric has a closed form;
- :class:`Broken`: a sampler that always raises, for the failed-run case;
- :func:`tracker_registry`: ``Registry(use_env=False)`` with those two registered (``count-down``,
  ``broken``);
- :func:`tracker_pipeline`: a small pipeline over both kinds of stage (a learner that streams,
  two samplers, an evaluator comparing them); :func:`tracker_sweep_toml`: a smaller one to sweep;
- :func:`modules_after_listing`: what loading the registry imported (a tracker imports neither its
  library nor torch at registration).

Not imported by ``import quadriga.testing``.
"""

from __future__ import annotations

from typing import Any

import attrs

from quadriga.artifacts import Fitted
from quadriga.interfaces import Learner, Sampler
from quadriga.params import param

__all__ = [
    "Broken",
    "CountDown",
    "modules_after_listing",
    "tracker_pipeline",
    "tracker_registry",
    "tracker_sweep_toml",
]


@attrs.define(kw_only=True)
class CountDown(Learner):
    """Streams ``loss = 1 / (step + 1)`` for ``num_steps`` steps (closed-form per-step metrics).

    Raises:
        Nothing: it trains nothing.

    Source: a test fixture, no paper.
    """

    num_steps: int = param(20, doc="steps")

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Log ``loss`` at steps ``0 .. num_steps - 1``; no model."""
        progress.start(self.num_steps)
        for step in range(self.num_steps):
            progress.log(step, loss=1.0 / (step + 1))
            progress.advance()
        return Fitted(model=None, history={}, info={"steps": self.num_steps})


@attrs.define(kw_only=True)
class Broken(Sampler):
    """Raises, for the failed-run case.

    Raises:
        RuntimeError: always, from :meth:`sample`.

    Source: a test fixture, no paper.
    """

    def sample(self, target: Any, *, generator: Any) -> Any:
        """Always raises RuntimeError."""
        raise RuntimeError("asked to fail")


def tracker_registry() -> Any:
    """A registry without entry points (``use_env=False``) holding ``count-down`` and ``broken``."""
    import quadriga
    from quadriga.registry import Registry

    reg = Registry(use_env=False)
    quadriga.register("learner", "count-down", CountDown, registry=reg)
    quadriga.register("sampler", "broken", Broken, registry=reg)
    return reg


def tracker_pipeline(name: str) -> dict[str, Any]:
    """A pipeline dict: a 2-D Gaussian, ``count``, ``mala``, ``rwm`` and ``energy``.

    ``count`` runs 20 steps of :class:`CountDown`; ``mala`` and ``rwm`` draw 100 samples after 50
    burn-in; ``energy`` gives their energy distances to the target.
    """
    return {
        "pipeline": {"name": name, "seed": 0},
        "task": {"normal": {"use": "gaussian", "dim": 2}},
        "stage": {
            "count": {"use": "count-down", "inputs": {"task": "normal"}, "num_steps": 20},
            "mala": {"use": "mala", "inputs": {"target": "normal"}, "num_samples": 100, "burn_in": 50},
            "rwm": {"use": "rwm", "inputs": {"target": "normal"}, "num_samples": 100, "burn_in": 50},
            "energy": {
                "use": "energy-distance",
                "inputs": {"subject": ["mala", "rwm"], "reference": "normal"},
            },
        },
    }


def tracker_sweep_toml(name: str) -> str:
    """The TOML text of a one-sampler pipeline for a tracker's sweep test (``mala`` and ``energy``)."""
    return f'''
[pipeline]
name = "{name}"
seed = 0

[task.normal]
use = "gaussian"
dim = 2

[stage.mala]
use = "mala"
inputs = {{ target = "normal" }}
num_samples = 100
burn_in = 50

[stage.energy]
use = "energy-distance"
inputs = {{ subject = ["mala"], reference = "normal" }}
'''


def modules_after_listing(plugin: str, modules: set[str]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after loading the registry (sorted).

    A tracker plugin's registration must import neither its library nor torch (``quadriga list``
    stays fast): its test asserts that this is ``[]``.

    Raises:
        subprocess.CalledProcessError: the plugin did not load with status ``ok``.
    """
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from quadriga.registry import Registry; r = Registry(use_env=False); r.load(); "
        f"assert r.plugins[{plugin!r}].status == 'ok'; "
        f"print(json.dumps(sorted(set({sorted(modules)!r}) & set(sys.modules))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))
