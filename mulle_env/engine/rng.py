"""Deterministic shuffles that do not depend on the Python version or platform.

``random.shuffle`` is not promised to stay the same across Python releases, so the deal
uses SplitMix64 and a Fisher-Yates shuffle written here: the same seed gives the same
deck on every machine, in every process, under any ``PYTHONHASHSEED``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1


def splitmix64(x: int) -> tuple[int, int]:
    """One SplitMix64 step: returns ``(next_state, output)``."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return x, z ^ (z >> 31)


def derive_seed(seed: int, *stream: int) -> int:
    """Mix a seed with stream numbers into an independent 64-bit seed."""
    x = seed & _MASK
    for s in (len(stream), *stream):
        x, out = splitmix64(x ^ ((s * 0xD1B54A32D192ED03) & _MASK))
        x = out
    return x


def shuffled(items: Iterable[T], seed: int) -> list[T]:
    """Return a new list with ``items`` in a seeded Fisher-Yates order."""
    out = list(items)
    x = seed & _MASK
    for i in range(len(out) - 1, 0, -1):
        x, r = splitmix64(x)
        j = r % (i + 1)  # bias below 2**-57 for a 104-card deck: irrelevant here
        out[i], out[j] = out[j], out[i]
    return out
