"""quadriga-tensorboard: TensorBoard event files for quadriga runs, chosen with ``--with tensorboard``."""
