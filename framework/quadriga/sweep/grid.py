"""Grid expansion of a sweep: seeds and ``--grid`` values parsed, their Cartesian product planned.

:func:`plan` turns seeds x grid points into :class:`RunSpec` records whose ``run_id``
(``seed<seed>-<hash of the overrides>``) is stable across re-runs of the same sweep.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from typing import Any

import attrs

from quadriga.errors import ConfigError
from quadriga.pipeline import parse_override


@attrs.frozen
class RunSpec:
    """One run of a sweep.

    Attributes:
        run_id: directory name, ``seed<seed>-<hash>`` (stable across re-runs of the same sweep).
        seed: the root seed.
        params: ``{override key: value}`` of this grid point.
        overrides: ``--set`` strings (the sweep's fixed ones plus the grid point's).
    """

    run_id: str
    seed: int
    params: dict[str, Any]
    overrides: tuple[str, ...]


#: the most seeds one sweep may run
MAX_SEEDS = 10_000
#: the most runs (grid points times seeds) one sweep may hold
MAX_RUNS = 100_000


def parse_seeds(text: str) -> list[int]:
    """``"0:10"`` -> 0..9, ``"3"`` -> [3], ``"1,4,9"`` -> [1, 4, 9].

    Raises:
        ConfigError: anything else, more than :data:`MAX_SEEDS` seeds, or a seed beyond int64
            (checked before the list is built).
    """
    from quadriga.pipeline_source import INT64

    short = text if len(text) <= 40 else text[:37] + "..."
    try:
        if ":" in text:
            lo, hi = (int(v) for v in text.split(":", 1))
            count = max(hi - lo, 0)
            ends = (lo, hi - 1)
        else:
            values = [int(s) for s in text.split(",") if s.strip()]
            count, ends = len(values), (min(values, default=0), max(values, default=0))
    except ValueError:
        raise ConfigError(
            f"'{short}' is not START:STOP or a comma-separated list of integers (e.g. --seeds 0:10).",
            key="--seeds",
        ) from None
    if count > MAX_SEEDS:
        raise ConfigError(
            f"'{short}' selects {count} seeds; a sweep takes at most {MAX_SEEDS}. "
            "Split it into several sweeps.",
            key="--seeds",
        )
    if count and not (INT64[0] <= ends[0] and ends[1] <= INT64[1]):
        raise ConfigError(
            f"'{short}' holds a seed that does not fit in a signed 64-bit integer.", key="--seeds"
        )
    seeds = list(range(lo, hi)) if ":" in text else values
    if not seeds:
        raise ConfigError(f"'{short}' selects no seed (STOP must be larger than START).", key="--seeds")
    return seeds


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """``"stage.srmc.alpha=0.5,1,2"`` -> ``("stage.srmc.alpha", [0.5, 1, 2])`` (values parsed as TOML).

    Raises:
        ConfigError: no ``=`` or no value.
    """
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    values = [parse_override(f"x={v}")[1] for v in _split_top(raw)]
    if not sep or not key.strip() or not values:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    return key.strip(), values


def _toml_value(value: Any) -> str:
    import tomli_w

    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()


def plan(
    seeds: Sequence[int], grids: Sequence[tuple[str, list[Any]]], fixed: Sequence[str] = ()
) -> list[RunSpec]:
    """The runs of a sweep: every grid point (Cartesian product) times every seed."""
    keys = [k for k, _ in grids]
    runs = []
    for point in itertools.product(*[values for _, values in grids]):
        params = dict(zip(keys, point, strict=False))
        overrides = tuple(fixed) + tuple(f"{k}={_toml_value(v)}" for k, v in params.items())
        digest = hashlib.sha256(json.dumps([overrides], sort_keys=True).encode()).hexdigest()[:8]
        for seed in seeds:
            runs.append(RunSpec(f"seed{seed}-{digest}", seed, params, overrides))
    return runs
