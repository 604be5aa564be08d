"""quadriga-diagnostics: Evaluators that run a small simulation and report a theory result's
measured quantity beside the paper's prediction."""
