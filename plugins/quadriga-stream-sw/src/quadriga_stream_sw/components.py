"""Registered components: the ``stream-sw`` estimator and evaluator, the ``subsample-sw`` baseline,
POT's ``exact-sw`` and the ``sw-relative-error`` comparison.

Inputs: an estimator's ``data`` is either a ``TwoSampleStream`` task (both streams) or a
``Samples`` artifact (the source, read in batches) with the target in ``target``. Directions
come from the stream ``"projections"`` of the stage generator
(:func:`quadriga.seeding.child_generator`): stages with the same seed (replicate ``i`` of
repeated estimator stages, which share their seed) project on the same directions, so Stream-SW,
the subsample baseline and the exact SW of one replicate are compared on the same directions.

Source: Nguyen 2025, "Streaming Sliced Optimal Transport", arXiv 2505.06835.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Estimate, Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Estimator, Evaluator, Target, named
from quadriga.seeding import child_generator, derive_seed, make_generator
from quadriga.validators import (
    in_range,
    instance_of,
    int_at_least,
    one_of,
    optional,
    positive_int,
    positive_int_list,
)
from quadriga_stream_sw.sketch import BACKENDS
from quadriga_stream_sw.stream import StreamSW, SubsampleSW
from quadriga_stream_sw.threads import single_thread
from quadriga_stream_sw.wasserstein import exact_sliced, random_projections, sliced_value

__all__ = [
    "ExactSWEstimator",
    "MemoryComparison",
    "RelativeError",
    "StreamSWEstimator",
    "StreamSWEvaluator",
    "SubsampleSWEstimator",
    "batch_streams",
    "errors_at_equal_memory",
]


#: a sketch size; datasketches' KLL needs k >= 8
_K = int_at_least(2, hint="(>= 8 for backend 'datasketches')")


def _chunks(x: torch.Tensor, batch_size: int) -> Iterator[torch.Tensor]:
    for start in range(0, x.shape[0], batch_size):
        yield x[start : start + batch_size]


def _samples_x(s: Samples, name: str) -> torch.Tensor:
    if s.log_weights is not None:
        raise ConfigError(
            f"'{name}' is a weighted Samples artifact; streaming sketches take equally weighted "
            "points: resample it first (or use 'exact-sw', which accepts weights).",
            key=name,
        )
    x = torch.as_tensor(s.x)
    if x.ndim != 2:
        raise ConfigError(f"'{name}'.x must be [n, d], got shape {tuple(x.shape)}.", key=name)
    return x


def batch_streams(
    data: Any, target: Any, batch_size: int
) -> tuple[int, Callable[[], Iterator[torch.Tensor]], Callable[[], Iterator[torch.Tensor]]]:
    """Turn an estimator's inputs into two replayable batch streams.

    Args:
        data: a task with ``stream(which)`` (e.g. ``TwoSampleStream``) or a ``Samples`` (the source).
        target: ``Samples`` of the target, or ``None`` when ``data`` carries both streams.
        batch_size: batch size used to read ``Samples`` (points).

    Returns:
        ``(dim, source_batches, target_batches)``: the two are zero-argument callables
        returning iterators of ``Tensor[b, d]``.

    Raises:
        ConfigError: missing target, weighted samples, mismatched dimensions.
    """
    if hasattr(data, "stream") and target is None:
        first = next(iter(data.stream("source")))
        return int(first.shape[1]), (lambda: data.stream("source")), (lambda: data.stream("target"))
    if isinstance(data, Samples):
        xs = _samples_x(data, "data")
    elif hasattr(data, "split"):
        xs = torch.as_tensor(data.split("source")[0])
    else:
        raise ConfigError(
            f"'data' must be Samples or a two-stream task, got {type(data).__name__}.", key="data"
        )
    if target is None:
        raise ConfigError("give the target sample: inputs = { data = ..., target = ... }.", key="target")
    if not isinstance(target, Samples):
        raise ConfigError(f"'target' must be a Samples artifact, got {type(target).__name__}.", key="target")
    xt = _samples_x(target, "target")
    if xs.shape[1] != xt.shape[1]:
        raise ConfigError(
            f"source points are {xs.shape[1]}-D but target points {xt.shape[1]}-D.", key="target"
        )
    return int(xs.shape[1]), (lambda: _chunks(xs, batch_size)), (lambda: _chunks(xt, batch_size))


def _directions(dim: int, num_projections: int, generator: torch.Generator) -> torch.Tensor:
    """``Tensor[L, d]`` unit directions from the ``"projections"`` stream of the stage generator."""
    return random_projections(dim, num_projections, child_generator(generator, "projections"))


def _feed(sw: Any, source: Callable, target: Callable) -> None:
    for batch in source():
        sw.update_source(batch)
    for batch in target():
        sw.update_target(batch)


_DOC_L = "number of random directions L"


@attrs.define(kw_only=True)
class StreamSWEstimator(Estimator):
    """Stream-SW: SW_p between two streams, from one KLL sketch per direction and per stream.

    ``estimate(data, *, generator, target=None) -> Estimate``. ``data`` is a two-stream task
    (``TwoSampleStream``) or the source ``Samples`` with the target ``Samples`` in ``target``.

    Shapes:
        inputs are read as batches ``Tensor[b, d]`` (``b <= batch_size``); directions ``Tensor[L, d]``
        with L = ``num_projections``; ``value`` and ``stderr`` are scalars (floats); ``info["wpp"]``
        is a list of L per-direction W_p^p. Memory is O(L k), independent of the stream length n.

    Units:
        ``value`` (SW_p) and ``stderr`` in the units of x; ``info["wpp"]`` in units of x to the p;
        ``retained_per_projection`` and ``memory_floats`` are counts of floats (both streams).

    Raises:
        ConfigError: bad parameters when built (``k < 8`` with ``backend = "datasketches"``,
            non-positive sizes, ``p < 1``); a ``Samples`` input with ``log_weights``, points not
            ``[n, d]``, a ``Samples`` source without ``target``, or source and target of different d
            (see :func:`batch_streams`); non-finite points in a batch.

    Source: Nguyen 2025, "Streaming Sliced Optimal Transport", arXiv 2505.06835, Alg. 1 (KLL sketch
    per direction) and the estimator SW_p^p ~ (1/L) sum_l W_p^p(sketch_l(mu), sketch_l(nu)).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Samples, Dataset), "target": (Samples,)}

    num_projections: int = param(100, doc=_DOC_L, validator=positive_int)
    k: int = param(200, doc="KLL parameter k (each sketch keeps about 3k + log2(n/k) items)", validator=_K)
    p: float = param(2.0, doc="order p of the Wasserstein distance", validator=in_range(1))
    batch_size: int = param(
        10_000, doc="points per batch when reading a Samples artifact", validator=positive_int
    )
    backend: str = param(
        "torch",
        doc="sketch backend: 'torch' (vectorised, seeded) or 'datasketches'",
        validator=one_of(BACKENDS),
    )

    def __attrs_post_init__(self) -> None:
        if self.backend == "datasketches" and self.k < 8:
            raise ConfigError(f"backend 'datasketches' needs k >= 8, got {self.k}.", key="k")

    def estimate(self, data: Any, *, generator: torch.Generator, target: Any = None) -> Estimate:
        """Stream both inputs through the sketches and return the SW_p estimate (torch on one thread)."""
        dim, source, target_batches = batch_streams(data, target, self.batch_size)
        theta = _directions(dim, self.num_projections, generator)
        with single_thread():
            sw = StreamSW(
                dim, k=self.k, p=self.p, generator=generator, projections=theta, backend=self.backend
            )
            _feed(sw, source, target_batches)
            return sw.estimate()


