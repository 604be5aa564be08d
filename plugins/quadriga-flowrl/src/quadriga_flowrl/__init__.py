"""quadriga-flowrl: FlowRL, reward-distribution matching by flow balance (Zhu et al. 2025).

The flow-balance (trajectory-balance) objective with a learned log partition function, length
normalisation and the clipped importance weight, on quadriga-std's enumerable sequence space with
a multimodal reward, against GRPO on the same budget. Importing this package imports no torch.
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-flowrl")
