"""Every function the compiled modules export, driven with hostile arguments (issue 53, What to build 2).

The modules: ``mulle_env.engine._core`` (Mulle's rules core), ``mulle_env._native`` (the env layer:
stepper, samplers, extras, playout, draws, afterstates), ``agents._native`` (rollouts) and
``mulle_env.casino._core`` (Casino's rules core). Each exported function and method gets arguments
drawn by hypothesis from what a caller could pass: numpy arrays of every dtype, of 0 to 3
dimensions, empty, right-sized and wrong-sized, strided, reversed, transposed and read-only, with
values from the dtype's extremes (offsets out of range included); bytes, bytearrays and memoryviews;
integers from -2**64 to 10**30; and objects that are none of these. A call may refuse with any
``Exception`` but ``SystemError`` (a C function that failed without saying why); it may not crash,
hang, or write outside its arguments (the sanitizer build, ``.ci/sanitize``, runs this file and
catches reads and writes out of bounds that a plain build survives).

The harness runs in a child process (``python tests/test_fuzz_compiled.py MODULE
EXAMPLES``), which prints each call before making it: a crash is the child's death, and its
last line names the call. The default suite runs a few examples per function (seconds),
drawn afresh each run as hypothesis does (so ``.ci/sanitize --repeat 20`` drives new ones
each time; a crash is reproduced from the call the child printed last); ``-m slow`` runs
many. Configuration functions (``configure``, ``configure_extras``) are driven last, since
one they accepted would change the module for everything after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

MODULES = ("mulle_env.engine._core", "mulle_env._native", "agents._native", "mulle_env.casino._core")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(module: str, examples: int, timeout: float) -> None:
    # The compiled modules are fuzzed whichever engine the suite runs (MULLE_ENGINE=python too).
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "MULLE_ENGINE": "c"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), module, str(examples)], env=env,
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        last = out.strip().splitlines()[-1:] or ["(nothing)"]
        pytest.fail(f"fuzzing {module} hung for {timeout:g} s; the last call: {last[0]}")
    if proc.returncode != 0:
        last = proc.stdout.strip().splitlines()[-3:]
        pytest.fail(f"fuzzing {module} ended with exit {proc.returncode}; the last calls:\n" + "\n".join(last)
                    + f"\nstderr:\n{proc.stderr[-4000:]}")
    assert f"fuzzed {module}:" in proc.stdout, proc.stdout[-2000:]


def _available(module: str) -> bool:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("module", MODULES)
def test_every_compiled_function_survives_hostile_arguments_briefly(module):
    if not _available(module):
        pytest.skip(f"{module} is not built here (the pure-Python engine runs)")
    _run(module, 4, timeout=240)


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_every_compiled_function_survives_hostile_arguments_at_length(module):
    if not _available(module):
        pytest.skip(f"{module} is not built here (the pure-Python engine runs)")
    _run(module, 400, timeout=3600)


# ----- the harness (the child process) ------------------------------------------------------------------------
def _strategies() -> dict[str, Any]:
    import numpy as np
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    edge_ints = [-2**64, -2**63 - 1, -2**63, -2**32, -2**31 - 1, -2**31, -65536, -2, -1, 0, 1, 2, 3, 7, 8, 16, 63, 64,
                 104, 255, 256, 523, 524, 2811, 2812, 4095, 4096, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                 2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30]

    class Opaque:
        def __index__(self) -> int:
            raise RuntimeError("an __index__ that fails")

        def __len__(self) -> int:
            return 3

        def __iter__(self):
            raise RuntimeError("an __iter__ that fails")

    junk_values = [lambda: None, lambda: True, lambda: False, lambda: 1.5, lambda: float("nan"), lambda: float("inf"),
                   lambda: "x", lambda: "", lambda: b"\x00\x01", lambda: (), lambda: [], lambda: {}, Opaque, object,
                   lambda: np.int64(2**62), lambda: np.float32(1.0), lambda: np.bool_(True)]
    junk = st.sampled_from(range(len(junk_values))).map(lambda i: junk_values[i]())
    ints = st.sampled_from(edge_ints) | st.integers(-3, 300)
    dtypes = st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                              np.float16, np.float32, np.float64, np.bool_, np.complex64, np.dtype(">i4"),
                              np.dtype(">f4"), np.dtype("V4"), np.dtype("U2"), np.dtype("O")])

    @st.composite
    def arrays(draw: Any, sizes: tuple[int, ...] = ()) -> Any:
        dtype = np.dtype(draw(dtypes))
        side = st.sampled_from([0, 1, 2, 3, 5, 8, 9, 17, 65, *sizes]) | st.integers(0, 12)
        shape = tuple(draw(st.lists(side, min_size=0, max_size=3)))
        if int(np.prod(shape, dtype=np.int64)) > 200_000:
            shape = shape[:1]
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            elements = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if dtype.kind == "i" else 2, 2811,
                                        523, 103]).filter(lambda v: info.min <= v <= info.max) | st.integers(0, 3)
            elements = elements.filter(lambda v: info.min <= v <= info.max)
        elif dtype.kind == "f":
            elements = st.sampled_from([0.0, 1.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e30, 0.5])
        elif dtype.kind == "b":
            elements = st.booleans()
        else:
            return np.zeros(shape, dtype=dtype)
        fill = draw(elements)
        a = draw(hnp.arrays(dtype, shape, elements=elements, fill=st.just(fill))) if np.prod(shape) < 64 \
            else np.full(shape, fill, dtype=dtype)
        how = draw(st.sampled_from(["plain", "plain", "strided", "reversed", "transposed", "readonly", "fortran",
                                    "unaligned"]))
        if how == "strided" and a.ndim:
            a = np.repeat(a, 2, axis=0)[::2]
        elif how == "reversed" and a.ndim:
            a = a[::-1]
        elif how == "transposed":
            a = a.T
        elif how == "readonly":
            a = a.copy()
            a.flags.writeable = False
        elif how == "fortran":
            a = np.asfortranarray(a)
        elif how == "unaligned" and a.size and a.dtype.itemsize > 1 and a.dtype.kind != "O":
            raw = np.zeros(a.nbytes + 1, np.uint8)
            b = raw[1:].view(a.dtype).reshape(a.shape)
            b[...] = a
            a = b
        return a

    def _values(dtype: Any) -> Any:
        d = np.dtype(dtype)
        if d.kind in "iu":
            info = np.iinfo(d)
            return st.sampled_from([v for v in edge_ints if info.min <= v <= info.max]) | st.integers(0, 5)
        if d.kind == "f":
            return st.sampled_from([0.0, 1.0, float("nan"), float("inf"), -1.0, 1e30])
        return st.booleans()

    raw = [lambda: b"", lambda: b"\x00" * 8, lambda: bytearray(16), lambda: memoryview(b"abcd"),
           lambda: memoryview(bytearray(4096)).cast("i"), lambda: memoryview(bytearray(64))[::3]]
    buffers = arrays() | st.sampled_from(range(len(raw))).map(lambda i: raw[i]()) | junk
    int_seqs = st.lists(ints, max_size=9) | arrays() | st.tuples(ints, ints) | junk
    anything = ints | junk | buffers | int_seqs
    return {"np": np, "st": st, "ints": ints, "junk": junk, "arrays": arrays, "values": _values,
            "buffers": buffers, "int_seqs": int_seqs, "anything": anything, "edge_ints": edge_ints}


def _states(game: str) -> list[Any]:
    """States of ``game`` on its compiled core at several points of a game, a finished one included."""
    import random

    if game == "casino":
        from mulle_env.casino import cstate as cs
    else:
        from mulle_env.engine import cstate as cs
    out = []
    for seed, plies in ((1, 0), (2, 5), (3, 40), (4, 10_000)):
        s = cs.new_game(seed=seed)
        r = random.Random(seed)
        for _ in range(plies):
            if s.is_over():
                break
            s.play(r.choice(s.legal_moves()))
        out.append(s)
    return out


def _calls(module: str, S: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(name, strategy of argument tuples, function)`` for every function and method of ``module``.

    Each argument is a pair ``(valid, hostile)``: a call starts from valid arguments (right
    types and sizes, values from the dtype's extremes and the meaningful range, offsets out
    of range included) and swaps one or two of them for hostile ones, so the checks behind
    the first are reached too.
    """
    import importlib

    st, ints, junk, buffers, int_seqs, anything, values = (S[k] for k in ("st", "ints", "junk", "buffers",
                                                                          "int_seqs", "anything", "values"))
    np = S["np"]
    mod = importlib.import_module(module)
    calls: list[tuple[str, Any, Any]] = []

    @st.composite
    def mixed(draw: Any, pairs: tuple[tuple[Any, Any], ...]) -> tuple[Any, ...]:
        n = len(pairs)
        bad = set(draw(st.lists(st.integers(0, n - 1), max_size=2))) if n else set()
        return tuple(draw(h if i in bad else v) for i, (v, h) in enumerate(pairs))

    def add(name: str, fn: Any, *pairs: tuple[Any, Any]) -> None:
        calls.append((name, mixed(pairs), fn))

    def arr(shape: tuple[int, ...], dtype: Any, lo: int | None = None, hi: int | None = None) -> Any:
        """Arrays of ``shape`` and ``dtype``: random values in ``[lo, hi]``, constants from the extremes, zeros."""
        def rand(seed: int) -> Any:
            g = np.random.default_rng(seed)
            if np.dtype(dtype).kind in "iu":
                return g.integers(lo if lo is not None else 0, (hi if hi is not None else 2) + 1, size=shape
                                  ).astype(dtype)
            if np.dtype(dtype).kind == "f":
                return g.random(shape).astype(dtype)
            return g.integers(0, 2, size=shape).astype(dtype)
        return (st.integers(0, 2**32 - 1).map(rand) | values(dtype).map(lambda v: np.full(shape, v, dtype=dtype))
                | st.just(None).map(lambda _: np.zeros(shape, dtype=dtype)))

    def state_of(states: list[Any]) -> tuple[Any, Any]:
        return st.sampled_from(range(len(states))).map(lambda i: states[i].copy()), junk

    def small(lo: int, hi: int) -> tuple[Any, Any]:
        return st.integers(lo, hi), ints | junk

    BUF = buffers | S["arrays"]()
    if module == "mulle_env.engine._core":
        from mulle_env import engine
        from mulle_env.games import get_game

        states = _states("mulle")
        obs, na = get_game("mulle").obs_size, get_game("mulle").num_actions
        S_ = state_of(states)
        add("derive_seed", mod.derive_seed, (st.integers(0, 2**64 - 1), ints | junk), small(0, 99))
        # mt_draws(seed, n, m) builds a list of n pairs (a test hook): n = 2**31 - 1 asks for some 200 GB, which the
        # sanitizer run gave the OOM killer. Not bounded there; here n stays at sizes a machine holds.
        add("mt_draws", mod.mt_draws, (st.integers(0, 2**64 - 1), ints | junk),
            (st.integers(0, 300), st.integers(-2**31, -1) | st.integers(0, 10**5) | junk), small(0, 20))
        add("forced_groups", mod.forced_groups, (st.lists(st.integers(0, 103), max_size=10), int_seqs),
            small(1, 14), (st.lists(st.integers(0, 103), max_size=4), int_seqs), (st.booleans(), junk))
        add("clear_memo", mod.clear_memo)
        add("memo_size", mod.memo_size)
        add("Core", mod.Core, (st.just(engine.Ruleset()), junk), (st.none() | st.integers(0, 2**64 - 1), ints | junk))
        add("Core.play_id", lambda s, m: s.play_id(m), S_, small(-1, na))
        add("Core.play_unchecked", lambda s, m: s.play_unchecked(m), S_,
            (st.sampled_from(list(engine.MOVES[:200])), junk | ints))
        add("Core.deal_set", lambda s: s.deal_set(), S_)
        add("Core.copy", lambda s: s.copy(), S_)
        add("Core.legal_ids", lambda s: (s.legal_ids(), s.legal_move_ids(), s.n_legal(), s._ids), S_)
        add("Core._set_hand", lambda s, p, h: s._set_hand(p, h), S_, small(0, 1),
            (st.lists(st.integers(0, 103), max_size=9), int_seqs))
        add("Core._view_tuple", lambda s, p, pub: s._view_tuple(p, pub), S_, small(0, 1), (anything, anything))
        add("Core.write_observation", lambda s, p, o: s.write_observation(p, o), S_, small(0, 1),
            (arr((obs,), np.float32), BUF))
        add("Core.write_mask", lambda s, m: s.write_mask(m), S_, (arr((na,), np.int8), BUF))
        cards = st.lists(st.integers(0, 103), max_size=8)
        add("Core._load", lambda s, *a: s._load(*a), S_, (st.tuples(cards, cards), int_seqs), (cards, int_seqs),
            (st.just({}), junk), (cards, int_seqs), (st.tuples(cards, cards), int_seqs),
            (st.tuples(cards, cards), int_seqs), (st.tuples(st.integers(0, 9), st.integers(0, 9)), int_seqs),
            small(0, 1), small(1, 3), small(1, 7), (st.none() | st.integers(0, 1), ints | junk),
            (st.just([]), int_seqs), (st.booleans(), junk))
        add("Core attributes", lambda s: [getattr(s, a) for a in ("hands", "loose", "builds", "deck", "mulle",
                                                                  "intake", "tabbe", "mpts", "ipts", "to_move",
                                                                  "set_no", "deal_no", "last_capturer", "over",
                                                                  "sheets", "last_move", "last_taken", "seed",
                                                                  "ruleset")], S_)
        add("_failpoints_seen", mod._failpoints_seen)
        last = [("configure", mixed(tuple((anything, anything) for _ in range(6))), mod.configure)]
    elif module == "mulle_env.casino._core":
        from mulle_env import casino
        from mulle_env.games import get_game

        states = _states("casino")
        c_obs, c_na = get_game("casino").obs_size, get_game("casino").num_actions
        S_ = state_of(states)
        cards = st.lists(st.integers(0, 51), max_size=6)
        add("derive_seed", mod.derive_seed, (st.integers(0, 2**64 - 1), ints | junk), small(0, 99), small(0, 99))
        add("shuffled", mod.shuffled, (st.integers(0, 2**64 - 1), ints | junk))
        add("_game_ops", mod._game_ops)
        add("Core._init", lambda s, r, f, seed: s._init(r, f, seed), S_, (st.just(casino.Ruleset()), junk),
            (st.lists(st.integers(-1, 30), max_size=8), int_seqs), (st.none() | st.integers(0, 2**64 - 1), ints | junk))
        add("Core._load_raw", lambda s, *a: s._load_raw(*a), S_, (st.tuples(cards, cards), int_seqs), (cards, int_seqs),
            (st.just([]), junk), (st.tuples(cards, cards), int_seqs), (st.tuples(st.integers(0, 9), st.integers(0, 9)),
                                                                        int_seqs),
            (st.none() | st.integers(0, 1), ints | junk), (cards, int_seqs), small(1, 9),
            (st.tuples(st.integers(0, 30), st.integers(0, 30)), int_seqs), (st.just([]), int_seqs), small(0, 1))
        add("Core._start_game", lambda s: s._start_game(), S_)
        add("Core.scores", lambda s: s.scores(), S_)
        add("Core._stored_builds", lambda s: s._stored_builds(), S_)
        add("Core._set_last_move", lambda s, m: s._set_last_move(m), S_,
            (st.none() | st.tuples(st.integers(0, 1), st.sampled_from(list(casino.new_game(seed=1).legal_moves()))),
             junk | st.tuples(ints, ints)))
        add("Core.legal_ids", lambda s: (s.legal_ids(), s._raw_plans()), S_)
        add("Core._play_plan", lambda s, i, n: s._play_plan(i, n), S_, small(-1, 40), small(-1, 40))
        add("Core._play_id", lambda s, m: s._play_id(m), S_, small(-1, c_na))
        add("Core.copy", lambda s: s.copy(), S_)
        add("Core._write_obs", lambda s, p, o: s._write_obs(p, o), S_, small(0, 1), (arr((c_obs,), np.float32), BUF))
        add("Core._write_mask", lambda s, m: s._write_mask(m), S_, (arr((c_na,), np.int8), BUF))
        add("Core attributes", lambda s: [getattr(s, a) for a in ("to_move", "round", "over", "dealer", "seed",
                                                                  "ruleset", "hands", "loose", "captured", "sweeps",
                                                                  "last_capturer", "stock", "sheets", "last_move")],
            S_)
        last = [("configure", mixed(tuple((anything, anything) for _ in range(7))), mod.configure)]
    elif module == "mulle_env._native":
        from mulle_env import engine, extras
        from mulle_env.games import get_game
        from mulle_env.stepper import make_stepper

        extras._load_compiled()  # the blocks' tables, as the env layer configures them: write_extras reaches its loop
        states = _states("mulle")
        obs, na = get_game("mulle").obs_size, get_game("mulle").num_actions
        R = 3
        rows = st.integers(0, 2**32 - 1).map(lambda seed: np.array(
            [0, *sorted(np.random.default_rng(seed).choice(np.arange(1, 10), R, replace=False))], np.int32))
        add("sample_csr", mod.sample_csr, (arr((9,), np.int32, -1, 2812), BUF),
            (rows | arr((R + 1,), np.int32, -2, 10), BUF),
            (arr((R,), np.float64), BUF), (arr((R,), np.int64), BUF))
        add("sample_mask", mod.sample_mask, (arr((R, na), np.int8, 0, 1), BUF), (arr((R,), np.float64), BUF),
            (arr((R,), np.int64), BUF))
        add("write_extras", mod.write_extras, (arr((2, obs), np.float32), BUF), (arr((2, obs + 64), np.float32), BUF),
            small(-1, 4), (st.sampled_from([obs + 64, obs + 80, 64, 0]), ints | junk), small(-1, 80))
        add("extras_exp_mulle", mod.extras_exp_mulle, (arr((2, obs), np.float32), BUF),
            (arr((2, obs + 64), np.float32), BUF), (st.sampled_from([obs + 64, 64, 0]), ints | junk), small(-1, 80))
        S_ = state_of(states)
        add("write_afterstates", mod.write_afterstates, S_, small(-1, 2),
            (st.lists(st.integers(-1, 2812), max_size=5), int_seqs), (arr((5, obs), np.float32), BUF),
            (arr((5,), np.float32) | arr((5,), np.float64), BUF))

        @st.composite
        def afterstates(draw: Any) -> tuple[Any, ...]:
            # The state's own legal ids (the call's meaningful input), then hostile buffers beside them.
            s = draw(S_[0])
            legal = list(s.legal_ids()) if not s.over else []
            ids = draw(st.lists(st.sampled_from(legal), max_size=5)) if legal else []
            n = len(ids)
            return (s, s.to_move, ids, draw(arr((n, obs), np.float32) | BUF),
                    draw(arr((n, 2), np.float64) | arr((n,), np.float64) | BUF))

        calls.append(("write_afterstates (legal ids)", afterstates(), mod.write_afterstates))
        gens = st.lists(st.integers(0, 5).map(lambda s: np.random.default_rng(s)), max_size=4)
        add("draw_deals", mod.draw_deals, (gens, junk | st.lists(junk, min_size=1, max_size=2)),
            (st.integers(1, 2**64 - 1), ints | junk), (st.booleans(), junk))
        add("random_playout", mod.random_playout, state_of(states), (st.integers(0, 2**64 - 1), ints | junk),
            small(-1, 400))

        K = 3

        def stepper(seed: int) -> Any:
            s = make_stepper(K, engine.Ruleset(), bool(seed % 2))
            for i in range(K):
                s.start(i, seed + i, i % 2, seed)
            return s

        def casino_stepper(seed: int) -> Any:
            from mulle_env.casino import cstate as ccs

            s = make_stepper(K, None, bool(seed % 2), core=ccs)
            for i in range(K):
                s.start(i, seed + i, i % 2, seed)
            return s

        steppers = (st.integers(0, 9).map(stepper) | st.integers(0, 9).map(casino_stepper), junk)
        # Valid: in range mostly (random draws), the dtype's extremes sometimes (arr's constants); the hostile
        # side swaps in wrong types, sizes and strides.
        acts = (arr((K,), np.int64, 0, na - 1) | arr((K,), np.int64, -1, na + 1), int_seqs | BUF)
        active = (arr((K,), np.bool_), int_seqs | BUF)
        seats = (arr((K,), np.int8, 0, 1) | arr((K,), np.int8, -1, 2), int_seqs | BUF)
        idx = (st.just(None).map(lambda _: np.arange(K)) | arr((K,), np.int64, 0, K - 1)
               | st.lists(st.integers(-1, K), max_size=K), int_seqs | BUF)
        obs_b = (arr((K, obs), np.float32), BUF)
        mask_b = (arr((K, na), np.int8) | st.none(), BUF)
        ids_b = (arr((K * 64,), np.int32) | st.none(), BUF)
        offs_b = (arr((K + 1,), np.int32, -2, 200) | st.none(), BUF)
        add("Stepper", mod.Stepper, small(0, 5), (st.just(engine.Ruleset()), junk), (st.booleans(), junk),
            (st.none() | arr((K,), np.bool_), BUF), (st.none() | arr((K,), np.int8), BUF), small(1, 3))
        add("Stepper.start", lambda s, *a: s.start(*a), steppers, small(-1, K), (st.integers(0, 2**64 - 1), ints),
            small(-1, 2), (st.integers(0, 2**64 - 1), ints | junk))
        add("Stepper.check", lambda s, *a: s.check(*a), steppers, acts, active, (arr((K,), np.bool_), BUF))
        add("Stepper.step", lambda s, *a: s.step(*a), steppers, acts, active)
        add("Stepper.play", lambda s, *a: s.play(*a), steppers, small(-1, K), small(-1, na))
        add("Stepper.play_batch", lambda s, *a: s.play_batch(*a), steppers, idx, acts)
        add("Stepper.write", lambda s, *a: s.write(*a), steppers, idx, seats, obs_b, mask_b)
        add("Stepper.step_write", lambda s, *a: s.step_write(*a), steppers, acts, active, seats, obs_b, mask_b,
            ids_b, offs_b)
        add("Stepper.step_write_send", lambda s, *a: (s.step_write_send(*a), s.step_write_recv()), steppers, acts,
            active, seats, obs_b, mask_b, ids_b, offs_b)
        add("Stepper.step_write_recv", lambda s: s.step_write_recv(), steppers)
        add("Stepper.restart_write", lambda s, *a: s.restart_write(*a), steppers,
            (st.lists(st.integers(-1, K), max_size=K), int_seqs), (st.lists(st.integers(0, 2**64 - 1), max_size=K),
                                                                   int_seqs),
            (st.lists(st.integers(-1, 2), max_size=K), int_seqs), (st.lists(st.integers(0, 2**64 - 1), max_size=K),
                                                                   int_seqs), obs_b, mask_b)
        add("Stepper.legal_csr", lambda s, *a: s.legal_csr(*a), steppers, idx, seats,
            (arr((K * 64,), np.int32), BUF), (arr((K + 1,), np.int32), BUF))
        add("Stepper.scores", lambda s, i: s.scores(i), steppers, small(-1, K))
        add("Stepper.state", lambda s, i: s.state(i), steppers, small(-1, K))
        add("Stepper attributes", lambda s: (s.over, s.to_move, s.num_envs, s.num_threads), steppers)
        last = [("configure_extras", mixed(tuple((anything, anything) for _ in range(19))), mod.configure_extras)]
    elif module == "agents._native":
        from mulle_env.games import get_game

        states = _states("mulle")
        obs = get_game("mulle").obs_size
        S_ = state_of(states)
        cands = st.lists(st.none() | st.integers(-1, 2812) | st.tuples(st.integers(-1, 2812),
                                                                        st.lists(st.integers(-1, 2812), max_size=3)),
                         max_size=5)
        add("rollout_values", mod.rollout_values, S_, (cands, junk | st.lists(junk, min_size=1, max_size=2)),
            small(-1, 2), small(-1, 4), small(-2, 30), small(-1, 4), small(0, 3), small(0, 8),
            (st.integers(0, 2**64 - 1), ints | junk))
        last = []
    else:
        raise SystemExit(f"no harness for {module}")
    return calls + last