@attrs.define(kw_only=True)
class SubsampleSWEstimator(Estimator):
    """Equal-memory baseline: SW_p between uniform random subsamples of m points per stream, weights 1/m.

    Set ``num_retained`` directly, or ``match_k`` to keep exactly as many points per stream as a
    Stream-SW sketch with that k retains on the same stream (equal retained floats per direction).
    Inputs as for ``stream-sw``; each stream is subsampled batch by batch, never held whole.

    Shapes:
        batches ``Tensor[b, d]``; each stream keeps ``Tensor[m, L]`` projected values;
        ``value`` and ``stderr`` are scalars (floats); ``info["wpp"]`` a list of L values.

    Units:
        ``value`` and ``stderr`` in the units of x; ``num_retained``/``match_k`` and
        ``info["retained_per_projection"]`` are counts of points (floats per direction).

    Raises:
        ConfigError: when built, unless exactly one of ``num_retained`` (>= 1) and ``match_k`` (>= 2)
            is given, or for bad sizes or ``p < 1``; at run time, the input errors of
            :func:`batch_streams`.

    Source: random-subsampling baseline of Nguyen 2025 (arXiv 2505.06835, Gaussian/MixtureGaussian
    experiments), with correct weights 1/m (the reference code passed length-n weights); the sample
    is the m points with the smallest i.i.d. uniform keys (a reservoir sample).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Samples, Dataset), "target": (Samples,)}

    num_projections: int = param(100, doc=_DOC_L, validator=positive_int)
    num_retained: Any = param(
        None,
        toml_type="int | None",
        doc="points m kept per stream (or give match_k)",
        validator=optional(instance_of(int)),
    )
    match_k: Any = param(
        None,
        toml_type="int | None",
        doc="keep as many points per stream as a KLL sketch with this k",
        validator=optional(instance_of(int)),
    )
    p: float = param(2.0, doc="order p of the Wasserstein distance", validator=in_range(1))
    batch_size: int = param(
        10_000, doc="points per batch when reading a Samples artifact", validator=positive_int
    )

    def __attrs_post_init__(self) -> None:
        if (self.num_retained is None) == (self.match_k is None):
            raise ConfigError(
                "give exactly one of 'num_retained' (points per stream) and 'match_k'.", key="num_retained"
            )
        if self.num_retained is not None and self.num_retained < 1:
            raise ConfigError(f"'num_retained' must be >= 1, got {self.num_retained}.", key="num_retained")
        if self.match_k is not None and self.match_k < 2:
            raise ConfigError(f"'match_k' must be >= 2, got {self.match_k}.", key="match_k")

    def _matched(self, source: Callable) -> int:
        from quadriga_stream_sw.sketch import BatchedKLL

        sketch = BatchedKLL(1, self.match_k)  # sizes only: the sketch's shape depends on counts, not values
        for batch in source():
            sketch.update(torch.zeros(batch.shape[0], 1, dtype=torch.float64))
        return sketch.num_retained

    def estimate(self, data: Any, *, generator: torch.Generator, target: Any = None) -> Estimate:
        """Reservoir-sample both streams and return SW_p of the subsamples (torch on one thread)."""
        dim, source, target_batches = batch_streams(data, target, self.batch_size)
        with single_thread():
            m = self.num_retained if self.num_retained is not None else self._matched(source)
            theta = _directions(dim, self.num_projections, generator)
            sw = SubsampleSW(dim, num_retained=m, p=self.p, generator=generator, projections=theta)
            _feed(sw, source, target_batches)
            return sw.estimate()


@attrs.define(kw_only=True)
class ExactSWEstimator(Estimator):
    """Exact SW_p of the whole sample sets held in memory (``ot.sliced_wasserstein_distance``).

    ``stderr`` is the standard error over the L random directions (delta method), as for ``stream-sw``.
    Inputs as for ``stream-sw``; both streams are concatenated in memory.

    Shapes:
        source ``Tensor[n, d]``, target ``Tensor[m, d]``, directions ``Tensor[L, d]`` (passed to POT
        as ``[d, L]``); ``value`` and ``stderr`` are scalars (floats).

    Units:
        ``value`` and ``stderr`` in the units of x; ``info["memory_floats"]`` = (n + m) L, a count.

    Raises:
        ConfigError: bad parameters when built; the input errors of :func:`batch_streams`.

    Source: Bonneel et al. 2015, "Sliced and Radon Wasserstein barycenters of measures", JMIV (eq. 3);
    POT (Flamary et al., JMLR 2021), ``ot.sliced_wasserstein_distance``.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Samples, Dataset), "target": (Samples,)}

    num_projections: int = param(100, doc=_DOC_L, validator=positive_int)
    p: float = param(2.0, doc="order p of the Wasserstein distance", validator=in_range(1))

    def estimate(self, data: Any, *, generator: torch.Generator, target: Any = None) -> Estimate:
        """Materialise both streams and call POT with the same directions."""
        dim, source, target_batches = batch_streams(data, target, 1 << 30)
        xs, xt = torch.cat(list(source())), torch.cat(list(target_batches()))
        theta = _directions(dim, self.num_projections, generator)
        value, wpp = exact_sliced(xs, xt, theta, self.p, return_wpp=True)
        stderr = sliced_value(wpp, self.p)[1]
        floats = (xs.shape[0] + xt.shape[0]) * self.num_projections
        return Estimate(
            value=value,
            stderr=stderr,
            info={
                "n_source": int(xs.shape[0]),
                "n_target": int(xt.shape[0]),
                "retained_per_projection": int(xs.shape[0] + xt.shape[0]),
                "memory_floats": int(floats),
            },
        )


