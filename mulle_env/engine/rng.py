"""Deterministic shuffles that do not depend on the Python version or platform.

``random.shuffle`` is not promised to stay the same across Python releases, so the deal
uses SplitMix64 and a Fisher-Yates shuffle written here: the same seed gives the same
deck on every machine, in every process, under any ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1

#: The largest seed: seeds are the whole numbers ``0 .. SEED_MAX`` (docs/engine.md, "Seeds").
SEED_MAX = _MASK
#: The seed domain in words, as every refusal says it.
SEED_DOMAIN = "a whole number from 0 to 2**64 - 1"


def seed_problem(seed: object, what: str = "seed") -> str | None:
    """Why ``seed`` is outside the one seed domain (``None``: it is a seed), naming ``what`` and the value sent.

    The domain (docs/engine.md, "Seeds") is the whole numbers ``0 .. 2**64 - 1``: the deal
    reads a seed as 64 bits, so every seed in it deals its own game and none outside it
    could (``-1`` and ``2**64 - 1``, ``2**64`` and ``0`` would deal the same). Python and
    numpy integers are seeds; bools, floats and text are not. Every entry point that takes
    a seed asks here: ``new_game``, ``GameState.from_dict``, ``GameRecord.from_dict``,
    ``Mulle-v0``, the vector and AEC envs, ``mulle-arena --seed``, ``mulle-play --seed``
    and ``mulle-serve``'s messages; each raises its own error type with this text.
    """
    if isinstance(seed, bool) or type(seed).__name__ in ("bool", "bool_"):  # numpy's bools too
        return f"{what} must be {SEED_DOMAIN}, not {seed!r}"
    try:
        value = operator.index(seed)  # type: ignore[arg-type]  # anything else is refused below
    except TypeError:
        return f"{what} must be {SEED_DOMAIN}, not {seed!r:.60}"
    if not 0 <= value <= SEED_MAX:
        return f"{what} must be {SEED_DOMAIN}, not {seed!r:.60}"
    return None


def check_seed(seed: object, what: str = "seed") -> int:
    """``seed`` as a Python int if it lies in the seed domain (:func:`seed_problem`), else a ``ValueError``."""
    why = seed_problem(seed, what)
    if why is not None:
        raise ValueError(why)
    return operator.index(seed)  # type: ignore[arg-type]  # seed_problem checked it


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
