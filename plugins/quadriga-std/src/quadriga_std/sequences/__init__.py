"""Enumerable sequence spaces: autoregressive base models, features with known modes, exact evaluators.

The shared piece of the sequence-level methods (GDC, FlowRL): a space small enough to enumerate
(``V^L`` up to 10^5), so that the target distribution, KL divergences and mode coverage are
computed exactly. :mod:`.policy_gradient` holds the policy-gradient baselines (GRPO's
group-normalised advantage and surrogate, REINFORCE with a baseline) that those methods and
quadriga-stratified-grpo share.
"""
