"""Artifacts: what flows between pipeline stages and what is saved with a run.

Each interface returns one artifact type: a Sampler returns :class:`Samples`, a
Learner :class:`Fitted`, an Estimator :class:`Estimate`, an Evaluator
:class:`Metrics`. Each class owns its behaviour, so that adding a fifth type touches one class:

- ``summary() -> dict``: the JSON-ready numbers written to ``results.json`` (wall-clock
  timings left out, see :func:`is_timing`);
- ``numbers() -> dict``: what two runs of the same configuration and seed must reproduce
  exactly (compared with :func:`same_numbers`);
- ``problems() -> list[str]``: its own checks (shapes, types, NaN/inf); empty when valid;
  ``non_finite()`` names the fields holding NaN or inf;
- ``save(directory) -> bool`` and ``classmethod load(directory)``: a lossless round trip
  through ``directory/artifact.pt`` (tensors of any size, in fields and in ``info``, numpy
  arrays, tuples, NaN), read back with ``torch.load(weights_only=True)``; ``save`` returns
  ``False`` when the artifact holds something that cannot be reloaded (a trained module,
  a callable), and the stage then runs again on resume.

Tensors are ``torch.Tensor``; this module imports torch only inside those methods, so that
``import quadriga`` stays light.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import attrs

from quadriga._repr import compact_repr, short
from quadriga.errors import QuadrigaError
from quadriga.serialization import (
    TIMING_KEYS,
    Unsaveable,
    decode,
    encode,
    finite,
    is_timing,
    jsonable,
    same_numbers,
    subclasses,
    timeless,
)
from quadriga.stage_names import INFO_KEYS

__all__ = [
    "ARTIFACT_TYPES",
    "IN_MEMORY_BYTES",
    "TIMING_KEYS",
    "Artifact",
    "Estimate",
    "Fitted",
    "Metrics",
    "Samples",
    "artifact_class",
    "is_timing",
    "jsonable",
    "same_numbers",
]

#: artifacts whose tensors' storage is at most this many bytes are serialized in memory and written
#: with one call; larger ones are streamed to the file by torch (never held twice in memory)
IN_MEMORY_BYTES = 1 << 20


def _storage_bytes(tensors: Any) -> float:
    """The bytes ``torch.save`` writes for the storages of ``tensors`` (``inf`` when one has none: sparse)."""
    total = 0
    for t in tensors:
        try:
            total += t.untyped_storage().nbytes()
        except (RuntimeError, NotImplementedError):
            return math.inf
    return total


class Artifact:
    """Base class of the artifact types: the behaviour every stage output shares.

    Subclasses are attrs classes; ``saved_fields`` names the fields written by :meth:`save`,
    ``unsaved_fields`` those that must be ``None`` for the artifact to be reloadable.
    """

    saved_fields: ClassVar[tuple[str, ...]] = ()
    unsaved_fields: ClassVar[tuple[str, ...]] = ()
    info: dict[str, Any]

    def __repr__(self) -> str:
        """One line: tensors as ``Tensor[n, d] dtype``, floats to 4 digits, long dicts cut.

        E.g. ``Samples(x=Tensor[10000, 20] float64, log_weights=None, chains=None,
        info={acceptance_rate: 0.57})``; built by :func:`quadriga._repr.compact_repr`.
        """
        return compact_repr(self)

    def label(self) -> str:
        """A few words naming the artifact: ``Samples[300, 2]``, ``Metrics[4 values]``, ``Estimate``."""
        return type(self).__name__

    #: whether the keys of :meth:`scalars` read ``"<subject>/<metric>"`` (an evaluator's values)
    keyed_by_subject: ClassVar[bool] = False

    @classmethod
    def scalars(cls, summary: Mapping[str, Any]) -> dict[str, float]:
        """The numbers of a summary (as :meth:`summary` writes it) that tables and trackers show.

        The one reader of a summary's numbers: the run table, the notebook's tidy rows, the sweep
        table, the report and the tracker plugins all call it. Booleans, strings (a NaN is
        written as ``"nan"``) and nested values are left out; ints become floats.

        Args:
            summary: a stage's entry of ``results.json`` (older files load the same way: only
                the keys each class has always written are read).

        Returns:
            ``{name: value}``; the base class gives the numbers of ``info`` (less the name's
            parts ``source``, ``point`` and ``replicate`` the runner adds, which are no metrics).
        """
        return _info_numbers(summary)

    @classmethod
    def headline(cls, summary: Mapping[str, Any]) -> str:
        """One line for tables and ``repr`` (``"300 x 2 samples"``); the base class gives the type name."""
        return str(summary.get("type") or cls.__name__)

    def summary(self) -> dict[str, Any]:
        """JSON-ready numbers for ``results.json``: ``{"type": ..., ..., "info": {...}}`` (no timings)."""
        return {"type": type(self).__name__, "info": jsonable(timeless(self.info))}

    def numbers(self) -> dict[str, Any]:
        """The numbers two runs with the same configuration and seed must reproduce exactly.

        Returns:
            ``{field: float, tensor or nested numbers}`` (timings left out); compare with
            :func:`same_numbers`.
        """
        out = {f: getattr(self, f) for f in self.saved_fields if f != "info"}
        out["info"] = timeless(self.info)
        return out

    def non_finite(self) -> list[str]:
        """Names of the fields that must be finite and hold NaN or inf (``["Samples.x"]``)."""
        return []

    def health(self) -> list[Any]:
        """Findings about the numbers' meaning (:mod:`quadriga.health`): none by default."""
        return []

    def problems(self) -> list[str]:
        """Everything wrong with this artifact (types, shapes, NaN/inf); empty when it is valid."""
        out = []
        if not isinstance(self.info, dict) or not all(isinstance(k, str) for k in self.info):
            out.append("info must be a dict with string keys")
        return out + [f"non-finite value (NaN or inf) in {what}" for what in self.non_finite()]

    def save(self, directory: Path) -> bool:
        """Write ``directory/artifact.pt`` (atomically); return whether :meth:`load` can rebuild it.

        Tensors are moved to CPU. Returns ``False`` (writing nothing) when a field holds
        something other than numbers, strings, tensors, arrays, lists, tuples and string-keyed dicts.
        """
        import torch

        from quadriga.fileio import atomic_path, atomic_write_bytes

        if any(getattr(self, f) is not None for f in self.unsaved_fields):
            return False
        tensors: dict[str, Any] = {}
        try:
            fields = {f: encode(getattr(self, f), tensors) for f in self.saved_fields}
        except Unsaveable:
            return False
        payload = {"type": type(self).__name__, "fields": json.dumps(fields), "tensors": tensors}
        path = Path(directory) / "artifact.pt"
        if _storage_bytes(tensors.values()) <= IN_MEMORY_BYTES:
            # small: serialized in memory and written with one call (torch's file writer makes
            # many small writes, about twice the CPU time here)
            buffer = io.BytesIO()
            torch.save(payload, buffer)
            atomic_write_bytes(path, buffer.getbuffer())
        else:  # large: streamed to the file, never held twice in memory
            with atomic_path(path) as tmp:
                torch.save(payload, tmp)
        return True

    @classmethod
    def load(cls, directory: Path) -> Any:
        """Rebuild an artifact saved by :meth:`save`, or return ``None`` when none was saved.

        Raises:
            QuadrigaError: the directory holds an artifact of another type than ``cls`` (a stage
                directory reused by a stage of another kind).
        """
        import torch

        path = Path(directory) / "artifact.pt"
        if not path.is_file():
            return None
        payload = torch.load(path, weights_only=True)
        found = next((c for c in subclasses(cls) if c.__name__ == payload.get("type")), None)
        if found is None or "fields" not in payload:
            raise QuadrigaError(
                f"'{path}' holds a {payload.get('type', 'file of an older format')}, not a {cls.__name__}; "
                "the stage will not reuse it. Remove that directory, or start a new run."
            )
        fields = {k: decode(v, payload["tensors"]) for k, v in json.loads(payload["fields"]).items()}
        return found(**fields)


