"""quadriga-std samplers."""
