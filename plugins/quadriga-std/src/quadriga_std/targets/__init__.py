"""quadriga-std targets."""