@attrs.define(kw_only=True, eq=False, repr=False)
class Samples(Artifact):
    """Draws from a target, possibly weighted.

    Attributes:
        x: ``Tensor[n, d]`` (float) or ``Tensor[n, d]`` in {-1, +1} for spin systems;
            the samples, in the target's own units. For several chains the rows
            are chain-major: ``n = num_chains * num_draws_per_chain``.
        log_weights: ``Tensor[n]`` unnormalised log importance weights, or ``None``
            for equally weighted samples.
        chains: ``Tensor[num_chains, num_draws, d]`` view of the chains when the
            sampler ran several Markov chains (for ESS and per-chain estimates), else ``None``.
        info: cost counters and diagnostics, plain numbers: e.g.
            ``score_evals`` (count), ``log_prob_evals`` (count), ``acceptance_rate``
            (fraction in [0, 1]), ``rejected_nonfinite`` (count), ``seconds``.
    """

    x: Any
    log_weights: Any = None
    chains: Any = None
    info: dict[str, Any] = attrs.field(factory=dict)

    @property
    def num_samples(self) -> int:
        """Number of rows ``n`` of ``x``."""
        return int(self.x.shape[0])

    saved_fields: ClassVar[tuple[str, ...]] = ("x", "log_weights", "chains", "info")

    @property
    def dim(self) -> int:
        """Dimension ``d`` of each sample."""
        return int(self.x.shape[1])

    def thinned(self, every: int) -> Samples:
        """Every ``every``-th draw (what a stage with ``save_thin = every`` writes to disk).

        With ``chains`` (``[c, m, d]``) each chain keeps draws ``0, every, 2 every, ...``, so
        ``x`` stays the chain-major view: ``[c * ceil(m / every), d]``; otherwise rows
        ``0, every, ...`` of ``x`` (``[ceil(n / every), d]``) and of ``log_weights`` are kept.
        ``info`` is copied with ``thin = every`` added.

        Raises:
            ValueError: ``every`` is not an integer >= 1.
        """
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise ValueError(f"thin must be an integer >= 1, got {every!r}")
        info = {**self.info, "thin": every}
        # clone: a strided view would keep (and torch.save would write) the whole original storage
        if self.chains is None:
            lw = None if self.log_weights is None else self.log_weights[::every].clone()
            return Samples(x=self.x[::every].clone(), log_weights=lw, info=info)
        c, m, d = self.chains.shape
        chains = self.chains[:, ::every].clone()
        lw = (
            None
            if self.log_weights is None
            else self.log_weights.reshape(c, m)[:, ::every].reshape(-1).clone()
        )
        return Samples(x=chains.reshape(-1, d), log_weights=lw, chains=chains, info=info)

    def label(self) -> str:
        """``Samples[n, d]``."""
        return f"Samples[{self.num_samples}, {self.dim}]"

    @classmethod
    def scalars(cls, summary: Mapping[str, Any]) -> dict[str, float]:
        """``num_samples``, ``dim`` and the numbers of ``info`` (acceptance rate, evaluation counts).

        The name's parts in ``info`` (``source``, ``point``, ``replicate``) are left out.
        """
        sizes = {k: summary.get(k) for k in ("num_samples", "dim")}
        return {**_numbers(sizes), **_info_numbers(summary)}

    @classmethod
    def headline(cls, summary: Mapping[str, Any]) -> str:
        """``"8000 x 2 samples"``, with ``", acceptance 0.2649"`` when ``info`` has an acceptance rate."""
        text = f"{summary.get('num_samples')} x {summary.get('dim')} samples"
        acc = _mapping(summary.get("info")).get("acceptance_rate")
        return text + (f", acceptance {short(acc)}" if isinstance(acc, (int, float)) else "")

    def summary(self) -> dict[str, Any]:
        """``{"type": "Samples", "num_samples": n, "dim": d, "info": {...}}``."""
        return {
            "type": "Samples",
            "num_samples": self.num_samples,
            "dim": self.dim,
            "info": jsonable(timeless(self.info)),
        }

    def non_finite(self) -> list[str]:
        """``["Samples.x"]`` when ``x`` holds NaN or inf (``log_weights`` may be ``-inf``)."""
        return [] if finite(self.x) else ["Samples.x"]

    def health(self) -> list[Any]:
        """Stuck chains fail, barely moving ones warn (:func:`quadriga.health.samples`)."""
        from quadriga import health

        return health.samples(self.info if isinstance(self.info, dict) else {}, self.chains)

    def problems(self) -> list[str]:
        """The shape and finiteness problems of these samples (empty when valid).

        Shapes: ``x`` is ``[n, d]`` with ``n >= 1``, ``log_weights`` ``[n]``, ``chains`` the
        chain-major view ``[num_chains, n / num_chains, d]`` of ``x``; ``x`` finite.
        """
        out = super().problems()
        shape = tuple(getattr(self.x, "shape", ()))
        if len(shape) != 2 or shape[0] < 1:
            return [
                *out,
                f"Samples.x must be a Tensor[n, d] with n >= 1, got {type(self.x).__name__} {shape}",
            ]
        n, d = shape
        if self.log_weights is not None and tuple(self.log_weights.shape) != (n,):
            out.append(f"log_weights has shape {tuple(self.log_weights.shape)}, expected ({n},)")
        c = self.chains
        if c is not None:
            if c.ndim != 3 or c.shape[2] != d or c.shape[0] * c.shape[1] != n:
                out.append(
                    f"chains has shape {tuple(c.shape)}, expected (num_chains, n / num_chains, {d}) "
                    f"with n = {n}"
                )
            elif not same_numbers(c.reshape(n, d), self.x):
                out.append("chains is not the chain-major view of x (chains.reshape(n, d) != x)")
        return out


