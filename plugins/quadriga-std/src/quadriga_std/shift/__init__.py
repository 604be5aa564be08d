"""The shift kit: load_digits shift scenarios, a BatchNorm MLP source classifier, and evaluators.

Registered names: ``shifted-digits`` (dataset), ``mlp-classifier`` (learner), ``scenario-accuracy``,
``ood-auroc``, ``selective-accuracy`` (evaluators). Nothing here imports torch at import time.
"""
