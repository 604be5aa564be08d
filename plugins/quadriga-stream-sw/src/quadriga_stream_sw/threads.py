"""Kept for existing imports: the thread-control helper is :func:`quadriga.threads.single_thread`."""

from quadriga.threads import single_thread

__all__ = ["single_thread"]
