"""Every allocation of the compiled code can fail: each failure ends in a MemoryError, never a crash or a leak.

The core's test hook (``_core._fail_after(n)``) makes the n-th counted allocation or Python
object creation inside the compiled code (the engine core and, through its C API, the
agents' module) fail. Each test counts the allocations an operation makes, then walks n
over every one of them: the operation must raise ``MemoryError`` and leave everything
usable (the game goes on afterwards, a failed move changed nothing), and Python memory
must not grow over the walk (tracemalloc; the sanitizer run, .ci/sanitize, checks the C
allocations with LeakSanitizer).
"""

from __future__ import annotations

import gc
import random
import tracemalloc

import numpy as np
import pytest

import mulle_env as me
from mulle_env.engine import backends

pytestmark = pytest.mark.skipif("c" not in backends(), reason="the compiled core is not built")


def _core():
    from mulle_env.engine import _core

    return _core


def count_failpoints(op) -> int:
    """How many counted allocations ``op()`` makes (the hook armed far away, so none fails)."""
    core = _core()
    core._fail_after(10**9)
    try:
        op()
    finally:
        seen = core._fail_after(0)
    return seen


def fail_at(op, n: int) -> None:
    """Run ``op`` with its n-th counted allocation failing: it must raise MemoryError."""
    core = _core()
    core._fail_after(n)
    try:
        with pytest.raises(MemoryError):
            op()
    finally:
        core._fail_after(0)


def walk(op, after=None, leak_sample: int = 40) -> int:
    """Fail every allocation of ``op`` in turn (``after(n)`` checks everything is still usable), then
    again at ``leak_sample`` of them under tracemalloc: Python memory must not grow."""
    total = count_failpoints(op)
    assert total > 0, "the operation allocates nothing the hook counts"
    for n in range(1, total + 1):
        fail_at(op, n)
        if after is not None:
            after(n)
    sample = sorted(random.Random(total).sample(range(1, total + 1), min(total, leak_sample)))
    for n in sample[:3]:  # warm-up: caches, interned objects
        fail_at(op, n)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for n in sample:
            fail_at(op, n)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes more after {len(sample)} failures"
    return total


def play_game(seed: int, sets: int = 1) -> None:
    """A whole game through every public path that allocates: ids, moves, views, copies, dicts."""
    st = me.new_game(seed, me.Ruleset(sets=sets))
    rng = random.Random(seed)
    n = 0
    while not st.over:
        ids = st.legal_move_ids()
        st.play_id(ids[rng.randrange(len(ids))])
        n += 1
        if n % 16 == 0:
            st.view(st.to_move)
            _ = (st.hands, st.builds, st.sheets, st.last_move, st.last_taken, st.copy().key())
    type(st).from_dict(st.to_dict())


def test_every_allocation_of_a_game_can_fail():
    assert me.BACKEND == "c" or pytest.skip("the compiled core is not the engine in use")
    total = walk(lambda: play_game(3), after=lambda n: n % 50 or play_game(4))
    assert total > 300


def test_a_failed_capture_search_changes_nothing():
    """The capture search allocates; when it fails mid-move the position is as it was before the move."""
    st = me.GameState.from_dict({
        "to_move": 0, "hands": [["KL 9"], ["RU 2"]],
        "table": ["KL A", "SP A", "HJ 2", "RU 3", "KL 4", "SP 4", "HJ 5", "RU 5", "KL 6", "KL 7", "SP 8", "HJ 3"],
    })
    before = st.to_dict()
    move = st.legal_moves()[0]
    assert move.kind == "capture"
    total = count_failpoints(lambda: st.copy().play(move))
    for n in range(1, total + 1):
        trial = st.copy()
        _core()._fail_after(n)
        try:
            trial.play(move)
        except MemoryError:
            assert trial.to_dict() == before, n
        finally:
            _core()._fail_after(0)
    assert st.copy().play(move).to_dict() != before


def test_every_allocation_of_a_stepper_can_fail():
    from mulle_env import _native

    stepper_cls = _native.Stepper

    def run(threads=1):
        s = stepper_cls(3, me.Ruleset(sets=1), True, np.ones(3, bool), np.zeros(3, np.int8), threads)
        obs, mask = np.empty((3, 524), np.float32), np.empty((3, me.NUM_MOVE_IDS), np.int8)
        ids, offsets = np.empty(300, np.int32), np.empty(4, np.int32)
        for i in range(3):
            s.start(i, 10 + i, i % 2, 20 + i)
        s.write(np.arange(3), [0, 1, 0], obs, mask)
        for r in range(10):
            s.legal_csr(np.arange(3), [0, 1, 0], ids, offsets)
            acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in mask])
            if r % 2:  # the vector env's fused step, with its sparse ids
                s.step_write(acts, mask.any(axis=1), [0, 1, 0], obs, mask, ids, offsets)
            elif r == 4:  # the vector env's restart of finished games (dealt in place)
                s.restart_write([2, 0], [60, 61], [0, 0], [70, 71], obs, mask)
            else:
                s.step(acts, mask.any(axis=1))
                s.write(np.arange(3), [0, 1, 0], obs, mask)
        # The self-play path: no dense mask, both seats' moves by play_batch.
        s2 = stepper_cls(2, me.Ruleset(sets=1), False, np.ones(2, bool), np.zeros(2, np.int8), threads)
        for i in range(2):
            s2.start(i, 30 + i, 0, 0)
        for _ in range(10):
            movers = [int(s2.state(i).to_move) for i in range(2)]
            s2.write(np.arange(2), movers, obs[:2], None)
            total = s2.legal_csr(np.arange(2), movers, ids, offsets)
            assert total > 0
            s2.play_batch([0, 1], [ids[offsets[0]], ids[offsets[1]]])

    walk(run, after=lambda n: run())


