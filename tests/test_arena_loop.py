"""The arena plays every game on the one game loop (``mulle_env.engine.GameLoop``).

Its ``guard`` carries the per-move time limit; its errors decide the blame: an agent's
failure or bad answer forfeits, an error of the game aborts. The loop needs nothing of a
game but the arena's protocol, so a second game (take-away, in ``arena_agents``) plays too.
"""

from __future__ import annotations

import random
import signal
import time

import pytest
from arena_agents import TakeAway

import mulle_env as me
from arena import Plan, ProcessBackend, run
from arena import worker as worker_mod
from arena.worker import MoveTimeout, play_task
from mulle_env.engine.loop import GameLoop

INIT = "arena_agents:register"
RULES = {"sets": 1}


def _task(specs, game="mulle_env", **kw):
    ruleset = {} if game != "mulle_env" else RULES
    plan = Plan(tuple(specs), 2, ruleset=ruleset, worker_init=INIT, game=game, **kw)
    return plan.task(plan.pairings()[0], 0)


def test_every_arena_game_runs_on_the_one_game_loop(monkeypatch):
    started = []

    class Spy(GameLoop):
        __slots__ = ()

        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(worker_mod, "GameLoop", Spy)
    line = play_task(_task(["random", "heuristic"], save_games=True))
    assert line["status"] == "ok" and len(started) == 1
    assert started[0].moves == line["move_list"] and started[0].count == line["moves"]


def test_an_answer_in_move_text_is_parsed_and_every_agent_hears_the_move():
    line = play_task(_task(["answer:kind=text", "answer:kind=move"]))
    assert line["status"] == "ok", line["error"]
    for seat, spec in enumerate(line["specs"]):
        heard = worker_mod.agent_for(spec, seat, "mulle").observed  # the worker's own agent of that seat
        assert len(heard) == line["moves"]
        assert all(isinstance(move, me.Move) for _, move in heard)  # never the text the agent gave


@pytest.mark.parametrize("kind, reason", [
    ("none", "it returned no move (None)"),
    ("number", "a move must be a Move or its text, not 7"),
    ("text", None),  # text is a move: the game is played out
])
def test_none_or_a_number_is_an_illegal_move_naming_the_agent(kind, reason):
    spec = f"answer:kind={kind},at=3"
    line = play_task(_task([spec, "random"]))
    if reason is None:
        assert line["status"] == "ok"
        return
    assert line["status"] == "forfeit" and line["forfeit"] == 0 and line["winner"] == 1
    assert line["error"] == f"agent {spec!r} (seat 0) played an illegal move: IllegalMoveError: {reason} at move 5"


def test_a_failure_in_a_game_loop_inside_an_agent_is_that_agents_forfeit():
    # The inner loop's AgentError names seat 0 of the inner game; the agent at fault here is seat 1's.
    line = play_task(_task(["random", "nester"]))
    assert line["status"] == "forfeit" and line["forfeit"] == 1 and line["winner"] == 0
    assert line["error"].startswith("agent 'nester' (seat 1) raised AgentError: agent ")
    assert line["error"].endswith("raised: ValueError: boom at move 2")


def test_the_guard_turns_a_move_timeout_into_the_loops_blame():
    class Sleeper:
        spec = "sleeper"

        def act(self, view, legal, rng):
            time.sleep(5)

    first = type("First", (), {"act": lambda self, v, legal, rng: legal[0]})()
    t0 = time.monotonic()
    with worker_mod.TimeGuard(0.05, ["sleeper", "first"]) as guard, pytest.raises(me.AgentError) as exc:
        loop = GameLoop(me.new_game(seed=3), [Sleeper(), first], [random.Random(0), random.Random(1)], guard=guard)
        loop.step()
    assert time.monotonic() - t0 < 2
    assert (exc.value.seat, exc.value.stage) == (0, "act") and isinstance(exc.value.__cause__, MoveTimeout)
    assert str(exc.value) == "agent 'sleeper' (seat 0) exceeded the move time limit of 0.05 s"
    assert loop.count == 0 and loop.game.to_move == 0  # nothing was played
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0, 0)


def test_the_loop_blames_an_answer_a_game_cannot_even_compare_and_passes_its_own_errors_on():
    first = type("First", (), {"act": lambda self, v, legal, rng: legal[0]})()
    for answer in (None, "two", object()):
        agent = type("Odd", (), {"spec": "odd", "act": lambda self, v, legal, rng, a=answer: a})()
        loop = GameLoop(TakeAway.new_game(seed=1), [agent, first])
        with pytest.raises(me.IllegalMoveError) as exc:
            loop.step()
        assert (exc.value.agent, exc.value.seat) == ("odd", 0)
        assert loop.game.pile == 11  # untouched

    class Broken(type(TakeAway.new_game(0))):
        def play(self, move):
            raise TypeError("engine bug")

    loop = GameLoop(Broken(11), [first, first])
    with pytest.raises(TypeError, match="engine bug"):  # a legal move the game fails on: the game's error
        loop.step()


def test_a_second_game_plays_through_the_arena_with_the_same_blame(tmp_path):
    out = tmp_path / "takeaway.jsonl"
    o = run(Plan(("random", "answer:kind=text", "answer:kind=none,at=2"), 2, ruleset={}, worker_init=INIT,
                 game="arena_agents:TakeAway", save_games=True), str(out), ProcessBackend(1), progress=False)
    by_specs = {tuple(sorted(ln["specs"])): ln for ln in o.lines}
    assert len(o.lines) == 6 and not o.aborted
    ok = by_specs[("answer:kind=text", "random")]
    assert ok["status"] == "ok" and ok["engine_version"] == "takeaway-1"
    assert sum(int(m) for m in ok["move_list"]) == 10 + ok["seed"] % 20  # the whole pile was taken
    for ln in o.lines:
        if "answer:kind=none,at=2" in ln["specs"]:
            seat = ln["specs"].index("answer:kind=none,at=2")
            assert ln["status"] == "forfeit" and ln["forfeit"] == seat
            assert "played an illegal move: IllegalMoveError: it returned no move (None)" in ln["error"]
