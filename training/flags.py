"""Checked number types for the training commands' flags (argparse ``type=``): one definition of each.

A bad value exits 2 at parse time naming the flag and what it must be; NaN and the infinities are refused
wherever a finite number is meant.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

__all__ = ["nonnegative", "nonnegative_float", "number_type", "positive", "positive_float", "unit_float"]

_N = TypeVar("_N", int, float)


def number_type(convert: Callable[[str], _N], ok: Callable[[_N], bool], what: str) -> Callable[[str], _N]:
    """An argparse ``type=``: ``convert`` the text, keep it if ``ok``, else say it ``must be <what>``."""

    def parse(text: str) -> _N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, not {text!r}") from None
        if not ok(value):  # NaN fails every comparison, so it is refused too
            raise argparse.ArgumentTypeError(f"must be {what}, not {text!r}")
        return value

    return parse


#: An integer >= 1.
positive = number_type(int, lambda v: v >= 1, "a positive integer")
#: An integer >= 0.
nonnegative = number_type(int, lambda v: v >= 0, "an integer >= 0")
#: A finite number > 0.
positive_float = number_type(float, lambda v: 0 < v < float("inf"), "a positive number")
#: A finite number >= 0.
nonnegative_float = number_type(float, lambda v: 0 <= v < float("inf"), "a finite number >= 0")
#: A number from 0 to 1.
unit_float = number_type(float, lambda v: 0.0 <= v <= 1.0, "a number from 0 to 1")
