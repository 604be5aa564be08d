"""quadriga-std estimators."""
