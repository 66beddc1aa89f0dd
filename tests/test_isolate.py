"""Untrusted agents (``mulle-arena --isolate``, :mod:`arena.isolate`): each in a process of its own.

Every way out of a turn (issue 53, item 5) is that agent's forfeit with a short reason,
never an aborted game that a resume plays again; the agent sees only its view (a peeker
that walks the stack frames finds the opponent's hand in process, nothing isolated); and
an isolated game is the same game as one played in process.
"""

from __future__ import annotations

import os
import random

import pytest

import mulle_env as me
from arena import Plan, ProcessBackend, run
from arena import worker as worker_mod
from arena.cli import main as arena_main
from arena.isolate import MAX_REPLY_BYTES, AgentFailed, IsolatedAgent
from arena.results import load
from arena.worker import VOLATILE_KEYS, play_task

INIT = "arena_agents:register"
RULES = {"sets": 1}


@pytest.fixture(autouse=True)
def _fresh_agents():
    """Each test builds its own agents (the worker caches them per process), and none outlives it."""
    yield
    for agent in worker_mod._agents.values():
        close = getattr(agent, "close", None)
        if isinstance(agent, IsolatedAgent) and close is not None:
            close()
    worker_mod._agents.clear()


def _task(specs, game="mulle_env", index=0, **kw):
    plan = Plan(tuple(specs), 2, ruleset=RULES if game == "mulle_env" else {}, worker_init=INIT, game=game, **kw)
    return plan.task(plan.pairings()[0], index)


def _same(line):
    return {k: v for k, v in line.items() if k not in (*VOLATILE_KEYS, "isolated")}


@pytest.mark.parametrize("game, specs", [("mulle_env", ("random", "heuristic")),
                                         ("casino", ("heuristic", "greedy"))])
def test_an_isolated_game_is_the_game_played_in_process(game, specs):
    for index in (0, 1):
        inside = play_task(_task(specs, game, index, save_games=True))
        isolated = play_task(_task(specs, game, index, save_games=True, isolate=True, move_timeout=20))
        assert isolated["status"] == "ok" and isolated["isolated"] is True, isolated["error"]
        inside["move_timeout"] = isolated["move_timeout"] = None
        assert _same(isolated) == _same(inside)


# Each hostile agent misbehaves at its first move; the words of its forfeit.
HOSTILE = [
    ("crasher:at=1", "raised ValueError: boom"),
    ("exiter:at=1", "raised SystemExit: 3"),
    ("interrupter:at=1", "raised KeyboardInterrupt"),
    ("quitter:at=1", "exited with code 7 during act()"),
    ("segfaulter:at=1", "died of signal SIGSEGV during act()"),
    ("hog:at=1", "raised MemoryError"),
    ("rambler:at=1", f"sent an answer of 20,000,012 bytes in act() (at most {MAX_REPLY_BYTES:,})"),
    ("shouter:at=1", "(cut: 5,000,000 characters in all)"),
    ("basecatcher:at=1", "exceeded the move time limit of 1 s"),
    ("alarmblocker:at=1", "exceeded the move time limit of 1 s"),
]


@pytest.mark.parametrize("spec, words", HOSTILE, ids=[s.partition(":")[0] for s, _ in HOSTILE])
def test_every_way_out_of_a_turn_is_that_agents_forfeit(spec, words):
    line = play_task(_task([spec, "random"], isolate=True, move_timeout=1, agent_memory_mb=1024))
    assert line["status"] == "forfeit" and line["forfeit"] == 0 and line["winner"] == 1, line
    assert line["error"].startswith(f"agent {spec!r} (seat 0) ") and words in line["error"], line["error"]
    assert len(line["error"]) < 2200  # the reason is short, whatever the agent sent


def test_a_failed_agent_starts_afresh_and_leaves_no_process_behind():
    task = _task(["quitter:at=3", "random"], isolate=True, move_timeout=5)
    assert play_task(task)["status"] == "forfeit"
    proxy = worker_mod._agents[worker_mod._agent_key("quitter:at=3", 0, "mulle", task["isolate"])]
    assert not proxy.alive  # killed and reaped at its failure
    # The next game starts it again (and it fails again, at its third move, not before).
    line = play_task(_task(["quitter:at=3", "random"], index=1, isolate=True, move_timeout=5))
    assert line["status"] == "forfeit" and "at move" in line["error"]
    pid = proxy._proc.pid if proxy._proc is not None else None
    proxy.close()
    if pid is not None:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_an_isolated_agent_cannot_see_the_opponents_hand():
    # In process the peeker walks up to the game loop's frame and reads the other hand: the cheat the issue showed.
    inside = play_task(_task(["peeker", "random"]))
    assert inside["status"] == "forfeit" and "saw the opponent's hand" in inside["error"]
    isolated = play_task(_task(["peeker", "random"], isolate=True, move_timeout=20))
    assert isolated["status"] == "ok", isolated["error"]


def test_an_isolated_agent_cannot_play_on_the_game_behind_the_loops_back():
    inside = play_task(_task(["mutator", "random"]))
    assert inside["status"] != "ok"  # in process it changed the game under the loop
    isolated = play_task(_task(["mutator", "random"], isolate=True, move_timeout=20))
    assert isolated["status"] == "ok", isolated["error"]


def test_a_spec_that_does_not_build_in_its_process_forfeits_saying_why():
    # heuristic:depth=... is refused by agents.make; the task is made by hand since Plan checks specs first.
    task = dict(_task(["random", "heuristic"], isolate=True, move_timeout=5))
    task["specs"] = ["random", "pimc:samples=0"]
    line = play_task(task)
    assert line["status"] == "forfeit" and line["forfeit"] == 1
    assert "could not be built: " in line["error"] and "samples" in line["error"]


