"""Registration of the toy plugin (imports nothing heavy)."""

import quadriga


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the toy components, one pipeline and one claim."""
    registry.add(
        "target", "toy-normal", "quadriga_toy.components:ToyNormal", summary="N(mean, scale^2) in d dims"
    )
    registry.add(
        "sampler", "toy-iid", "quadriga_toy.components:ToyIID", summary="exact draws from toy-normal"
    )
    registry.add("sampler", "toy-wrap", "quadriga_toy.components:ToyWrap", summary="runs a nested sampler")
    registry.add(
        "estimator", "toy-mean", "quadriga_toy.components:ToyMean", summary="sample mean of coordinate 0"
    )
    registry.add("evaluator", "toy-mean", "quadriga_toy.components:ToyMeanError", summary="error of the mean")
    registry.add("evaluator", "toy-rows", "quadriga_toy.components:ToyRows", summary="a known per-item table")
    registry.add(
        "learner", "toy-counter", "quadriga_toy.components:ToyCounter", summary="counts to num_steps"
    )
    registry.add_pipeline("toy-pipeline", "quadriga_toy:toy.toml", summary="toy pipeline")
    registry.add_claim("toy-claim", "quadriga_toy.components:toy_claim", summary="the mean is near zero")
