"""Hostile arrays through the compiled functions that take offsets from the caller (issue 53, item 1).

``codec.sample_csr`` takes CSR ids and offsets from anyone: the vector env's own arrays (which
a caller can make writable and change) or arrays built by hand. Every row's offsets must be
checked before any id is read; a bad row is a ``ValueError`` naming it, on the compiled path
and on its numpy twin alike, and never a read outside ``ids``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mulle_env import codec


@pytest.mark.parametrize("offsets", [[0, 10**6, 3], [0, 2, 1, 3], [0, -5, 3], [0, 3, 2**31 - 1], [-1, 2, 3],
                                     [0, 1, 2, 4]])
def test_offsets_outside_the_ids_are_refused_not_read(offsets):
    ids = np.array([1, 2, 3], np.int32)
    for arr in (np.array(offsets, np.int32), np.array(offsets, np.int64)):  # the compiled path, the numpy one
        with pytest.raises(ValueError, match="offsets|no legal action"):
            codec.sample_csr(ids, arr, 0)


def test_a_refused_call_writes_nothing_and_a_good_one_still_works():
    ids = np.array([4, 5, 6, 7], np.int32)
    with pytest.raises(ValueError):
        codec.sample_csr(ids, np.array([0, 2, 9], np.int32), 0)
    got = codec.sample_csr(ids, np.array([0, 2, 4], np.int32), 0)
    assert got[0] in (4, 5) and got[1] in (6, 7)


@settings(max_examples=300, deadline=None)
@given(n_ids=st.integers(0, 8), offsets=st.lists(st.integers(-2**31, 2**31 - 1) | st.integers(-3, 12),
                                                 min_size=1, max_size=8), seed=st.integers(0, 2**32 - 1))
def test_any_offsets_are_sampled_within_their_rows_or_refused(n_ids, offsets, seed):
    ids = np.arange(100, 100 + n_ids, dtype=np.int32)
    offs = np.array(offsets, np.int32)
    try:
        got = codec.sample_csr(ids, offs, seed)
    except ValueError:
        return
    for i, a in enumerate(got.tolist()):
        assert a in ids[offs[i]:offs[i + 1]].tolist()
