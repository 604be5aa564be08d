"""A small plugin used by the core tests: cheap components with known answers."""
