"""quadriga-std tasks."""
