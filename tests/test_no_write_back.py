"""Nothing handed out can be written back into a game (issue 32's two reproducers), on both backends.

A hostile tester made illegal moves legal twice: by writing into the mask ``action_masks()``
hands out (the vector env checked actions against it), and by appending an id to the list
``GameState.legal_ids()`` returned (the state's own cache). Now the masks handed out are
read-only, the legal ids are a tuple, and every action is checked against the game's own
legal ids, so even a mask made writable again changes nothing. Each reproducer runs in a
fresh process per backend (``MULLE_ENGINE``, the one switch), so the vector env's stepper is
the backend's own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

BACKENDS = ["c", "python"]

_STATE = """
import mulle_env as me
from mulle_env.engine.moves import MOVES
s = me.new_game(seed=5)
ids = s.legal_ids()
assert isinstance(ids, tuple), type(ids)
try:
    ids.append(138)
except AttributeError:
    pass
else:
    raise SystemExit("legal_ids() could be appended to")
illegal = next(i for i in range(len(MOVES)) if i not in ids and MOVES[i].kind == "build")
assert illegal not in s.legal_ids() and s.legal_ids() == ids
assert s.legal_move_ids() == list(ids)
mine = s.legal_move_ids()
mine.append(illegal)  # the caller's own list: the state's cache is untouched
assert illegal not in s.legal_ids() and not s.is_legal(MOVES[illegal])
print("ok", me.BACKEND)
"""

_VECTOR = """
import numpy as np
import gymnasium as gym
import mulle_env as me
from mulle_env import codec

envs = gym.make_vec("Mulle-v0", num_envs=8, vectorization_mode="vector_entry_point", opponent="random",
                    ruleset={"sets": 1}, illegal_action="lose")
env = envs.unwrapped
obs, info = envs.reset(seed=3)
for mask in (info["action_mask"], env.action_masks()):
    try:
        mask[:] = 1
    except ValueError:
        pass
    else:
        raise SystemExit("a handed-out mask could be written")
# Tampering below the read-only view (the env's own array, or a view made writable again where
# numpy allows it) still smuggles nothing in: the step asks the games, not the mask.
env._mask[:] = 1
rng = np.random.default_rng(0)
smuggled = played = 0
for step in range(60):
    legal = [set(env._core.stepper.state(i).legal_ids()) for i in range(8)]
    acts = np.array([int(rng.integers(codec.NUM_ACTIONS)) for _ in range(8)])
    illegal = np.array([a not in legal[i] for i, a in enumerate(acts)])
    env._mask[:] = 1
    obs, rew, term, trunc, info = envs.step(acts)
    final = info.get("final_info", {})
    flagged = final.get("illegal_action", np.zeros(8, bool))
    smuggled += int((illegal & ~flagged).sum())
    played += int(illegal.sum())
assert played > 100 and smuggled == 0, (played, smuggled)

strict = gym.make_vec("Mulle-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="random")
obs, info = strict.reset(seed=1)
st = strict.unwrapped._core.stepper.state(0)
bad = next(i for i in range(codec.NUM_ACTIONS) if i not in st.legal_ids())
before = st.to_dict() if hasattr(st, "to_dict") else None
strict.unwrapped._mask[:] = 1
try:
    strict.step(np.array([bad, int(np.flatnonzero(info["action_mask"][1])[0])]))
except codec.IllegalActionError:
    pass
else:
    raise SystemExit("an illegal action was played through a tampered mask")
# The stepper itself refuses an illegal action before moving any game.
stepper = strict.unwrapped._core.stepper
try:
    stepper.step(np.array([bad, 0]), np.array([True, False]))
except ValueError:
    pass
else:
    raise SystemExit("the stepper played an illegal action")
try:
    stepper.play(0, bad)
except ValueError:
    pass
else:
    raise SystemExit("the stepper's play() took an illegal action")
print("ok", me.BACKEND)
"""

_SELF_PLAY = """
import numpy as np
import mulle_env as me
from mulle_env.engine.errors import IllegalMoveError
from mulle_env.vector_env import MulleVectorEnv

def cheat(obs, mask):
    try:
        mask[:] = 1
    except ValueError:
        pass
    else:
        raise SystemExit("the self-play policy could write its mask")
    return np.zeros(len(mask), dtype=np.int64)  # action 0 is hardly ever legal

envs = MulleVectorEnv(4, opponent="self", seat=1, ruleset={"sets": 1}, opponent_policy=cheat)
try:
    envs.reset(seed=0)
except IllegalMoveError:
    print("ok", me.BACKEND)
"""


def _run(code: str, backend: str) -> str:
    env = {**os.environ, "MULLE_ENGINE": backend}
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_legal_ids_is_an_immutable_tuple_and_the_cache_stays_right(backend):
    assert _run(_STATE, backend).split() == ["ok", backend]


@pytest.mark.parametrize("backend", BACKENDS)
def test_writing_into_the_vector_envs_masks_smuggles_no_move_in(backend):
    assert _run(_VECTOR, backend).split() == ["ok", backend]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_self_play_policy_gets_a_read_only_mask_and_is_checked_against_the_games(backend):
    assert _run(_SELF_PLAY, backend).split() == ["ok", backend]
