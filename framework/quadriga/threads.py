"""Thread control for small tensor work.

Many methods here run small matrix products and sorts (MLPs of width 64, blocks of
a few thousand points) where torch's intra-op threads cost more in synchronisation
than they save, and contend with other processes of a sweep on a shared machine.
Importing this module does not import torch; :func:`single_thread` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

__all__ = ["num_threads", "single_thread"]


@contextmanager
def num_threads(count: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(count)`` and restore the previous count after it.

    Args:
        count: intra-op threads inside the block (``>= 1``).

    Raises:
        ValueError: for ``count < 1``. Exceptions of the block propagate after the count is restored.
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def single_thread() -> AbstractContextManager[None]:
    """Run the block on one intra-op thread (``num_threads(1)``), restoring the count after it."""
    return num_threads(1)
