"""Registration of quadriga-stream-sw's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_stream_sw"
_PAPER = "Nguyen 2025, Streaming Sliced Optimal Transport, arXiv 2505.06835"

COMPONENTS = [
    (
        "estimator",
        "stream-sw",
        "components:StreamSWEstimator",
        "Streaming sliced Wasserstein: one KLL quantile sketch per direction and stream, O(L k) memory",
        _PAPER,
    ),
    (
        "estimator",
        "subsample-sw",
        "components:SubsampleSWEstimator",
        "Sliced Wasserstein of equal-memory uniform random subsamples (weights 1/m)",
        _PAPER + " (baseline)",
    ),
    (
        "estimator",
        "exact-sw",
        "components:ExactSWEstimator",
        "Exact sliced Wasserstein of sample sets held in memory (POT), optionally on shared directions",
        "Bonneel et al. 2015, eq. 3",
    ),
    (
        "evaluator",
        "stream-sw",
        "components:StreamSWEvaluator",
        "Sliced Wasserstein to a reference computed by streaming (for sample sets too large to hold)",
        _PAPER,
    ),
    (
        "evaluator",
        "sw-relative-error",
        "components:RelativeError",
        "Relative error of sliced Wasserstein estimates against an exact reference",
        "",
    ),
    (
        "dataset",
        "two-sample-stream",
        "tasks:TwoSampleStream",
        "Two replayable streams of batches: N(-1,I) vs N(2,I), or two 3-component 2-D mixtures",
        _PAPER,
    ),
]

PIPELINES = [
    (
        "stream-sw-gaussians",
        "pipelines/stream-sw-gaussians.toml",
        "Stream-SW vs equal-memory subsampling vs exact SW (POT), N(-1,I) vs N(2,I) and 2-D mixtures",
    ),
]

CLAIMS = [
    (
        "stream-sw-beats-subsample",
        "claims:beats_subsample",
        "At equal retained floats per direction, Stream-SW's relative error is below a correctly weighted "
        "random subsample's, for k in {10, 30, 100, 300}",
        _PAPER + ", Gaussian/MixtureGaussian vary-k",
    ),
    (
        "stream-sw-flat-in-n",
        "claims:flat_in_n",
        "At fixed k, Stream-SW's relative error does not grow with the stream length n (10^4 to 10^5)",
        _PAPER + ", Gaussian vary-n",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("estimator", "stream-sw"): ("streaming", "two-sample"),
    ("estimator", "subsample-sw"): ("streaming", "two-sample"),
    ("estimator", "exact-sw"): ("two-sample",),
    ("evaluator", "stream-sw"): ("streaming", "two-sample"),
    ("evaluator", "sw-relative-error"): ("streaming", "two-sample"),
    ("dataset", "two-sample-stream"): ("streaming", "two-sample"),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the Stream-SW estimator/evaluator, baselines, stream task, pipeline and claims."""
    for kind, name, target, summary, paper in COMPONENTS:
        registry.add(
            kind,
            name,
            f"{_P}.{target}",
            summary=summary,
            paper=paper,
            tags=TAGS.get((kind, name), ()),
        )
    for name, path, summary in PIPELINES:
        registry.add_pipeline(name, f"{_P}:{path}", summary=summary)
    for name, target, summary, paper in CLAIMS:
        registry.add_claim(name, f"{_P}.{target}", summary=summary, paper=paper)
