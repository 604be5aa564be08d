"""The weight-space kit: a cached zoo of small MLPs on load_digits, interpolation barriers, merging.

Shared by the weight-space method plugins (permutation alignment, model merging, weight growth):

- :mod:`~quadriga_std.weightspace.mlp`: networks as plain tensors (``Params``) and the operations
  on them (forward, permute, interpolate, combine, train);
- :mod:`~quadriga_std.weightspace.zoo`: the ``mlp-zoo`` task (pairs from independent seeds or
  disjoint halves, fine-tune suites with one head per task, widths on demand), cached on disk;
- :mod:`~quadriga_std.weightspace.barrier`: ``zoo-pair`` and the ``interpolation-barrier`` evaluator;
- :mod:`~quadriga_std.weightspace.merging`: task vectors, ``weight-averaging``, ``task-arithmetic``,
  ``ties-merging`` and :class:`MergingLearner`, the base of other merging methods;
- :mod:`~quadriga_std.weightspace.accuracy`: the ``normalized-accuracy`` evaluator.
"""
