"""quadriga-std learners."""
