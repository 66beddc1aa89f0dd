"""The one seed domain (docs/engine.md, "Seeds"): every entry point accepts and refuses the same seeds (issue 31).

Seeds are the whole numbers 0 .. 2**64 - 1; ``from_dict`` and the arena accepted -1 and
2**200 (which deal the same games as 2**64 - 1 and 0), ``env.reset`` refused -1.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import mulle_env as me
from mulle_env.engine.rng import SEED_DOMAIN, check_seed, seed_problem

GOOD = [0, 7, 2**63, 2**64 - 1, np.int64(5), np.uint64(2**64 - 1)]
BAD = [-1, 2**64, 2**200, True, 1.5, "3"]


def _position(seed):
    return {**me.new_game(1).to_dict(), "seed": seed}


def _entry_points():
    from mulle_env.pettingzoo import env as aec_env
    from mulle_env.vector_env import MulleVectorEnv

    return {
        "new_game": lambda s: me.new_game(seed=s),
        "from_dict": lambda s: me.GameState.from_dict(_position(s)),
        "record": lambda s: me.GameRecord.from_dict({"seed": s, "moves": []}),
        "Mulle-v0": lambda s: gym.make("Mulle-v0", opponent="random").reset(seed=s),
        "vector": lambda s: MulleVectorEnv(1, opponent="random").reset(seed=s),
        "vector list": lambda s: MulleVectorEnv(1, opponent="random").reset(seed=[s]),
        "aec": lambda s: aec_env().reset(seed=s),
    }


@pytest.mark.parametrize("seed", GOOD, ids=repr)
def test_every_entry_point_accepts_the_domain(seed):
    pytest.importorskip("pettingzoo")
    for name, call in _entry_points().items():
        call(seed)  # no error
    assert seed_problem(seed) is None and check_seed(seed) == int(seed)


@pytest.mark.parametrize("seed", BAD, ids=repr)
def test_every_entry_point_refuses_the_rest_naming_the_value(seed):
    pytest.importorskip("pettingzoo")
    for name, call in _entry_points().items():
        with pytest.raises(ValueError) as exc:
            call(seed)
        assert SEED_DOMAIN in str(exc.value) and repr(seed)[:20] in str(exc.value), (name, str(exc.value))


def test_seeds_outside_the_domain_used_to_alias_games_inside_it():
    # Why the domain stops at 2**64 - 1: the deal reads 64 bits of the seed.
    assert me.new_game(seed=2**64 - 1).to_dict()["hands"] != me.new_game(seed=0).to_dict()["hands"]
    from mulle_env.engine.rng import derive_seed

    assert derive_seed(-1, 0) == derive_seed(2**64 - 1, 0) and derive_seed(2**64, 0) == derive_seed(0, 0)


def test_the_vector_env_leaves_room_for_seed_plus_i():
    from mulle_env.vector_env import MulleVectorEnv

    envs = MulleVectorEnv(3, opponent="random")
    envs.reset(seed=2**64 - 3)
    room = r"leave room for num_envs=3 games .* from 0 to 2\*\*64 - 3, not 18446744073709551614"
    with pytest.raises(ValueError, match=room):
        envs.reset(seed=2**64 - 2)


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(2**200)])
def test_the_commands_refuse_the_same_seeds(seed, tmp_path, capsys):
    from arena import cli as arena_cli
    from terminal.cli import main as play_main

    with pytest.raises(SystemExit) as exc:
        arena_cli.parse_args(["random", "heuristic", "--seed", seed, "--out", str(tmp_path / "r.jsonl")])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        play_main(["--seed", seed])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count(f"--seed must be {SEED_DOMAIN}, not {seed[:50]}") == 2
    from arena import Plan

    with pytest.raises(ValueError, match=re.escape(SEED_DOMAIN)):
        Plan(("random", "heuristic"), 1, seed=int(seed))


def test_the_commands_accept_the_top_of_the_domain(tmp_path):
    from arena import Plan, ProcessBackend, run
    from arena.results import check_line

    out = run(Plan(("random", "heuristic"), 1, seed=2**64 - 1, ruleset={"sets": 1}), str(tmp_path / "r.jsonl"),
              ProcessBackend(1), progress=False)
    assert out.played == 1
    line = dict(out.lines[0])
    assert check_line(line) is None
    line["seed"] = -1
    assert SEED_DOMAIN in check_line(line)


def test_the_live_protocol_refuses_the_same_seeds():
    pytest.importorskip("aiohttp")
    from live.protocol import ProtocolError, parse

    def join(seed):
        msg = {"type": "join", "payload": {"table_name": "t", "player_name": "A", "seed": seed}}
        return parse(__import__("json").dumps(msg), 1 << 16)

    assert join(2**64 - 1)[1]["seed"] == 2**64 - 1
    for bad in (-1, 2**64, True):
        with pytest.raises(ProtocolError, match=re.escape(SEED_DOMAIN)):
            join(bad)
