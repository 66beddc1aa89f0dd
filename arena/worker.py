"""Playing one arena game: the task function every backend runs.

A task is a plain dict (picklable, JSON-able) made by :mod:`arena.schedule`; the result
is the dict written as one line of the results file. Everything that decides a game is
in the task (game module, ruleset, seed, specs by seat), and each agent's random
generator is seeded from a stable hash of ``(seed, seat, spec)``, so a game's result
does not depend on the worker, the process or the order games run in.

Every game runs on the one game loop, :class:`mulle_env.engine.GameLoop`. Failures are
the agents', not the tournament's: an agent that raises, answers with an illegal move
(or with anything that is not a move) or exceeds the per-move time limit *forfeits* the
game (its seat loses, the error is recorded) and the next game starts normally. An
exception raised by the game itself (``new_game``, ``is_over``, ``legal_moves``,
``view``, ``result``, ``play`` failing on a legal move) blames no agent: the game is
recorded as ``aborted`` and played again when the command is re-run.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import random
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import FrameType, TracebackType
from typing import Any, Literal, cast

import agents

# The one game loop and its errors are game-agnostic: the arena uses nothing else of mulle_env here.
from mulle_env.engine.errors import AgentError, IllegalMoveError
from mulle_env.engine.loop import GameLoop

from .game import check_game, game_name, resolve_game, unknown_game
from .game import make_ruleset as make_ruleset  # its old home: kept for old imports (CHANGELOG)

log = logging.getLogger("arena.worker")

#: Keys of a result line that vary from run to run (timings, which process played).
VOLATILE_KEYS = ("duration", "think", "worker", "finished_at", "attempts")


class MoveTimeout(BaseException):
    """An agent exceeded the per-move time limit.

    A ``BaseException`` so that an agent's own ``except Exception`` cannot swallow it.
    """


_agents: dict[tuple[str, int, str | None], agents.Agent] = {}
_games: dict[str, Any] = {}
_initialized: set[str] = set()


def call_path(path: str) -> Any:
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


def load_game(path: str) -> Any:
    """The game module (or object) at import path ``path``, e.g. ``"mulle_env"``, or of a short name (``"casino"``).

    A short name is looked up in :data:`arena.game.GAMES`. The game is checked against
    the arena's game protocol (:func:`arena.game.check_game`) once per process; one that
    does not satisfy it raises :class:`arena.game.GameProtocolError`, and a name that is
    neither a short name nor a module that exists :class:`arena.game.UnknownGameError`
    (naming the short names).
    """
    game = _games.get(path)
    if game is None:
        where = resolve_game(path)
        try:
            game = call_path(where) if ":" in where else importlib.import_module(where)
        except ModuleNotFoundError as exc:
            unknown = unknown_game(path, exc)
            if unknown is None:
                raise  # a module the game itself imports is missing: the game's error, as it is
            raise unknown from None
        check_game(game, f"--game {path!r}")
        _games[path] = game
    return game


def engine_version(game: Any) -> str | None:
    """The game's ``ENGINE_VERSION`` (recorded in every result line), if it has one."""
    return getattr(game, "ENGINE_VERSION", None)