def test_the_proxy_refuses_bad_limits_and_plays_text():
    with pytest.raises(ValueError, match="time limit"):
        IsolatedAgent("random", seconds=0)
    with pytest.raises(ValueError, match="at least 64"):
        IsolatedAgent("random", memory_mb=10)
    agent = IsolatedAgent("random", seconds=10)
    try:
        assert agent.needs_view is False and agent.observe is None and agent.version == "1"
        state = me.new_game(seed=4)
        agent.reset()
        answer = agent.act(None, state.legal_moves(), random.Random(1))
        assert answer in [str(m) for m in state.legal_moves()]
    finally:
        agent.close()
    assert not agent.alive


def test_a_hostile_tournament_finishes_and_a_resume_plays_nothing_again(tmp_path):
    out = tmp_path / "r.jsonl"
    plan = Plan(("segfaulter:at=2", "exiter:at=2", "random"), 2, ruleset=RULES, worker_init=INIT,
                isolate=True, move_timeout=5)
    first = run(plan, str(out), ProcessBackend(1), progress=False)
    lines = load(str(out)).lines
    assert first.played == 6 and len(lines) == 6
    assert {line["status"] for line in lines} == {"forfeit"}  # never aborted
    again = run(plan, str(out), ProcessBackend(1), progress=False)
    assert again.played == 0 and again.skipped == 6


def test_the_command_line_wants_a_time_limit_and_memory_only_with_isolate(capsys):
    with pytest.raises(SystemExit) as exit_:
        arena_main(["random", "heuristic", "--isolate", "--move-timeout", "0"])
    assert exit_.value.code == 2 and "--isolate needs a move time limit" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        arena_main(["random", "heuristic", "--agent-memory", "512"])
    assert exit_.value.code == 2 and "with --isolate" in capsys.readouterr().err
    with pytest.raises(ValueError, match="move time limit"):
        Plan(("random", "heuristic"), 2, isolate=True, move_timeout=None)


def test_agent_failed_says_what_and_where():
    exc = AgentFailed("died of signal SIGSEGV during act()", "act")
    assert exc.what == str(exc) and exc.stage == "act"


def _children(pid: int) -> list[str]:
    """The command lines of the processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid == pid:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        out.append(f.read().replace(b"\0", b" ").decode())
            except (OSError, ValueError, IndexError):
                continue
    return out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process table in /proc")
def test_the_live_servers_agent_seats_play_isolated(tmp_path):
    import asyncio
    import re
    import subprocess
    import sys
    from pathlib import Path

    from live_helpers import Client, play_to_end

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, str(root / "scripts" / "mulle-serve"), "--port", "0", "--no-db",
                             "--opponent", "heuristic", "--isolate", "--trust-loopback"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"open (http://[\d.]+:\d+)/", proc.stdout.readline()).group(1)

        async def go():
            c = await Client.open(url)
            await c.join("iso", "Anna", sets=1)
            await c.send("lobby_action", {"action": "start_game"})
            over = await play_to_end(c, timeout=60)
            seen = _children(proc.pid)
            await c.close()
            return over, seen

        over, seen = asyncio.run(asyncio.wait_for(go(), 120))
        assert over["payload"]["event"] == "game_over"
        assert any("arena.isolate" in cmd for cmd in seen), seen  # the heuristic seat played from its own process
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("spec, words", [("segfaulter:at=2", "died of signal SIGSEGV during act()"),
                                         ("alarmblocker:at=2", "exceeded the move time limit of 1 s"),
                                         ("exiter:at=2", "raised SystemExit: 3")])
def test_casino_games_forfeit_the_same_way(spec, words):
    line = play_task(_task([spec, "heuristic"], "casino", isolate=True, move_timeout=1))
    assert line["status"] == "forfeit" and line["forfeit"] == 0 and words in line["error"], line
    assert line["game"] == "mulle_env.casino"


def test_an_isolated_agent_thinks_only_in_its_own_turn():
    # A thread it leaves running would think on the opponent's time: its process is stopped between calls.
    agent = IsolatedAgent("ponderer", seconds=10, worker_init=INIT)
    try:
        agent.reset()
        state = me.new_game(seed=4)
        agent.act(None, state.legal_moves(), random.Random(1))  # starts its counting thread
        import time

        time.sleep(0.6)  # the opponent's turn: 600 of its 1 ms ticks if it ran on
        answer = agent.act(None, state.legal_moves(), random.Random(1))
        assert answer.startswith("pondered ") and int(answer.split()[1]) < 100, answer
    finally:
        agent.close()


def test_a_game_process_killed_by_kill_9_takes_its_agents_processes_with_it(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    # A game's process with an isolated agent that has answered once (so it is stopped between calls), killed -9.
    code = ("import random, sys, time\n"
            "sys.path.insert(0, 'tests')\n"
            "import mulle_env as me\n"
            "from arena.isolate import IsolatedAgent\n"
            "a = IsolatedAgent('random', seconds=10)\n"
            "a.reset(); s = me.new_game(seed=1); a.act(None, s.legal_moves(), random.Random(0))\n"
            "print(a._proc.pid, flush=True)\n"
            "time.sleep(60)\n")
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    game = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
    pid = int(game.stdout.readline())
    os.kill(game.pid, signal.SIGKILL)
    game.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return  # gone (and reaped by init)
        if state == "Z":
            return  # dead, waiting for init to reap it
        time.sleep(0.05)
    pytest.fail(f"the agent's process {pid} outlived its game's process (state {state})")