@attrs.define(kw_only=True, eq=False, repr=False)
class Fitted(Artifact):
    """A trained model or policy.

    Attributes:
        model: the trained object: a ``torch.nn.Module`` (policy, Q-network,
            score network) or a fitted scikit-learn estimator.
        history: per-step training records, e.g. ``{"step": [...], "episode_return": [...]}``;
            lists of equal length per key, units given by the learner.
        info: summary numbers (``env_steps``, ``updates``, ``seconds``, ...).
        predict: optional callable for models that are not modules, e.g.
            ``predict(x: Tensor[n, d]) -> Tensor[n]``.
    """

    model: Any
    history: dict[str, list] = attrs.field(factory=dict)
    info: dict[str, Any] = attrs.field(factory=dict)
    predict: Any = None

    saved_fields: ClassVar[tuple[str, ...]] = ("model", "history", "info")
    unsaved_fields: ClassVar[tuple[str, ...]] = ("predict",)

    @classmethod
    def scalars(cls, summary: Mapping[str, Any]) -> dict[str, float]:
        """The ``final`` numbers: the last logged value of each history key (``loss``, ...)."""
        return _numbers(_mapping(summary.get("final")))

    @classmethod
    def headline(cls, summary: Mapping[str, Any]) -> str:
        """``"fitted loss=0.3333, return=12"`` (every final number), or ``"fitted"``."""
        final = ", ".join(f"{k}={short(v)}" for k, v in cls.scalars(summary).items())
        return f"fitted {final}".strip()

    def health(self) -> list[Any]:
        """A loss that exploded fails or warns (:func:`quadriga.health.fitted`)."""
        from quadriga import health

        return health.fitted(self.history if isinstance(self.history, dict) else {})

    def summary(self) -> dict[str, Any]:
        """``{"type": "Fitted", "info": {...}, "final": {key: last history value}}``."""
        final = {k: jsonable(v[-1]) for k, v in self.history.items() if isinstance(v, list) and v}
        return {"type": "Fitted", "info": jsonable(timeless(self.info)), "final": final}

    def numbers(self) -> dict[str, Any]:
        """History, info (no timings) and the model's ``state_dict`` when it has one."""
        state = self.model.state_dict() if hasattr(self.model, "state_dict") else self.model
        return {"model": state, "history": self.history, "info": timeless(self.info)}

    def problems(self) -> list[str]:
        """Every history entry is a list (a NaN logged in training is caught when it is logged)."""
        out = super().problems()
        out += [
            f"history['{k}'] is {type(v).__name__}, expected a list"
            for k, v in self.history.items()
            if not isinstance(v, list)
        ]
        return out

    def save(self, directory: Path) -> bool:
        """Save the model into ``directory``; ``True`` when it can be loaded back losslessly.

        A ``torch.nn.Module`` model's ``state_dict`` goes to ``model.pt`` (for inspection; the
        stage runs again on resume, returns ``False``); models of tensors and numbers are saved whole.
        """
        import torch

        if isinstance(self.model, torch.nn.Module):
            from quadriga.fileio import atomic_path

            with atomic_path(Path(directory) / "model.pt") as tmp:
                torch.save(self.model.state_dict(), tmp)
            return False
        return super().save(directory)


