"""Playing one arena game: the task function every backend runs.

A task is a plain dict (picklable, JSON-able) made by :mod:`arena.schedule`; the result
is the dict written as one line of the results file. Everything that decides a game is
in the task (game module, ruleset, seed, specs by seat), and each agent's random
generator is seeded from a stable hash of ``(seed, seat, spec)``, so a game's result
does not depend on the worker, the process or the order games run in.

Failures are the agents', not the tournament's: an agent that raises, plays an illegal
move or exceeds the per-move time limit *forfeits* the game (its seat loses, the error
is recorded) and the next game starts normally. An exception raised by the game itself
(``new_game``, ``is_over``, ``legal_moves``, ``view``, ``result``) blames no agent: the
game is recorded as ``aborted`` and played again when the command is re-run.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import random
import signal
import threading
import time
import traceback
from contextlib import contextmanager

import agents

log = logging.getLogger("arena.worker")

#: Keys of a result line that vary from run to run (timings, which process played).
VOLATILE_KEYS = ("duration", "think", "worker", "finished_at", "attempts")


class MoveTimeout(BaseException):
    """An agent exceeded the per-move time limit.

    A ``BaseException`` so that an agent's own ``except Exception`` cannot swallow it.
    """


_agents: dict[tuple[str, int], agents.Agent] = {}
_games: dict[str, object] = {}
_initialized: set[str] = set()


def call_path(path: str):
    """Import ``"package.module:attribute"`` and return the attribute."""
    module, sep, attr = path.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"an import path reads 'package.module:name', not {path!r}")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def run_init(path: str | None) -> None:
    """Run the ``worker_init`` hook ``path`` once in this process (e.g. to register agents)."""
    if path and path not in _initialized:
        call_path(path)()
        _initialized.add(path)


def load_game(path: str):
    """The game module (or object) at import path ``path``, e.g. ``"mulle_env"``.

    It is checked against the arena's game protocol (:func:`arena.game.check_game`) once
    per process; one that does not satisfy it raises :class:`arena.game.GameProtocolError`.
    """
    game = _games.get(path)
    if game is None:
        from .game import check_game

        game = call_path(path) if ":" in path else importlib.import_module(path)
        check_game(game, f"--game {path!r}")
        _games[path] = game
    return game


def engine_version(game) -> str | None:
    """The game's ``ENGINE_VERSION`` (recorded in every result line), if it has one."""
    return getattr(game, "ENGINE_VERSION", None)


def make_ruleset(game, rules: dict | None):
    """The game's ruleset object for the dict ``rules`` (the dict itself if the game has no Ruleset)."""
    cls = getattr(game, "Ruleset", None)
    return cls.from_dict(rules or {}) if cls is not None and hasattr(cls, "from_dict") else rules