def test_every_allocation_of_a_threaded_stepper_and_a_random_playout_can_fail():
    """A stepper on two threads (its pool: the workers' scratch space) and mulle_env._native's playout."""
    assert me.BACKEND == "c" or pytest.skip("the compiled core is not the engine in use (its states are needed)")
    from mulle_env import _native

    def run():
        s = _native.Stepper(4, me.Ruleset(sets=1), True, np.ones(4, bool), np.zeros(4, np.int8), 2)
        obs, mask = np.empty((4, 524), np.float32), np.empty((4, me.NUM_MOVE_IDS), np.int8)
        for i in range(4):
            s.start(i, 40 + i, i % 2, 50 + i)
        s.write(np.arange(4), [0, 1, 0, 1], obs, mask)
        for _ in range(5):
            s.step_write(mask.argmax(axis=1), mask.any(axis=1), [0, 1, 0, 1], obs, mask)
        s.step(mask.argmax(axis=1), mask.any(axis=1))
        s.restart_write([0, 1, 3], [1, 2, 3], [0, 1, 0], [4, 5, 6], obs, mask)
        for i in range(4):
            s.start(i, 70 + i, 0, 80 + i)
        s.write(np.arange(4), [0] * 4, obs, mask)
        s.step_write_send(mask.argmax(axis=1), mask.any(axis=1), [0] * 4, obs, mask)
        s.step_write_recv()
        st = me.new_game(3)
        _native.random_playout(st, 5, 10**6)
        _native.sample_mask(mask, np.zeros(4), np.empty(4, np.int64))
        _native.draw_deals([np.random.default_rng(i) for i in range(3)], 2**63 - 1, True)

    walk(run, after=lambda n: run())


def test_every_allocation_of_an_afterstate_batch_and_a_rollout_can_fail():
    from agents.native import NATIVE
    from mulle_env.native import NATIVE as ENV_NATIVE

    if NATIVE is None or ENV_NATIVE is None:
        pytest.skip("agents._native and mulle_env._native run on the compiled core only")
    st = me.new_game(5)
    for _ in range(21):
        st.play_id(st.legal_move_ids()[0])
    legal = st.legal_moves()
    obs, banked = np.empty((len(legal), 524), np.float32), np.empty(len(legal))

    def run():
        ENV_NATIVE.write_afterstates(st, st.to_move, [m.id for m in legal], obs, banked)
        NATIVE.rollout_values(st, [m.id for m in legal], st.to_move, 0, 10**6, 1, st.set_no, st.deal_no, 7)

    walk(run, after=lambda n: run())


# ----- Casino's compiled core: the same hook (the Mulle core's counter, shared through its capsule) ----------


def _casino_c():
    from mulle_env import casino

    if "c" not in casino.backends():
        pytest.skip("the compiled Casino core is not built")
    return casino.backends()["c"]


def play_casino_game(seed: int, gather_all: bool = True) -> None:
    """A whole Casino game on the compiled core through every path that allocates: legal moves and ids, plans,
    moves by id and by text, views, copies, the canonical form and back, a determinization."""
    cs = _casino_c()
    st = cs.new_game(seed, {"gather_all": gather_all, "rounds": 1})
    rng = random.Random(seed)
    n = 0
    while not st.over:
        moves = st.legal_moves()
        move = moves[rng.randrange(len(moves))]
        if gather_all and n % 2:
            st.play_id(st.legal_ids()[rng.randrange(len(st.legal_ids()))])
        else:
            st.play(move if n % 3 else str(move))
        n += 1
        if n % 8 == 0 and not st.over:
            view = st.view(st.to_move)
            unseen = view.unseen()
            cs.GameState.from_view(view, unseen[: view.opponent_hand_size], unseen[view.opponent_hand_size:], seed=1)
            _ = (st.hands, st.builds, st.sheets, st.last_move, dict(st.move_plans()), st.copy().key())
    type(st).from_dict(st.to_dict())


@pytest.mark.parametrize("gather_all", [True, False])
def test_every_allocation_of_a_casino_game_can_fail(gather_all):
    total = walk(lambda: play_casino_game(3, gather_all), after=lambda n: n % 40 or play_casino_game(4, gather_all))
    assert total > 100


def test_a_failed_casino_move_changes_nothing():
    cs = _casino_c()
    for gather_all in (True, False):
        st = cs.new_game(8, {"gather_all": gather_all})
        for _ in range(5):
            st.play(st.legal_moves()[-1])
        before = st.to_dict()
        for move in st.legal_moves():
            after = st.copy().play(move).to_dict()
            total = count_failpoints(lambda move=move: st.copy().play(move))
            assert total > 0
            for n in range(1, total + 1):
                trial = st.copy()
                _core()._fail_after(n)
                try:
                    trial.play(move)
                except MemoryError:
                    assert trial.to_dict() == before, (move, n)
                    trial.play(move)  # and the move still plays
                finally:
                    _core()._fail_after(0)
                assert trial.to_dict() == after, (move, n)