@attrs.define(kw_only=True, eq=False, repr=False)
class Estimate(Artifact):
    """A value with its uncertainty.

    Attributes:
        value: the estimate: a float, or a ``Tensor`` of any shape documented by the estimator.
        stderr: its standard error (same shape as ``value``) or ``None``.
        interval: a ``(low, high)`` confidence interval or ``None``.
        info: diagnostics and cost counters (plain numbers).
        predict: optional callable for estimators whose result is a function,
            e.g. conformal sets ``predict(x: ndarray[n, p]) -> (low[n], high[n])``.
    """

    value: Any
    stderr: Any = None
    interval: tuple[Any, Any] | None = None
    info: dict[str, Any] = attrs.field(factory=dict)
    predict: Any = None

    saved_fields: ClassVar[tuple[str, ...]] = ("value", "stderr", "interval", "info")
    unsaved_fields: ClassVar[tuple[str, ...]] = ("predict",)

    @classmethod
    def scalars(cls, summary: Mapping[str, Any]) -> dict[str, float]:
        """``estimate`` and ``estimate_stderr`` (each only when a number: a tensor value has neither)."""
        return _numbers({"estimate": summary.get("value"), "estimate_stderr": summary.get("stderr")})

    @classmethod
    def headline(cls, summary: Mapping[str, Any]) -> str:
        """``"estimate 0.2242 ± 0.02226"`` (``± ...`` only with a standard error)."""
        err = summary.get("stderr")
        return f"estimate {short(summary.get('value'))}" + (f" ± {short(err)}" if err is not None else "")

    def summary(self) -> dict[str, Any]:
        """``{"type": "Estimate", "value", "stderr", ["interval"], "info"}``."""
        out: dict[str, Any] = {
            "type": "Estimate",
            "value": jsonable(self.value),
            "stderr": jsonable(self.stderr),
        }
        if self.interval is not None:
            out["interval"] = jsonable(list(self.interval))
        out["info"] = jsonable(timeless(self.info))
        return out

    def non_finite(self) -> list[str]:
        """``Estimate.value`` / ``Estimate.stderr`` when they hold NaN or inf."""
        return [f"Estimate.{f}" for f in ("value", "stderr") if not finite(getattr(self, f))]

    def problems(self) -> list[str]:
        """``value`` a number or tensor/array, ``stderr`` of its shape, ``interval`` a pair; finite."""
        out = super().problems()
        value = self.value
        if not isinstance(value, (int, float)) and not hasattr(value, "shape"):
            out.append(f"Estimate.value must be a number or a tensor/array, got {type(value).__name__}")
        elif self.stderr is not None and hasattr(value, "shape"):
            if tuple(getattr(self.stderr, "shape", ())) != tuple(value.shape):
                out.append(
                    f"stderr has shape {tuple(getattr(self.stderr, 'shape', ()))}, value {tuple(value.shape)}"
                )
        if self.interval is not None and len(self.interval) != 2:
            out.append("interval must be a (low, high) pair")
        return out


