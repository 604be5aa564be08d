"""The :class:`Claim`: a paper claim as a statistical test on per-replicate observations."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import attrs

from quadriga.claims.model import SCALES, Effect, Observations, Plan, Precondition, Rows, Scale, Tuning
from quadriga.claims.run import (
    _as_observations,
    _propagate_repeat,
    _read_repeat,
    arm_table,
    check_names,
    keep_stages,
    read_row_groups,
    run_pipeline,
)
from quadriga.errors import ConfigError, suggest

__all__ = ["Claim"]


def _flat(counts: Mapping[str, Any]) -> dict[str, Any]:
    """``{"label/arm": n}`` from ``{label: {arm: n}}``; ``{arm: n}`` unchanged."""
    out: dict[str, Any] = {}
    for name, n in counts.items():
        if isinstance(n, Mapping):
            out.update({f"{name}/{arm}": m for arm, m in n.items()})
        else:
            out[name] = n
    return out


def _as_keys(value: str | Sequence[str]) -> tuple[str, ...]:
    """One matrix key or several, as a tuple."""
    return (value,) if isinstance(value, str) else tuple(value)


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
            ``values[f"{arm}[{i}]/{metric}"]`` of that stage; or ``{arm: (stage, metric)}`` when
            the arms are read from different stages.
        group_by: matrix keys of the arms' tables whose values form groups (a task, a dimension):
            each group is one comparison per baseline in the claim's Holm family
            (:mod:`~quadriga.claims.matrix`).
        across: a numeric matrix key: each replicate's observation is the log-log slope of the
            metric against it (a rate); the effect then compares slopes (``mean`` against a
            declared rate, ``difference`` against the baseline's slope).
        groups: a list of tasks written as separate stage tables, ``{group: {arm: stage table}}``
            (``{"gmm-b2": {"fkc": "fkc-gmm-b2", "fkc-naive": "naive-gmm-b2"}, ...}``): each group is
            one comparison per baseline in the claim's Holm family, like ``group_by``'s; the
            ``metric`` stage may name its group as ``{group}`` (``("energy-{group}", "energy_distance")``).
        observe: instead of ``metric``, ``observe(result) -> {arm: [values]}`` (or
            :class:`Observations`) from the :class:`~quadriga.runs.RunResult`, values aligned
            by replicate index. Its arms may be labels that name no stage (a per-replicate
            difference of two stages, ``"gap-wide"``) when none of them names a stage and
            ``repeat_stages`` names the stages repeated. With ``rows``, ``observe`` gives only
            the report's numbers, table and figures (it must return no values).
        rows: instead of ``metric``, a :class:`Rows`: the replicates are the rows of one stage's
            per-item table within a single run (one row per target example, per chain), not
            repeated seeded stages. The pipeline runs once with ``rows.count =
            Scale.replicates`` (before the scale's overrides) and nothing repeated; arm ``A``'s
            replicates are ``rows.column`` of the rows whose ``rows.arm`` column, as a string,
            is ``A``, ordered by ``rows.key`` and, for a paired effect, paired by it across arms
            (:func:`~quadriga.claims.run.read_rows`). The arms are labels of that column. With
            ``Rows(nonfinite="drop")`` the items whose value is NaN or infinite are left out
            and counted in ``Observations.numbers["rows_dropped/ARM"]``.
        experiment: instead of ``pipeline``, ``experiment(scale: Scale, out_dir: Path) ->
            {arm: [values]}`` (or :class:`Observations`) for claims whose experiment is not a
            registered pipeline (yet); replicate ``i`` of every arm must share its seeds.
        repeat_stages: further stages repeated like the arms (the other arms of the pipeline), so
            that claims reading different arms of one pipeline make the same pipeline and, inside
            one ``verify``, share one run (:func:`~quadriga.claims.run.run_pipeline`).
        repeat_tasks: tasks also repeated (fresh data per replicate, bound replicate-wise).
        stages: when given, the claim's run keeps only these stages of the pipeline, the arms'
            tables, the ``metric`` stage(s) and ``repeat_stages``, and the tasks they read
            (:func:`~quadriga.claims.run.keep_stages`): a kept stage's list inputs lose the
            stages left out; a single input naming one is a ConfigError (key ``stages``). Claims
            that keep the same stages (and repeat the same ones) still share one run.
        also: further metrics of the ``metric`` stage reported for every arm (mean with a BCa
            interval) and, for each baseline, as the ratio of means arm 0 / baseline with a paired
            interval: numbers for the report, never part of the verdict.
        tuning: ``{arm: Tuning}``; a comparison between arms with different budgets is flagged.
        plan: the :class:`Plan` that sized the paper scale (minimum detectable effect, power,
            pilot); ``quadriga verify NAME --plan`` runs its pilot and prints the n it needs.
        preconditions: :class:`Precondition` checks on the test bed; a failed one makes the claim
            inconclusive (precondition: ...).
        fragility: the neighbourhood of nuisance settings ``{override key: [values]}``
            (``{"task.data.noise": [0.0, 0.05, 0.1]}``) over which ``quadriga verify NAME
            --fragility`` evaluates the claim (every combination), to report where it holds.
        libraries: distributions whose versions matter to the result (``("torch", "torchrl")``):
            their versions go into the record's fingerprint, so a new version marks it stale.

    Raises:
        ConfigError: neither or both of metric/observe (without rows), no pipeline without
            experiment, stages with an experiment, too few arms for the statistic, scales missing
            smoke or paper, an empty fragility setting, a paper scale smaller than the plan's
            pilot; (key ``rows``) rows with experiment, metric, also, group_by, across, groups,
            repeat_stages or repeat_tasks, or a scale whose overrides (or a fragility setting) set
            ``rows.count`` itself.
            When its pipeline is read, before it runs: (key ``rows``) ``rows.stage`` or the table
            ``rows.count`` names is not in the pipeline; when it runs, overrides given to
            :meth:`observations` that set ``rows.count``, or a parameter ``rows.count`` that the
            component lacks or a value it refuses (said to come from ``rows.count``); after the
            run, the errors of :func:`~quadriga.claims.run.read_rows` (all with the closest names
            suggested).
    """

    arms: tuple[str, ...]
    effect: Effect
    scales: Mapping[str, Scale]
    pipeline: str | None = None
    metric: tuple[str, str] | Mapping[str, tuple[str, str]] | None = None
    observe: Callable[[Any], Any] | None = None
    rows: Rows | None = None
    group_by: tuple[str, ...] = attrs.field(default=(), converter=_as_keys)
    across: str | None = None
    groups: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)
    experiment: Callable[[Scale, Path], Any] | None = None
    repeat_stages: tuple[str, ...] = ()
    repeat_tasks: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    tuning: Mapping[str, Tuning] = attrs.field(factory=dict)
    plan: Plan | None = None
    preconditions: tuple[Precondition, ...] = ()
    fragility: Mapping[str, Sequence[Any]] = attrs.field(factory=dict)
    libraries: tuple[str, ...] = ()

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
            if self.rows is None and (self.metric is None) == (self.observe is None):
                raise ConfigError(
                    "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
                )
        if self.stages and self.experiment is not None:
            raise ConfigError(
                "stages chooses the stages of the claim's pipeline run; an experiment callable runs its own.",
                key="stages",
            )
        missing = [s for s in SCALES if s not in self.scales]
        if missing:
            raise ConfigError(f"scales lack {', '.join(missing)}; give Scale objects for both.", key="scales")
        if (self.group_by or self.across) and (self.experiment is not None or self.observe is not None):
            raise ConfigError(
                "group_by and across read the arms' matrix points through metric=; an observe or "
                "experiment callable groups its own observations.",
                key="group_by",
            )
        if self.rows is not None:
            self._check_rows(self.rows)
        if self.groups:
            self._check_groups()
        if self.across is not None and self.across in self.group_by:
            raise ConfigError(f"'{self.across}' cannot be both grouped and the slope's axis.", key="across")
        for key, values in self.fragility.items():
            if isinstance(values, (str, bytes)) or not list(values):
                raise ConfigError(
                    f"fragility['{key}'] must be a non-empty list of values, got {values!r}.", key="fragility"
                )

    def _check_rows(self, rows: Rows) -> None:
        """Refuse ``rows`` with another source of values or repetition, or a scale that sets its count."""
        if not isinstance(rows, Rows):
            raise ConfigError(f"rows must be a quadriga.claims.Rows, got {type(rows).__name__}.", key="rows")
        clashes = [
            name
            for name, given in (
                ("experiment", self.experiment is not None),
                ("metric", self.metric is not None),
                ("also", bool(self.also)),
                ("group_by", bool(self.group_by)),
                ("across", self.across is not None),
                ("groups", bool(self.groups)),
                ("repeat_stages", bool(self.repeat_stages)),
                ("repeat_tasks", bool(self.repeat_tasks)),
            )
            if given
        ]
        if clashes:
            raise ConfigError(
                f"rows reads the replicates from the rows of one run of the pipeline; it does not combine "
                f"with {', '.join(clashes)} (give observe= for extra numbers).",
                key="rows",
            )
        if rows.count in self.fragility:
            raise ConfigError(
                f"fragility varies {rows.count}, which Scale.replicates sets with rows; vary another "
                "setting.",
                key="rows",
            )
        for name, sc in self.scales.items():
            for override in sc.overrides:
                if override.split("=", 1)[0].strip() == rows.count:
                    raise ConfigError(
                        f"scale '{name}' sets {rows.count} in its overrides ({override!r}); with rows, "
                        f"Scale.replicates sets it (replicates = {sc.replicates}): drop the override.",
                        key="rows",
                    )

    def _check_groups(self) -> None:
        """Refuse ``groups`` with a callable or matrix grouping, or a group that misses an arm."""
        if self.experiment is not None or self.observe is not None or self.group_by or self.across:
            raise ConfigError(
                "groups reads each group's stage tables through metric=; it does not combine with "
                "group_by, across, observe or experiment.",
                key="groups",
            )
        for group, stages in self.groups.items():
            missing = [a for a in self.arms if a not in stages]
            if missing:
                raise ConfigError(
                    f"groups['{group}'] names no stage table for arm(s) {', '.join(missing)}; "
                    f"give {{arm: stage}} for every arm ({', '.join(self.arms)}).",
                    key="groups",
                )

    def _arm_tables(self) -> tuple[str, ...]:
        """The stage tables the arms are read from: every group's stages, else the arms' tables."""
        if self.groups:
            return tuple(dict.fromkeys(s for stages in self.groups.values() for s in stages.values()))
        return tuple(arm_table(a) for a in self.arms)

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

    def _metric(self, arm: str | None = None) -> tuple[str, str]:
        """``(stage, metric)`` of ``arm`` (``metric`` itself, or its entry for ``arm``).

        Raises:
            ConfigError: no metric (``observe`` was given), an arm missing from a metric mapping.
        """
        if self.metric is None:
            raise ConfigError(
                "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
            )
        if isinstance(self.metric, Mapping):
            if arm is None or arm not in self.metric:
                raise ConfigError(
                    f"metric names no (stage, metric) for arm '{arm}' (has {', '.join(self.metric)}).",
                    key="metric",
                )
            stage, metric = self.metric[arm]
            return stage, metric
        return self.metric

    # ------------------------------------------------------------------ running
    def observations(
        self,
        scale: str,
        out_dir: Path,
        registry: Any = None,
        *,
        overrides: Sequence[str] = (),
        replicates: int | None = None,
    ) -> Observations:
        """Run the claim at ``scale`` and return its per-replicate observations.

        Args:
            scale: ``"smoke"`` or ``"paper"``.
            out_dir: the claim's directory (its run goes to ``out_dir / "run"``).
            registry: defaults to the process-wide one.
            overrides: further ``--set`` strings after the scale's (a fragility point).
            replicates: replicates instead of the scale's (a plan's pilot).

        Raises:
            ConfigError: unknown scale, an arm that is not a stage of the pipeline, a missing metric;
                with ``rows``, (key ``rows``) ``overrides`` that set ``rows.count``, a
                ``rows.count`` the pipeline refuses (see :meth:`_run_rows`) and the errors of
                :func:`~quadriga.claims.run.read_rows`.
        """
        sc = self.scale(scale, overrides=overrides, replicates=replicates)
        out_dir = Path(out_dir)
        if self.experiment is not None:
            return _as_observations(self.experiment(sc, out_dir))
        from quadriga.registry import get_registry

        registry = registry or get_registry()
        data = self._repeated(sc.replicates, registry)
        if self.rows is not None:  # the number of rows is the number of replicates
            return self._row_observations(self._run_rows(data, sc, out_dir, registry), sc.replicates)
        result = run_pipeline(
            data, overrides=sc.overrides, seed=sc.seed, out=out_dir / "run", registry=registry
        )
        if self.observe is not None:
            return _as_observations(self.observe(result))
        if self.group_by or self.across:
            return self._matrix_observations(data, result, sc, registry)
        if self.groups:
            return self._group_observations(result, sc.replicates)
        obs = Observations(
            values={a: _read_repeat(result, a, self._metric(a), sc.replicates) for a in self.arms}
        )
        for name in self.also:
            obs.numbers[name] = {
                a: _read_repeat(result, a, (self._metric(a)[0], name), sc.replicates) for a in self.arms
            }
        return obs

    def _run_rows(self, data: dict[str, Any], sc: Scale, out_dir: Path, registry: Any) -> Any:
        """Run the pipeline once with ``rows.count = sc.replicates`` before the scale's overrides.

        Raises:
            ConfigError: (key ``rows``) ``sc.overrides`` setting ``rows.count`` themselves (which
                Rows sets from ``Scale.replicates``); an error of the pipeline about the parameter
                ``rows.count`` names (no such parameter, a value it refuses), said to come from
                ``rows.count``; otherwise as :func:`~quadriga.claims.run.run_pipeline`.
        """
        from quadriga.api import API_ORIGIN

        rows = cast(Rows, self.rows)
        for override in sc.overrides:
            if ".".join(part.strip() for part in override.partition("=")[0].split(".")) == rows.count:
                raise ConfigError(
                    f"the overrides set {rows.count} ({override!r}), which Rows sets from Scale.replicates "
                    f"(here {sc.replicates}, the number of rows): give the number of rows as replicates, "
                    "and drop the override.",
                    key="rows",
                )
        count = f"{rows.count}={sc.replicates}"
        try:
            return run_pipeline(
                data, overrides=(count, *sc.overrides), seed=sc.seed, out=out_dir / "run", registry=registry
            )
        except ConfigError as exc:
            if exc.file != API_ORIGIN or f"{exc.table}.{exc.key}" != rows.count:
                raise
            raise ConfigError(
                f"rows.count '{rows.count}': {exc.reason} (Rows sets it to Scale.replicates = "
                f"{sc.replicates}.)",
                key="rows",
            ) from None

    def _row_observations(self, result: Any, replicates: int) -> Observations:
        """``{arm: [row values]}`` read through ``rows``, with ``observe``'s numbers, table and figures.

        With ``rows.nonfinite == "drop"``, ``numbers["rows_dropped/ARM"]`` is the number of rows
        of each arm left out for a NaN or infinite value (0 when none), before ``observe``'s.

        Raises:
            ConfigError: as :func:`~quadriga.claims.run.read_rows`; (key ``observe``) an
                ``observe`` that returned values, or a number named ``rows_dropped/ARM``.
        """
        if self.rows is None:  # only called with rows
            raise ConfigError("this claim reads no rows.", key="rows")
        paired = self.effect.paired
        values, dropped = read_row_groups(result, self.rows, self.arms, replicates, paired=paired)
        obs = Observations(values=dict(values))
        if self.rows.nonfinite == "drop":
            obs.numbers = {f"rows_dropped/{arm}": n for arm, n in _flat(dropped).items()}
        if self.observe is not None:
            extra = _as_observations(self.observe(result))
            if extra.values:
                raise ConfigError(
                    "with rows, observe gives the report's numbers, table and figures only; it returned "
                    f"values for {', '.join(map(str, extra.values))}.",
                    key="observe",
                )
            clash = sorted(set(obs.numbers) & set(extra.numbers))
            if clash:
                raise ConfigError(
                    f'observe returned {", ".join(clash)}, which Rows(nonfinite="drop") reports (the rows '
                    "left out); name the number otherwise.",
                    key="observe",
                )
            obs.numbers = {**obs.numbers, **extra.numbers}
            obs.table, obs.figures = extra.table, extra.figures
            obs.intervals = extra.intervals
        return obs

    def _metric_stages(self) -> tuple[str, ...]:
        """The stage tables ``metric`` reads (every group's, for ``groups``); none for ``observe``."""
        if self.metric is None:
            return ()
        pairs = self.metric.values() if isinstance(self.metric, Mapping) else [self.metric]
        names = [stage for stage, _ in pairs]
        if self.groups:
            names = [n.format(group=g) for n in names for g in self.groups]
        return tuple(dict.fromkeys(arm_table(n) for n in names))

    def _repeated(self, replicates: int, registry: Any) -> dict[str, Any]:
        """The pipeline with ``repeat = replicates`` on the arms, ``repeat_stages`` and ``repeat_tasks``.

        With ``stages``, first reduced to them, the arms, the ``metric`` stages and
        ``repeat_stages`` (:func:`~quadriga.claims.run.keep_stages`). The rest of the pipeline
        follows the repeated ones (:func:`~quadriga.claims.run._propagate_repeat`).

        Raises:
            ConfigError: no pipeline, an arm, kept or repeated name that is not in it, a kept stage
                whose single input is left out.
        """
        from quadriga.pipeline import read_source

        if self.pipeline is None:  # refused by __attrs_post_init__ unless experiment is given
            raise ConfigError("give a registered pipeline (or an experiment callable).", key="pipeline")
        data, file = read_source(self.pipeline, registry)
        if self.rows is not None:
            arms: tuple[str, ...] = ()  # labels of the rows' arm column; nothing is repeated
            self._check_row_names(data, file)
        else:
            arms = self._arm_tables()
        if self.observe is not None and self.repeat_stages and not set(arms) & set(data.get("stage", {})):
            arms = ()  # labels of the observe callable's observations, not stages
        tables = tuple(dict.fromkeys((*arms, *(arm_table(s) for s in self.repeat_stages))))
        check_names(
            data,
            self.pipeline,
            file,
            arms=arms,
            stages=self.stages,
            repeat_stages=self.repeat_stages,
            repeat_tasks=self.repeat_tasks,
        )
        if self.stages:
            kept = (*self.stages, *tables, *self._metric_stages())
            if self.rows is not None:
                kept = (*kept, arm_table(self.rows.stage))
            keep_stages(data, kept, tasks=self.repeat_tasks, file=file)
        for table in tables:
            data["stage"][table]["repeat"] = replicates
        for task in self.repeat_tasks:
            data["task"][task]["repeat"] = replicates
        _propagate_repeat(data, set(tables) | set(self.repeat_tasks), replicates)
        return data

    def _check_row_names(self, data: Mapping[str, Any], file: Any) -> None:
        """Refuse a ``rows.stage`` that is not a stage of the pipeline, a ``rows.count`` naming no table.

        Raises:
            ConfigError: (key ``rows``) naming the pipeline, the missing name and the closest match.
        """
        if self.rows is None or self.pipeline is None:
            return
        check_names(data, self.pipeline, file, rows=(arm_table(self.rows.stage),))
        kind, name = self.rows.count.split(".")[:2]
        if name not in data.get(kind, {}):
            raise ConfigError(
                f"rows.count {self.rows.count} names {kind} '{name}', which is not a {kind} of pipeline "
                f"'{self.pipeline}'.{suggest(name, data.get(kind, {}))}",
                file=file,
                key="rows",
            )

    def _group_observations(self, result: Any, replicates: int) -> Observations:
        """``{group: {arm: [values]}}`` read from each group's stage tables (see ``groups``)."""
        values: dict[str, dict[str, list[float]]] = {}
        for group, stages in self.groups.items():
            values[group] = {}
            for arm in self.arms:
                stage, metric = self._metric(arm)
                values[group][arm] = _read_repeat(
                    result, stages[arm], (stage.format(group=group), metric), replicates
                )
        return Observations(values=values)

    def _matrix_observations(
        self, data: dict[str, Any], result: Any, sc: Scale, registry: Any
    ) -> Observations:
        """The arms' matrix points read from ``result``, grouped by ``group_by``, slopes ``across``."""
        import copy

        from quadriga.claims.matrix import matrix_values
        from quadriga.pipeline_source import apply_overrides

        def read(arm: str, stem: str) -> list[float]:
            return _read_repeat(result, stem, self._metric(arm), sc.replicates)

        as_run = copy.deepcopy(data)  # the points as run: the scale's overrides may set a matrix
        apply_overrides(as_run, sc.overrides, registry)
        values = matrix_values(
            as_run, self.arms, read, sc.replicates, group_by=self.group_by, across=self.across
        )
        return Observations(values=values)

    def scale(self, scale: str, *, overrides: Sequence[str] = (), replicates: int | None = None) -> Scale:
        """The :class:`Scale` named ``scale``, with further overrides and another number of replicates.

        Raises:
            ConfigError: unknown scale.
        """
        if scale not in self.scales:
            raise ConfigError(f"unknown scale '{scale}'; use one of {', '.join(self.scales)}.", key="scale")
        sc = self.scales[scale]
        changes: dict[str, Any] = {}
        if overrides:
            changes["overrides"] = (*sc.overrides, *overrides)
        if replicates is not None:
            changes["replicates"] = replicates
        return attrs.evolve(sc, **changes) if changes else sc