def engine_backend(game: Any) -> str | None:
    """Which engine of the game runs in this process: its ``BACKEND`` (``"c"`` or ``"python"`` for Mulle), if any.

    Recorded in every result line as ``engine_backend``: the same seed gives the same game
    on every backend, but their speed differs about tenfold, so a report says which ran.
    """
    backend = getattr(game, "BACKEND", None)
    return backend if isinstance(backend, str) else None


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from ``parts`` that is the same in every process (unlike ``hash()``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


#: The version a results line without ``agent_versions`` stands for: it was written before
#: versions were recorded, when every agent was at version "1" (:attr:`agents.Agent.version`).
UNRECORDED_VERSION = "1"


def version_of(agent: object) -> str:
    """``agent.version`` as text (``"1"`` for an agent object without the attribute)."""
    return str(getattr(agent, "version", UNRECORDED_VERSION))


def agent_version(spec: str, game: str | None = None) -> str:
    """The version of the agent ``spec`` builds in this process for ``game`` (see :attr:`agents.Agent.version`).

    The arena keys agents by spec only; this is how it tells apart two agents behind one
    spec (a changed default, a retrained shipped policy) when it resumes a results file.
    ``game`` is the game's short name (:func:`arena.game.game_name`; ``None``: Mulle's agent).
    """
    return version_of(agents.make(spec, game=game))


def line_versions(line: dict[str, Any]) -> list[str]:
    """The agent versions by seat a results line was played with (``"1"`` each if it predates them)."""
    recorded = line.get("agent_versions")
    return list(recorded) if recorded is not None else [UNRECORDED_VERSION, UNRECORDED_VERSION]


def agent_for(spec: str, seat: int, game: str | None = None, isolate: dict[str, Any] | None = None) -> agents.Agent:
    """This worker's agent for ``spec`` in ``seat`` at the game with short name ``game``, built once and reused.

    Cached per seat as well as per spec so that a spec playing itself still has two
    independent agents (they may keep state between ``observe`` calls), and per game, since
    one name is another agent at another game (``heuristic``; ``None``: Mulle's). With
    ``isolate`` (a task's ``"isolate"`` entry: ``seconds``, ``memory_mb``, ``worker_init``)
    the agent is an :class:`arena.isolate.IsolatedAgent`, its agent in a process of its own.
    """
    key = _agent_key(spec, seat, game, isolate)
    agent = _agents.get(key)
    if agent is None:
        if isolate is None:
            agent = agents.make(spec, game=game)
        else:
            from .isolate import IsolatedAgent

            agent = cast(agents.Agent, IsolatedAgent(spec, game, seconds=isolate["seconds"],
                                                     memory_mb=isolate["memory_mb"],
                                                     worker_init=isolate.get("worker_init")))
        _agents[key] = agent
    return agent


def _agent_key(spec: str, seat: int, game: str | None, isolate: dict[str, Any] | None) -> tuple[Any, ...]:
    if isolate is None:
        return (spec, seat, game)
    return (spec, seat, game, "isolated", isolate["seconds"], isolate["memory_mb"], isolate.get("worker_init"))


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise MoveTimeout()


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
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


#: The longest error text a results line keeps. An agent's exception text is the agent's to choose: one that
#: raised ValueError("x" * 20_000_000) wrote a 40 MB line that the next resume set aside as too long and played
#: again, appending another (issue 53, item 3). What matters of an error fits in far less.
MAX_ERROR_CHARS = 2000


def capped(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (the error field of a results line)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (cut: {len(text):,} characters in all)"


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__  # capped where a line is written


class TimeGuard:
    """The game loop's ``guard``: the per-move time limit around every call into an agent.

    ``with TimeGuard(seconds) as guard: GameLoop(..., guard=guard).run()`` runs each
    ``reset``, ``act`` and ``observe`` under a SIGALRM timer. The handler is installed
    once for the block (not per call: a game makes hundreds of calls) and only the timer
    is set and cleared around each call. An agent over the limit gets a
    :class:`MoveTimeout` (a ``BaseException``, so its own ``except Exception`` cannot
    swallow it), which the guard turns into the loop's blame for an agent: an
    :class:`~mulle_env.engine.errors.AgentError` naming the seat and the stage, with the
    :class:`MoveTimeout` as its cause. :attr:`seat` and :attr:`stage` say whose call ran
    last, for a timer that fires just outside a call. Without a limit, or where SIGALRM
    is unavailable (Windows, a non-main thread), calls run unguarded.
    """

    def __init__(self, seconds: float | None, names: list[str] | None = None) -> None:
        self.seconds = seconds
        self.names = names
        self.seat: int | None = None
        self.stage: str | None = None
        self._previous: Callable[[int, FrameType | None], Any] | int | None = None
        self._armed = False

    def __enter__(self) -> TimeGuard:
        if self.seconds and _can_alarm():
            self._previous = signal.signal(signal.SIGALRM, _alarm)
            self._armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._armed = False

    def __call__(self, seat: int, stage: str) -> AbstractContextManager[None]:
        self.seat, self.stage = seat, stage
        return _TimedCall(self, seat, stage) if self._armed else _UNTIMED

    def blame(self, seat: int, stage: str, timeout: MoveTimeout) -> AgentError:
        """The loop's error for the agent of ``seat`` that ran out of time in ``stage``."""
        name = self.names[seat] if self.names else f"seat {seat}"
        # A guard blames only when armed, that is with a time limit.
        error = AgentError(f"agent {name!r} (seat {seat}) {_timeout_text(cast(float, self.seconds), stage)}",
                           agent=name, seat=seat, stage=stage)
        error.__cause__ = timeout
        return error


_UNTIMED = nullcontext()


class _TimedCall:
    """One call into an agent under the timer of an armed :class:`TimeGuard`."""

    __slots__ = ("guard", "seat", "stage")

    def __init__(self, guard: TimeGuard, seat: int, stage: str) -> None:
        self.guard, self.seat, self.stage = guard, seat, stage

    def __enter__(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, cast(float, self.guard.seconds))  # armed: it has a limit

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
                 ) -> Literal[False]:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if kind is MoveTimeout:
            raise self.guard.blame(self.seat, self.stage, cast(MoveTimeout, value))
        return False


def timeout_text(seconds: float, stage: str) -> str:
    """What an agent that ran out of time did, in the words every front end uses (the arena's results, the live
    server's ``agent_replaced``): ``"exceeded the move time limit of 10 s"``."""
    return (f"exceeded the move time limit of {seconds:g} s" if stage == "act"
            else f"exceeded the time limit of {seconds:g} s in {stage}()")


_timeout_text = timeout_text

#: How a forfeit's error text says what the agent did, by the loop's stage.
_FAILED_IN = {"act": "raised", "reset": "raised in reset():", "observe": "raised in observe():"}


def crash_text(stage: str, exc: BaseException) -> str:
    """What an agent that raised in ``stage`` (``act``, ``reset``, ``observe``) did: ``"raised RuntimeError: boom"``
    (the arena's forfeit text; the live server replaces such an agent with the same words)."""
    return f"{_FAILED_IN[stage]} {_describe(exc)}"


def illegal_text(exc: IllegalMoveError) -> str:
    """What an agent that answered with an illegal or malformed move did (the arena's forfeit text)."""
    return f"played an illegal move: {type(exc).__name__}: {exc.reason}"


def _blame(exc: BaseException, specs: list[str], guard: TimeGuard) -> tuple[int, str] | None:
    """``(seat, what it did)`` when ``exc`` is an agent's failure (a forfeit); ``None`` when it is the game's."""
    if isinstance(exc, MoveTimeout):  # the timer fired between the loop's calls: the last one is to blame
        # An armed guard (it has a limit) has seen a call start: seat and stage are set.
        return cast(int, guard.seat), _timeout_text(cast(float, guard.seconds), cast(str, guard.stage))
    if isinstance(exc, IllegalMoveError) and exc.seat in (0, 1):
        return exc.seat, illegal_text(exc)
    if isinstance(exc, AgentError) and guard.seat is not None:
        # The loop hands on unchanged an AgentError from a game loop inside an agent (one that
        # plays games of its own), whose seat is not this game's: the agent whose call was
        # running, as the guard saw it start, is the one that failed.
        seat, stage = guard.seat, cast(str, guard.stage)  # set together
        own = (exc.seat, exc.stage, exc.agent) == (seat, stage, specs[seat])
        cause = exc.__cause__ if own else exc
        if own and _isolated_failure(cause):  # an isolated agent's way out of its turn, already in words
            return seat, str(getattr(cause, "what"))
        if isinstance(cause, MoveTimeout):
            return seat, _timeout_text(cast(float, guard.seconds), stage)
        log.debug("agent %r failed:\n%s", specs[seat], "".join(traceback.format_exception(cause or exc)))
        return seat, crash_text(stage, cause or exc)
    return None  # anything else comes from the game itself: nobody forfeits


def _isolated_failure(exc: BaseException | None) -> bool:
    # arena.isolate is imported only by isolated games: a plain game never loads it.
    module = sys.modules.get("arena.isolate")
    return module is not None and isinstance(exc, module.AgentFailed)


def play_task(task: dict[str, Any], on_begin: Callable[[], None] | None = None) -> dict[str, Any]:
    """Play the game ``task`` describes and return its result line (see docs/arena.md).

    ``on_begin`` is called once the game is set up (the worker hook run, the game
    module loaded, both agents built), right before the first move: the process
    backend starts the game's clock there.

    The game runs on the one game loop, :class:`mulle_env.engine.GameLoop`, which needs
    of the game only the protocol of :mod:`arena.game`. Its ``guard`` carries the
    per-move time limit (:class:`TimeGuard`), and its errors decide the blame: an
    :class:`~mulle_env.engine.errors.AgentError` (the agent raised, or ran out of time)
    or an :class:`~mulle_env.engine.errors.IllegalMoveError` naming a seat (an illegal
    or malformed answer, text that names no legal move, ``None``) is that agent's
    forfeit; any other exception is the game's own and aborts the game. With
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
        "engine_backend": engine_backend(game),
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

    def agent(seat: int) -> str:
        return f"agent {specs[seat]!r} (seat {seat})"

    name = game_name(game, task.get("game", "mulle_env"))  # which agent a name is: the game's
    isolate = task.get("isolate")
    if isolate is not None:
        line["isolated"] = True
    try:
        seats = [agent_for(specs[0], 0, name, isolate), agent_for(specs[1], 1, name, isolate)]
    except Exception as exc:  # a spec that no longer builds is the agent's failure
        culprit = next((s for s in (0, 1) if _agent_key(specs[s], s, name, isolate) not in _agents), 0)
        why = str(getattr(exc, "what")) if _isolated_failure(exc) else f"could not be built: {_describe(exc)}"
        return _forfeit(line, culprit, f"{agent(culprit)} {why}", t_start)
    # The agents that play say which version they are (the task's are the parent's, which
    # may differ if, say, the policy file changed in between: the line then tells the truth).
    line["agent_versions"] = [version_of(seats[0]), version_of(seats[1])]
    if on_begin is not None:
        on_begin()
    rngs = [random.Random(stable_seed(seed, s, specs[s])) for s in (0, 1)]
    if isolate is not None:
        # An isolated agent's generator lives in its process, seeded as this one would be: the same game either way.
        # Its proxy keeps the time limit itself (and kills the process at it), so no SIGALRM is armed here.
        for s in (0, 1):
            cast(Any, seats[s]).seed(stable_seed(seed, s, specs[s]))
    guard = TimeGuard(None if isolate is not None else timeout, list(specs))
    loop = None
    try:
        with guard:
            state = game.new_game(seed=seed, ruleset=make_ruleset(game, task.get("ruleset")))
            loop = GameLoop(state, seats, rngs, guard=guard, names=list(specs), record=True)
            loop.start()
            loop.run()
    except (Exception, MoveTimeout) as exc:
        k = loop.count if loop is not None else 0
        moves = loop.moves if loop is not None else []
        line["think"] = [round(t, 6) for t in loop.think] if loop is not None else [0.0, 0.0]
        line["moves"] = k
        blame = _blame(exc, specs, guard)
        if blame is None:
            error = f"game engine raised {_describe(exc)} at move {k + 1}"
            return _engine_failed(line, task, error, t_start, moves)
        seat, what = blame
        return _forfeit(line, seat, f"{agent(seat)} {what} at move {k + 1}", t_start, moves, task)
    try:
        result = state.result()
        d = result.to_dict()
    except Exception as exc:
        return _engine_failed(line, task, f"game engine raised {_describe(exc)} in result()", t_start, loop.moves)
    line.update(
        scores=list(result.scores),
        sheets=d.get("sheets"),
        winner=result.winner,
        moves=loop.count,
        think=[round(t, 6) for t in loop.think],
        duration=round(time.perf_counter() - t_start, 6),
    )
    if task.get("save_games"):
        line["move_list"] = loop.moves
    return line


#: The old name of :func:`play_task`: a kept compatibility name (CHANGELOG, 0.2.0); the arena itself calls play_task.
play_game = play_task


def _forfeit(line: dict[str, Any], seat: int, error: str, t_start: float, move_list: list[str] | None = None,
             task: dict[str, Any] | None = None) -> dict[str, Any]:
    """Record that ``seat`` forfeits: it loses, scores and sheets stay ``None``."""
    error = capped(error)
    line.update(winner=1 - seat, forfeit=seat, error=error, status="forfeit")
    line["duration"] = round(time.perf_counter() - t_start, 6)
    if task is not None and task.get("save_games"):
        line["move_list"] = move_list or []
    log.warning("game %s: %s", line["game_id"], error)
    return line


def _engine_failed(line: dict[str, Any], task: dict[str, Any], error: str, t_start: float,
                   move_list: list[str] | None = None) -> dict[str, Any]:
    """Record a game the game engine failed: ``aborted``, nobody forfeits, replayed on re-run."""
    error = capped(error)
    log.error("game %s: %s\n%s", line["game_id"], error, traceback.format_exc())
    line.update(winner=None, forfeit=None, error=error, status="aborted", attempts=1)
    line["duration"] = round(time.perf_counter() - t_start, 6)
    if task.get("save_games"):
        line["move_list"] = move_list or []  # the moves that led to the failure
    return line


def aborted(task: dict[str, Any], error: str, attempts: int = 1) -> dict[str, Any]:
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
        "engine_backend": task.get("engine_backend"),  # the parent's: the worker that would know is gone
        "agent_versions": task.get("agent_versions"),
        "scores": None,
        "sheets": None,
        "winner": None,
        "moves": None,
        "duration": None,
        "error": capped(error),
        "forfeit": None,
        "status": "aborted",
        "attempts": attempts,
    }
