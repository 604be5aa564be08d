"""Explicit seeding: one root seed, one derived generator per stage.

A stage's seed depends only on the root seed and the stage's name (SHA-256 of
both), so adding, removing or reordering other stages never changes its numbers.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = [
    "child_generator",
    "child_numpy_rng",
    "derive_seed",
    "int_seed",
    "make_generator",
    "numpy_rng",
    "perturbed_globals",
    "seed_everything",
]

#: added to every seed :func:`seed_everything` gives the global generators (0 except inside
#: :func:`perturbed_globals`)
_GLOBAL_OFFSET = 0


def derive_seed(root_seed: int, name: str) -> int:
    """Return a 63-bit seed derived from ``root_seed`` and a stage or task ``name``.

    Args:
        root_seed: the pipeline's seed (any int).
        name: e.g. ``"stage.mala"``.

    Returns:
        An int in ``[0, 2**63)``, the same on every machine and Python version.
    """
    digest = hashlib.sha256(f"{int(root_seed)}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def make_generator(seed: int, device: str = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``), seeded.

    Raises:
        ConfigError: the device is not available on this machine.
    """
    import torch

    try:
        gen = torch.Generator(device=device)
    except RuntimeError as exc:
        from quadriga.errors import ConfigError

        raise ConfigError(
            f"device '{device}' is not available here ({_why_unavailable(device, exc)}). Set "
            '[pipeline] device = "cpu" (or --set pipeline.device=cpu).',
            key="device",
        ) from None
    gen.manual_seed(int(seed))
    return gen


def _why_unavailable(device: str, exc: Exception) -> str:
    """One line saying why ``device`` cannot be used (torch's own message is a paragraph)."""
    import torch

    if device.startswith("cuda"):
        if torch.version.cuda is None:
            return f"this torch {torch.__version__} is a CPU-only build"
        if not torch.cuda.is_available():
            return "no CUDA device is visible"
        return f"{torch.cuda.device_count()} CUDA device(s) visible"
    if device == "mps" and not torch.backends.mps.is_available():
        return "MPS (Apple GPU) is not available"
    return str(exc).splitlines()[0][:160]


def seed_everything(seed: int, device: str = "cpu") -> None:
    """Seed Python's, NumPy's and torch's global generators (for libraries that use them).

    Components should draw from the generator they are given; this only makes
    code that does not (network initialisation, third-party libraries) repeatable too.

    Args:
        seed: the stage's seed (any integer; reduced modulo 2**32 for NumPy, 2**63 for torch).
        device: the stage's device. On ``"cpu"`` torch's CPU generator is seeded, and an
            accelerator's generators only once that accelerator is initialised in this process:
            ``torch.manual_seed`` would also queue a lazy seeding call for each accelerator build
            (CUDA, XPU, MTIA), each recording a Python stack, about 0.8 ms per stage on a CPU-only
            run. Any other device gets ``torch.manual_seed`` (every generator, lazily).
    """
    import numpy as np

    seed = seed + _GLOBAL_OFFSET
    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch
    except ImportError:  # pragma: no cover
        return
    if not str(device).startswith("cpu"):
        torch.manual_seed(seed % (2**63))
        return
    torch.default_generator.manual_seed(seed % (2**63))
    for name in ("cuda", "xpu", "mtia"):
        backend: Any = getattr(torch, name, None)
        initialized = getattr(backend, "is_initialized", None)
        if initialized is not None and initialized():
            backend.manual_seed_all(seed % (2**63))
    mps = getattr(torch, "mps", None)
    if mps is not None and torch.backends.mps.is_available():
        mps.manual_seed(seed % (2**63))


@contextlib.contextmanager
def perturbed_globals(offset: int = 0x5EED) -> Iterator[None]:
    """Within the block, :func:`seed_everything` seeds the global generators with ``seed + offset``.

    The generators a run passes to its components are unchanged, so a component that draws only
    from them gives the same numbers inside and outside the block; one that draws from torch's,
    NumPy's or Python's global generator does not. The conformance check ``determinism`` uses
    this to find components reproducible only inside a quadriga run.
    """
    global _GLOBAL_OFFSET
    previous, _GLOBAL_OFFSET = _GLOBAL_OFFSET, int(offset)
    try:
        yield
    finally:
        _GLOBAL_OFFSET = previous


def int_seed(generator: torch.Generator) -> int:
    """Draw a 31-bit integer seed from a ``torch.Generator`` (for numpy, gymnasium, scikit-learn)."""
    import torch

    return int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item())


def numpy_rng(generator: torch.Generator) -> np.random.Generator:
    """A ``numpy.random.Generator`` seeded from a ``torch.Generator`` (one draw from it)."""
    import numpy as np

    return np.random.default_rng(int_seed(generator))


def child_generator(generator: torch.Generator, name: str) -> torch.Generator:
    """An independent ``torch.Generator`` for one named stream of a stage (``"reference"``, ...).

    Derived from ``generator.initial_seed()`` and ``name`` (it does not consume ``generator``), on
    ``generator``'s device, so each stream is the same whatever order the streams are drawn in
    and changes with the root seed.
    """
    return make_generator(derive_seed(int(generator.initial_seed()), name), str(generator.device))


def child_numpy_rng(generator: torch.Generator, name: str) -> np.random.Generator:
    """A ``numpy.random.Generator`` for one named stream of a stage (see :func:`child_generator`)."""
    import numpy as np

    return np.random.default_rng(derive_seed(int(generator.initial_seed()), name))
