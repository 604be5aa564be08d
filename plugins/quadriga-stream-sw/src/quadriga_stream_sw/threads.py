"""Run small tensor work on one intra-op thread.

Stream-SW's work is many small sorts and gathers on ``Tensor[L, m]`` blocks (m about 2k),
where torch's intra-op threads cost more in synchronisation than they save, and contend with
other processes on a shared machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["single_thread"]


@contextmanager
def single_thread() -> Iterator[None]:
    """Set ``torch.set_num_threads(1)`` inside the block and restore the previous count after it.

    Raises:
        nothing of its own; exceptions of the block propagate after the count is restored.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
