"""quadriga-inference-gym: inference-gym's benchmark posteriors as quadriga targets, with ground truth."""

__version__ = "0.1.0"