def _timeless_tables(tables: Any) -> Any:
    """``tables`` with the wall-clock columns (:func:`is_timing`) left out of each row that is a mapping.

    A table is a list of row dicts (``{"subject": "mala", "ess_min": ..., "ess_min_per_second":
    ...}``); a rate per second in it would make two runs with one seed differ in ``results.json``.
    Other shapes of table are kept as they are.
    """
    if not isinstance(tables, Mapping):
        return tables
    return {
        name: [timeless(row) if isinstance(row, Mapping) else row for row in rows]
        if isinstance(rows, (list, tuple))
        else rows
        for name, rows in tables.items()
    }


@attrs.define(kw_only=True, eq=False, repr=False)
class Metrics(Artifact):
    """Named scalar metrics with optional tables and figures.

    Attributes:
        values: ``{name: float}``; when an evaluator compares several subjects the
            names are ``"<subject>/<metric>"``.
        tables: ``{name: list of row dicts}`` (one row per subject, say).
        figures: ``{name: matplotlib.figure.Figure}``; the run saves each as ``<stage>-<name>.png``.
        info: anything else JSON-serialisable. By convention ``info["true_values"]`` is
            ``{metric: value}``, the value a metric would take on exact draws (a mixture weight
            for a mode's share), keyed by the metric without its subject; the sweep's
            ``summary.png`` draws it as a reference line.
        intervals: ``{name: {"low", "high", "level", "method"}}``, the confidence interval of
            ``values[name]`` (same key): its ends in the value's units, its level (``0.95``) and
            how it was computed in words (``"bootstrap percentile over 8 chains"``). One value
            with its interval, never ends as metrics of their own (``*_low``, ``*_high``).
    """

    values: dict[str, float] = attrs.field(factory=dict)
    tables: dict[str, list[dict[str, Any]]] = attrs.field(factory=dict)
    figures: dict[str, Any] = attrs.field(factory=dict)
    info: dict[str, Any] = attrs.field(factory=dict)
    intervals: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    saved_fields: ClassVar[tuple[str, ...]] = ("values", "tables", "info", "intervals")  # figures: PNG

    def label(self) -> str:
        """``Metrics[k values]``."""
        return f"Metrics[{len(self.values)} values]"

    keyed_by_subject: ClassVar[bool] = True

    @classmethod
    def scalars(cls, summary: Mapping[str, Any]) -> dict[str, float]:
        """The ``values``, keyed as the evaluator wrote them (``"<subject>/<metric>"`` or ``"<metric>"``)."""
        return _numbers(_mapping(summary.get("values")))

    @classmethod
    def headline(cls, summary: Mapping[str, Any]) -> str:
        """``"6 metrics"`` (``"1 metric"``)."""
        n = len(_mapping(summary.get("values")))
        return f"{n} metric{'' if n == 1 else 's'}"

    def summary(self) -> dict[str, Any]:
        """``{"type": "Metrics", "values", "tables", "info"[, "intervals"]}``; timings left out."""
        return {
            "type": "Metrics",
            "values": jsonable(timeless(self.values)),
            "tables": jsonable(_timeless_tables(self.tables)),
            "info": jsonable(timeless(self.info)),
            **({"intervals": jsonable(self.intervals)} if self.intervals else {}),
        }

    def numbers(self) -> dict[str, Any]:
        """Values, tables and intervals (timings left out)."""
        return {
            "values": timeless(self.values),
            "tables": _timeless_tables(self.tables),
            "intervals": self.intervals,
        }

    def non_finite(self) -> list[str]:
        """``metric 'NAME'`` for every value that is NaN or inf."""
        return [f"metric '{k}'" for k, v in self.values.items() if not finite(v)]

    def problems(self) -> list[str]:
        """Values are floats, tables lists of row dicts, figures matplotlib figures; not empty; finite."""
        out = super().problems()
        for key, value in self.values.items():
            scalar = hasattr(value, "item") and getattr(value, "ndim", 1) == 0
            if isinstance(value, bool) or not (isinstance(value, (int, float)) or scalar):
                out.append(f"values['{key}'] is {type(value).__name__}, expected a float")
        for key, fig in self.figures.items():
            if not hasattr(fig, "savefig"):
                out.append(f"figures['{key}'] is {type(fig).__name__}, expected a matplotlib.figure.Figure")
        for key, rows in self.tables.items():
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                out.append(f"tables['{key}'] must be a list of row dicts")
        for key, ci in self.intervals.items():
            if key not in self.values:
                out.append(f"intervals['{key}'] has no value of that name in values")
            elif not isinstance(ci, dict) or not {"low", "high", "level", "method"} <= set(ci):
                out.append(f"intervals['{key}'] must be a dict with low, high, level and method")
            elif not (ci["low"] <= ci["high"] or not (finite(ci["low"]) and finite(ci["high"]))):
                out.append(f"intervals['{key}'] has low > high")
        if not self.values and not self.figures and not self.tables:
            out.append("Metrics is empty")
        return out


ARTIFACT_TYPES: dict[str, type[Artifact]] = {
    "Samples": Samples,
    "Fitted": Fitted,
    "Estimate": Estimate,
    "Metrics": Metrics,
}


def artifact_class(summary: Mapping[str, Any]) -> type[Artifact]:
    """The artifact class that reads ``summary`` (by its ``"type"``); :class:`Artifact` when unknown."""
    return ARTIFACT_TYPES.get(str(summary.get("type")), Artifact)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _info_numbers(summary: Mapping[str, Any]) -> dict[str, float]:
    """The numbers of a summary's ``info``, less the name's parts (``stage_names.INFO_KEYS``)."""
    info = _mapping(summary.get("info"))
    return _numbers({k: v for k, v in info.items() if k not in INFO_KEYS})


def _numbers(values: Mapping[str, Any]) -> dict[str, float]:
    """The int and float entries of ``values`` as floats (booleans, strings and nested values dropped)."""
    return {
        str(k): float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
