"""quadriga-std evaluators."""
