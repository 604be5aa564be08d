"""The :class:`Claim`: a paper claim as a statistical test on per-replicate observations."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from quadriga.claims.model import SCALES, Effect, Observations, Scale, Tuning
from quadriga.claims.run import (
    _as_observations,
    _pipelines_repeat,
    _propagate_repeat,
    _read_repeat,
    _read_single,
    arm_table,
    check_names,
    run_pipeline,
)
from quadriga.errors import ConfigError

__all__ = ["Claim"]


@attrs.frozen(kw_only=True)
class Claim:
    """A paper claim as a statistical test on per-replicate observations.

    Attributes:
        arms: stage base names, or points of a stage's ``matrix`` (``"weighted[likelihood_ratio=given]"``:
            the table is repeated, the point's replicates read); ``arms[0]`` is the method, the others
            its baselines (one comparison each; ``statistic="mean"`` uses ``arms[0]`` alone).
        effect: the :class:`Effect` claimed.
        scales: ``{"smoke": Scale, "paper": Scale}``.
        pipeline: a registered pipeline name (or a TOML path) run once per scale.
        metric: ``(evaluator stage, metric)``: replicate ``i`` of ``arm`` is
            ``values[f"{arm}[{i}]/{metric}"]`` of that stage.
        observe: instead of ``metric``, ``observe(result) -> {arm: [values]}`` (or
            :class:`Observations`) from the :class:`~quadriga.runs.RunResult`, values aligned
            by replicate index.
        experiment: instead of ``pipeline``, ``experiment(scale: Scale, out_dir: Path) ->
            {arm: [values]}`` (or :class:`Observations`) for claims whose experiment is not a
            registered pipeline (yet); replicate ``i`` of every arm must share its seeds.
        repeat_stages: further stages repeated like the arms (the other arms of the pipeline), so
            that claims reading different arms of one pipeline make the same pipeline and, inside
            one ``verify``, share one run (:func:`~quadriga.claims.run.run_pipeline`).
        repeat_tasks: tasks also repeated (fresh data per replicate, bound replicate-wise).
        also: further metrics of the ``metric`` stage reported for every arm (mean with a BCa
            interval) and, for each baseline, as the ratio of means arm 0 / baseline with a paired
            interval: numbers for the report, never part of the verdict.
        tuning: ``{arm: Tuning}``; a comparison between arms with different budgets is flagged.

    Raises:
        ConfigError: neither or both of metric/observe, no pipeline without experiment, too few
            arms for the statistic, scales missing smoke or paper.
    """

    arms: tuple[str, ...]
    effect: Effect
    scales: Mapping[str, Scale]
    pipeline: str | None = None
    metric: tuple[str, str] | None = None
    observe: Callable[[Any], Any] | None = None
    experiment: Callable[[Scale, Path], Any] | None = None
    repeat_stages: tuple[str, ...] = ()
    repeat_tasks: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    tuning: Mapping[str, Tuning] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        from quadriga.stats import STATISTICS

        if not self.arms:
            raise ConfigError("a claim needs at least one arm.", key="arms")
        if STATISTICS.get(self.effect.statistic, (1,))[0] == 2 and len(self.arms) < 2:
            raise ConfigError(
                f"statistic '{self.effect.statistic}' compares arms[0] with baselines; "
                "give at least two arms.",
                key="arms",
            )
        if self.experiment is None:
            if self.pipeline is None:
                raise ConfigError("give a registered pipeline (or an experiment callable).", key="pipeline")
            if (self.metric is None) == (self.observe is None):
                raise ConfigError(
                    "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
                )
        missing = [s for s in SCALES if s not in self.scales]
        if missing:
            raise ConfigError(f"scales lack {', '.join(missing)}; give Scale objects for both.", key="scales")

    @property
    def comparisons(self) -> list[tuple[str, str | None]]:
        """``[(method, baseline or None)]``: one comparison per baseline (one for ``mean``)."""
        from quadriga.stats import STATISTICS

        if STATISTICS.get(self.effect.statistic, (1,))[0] == 1:
            return [(self.arms[0], None)]
        return [(self.arms[0], b) for b in self.arms[1:]]

    def tuning_flags(self) -> list[str]:
        """Sentences naming comparisons whose arms had different tuning budgets (or none recorded)."""
        flags = []
        for method, base in self.comparisons:
            if base is None:
                continue
            tm, tb = self.tuning.get(method), self.tuning.get(base)
            if tm is None or tb is None:
                absent = [a for a, t in ((method, tm), (base, tb)) if t is None]
                flags.append(f"tuning budget not recorded for {', '.join(absent)}")
            elif tm.settings_tried != tb.settings_tried:
                flags.append(
                    f"tuning parity: {method} tried {tm.settings_tried} setting(s) ({tm.rule}), "
                    f"{base} tried {tb.settings_tried} ({tb.rule})"
                )
        return flags

    def _metric(self) -> tuple[str, str]:
        """``metric``, which ``__attrs_post_init__`` requires when ``observe`` is not given."""
        if self.metric is None:
            raise ConfigError(
                "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
            )
        return self.metric

    # ------------------------------------------------------------------ running
    def observations(self, scale: str, out_dir: Path, registry: Any = None) -> Observations:
        """Run the claim at ``scale`` and return its per-replicate observations.

        Raises:
            ConfigError: unknown scale, an arm that is not a stage of the pipeline, a missing metric.
        """
        if scale not in self.scales:
            raise ConfigError(f"unknown scale '{scale}'; use one of {', '.join(self.scales)}.", key="scale")
        sc = self.scales[scale]
        out_dir = Path(out_dir)
        if self.experiment is not None:
            return _as_observations(self.experiment(sc, out_dir))
        from quadriga import api
        from quadriga.pipeline import read_source
        from quadriga.registry import get_registry

        registry = registry or get_registry()
        if self.pipeline is None:  # refused by __attrs_post_init__ unless experiment is given
            raise ConfigError("give a registered pipeline (or an experiment callable).", key="pipeline")
        data, file = read_source(self.pipeline, registry)
        tables = tuple(dict.fromkeys(arm_table(a) for a in (*self.arms, *self.repeat_stages)))
        check_names(
            data,
            self.pipeline,
            file,
            arms=tuple(arm_table(a) for a in self.arms),
            repeat_stages=self.repeat_stages,
            repeat_tasks=self.repeat_tasks,
        )
        if _pipelines_repeat():
            repeated = set(tables) | set(self.repeat_tasks)
            for table in tables:
                data["stage"][table]["repeat"] = sc.replicates
            for task in self.repeat_tasks:
                data["task"][task]["repeat"] = sc.replicates
            _propagate_repeat(data, repeated, sc.replicates)
            result = run_pipeline(
                data, overrides=sc.overrides, seed=sc.seed, out=out_dir / "run", registry=registry
            )
            if self.observe is not None:
                return _as_observations(self.observe(result))
            stage_metric = self._metric()
            obs = Observations(
                values={a: _read_repeat(result, a, stage_metric, sc.replicates) for a in self.arms}
            )
            for name in self.also:
                metric = (stage_metric[0], name)
                obs.numbers[name] = {a: _read_repeat(result, a, metric, sc.replicates) for a in self.arms}
            return obs
        values: dict[str, list[float]] = {a: [] for a in self.arms}
        also: dict[str, dict[str, list[float]]] = {m: {a: [] for a in self.arms} for m in self.also}
        extra: Observations | None = None
        for i in range(sc.replicates):
            result = api.run(
                data, overrides=sc.overrides, seed=sc.seed + i, out=out_dir / f"run-{i}", registry=registry
            )
            if self.observe is not None:
                extra = _as_observations(self.observe(result))
                for arm, vals in extra.values.items():
                    values.setdefault(arm, []).extend(float(v) for v in vals)
            else:
                stage_metric = self._metric()
                for arm in self.arms:
                    values[arm].append(_read_single(result, arm, stage_metric))
                    for name in self.also:
                        also[name][arm].append(_read_single(result, arm, (stage_metric[0], name)))
        obs = Observations(values=values, numbers=dict(also))
        if extra is not None:
            obs.numbers, obs.table, obs.figures = extra.numbers, extra.table, extra.figures
        return obs
