"""The next deals' seeds drawn in C (``mulle_env._native.draw_deals``), draw for draw numpy's.

The vector env deals a finished game anew from that game's numpy Generator (EnvCore._draw:
``integers(2**63 - 1)`` twice, then ``integers(2)`` for a random seat). The compiled env layer
makes those draws on each Generator's bit generator with numpy's own bounded-integer method, so
a seed gives the same games whichever code draws. If numpy ever changed how ``integers``
draws, these tests would say so before any game changed.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mulle_env as me
from mulle_env.envcore import SEED_BOUND
from mulle_env.native import NATIVE

pytestmark = pytest.mark.skipif(NATIVE is None, reason="the compiled env layer runs on the compiled core only")

BIT_GENERATORS = [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64]


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS, ids=lambda b: b.__name__)
@pytest.mark.parametrize("random_seat", [False, True])
def test_draw_deals_draws_what_generator_integers_draws(bit_generator, random_seat):
    for seed in range(60):
        mine, numpys = np.random.Generator(bit_generator(seed)), np.random.Generator(bit_generator(seed))
        if seed % 2:  # a bit generator holding a spare 32-bit half (PCG64 keeps one after integers(2))
            mine.integers(2)
            numpys.integers(2)
        deal, opp, seat = NATIVE.draw_deals([mine, mine, mine], SEED_BOUND, random_seat)
        for j in range(3):
            assert deal[j] == int(numpys.integers(SEED_BOUND))
            assert opp[j] == int(numpys.integers(SEED_BOUND))
            if random_seat:
                assert seat[j] == int(numpys.integers(2))
        assert seat is None or all(type(s) is int for s in seat)
        # Nothing drawn beyond numpy's draws (a spare 32-bit half included): the streams go on alike.
        assert mine.integers(2, size=3).tolist() == numpys.integers(2, size=3).tolist()
        assert mine.bit_generator.random_raw(4).tolist() == numpys.bit_generator.random_raw(4).tolist()


@pytest.mark.parametrize("bound", [2, 3, 7, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 3, 2**62 + 12345,
                                   2**63 - 1])
def test_every_range_is_drawn_as_numpy_draws_it(bound):
    """The 32-bit and 64-bit methods, their rejection steps, and the one range drawn as a raw word (2**32)."""
    for seed in range(10):
        mine, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
        deal, opp, _ = NATIVE.draw_deals([mine] * 200, bound, False)
        expected = [int(x) for x in numpys.integers(bound, size=400)]
        assert [v for pair in zip(deal, opp) for v in pair] == expected


def test_draw_deals_refuses_what_is_not_a_generator_or_a_bound():
    not_a_generator = r"generators\[1\] must be a numpy Generator, not numpy\.random\.mtrand\.RandomState"
    with pytest.raises(TypeError, match=not_a_generator):
        NATIVE.draw_deals([np.random.default_rng(0), np.random.RandomState(0)], SEED_BOUND, False)
    with pytest.raises(TypeError, match="must be a sequence"):
        NATIVE.draw_deals(5, SEED_BOUND, False)
    for bound in (0, 1, 2**63):
        with pytest.raises((ValueError, OverflowError)):
            NATIVE.draw_deals([np.random.default_rng(0)], bound, False)
    assert NATIVE.draw_deals([], SEED_BOUND, True) == ([], [], [])


def test_draw_deals_waits_for_a_generator_another_thread_holds():
    """Like Generator.integers, it draws under the bit generator's lock."""
    g = np.random.default_rng(3)
    g.bit_generator.lock.acquire()
    done = []
    t = threading.Thread(target=lambda: done.append(NATIVE.draw_deals([g], SEED_BOUND, False)))
    t.start()
    t.join(0.2)
    assert t.is_alive() and not done
    g.bit_generator.lock.release()
    t.join(5)
    assert done and done[0][0][0] == int(np.random.default_rng(3).integers(SEED_BOUND))


@pytest.mark.parametrize("seat", ["random", "alternate", 1])
def test_the_vector_env_restarts_the_games_it_always_restarted(seat, monkeypatch):
    """Same-step autoreset against the in-stepper opponent: the games dealt after each game are the ones
    the Python draws gave (the same seeds, seats and episode counts)."""
    import gymnasium as gym

    def play(draw_in_c):
        if not draw_in_c:
            monkeypatch.setattr("mulle_env.envcore._NATIVE", None)
        envs = gym.make_vec("Mulle-v0", num_envs=3, vectorization_mode="vector_entry_point", opponent="random",
                            ruleset=me.Ruleset(sets=1), seat=seat)
        obs, info = envs.reset(seed=11)
        rng = np.random.default_rng(0)
        seen, restarts = [obs.copy()], 0
        while restarts < 6:
            obs, r, term, trunc, info = envs.step(me.codec.sample_masks(info["action_mask"], rng))
            seen += [obs.copy(), r.copy(), info["seat"].copy()]
            restarts += int(term.sum())
        core = envs.unwrapped._core
        monkeypatch.undo()
        return seen, list(core.episodes), [g.bit_generator.state for g in core.np_randoms]

    in_c, in_python = play(True), play(False)
    assert in_c[1] == in_python[1] and in_c[2] == in_python[2]
    assert len(in_c[0]) == len(in_python[0])
    assert all(np.array_equal(a, b) for a, b in zip(in_c[0], in_python[0]))