@attrs.define(kw_only=True)
class StreamSWEvaluator(Evaluator):
    """Stream-SW as a metric: SW_p of each subject's samples to a reference, streamed in batches.

    ``reference`` is a ``Samples`` artifact or a ``Target`` with an exact sampler (then
    ``num_reference_samples`` points are drawn batch by batch from the ``"reference"`` stream of the
    stage generator, never all held; the directions and the compaction coins come from its
    ``"projections"`` and ``"coins"`` streams, the same for every subject of the stage).
    ``values``: ``"<subject>/stream_sw"``, ``"<subject>/stream_sw_stderr"``, ``"<subject>/memory_floats"``.

    Shapes:
        each subject's ``Samples.x`` is ``Tensor[n, d]``, read in batches ``Tensor[b, d]``; reference
        batches ``Tensor[b, d]`` with the same d; every value is a scalar (float).

    Units:
        ``stream_sw`` and ``stream_sw_stderr`` in the units of x; ``memory_floats`` is a count.

    Raises:
        ConfigError: bad parameters when built; a weighted ``Samples`` subject or reference (resample
            it first); subject points not ``[n, d]``; a reference that is neither ``Samples`` nor has
            ``sample``; reference batches of another dimension than the subject's.
        NotImplementedError: a ``Target`` reference without an exact sampler.

    Source: Nguyen 2025, "Streaming Sliced Optimal Transport", arXiv 2505.06835, Alg. 1 and the
    sketch-based SW_p estimator.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Samples,),
        "reference": (Samples, Target),
    }

    num_projections: int = param(100, doc=_DOC_L, validator=positive_int)
    k: int = param(200, doc="KLL parameter k", validator=_K)
    p: float = param(2.0, doc="order p of the Wasserstein distance", validator=in_range(1))
    batch_size: int = param(10_000, doc="points per batch", validator=positive_int)
    num_reference_samples: int = param(
        10_000, doc="points drawn from a Target reference", validator=positive_int
    )

    def _reference(self, reference: Any, generator: Any) -> Callable[[], Iterator[torch.Tensor]]:
        if isinstance(reference, Samples):
            x = _samples_x(reference, "reference")
            return lambda: _chunks(x, self.batch_size)
        if reference is None or not hasattr(reference, "sample"):
            raise ConfigError(
                "'reference' must be a Samples artifact or a Target with an exact sampler.", key="reference"
            )

        def draws() -> Iterator[torch.Tensor]:
            gen = child_generator(generator, "reference")
            for start in range(0, self.num_reference_samples, self.batch_size):
                size = min(self.batch_size, self.num_reference_samples - start)
                yield torch.as_tensor(reference.sample(size, generator=gen), dtype=torch.float64)

        return draws

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """SW_p of every subject to the reference (same directions for all subjects; torch on one thread)."""
        with single_thread():
            return self._evaluate(named(subject), reference, generator)

    def _evaluate(self, subjects: dict[str, Any], reference: Any, generator: Any) -> Metrics:
        values: dict[str, float] = {}
        for name, s in subjects.items():
            x = _samples_x(s, "subject")
            ref = self._reference(reference, generator)
            gen = child_generator(generator, "coins")
            theta = random_projections(
                int(x.shape[1]), self.num_projections, child_generator(generator, "projections")
            )
            sw = StreamSW(int(x.shape[1]), k=self.k, p=self.p, generator=gen, projections=theta)
            _feed(sw, lambda x=x: _chunks(x, self.batch_size), ref)
            est = sw.estimate()
            values.update(
                {
                    f"{name}/stream_sw": est.value,
                    f"{name}/stream_sw_stderr": est.stderr,
                    f"{name}/memory_floats": float(est.info["memory_floats"]),
                }
            )
        return Metrics(values=values)


@attrs.define(kw_only=True)
class RelativeError(Evaluator):
    """Relative error |estimate - reference| / |reference| of SW estimates, with their memory.

    ``values``: ``"<subject>/relative_error"`` and ``"<subject>/retained_per_projection"``,
    plus an ``"errors"`` table (one row per subject).

    Shapes:
        ``subject`` is one ``Estimate`` or ``{stage: Estimate}``, ``reference`` one ``Estimate``, all
        with a scalar ``value``; every output value is a scalar (float).

    Units:
        ``relative_error`` is a dimensionless fraction; ``retained_per_projection`` counts floats per
        direction over both streams (NaN when the subject's ``info`` does not report it).

    Raises:
        ConfigError: the reference is missing, has no ``value``, or its value is 0.

    Source: the relative-error metric |SW_hat - SW| / SW of Nguyen 2025 (arXiv 2505.06835,
    vary_k and vary_n experiments).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Estimate,), "reference": (Estimate,)}

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Compare each subject's value with the reference's."""
        if reference is None or not hasattr(reference, "value"):
            raise ConfigError(
                "'reference' must be the exact SW Estimate (e.g. an 'exact-sw' stage).", key="reference"
            )
        ref = float(reference.value)
        if ref == 0:
            raise ConfigError("the reference SW is 0: the relative error is undefined.", key="reference")
        values, rows = {}, []
        for name, est in named(subject).items():
            err = abs(float(est.value) - ref) / abs(ref)
            mem = float(est.info.get("retained_per_projection", float("nan")))
            values[f"{name}/relative_error"] = err
            values[f"{name}/retained_per_projection"] = mem
            rows.append(
                {
                    "subject": name,
                    "value": float(est.value),
                    "reference": ref,
                    "relative_error": err,
                    "retained_per_projection": mem,
                }
            )
        return Metrics(values=values, tables={"errors": rows})


def errors_at_equal_memory(
    task: Any, ks: Any, seed: int, num_projections: int = 100
) -> tuple[float, list[dict[str, Any]]]:
    """Exact SW once, then Stream-SW and the equal-memory subsample for each k, on one prepared task.

    The three estimators run with generators seeded by the same ``seed``, hence on the same
    directions (the ``"projections"`` stream): replicate ``i`` of ``stream-sw``, ``subsample-sw``
    and ``exact-sw`` as in the pipeline ``stream-sw-gaussians``.

    Args:
        task: a prepared two-stream task (``TwoSampleStream``).
        ks: KLL parameters k (each >= 2); the subsample matches each k (``match_k``).
        seed: the estimators' seed (an int).
        num_projections: number of directions L.

    Returns:
        ``(exact, rows)``: the exact SW_p (units of x) and one row per k, in ``ks`` order, with
        ``k``, ``stream_err`` and ``sub_err`` (relative errors |SW_hat - SW| / SW, fractions) and
        ``retained`` (floats per direction per stream, equal for both methods).

    Source: Nguyen 2025, arXiv 2505.06835, vary_k experiments (relative error to exact SW).
    """
    gen = lambda: make_generator(seed)  # noqa: E731
    exact = ExactSWEstimator(num_projections=num_projections).estimate(task, generator=gen()).value
    rows = []
    for k in ks:
        st = StreamSWEstimator(num_projections=num_projections, k=k).estimate(task, generator=gen())
        sub = SubsampleSWEstimator(num_projections=num_projections, match_k=k).estimate(task, generator=gen())
        rows.append(
            {
                "k": k,
                "stream_err": abs(st.value - exact) / exact,
                "sub_err": abs(sub.value - exact) / exact,
                "retained": st.info["retained_per_projection"] // 2,
            }
        )
    return exact, rows


#: the arms of :class:`MemoryComparison`'s table
MEMORY_ARMS = ("stream-sw", "subsample")


@attrs.define(kw_only=True)
class MemoryComparison(Evaluator):
    """Stream-SW against the equal-memory subsample, per preset, k and replicate, in one stage.

    Input: none (``subject`` and ``reference`` are ignored). For each replicate ``r`` and preset,
    a fresh ``TwoSampleStream`` (``num_samples`` points per stream in batches of ``batch_size``)
    is prepared from the ``"data/<preset>/<r>"`` stream of the stage generator; the exact SW (POT)
    is computed once and Stream-SW and the subsample matched to each k are scored against it
    (:func:`errors_at_equal_memory`), all three on the same ``num_projections`` directions,
    seeded by the ``"estimators/<r>"`` stream (the same for both presets).

    Returns (``Metrics``): ``values`` ``"<preset>/k=<k>/<arm>/relative_error"`` (mean over the
    replicates) for arm ``stream-sw`` and ``subsample``, ``"<preset>/k=<k>/retained"`` (floats per
    direction per stream, both methods); ``tables["errors"]``: one row per (preset, k, replicate,
    arm) with columns ``preset``, ``k``, ``replicate`` (0 .. ``num_replicates - 1``, the same
    streams and directions for every k and both arms), ``subject`` (the arm), ``relative_error``,
    ``retained`` and ``exact`` (the replicate's exact SW).

    Shapes:
        scalars; the streams are ``Tensor[b, d]`` batches, directions ``Tensor[L, d]``.

    Units:
        ``relative_error`` is a dimensionless fraction; ``exact`` in the units of x; ``retained``
        counts floats per direction per stream.

    Raises:
        ConfigError: at build time, an unknown preset, an empty ``presets`` or ``ks``, a k < 2,
            non-positive sizes, ``dim != 2`` with ``"mixtures"``.

    Source: Nguyen 2025, "Streaming Sliced Optimal Transport", arXiv 2505.06835, Gaussian and
    MixtureGaussian vary_k experiments (with correct subsample weights 1/m).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {
        "presets": ["gaussians"],
        "num_samples": 300,
        "batch_size": 100,
        "ks": [10],
        "num_projections": 10,
        "num_replicates": 2,
    }

    presets: list[str] = param(
        factory=lambda: ["gaussians", "mixtures"],
        doc="two-sample-stream presets ('gaussians', 'mixtures')",
    )
    dim: int = param(2, doc="dimension d of the points ('mixtures' needs 2)", validator=positive_int)
    num_samples: int = param(10_000, doc="points per stream (n)", validator=positive_int)
    batch_size: int = param(1_000, doc="points per batch", validator=positive_int)
    ks: list[int] = param(
        factory=lambda: [10, 30, 100, 300],
        doc="KLL parameters k (the subsample keeps as many floats per direction)",
        validator=positive_int_list,
    )
    num_projections: int = param(100, doc=_DOC_L, validator=positive_int)
    num_replicates: int = param(
        20,
        doc="replicates: fresh streams and directions (paired across k and arms)",
        validator=int_at_least(2),
    )

    def __attrs_post_init__(self) -> None:
        from quadriga_stream_sw.tasks import TwoSampleStream

        if not self.presets:
            raise ConfigError("give at least one preset.", key="presets")
        if not self.ks or min(self.ks) < 2:
            raise ConfigError(f"'ks' must be non-empty with every k >= 2, got {self.ks}.", key="ks")
        for preset in self.presets:  # the task validates the preset and its dimension
            TwoSampleStream(
                preset=preset, dim=self.dim, num_samples=self.num_samples, batch_size=self.batch_size
            )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run every (replicate, preset) and score every k; see the class docstring (torch on one thread)."""
        del subject, reference
        with single_thread():  # small sorts: torch's intra-op threads only add contention
            return self._evaluate(generator)

    def _evaluate(self, generator: Any) -> Metrics:
        from quadriga_stream_sw.tasks import TwoSampleStream

        root = int(generator.initial_seed())
        rows: list[dict[str, Any]] = []
        for preset in self.presets:
            for rep in range(self.num_replicates):
                task = TwoSampleStream(
                    preset=preset, dim=self.dim, num_samples=self.num_samples, batch_size=self.batch_size
                )
                task.prepare(generator=child_generator(generator, f"data/{preset}/{rep}"))
                exact, errs = errors_at_equal_memory(
                    task, self.ks, derive_seed(root, f"estimators/{rep}"), self.num_projections
                )
                for e in errs:
                    for arm, err in zip(MEMORY_ARMS, (e["stream_err"], e["sub_err"]), strict=True):
                        rows.append(
                            {
                                "preset": preset,
                                "k": int(e["k"]),
                                "replicate": rep,
                                "subject": arm,
                                "relative_error": float(err),
                                "retained": int(e["retained"]),
                                "exact": float(exact),
                            }
                        )
        values: dict[str, float] = {}
        for preset in self.presets:
            for k in self.ks:
                sel = [r for r in rows if r["preset"] == preset and r["k"] == k]
                values[f"{preset}/k={k}/retained"] = float(sel[0]["retained"])
                for arm in MEMORY_ARMS:
                    errs = [r["relative_error"] for r in sel if r["subject"] == arm]
                    values[f"{preset}/k={k}/{arm}/relative_error"] = sum(errs) / len(errs)
        return Metrics(values=values, tables={"errors": rows})