def stable_seed(*parts) -> int:
    """A 64-bit seed from ``parts`` that is the same in every process (unlike ``hash()``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


#: The version a results line without ``agent_versions`` stands for: it was written before
#: versions were recorded, when every agent was at version "1" (:attr:`agents.Agent.version`).
UNRECORDED_VERSION = "1"


def version_of(agent) -> str:
    """``agent.version`` as text (``"1"`` for an agent object without the attribute)."""
    return str(getattr(agent, "version", UNRECORDED_VERSION))


def agent_version(spec: str) -> str:
    """The version of the agent ``spec`` builds in this process (see :attr:`agents.Agent.version`).

    The arena keys agents by spec only; this is how it tells apart two agents behind one
    spec (a changed default, a retrained shipped policy) when it resumes a results file.
    """
    return version_of(agents.make(spec))


def line_versions(line: dict) -> list[str]:
    """The agent versions by seat a results line was played with (``"1"`` each if it predates them)."""
    recorded = line.get("agent_versions")
    return list(recorded) if recorded is not None else [UNRECORDED_VERSION, UNRECORDED_VERSION]


def agent_for(spec: str, seat: int) -> agents.Agent:
    """This worker's agent for ``spec`` in ``seat``, built once and reused.

    Cached per seat as well as per spec so that a spec playing itself still has two
    independent agents (they may keep state between ``observe`` calls).
    """
    key = (spec, seat)
    agent = _agents.get(key)
    if agent is None:
        agent = _agents[key] = agents.make(spec)
    return agent


def _alarm(signum, frame):
    raise MoveTimeout()


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`MoveTimeout` in the block after ``seconds`` (SIGALRM; no-op where unavailable)."""
    if not seconds or not _can_alarm():
        yield
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def play_task(task: dict) -> dict:
    """Play the game ``task`` describes and return its result line (see docs/arena.md).

    The loop is the arena's own rather than the engine's ``Match``: it drives any game
    of the protocol in :mod:`arena.game` (a state with ``legal_moves``, ``play``,
    ``view``...), times each ``act`` against the per-move limit, and knows at each moment
    whose code runs, which is what decides between a forfeit and an aborted game. With
    ``save_games`` the line carries ``move_list``, and the line is then a game record:
    ``GameRecord.from_dict`` and ``mulle-play --replay`` read it.
    """
    t_start = time.perf_counter()
    run_init(task.get("worker_init"))
    game = load_game(task.get("game", "mulle_env"))
    specs = task["specs"]
    seed = task["seed"]
    timeout = task.get("move_timeout")
    line = {
        "game_id": task["game_id"],
        "specs": list(specs),
        "seed": seed,
        "pairing": task.get("pairing"),
        "pair": task.get("pair"),
        "ruleset": task.get("ruleset") or {},
        "game": task.get("game", "mulle_env"),
        "engine_version": engine_version(game),
        "agent_versions": task.get("agent_versions"),
        "scores": None,
        "sheets": None,
        "winner": None,
        "moves": 0,
        "duration": 0.0,
        "think": [0.0, 0.0],
        "error": None,
        "forfeit": None,
        "status": "ok",
        "worker": os.getpid(),
    }
    move_list: list[str] = []
    culprit: int | None = None

    def agent(seat: int) -> str:
        return f"agent {specs[seat]!r} (seat {seat})"

    try:
        seats = [agent_for(specs[0], 0), agent_for(specs[1], 1)]
    except Exception as exc:  # a spec that no longer builds is the agent's failure
        culprit = next((s for s in (0, 1) if (specs[s], s) not in _agents), 0)
        return _forfeit(line, culprit, f"{agent(culprit)} could not be built: {_describe(exc)}", t_start)
    # The agents that play say which version they are (the task's are the parent's, which
    # may differ if, say, the policy file changed in between: the line then tells the truth).
    line["agent_versions"] = [version_of(seats[0]), version_of(seats[1])]
    rngs = [random.Random(stable_seed(seed, s, specs[s])) for s in (0, 1)]
    think = [0.0, 0.0]
    k = 0
    # ``stage`` says whose code runs, so a failure is charged to the right party: an
    # agent's stage forfeits its game, the engine's aborts it (no agent is to blame).
    stage = "engine"
    try:
        state = game.new_game(seed=seed, ruleset=make_ruleset(game, task.get("ruleset")))
        stage = "reset"
        for culprit in (0, 1):
            with time_limit(timeout):
                seats[culprit].reset()
        while True:
            stage = "engine"
            if state.is_over():
                break
            culprit = p = state.to_move
            legal = state.legal_moves()
            view = state.view(p)
            stage = "act"
            t0 = time.perf_counter()
            with time_limit(timeout):
                move = seats[p].act(view, legal, rngs[p])
            think[p] += time.perf_counter() - t0
            stage = "play"
            state.play(move)  # checked: an illegal move is a forfeit, not a corrupted game
            k += 1
            move_list.append(str(move))
            stage = "observe"
            for culprit in (0, 1):
                with time_limit(timeout):
                    seats[culprit].observe((p, move))
    except MoveTimeout:
        line["think"] = [round(t, 6) for t in think]
        line["moves"] = k
        what = (f"exceeded the move time limit of {timeout:g} s" if stage == "act"
                else f"exceeded the time limit of {timeout:g} s in {stage}()")
        return _forfeit(line, culprit, f"{agent(culprit)} {what} at move {k + 1}", t_start, move_list, task)
    except Exception as exc:
        line["think"] = [round(t, 6) for t in think]
        line["moves"] = k
        if stage == "engine":
            error = f"game engine raised {_describe(exc)} at move {k + 1}"
            return _engine_failed(line, task, error, t_start, move_list)
        where = {"act": "raised", "play": "played an illegal move:", "reset": "raised in reset():",
                 "observe": "raised in observe():"}[stage]
        if stage != "play":
            log.debug("agent %r failed:\n%s", specs[culprit], traceback.format_exc())
        error = f"{agent(culprit)} {where} {_describe(exc)} at move {k + 1}"
        return _forfeit(line, culprit, error, t_start, move_list, task)
    try:
        result = state.result()
        d = result.to_dict()
    except Exception as exc:
        return _engine_failed(line, task, f"game engine raised {_describe(exc)} in result()", t_start, move_list)
    line.update(
        scores=list(result.scores),
        sheets=d.get("sheets"),
        winner=result.winner,
        moves=k,
        think=[round(t, 6) for t in think],
        duration=round(time.perf_counter() - t_start, 6),
    )
    if task.get("save_games"):
        line["move_list"] = move_list
    return line


#: The old name of :func:`play_task`, kept for code that imports it.
play_game = play_task


def _forfeit(line: dict, seat: int, error: str, t_start: float, move_list=None, task=None) -> dict:
    """Record that ``seat`` forfeits: it loses, scores and sheets stay ``None``."""
    line.update(winner=1 - seat, forfeit=seat, error=error, status="forfeit")
    line["duration"] = round(time.perf_counter() - t_start, 6)
    if task is not None and task.get("save_games"):
        line["move_list"] = move_list or []
    log.warning("game %s: %s", line["game_id"], error)
    return line


def _engine_failed(line: dict, task: dict, error: str, t_start: float, move_list=None) -> dict:
    """Record a game the game engine failed: ``aborted``, nobody forfeits, replayed on re-run."""
    log.error("game %s: %s\n%s", line["game_id"], error, traceback.format_exc())
    line.update(winner=None, forfeit=None, error=error, status="aborted", attempts=1)
    line["duration"] = round(time.perf_counter() - t_start, 6)
    if task.get("save_games"):
        line["move_list"] = move_list or []  # the moves that led to the failure
    return line


def aborted(task: dict, error: str, attempts: int = 1) -> dict:
    """The result line of a game the infrastructure could not finish (worker died, game deadline).

    Such a game counts for nobody and is played again when the command is re-run.
    """
    return {
        "game_id": task["game_id"],
        "specs": list(task["specs"]),
        "seed": task["seed"],
        "pairing": task.get("pairing"),
        "pair": task.get("pair"),
        "ruleset": task.get("ruleset") or {},
        "game": task.get("game", "mulle_env"),
        "engine_version": task.get("engine_version"),
        "agent_versions": task.get("agent_versions"),
        "scores": None,
        "sheets": None,
        "winner": None,
        "moves": None,
        "duration": None,
        "error": error,
        "forfeit": None,
        "status": "aborted",
        "attempts": attempts,
    }