def _fuzz(module: str, examples: int) -> None:
    import faulthandler

    from hypothesis import HealthCheck, given, settings

    faulthandler.enable()
    S = _strategies()
    calls = _calls(module, S)
    count = 0
    accepted: dict[str, int] = {}
    def driver(name: str, args: Any, fn: Any) -> Any:
        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(args)
        def drive(values: tuple[Any, ...]) -> None:
            nonlocal count
            shown = ", ".join(_show(v) for v in values)
            print(f"{name}({shown})", flush=True)
            count += 1
            try:
                fn(*values)
                accepted[name] = accepted.get(name, 0) + 1  # how many calls got past the checks (coverage)
            except SystemError as exc:  # a C function that returned NULL without an error, or the reverse
                raise AssertionError(f"{name}: SystemError {exc}") from exc
            except Exception:  # noqa: BLE001 - a refusal is what a hostile argument should get
                pass

        return drive

    for name, args, fn in calls:
        driver(name, args, fn)()
    print("accepted calls: " + ", ".join(f"{name} {accepted.get(name, 0)}" for name, _, _ in calls), flush=True)
    print(f"fuzzed {module}: {len(calls)} functions, {count} calls", flush=True)


def _show(value: Any) -> str:
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        return (f"array(shape={value.shape}, dtype={value.dtype}, strides={value.strides}, "
                f"writeable={value.flags.writeable}, first={value.ravel()[:4].tolist() if value.size else []})")
    text = repr(value)
    return text if len(text) <= 120 else text[:120] + "..."


if __name__ == "__main__":
    _fuzz(sys.argv[1], int(sys.argv[2]))
