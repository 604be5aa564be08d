"""Grid expansion of a sweep: seeds and ``--grid`` values parsed, their Cartesian product planned.

:func:`plan` turns seeds x grid points into :class:`RunSpec` records whose ``run_id`` names the
run's settings (``seed0-step_size0.1``), or ``seed<seed>-<hash of the overrides>`` when that name
would be longer than :data:`MAX_RUN_ID` characters, hold a character unsafe in a path, or clash
with another point's; either way it is stable across re-runs of the same sweep.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from quadriga.errors import ConfigError
from quadriga.pipeline import parse_override


@attrs.frozen
class RunSpec:
    """One run of a sweep.

    Attributes:
        run_id: directory name: the settings (``seed0-step_size0.1``) or ``seed<seed>-<hash>``
            (see the module docstring); stable across re-runs of the same sweep.
        seed: the root seed.
        params: ``{override key: value}`` of this grid point.
        overrides: ``--set`` strings (the sweep's fixed ones plus the grid point's).
        hashed_id: ``seed<seed>-<hash of the overrides>``, the name sweeps gave every run before
            runs were named by their settings (a re-run of such a sweep finds its runs by it).
    """

    run_id: str
    seed: int
    params: dict[str, Any]
    overrides: tuple[str, ...]
    hashed_id: str = ""


#: the most seeds one sweep may run
MAX_SEEDS = 10_000
#: the most runs (grid points times seeds) one sweep may hold
MAX_RUNS = 100_000
#: the longest run directory name made of settings; longer ones are hashed
MAX_RUN_ID = 60
#: the override key of a pipeline's root seed, which a sweep sets from ``--seeds``
SEED_KEY = "pipeline.seed"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def parse_seeds(text: str) -> list[int]:
    """``"0:10"`` -> 0..9, ``"3"`` -> [3], ``"1,4,9"`` -> [1, 4, 9].

    Raises:
        ConfigError: anything else, more than :data:`MAX_SEEDS` seeds, a seed beyond int64
            (checked before the list is built), or a seed listed twice.
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
    twice = sorted({s for s in seeds if seeds.count(s) > 1})
    if twice:
        raise ConfigError(
            f"'{short}' lists seed {', '.join(map(str, twice))} more than once; a seed run twice gives the "
            "same numbers, one replicate, not two. List each seed once.",
            key="--seeds",
        )
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
        ConfigError: no ``=``, no value, or a value listed twice (``1`` and ``1.0`` are one value).
    """
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    values = [parse_override(f"x={v}")[1] for v in _split_top(raw)]
    if not sep or not key.strip() or not values:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    seen: set[str] = set()
    for value in values:
        # numbers compare by value (1 and 1.0 are one setting), booleans and the rest as TOML
        same = repr(float(value)) if type(value) in (int, float) else _toml_value(value)
        if same in seen:
            raise ConfigError(
                f"'{text}' lists the value {_toml_value(value)} of {key.strip()} more than once "
                "(1 and 1.0 are one value); list each value once.",
                key="--grid",
            )
        seen.add(same)
    return key.strip(), values


def _toml_value(value: Any) -> str:
    import tomli_w

    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()


def _short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each override key by its shortest dotted suffix that no other key ends with.

    ``stage.mala.step_size`` is ``step_size`` alone, ``mala.step_size`` next to
    ``stage.rwm.step_size``.
    """
    out = {}
    for key in keys:
        parts = key.split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            if not any(o != key and (o == tail or o.endswith("." + tail)) for o in keys):
                break
        out[key] = tail
    return out


def _label(value: Any) -> str:
    """A value as it appears in a run name: strings bare, the rest as TOML (``0.1``, ``true``)."""
    return value if isinstance(value, str) else _toml_value(value)


def plan(
    seeds: Sequence[int], grids: Sequence[tuple[str, list[Any]]], fixed: Sequence[str] = ()
) -> list[RunSpec]:
    """The runs of a sweep: every grid point (Cartesian product) times every seed.

    Raises:
        ConfigError: a grid key given twice, or given by ``--grid`` and by ``--set``; ``pipeline.seed``
            in the grid (key ``--grid``) or in ``fixed`` (key ``--set``): every run's seed is its
            ``--seeds`` value, which would silently replace it.

    Returns:
        One :class:`RunSpec` per (grid point, seed), grid points in product order, seeds inner.
        ``run_id`` is ``seed<seed>-<key><value>-...`` (keys shortened by :func:`_short_keys`)
        when that is at most :data:`MAX_RUN_ID` characters of ``[A-Za-z0-9_.+-]`` and unique,
        else ``hashed_id``.
    """
    keys = [k for k, _ in grids]
    for flag, given in (("--grid", keys), ("--set", [text.split("=", 1)[0] for text in fixed])):
        if any(key.strip() == SEED_KEY for key in given):
            raise ConfigError(
                f"{flag} {SEED_KEY}=... does not set the runs' seeds in a sweep: each run's seed is "
                f"its --seeds value, which replaces {SEED_KEY}. To sweep seeds, sweep seeds with "
                "--seeds (e.g. --seeds 1,2 or --seeds 0:10).",
                key=flag,
            )
    for key in keys:
        if keys.count(key) > 1:
            raise ConfigError(
                f"--grid gives {key} more than once; put all its values in one --grid {key}=V1,V2,...",
                key="--grid",
            )
    set_keys = {text.split("=", 1)[0].strip() for text in fixed}
    for key in keys:
        if key.strip() in set_keys:
            raise ConfigError(
                f"--grid and --set both give {key}; the grid's values would replace the --set "
                f"value in every run. Drop one of them (a single value is --grid {key}=VALUE).",
                key="--grid",
            )
    short = _short_keys(keys)
    runs = []
    for point in itertools.product(*[values for _, values in grids]):
        params = dict(zip(keys, point, strict=False))
        overrides = tuple(fixed) + tuple(f"{k}={_toml_value(v)}" for k, v in params.items())
        digest = hashlib.sha256(json.dumps([overrides], sort_keys=True).encode()).hexdigest()[:8]
        settings = "".join(f"-{short[k]}{_label(v)}" for k, v in params.items())
        for seed in seeds:
            named = f"seed{seed}{settings}"
            runs.append(RunSpec(named, seed, params, overrides, f"seed{seed}-{digest}"))
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.run_id] = counts.get(r.run_id, 0) + 1
    return [
        r
        if len(r.run_id) <= MAX_RUN_ID and _SAFE_ID.match(r.run_id) and counts[r.run_id] == 1
        else attrs.evolve(r, run_id=r.hashed_id)
        for r in runs
    ]
