"""The one game loop: agents seated at a game, asked in turn, their moves checked, every agent told.

Every tool that advances a game between agents drives :class:`GameLoop`: the arena's
worker (with its per-move time limits and its forfeit-or-abort blame), the environments'
opponent turns, ``mulle-play``, the live server and the training tools (through
:meth:`Match.play_out <mulle_env.engine.match.Match.play_out>`). An agent's own internal
search (pimc's rollouts) is the agent's business and does not go through it.

The loop is game-agnostic: it needs of the game only what the arena's game protocol
asks (:mod:`arena.game`): ``to_move``, ``legal_moves()``, ``view(player)``, a checked
``play(move)`` that raises a ``ValueError`` for an illegal move, and ``is_over()`` (or an
``over`` attribute). A Mulle :class:`~mulle_env.engine.state.GameState` and a
:class:`~mulle_env.engine.match.Match` both qualify; a Match's ``play`` returns the
:class:`~mulle_env.engine.match.MoveEvent`, which the loop hands back.

One contract, the same everywhere:

* ``reset()`` of every distinct seated agent once, when the game starts (:meth:`start`);
* the agent of the seat to move gets ``act(view, legal_moves, rng)`` with its seat's view
  (``None`` when the agent says ``needs_view = False``), the legal moves and its seat's
  random generator;
* its answer may be a legal move or the move's text; anything else, and any move the
  game's checked ``play`` refuses, raises :class:`~mulle_env.engine.errors.IllegalMoveError`
  naming the agent, the seat and the reason (``exc.agent``, ``exc.seat``, ``exc.reason``),
  and the game is left as it was;
* after every move (an agent's, or one from outside via :meth:`play`: a person, a
  learner) every distinct seated agent hears ``observe((player, move))``;
* an agent that raises in ``reset``, ``act`` or ``observe`` makes the loop raise
  :class:`~mulle_env.engine.errors.AgentError` (``exc.seat``, ``exc.stage``, the agent's
  exception as ``__cause__``); errors of the game itself pass through unchanged, which is
  how the arena tells a forfeit from an aborted game.

``guard(seat, stage)``, when given, is a context-manager factory wrapped around every
call into an agent (``stage`` is ``"reset"``, ``"act"`` or ``"observe"``): the arena
passes its per-move time limit here.

>>> import random
>>> from mulle_env.engine import new_game
>>> class First:
...     def act(self, view, legal_moves, rng):
...         return legal_moves[0]
>>> loop = GameLoop(new_game(seed=7), [First(), First()], [random.Random(0), random.Random(1)])
>>> loop.start()
>>> loop.run()
192
>>> loop.game.is_over()
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NoReturn

from .errors import AgentError, IllegalMoveError

__all__ = ["GameLoop", "agent_name", "ruleset_refusal"]

#: ``guard(seat, stage)``: a context manager wrapped around each call into an agent.
Guard = Callable[[int, str], AbstractContextManager[Any]]


def ruleset_refusal(agent: Any, ruleset: Any) -> str | None:
    """Why ``agent`` cannot play under ``ruleset``, or ``None`` if it can: the one place this is asked.

    An agent may say it cannot play a ruleset (a policy trained under other rules) with an
    optional ``check_ruleset(ruleset)`` that raises ``ValueError`` saying why; an agent
    without one plays any ruleset. The environments, ``mulle-arena``, ``mulle-play`` and
    ``mulle-serve`` (its command line and its tables) all ask here before a game starts, and
    each words the refusal for its own user.
    """
    check = getattr(agent, "check_ruleset", None)
    if check is None:
        return None
    try:
        check(ruleset)
    except ValueError as exc:
        return str(exc)
    return None


def agent_name(agent: Any) -> str:
    """How errors name an agent: its ``spec`` when it has one, else its ``repr``."""
    spec = getattr(agent, "spec", None)
    return spec if isinstance(spec, str) else repr(agent)


class GameLoop:
    """Agents seated at ``game``; ``agents[p]`` is seat ``p``'s agent or ``None`` (moves from outside).

    Args:
        game: A game state or :class:`~mulle_env.engine.match.Match` (see the module docstring).
        agents: Per seat an agent (anything with ``act(view, legal_moves, rng)``, optionally
            ``reset()``, ``observe(event)`` and ``needs_view``) or ``None`` for a seat whose
            moves arrive through :meth:`play` (a person, a learner).
        rngs: Per seat the ``random.Random`` its agent chooses with (``None`` for a seat without one).
        guard: ``guard(seat, stage)`` context manager around every agent call (time limits).
        names: Per seat the name errors use for the agent (default: its ``spec``).
        record: Keep every move's text in :attr:`moves` (the arena's results lines hold them).
        play: How a move is played (default ``game.play``): the environments pass their
            stepper's checked play, which keeps its batched arrays in step with the game.

    Attributes:
        think: Seconds each seat's agent spent in ``act``.
        moves: The texts of the moves played through this loop (with ``record=True``).
        count: How many moves were played through this loop.
    """

    __slots__ = ("game", "agents", "rngs", "guard", "names", "think", "moves", "count", "_distinct", "_record",
                 "_plain_over", "_observers", "_needs_view", "_play")

    def __init__(self, game: Any, agents: Sequence[Any], rngs: Sequence[Any] | None = None, *,
                 guard: Guard | None = None, names: Sequence[str] | None = None, record: bool = False,
                 play: Callable[[Any], Any] | None = None) -> None:
        if len(agents) != 2:
            raise ValueError(f"agents names the two seats (an agent or None each), not {len(agents)} entries")
        self.game = game
        self.agents: list[Any] = list(agents)
        self.rngs: list[Any] = list(rngs) if rngs is not None else [None, None]
        if len(self.rngs) != 2:
            raise ValueError(f"rngs names the two seats' generators, not {len(self.rngs)} entries")
        self.guard: Guard | None = guard
        self.names: list[str | None] = list(names) if names is not None else [None, None]
        self.think = [0.0, 0.0]
        self.moves: list[str] = []
        self.count = 0
        self._record = record
        self._play = play if play is not None else game.play
        # Games of the protocol have a bool ``over`` or an ``is_over()``; which one is fixed per game.
        self._plain_over = isinstance(getattr(game, "over", None), bool)
        self._distinct: list[tuple[int, Any]] = []
        self._observers: list[tuple[int, Callable[[Any], None]]] = []
        self._needs_view = [True, True]
        self._seat_changed()

    # ----- seats -------------------------------------------------------------------------
    def _seat_changed(self) -> None:
        # Each distinct agent hears every move once, even when it sits in both seats.
        seen: dict[int, tuple[int, Any]] = {}
        for seat, a in enumerate(self.agents):
            if a is not None and id(a) not in seen:
                seen[id(a)] = (seat, a)
        self._distinct = list(seen.values())
        # Looked up once per seating, not once per move (the environments' hot path).
        self._observers = [(seat, a.observe) for seat, a in self._distinct if getattr(a, "observe", None) is not None]
        self._needs_view = [bool(getattr(a, "needs_view", True)) for a in self.agents]

    def seat(self, seat: int, agent: Any, rng: Any = None, name: str | None = None) -> None:
        """Put ``agent`` (or ``None``: moves from outside) in ``seat``, e.g. when a person leaves mid-game.

        The new agent is neither reset nor told the moves so far: a caller that replaces an
        agent mid-game does that itself (the live server replays the history to it).
        """
        self.agents[seat] = agent
        self.rngs[seat] = rng
        self.names[seat] = name
        self._seat_changed()

    def name(self, seat: int) -> str:
        """How errors name seat ``seat``'s agent."""
        given = self.names[seat]
        return given if given is not None else agent_name(self.agents[seat])

    # ----- the game ----------------------------------------------------------------------
    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return self.game.over if self._plain_over else bool(self.game.is_over())

    @property
    def to_move(self) -> int:
        """The seat to move."""
        seat: int = self.game.to_move
        return seat

    def agent_to_move(self) -> Any:
        """The agent of the seat to move (``None`` when that seat's moves come from outside or the game is over)."""
        return None if self.over else self.agents[self.game.to_move]

    # ----- the loop ----------------------------------------------------------------------
    def start(self) -> None:
        """A new game begins: ``reset()`` every distinct seated agent once.

        What the loop knows about each seat (does its agent read a view, does it observe)
        is read again afterwards: an agent may become another one at ``reset()`` (an
        opponent pool draws its next member then, and ``random`` reads no view while
        ``heuristic`` does).
        """
        for seat, agent in self._distinct:
            reset = getattr(agent, "reset", None)
            if reset is not None:
                self._call(seat, "reset", reset)
        self._seat_changed()

    def ask(self) -> tuple[int, Any, list[Any]]:
        """``(seat, view, legal_moves)``: what the agent of the seat to move is shown.

        The view is ``None`` for an agent with ``needs_view = False``. The live server asks
        here, runs the agent's ``act`` in a thread of its own and hands the answer to
        :meth:`commit`.
        """
        game = self.game
        seat = game.to_move
        legal = game.legal_moves()
        view = game.view(seat) if self._needs_view[seat] else None
        return seat, view, legal

    def choose(self) -> tuple[int, Any, list[Any]]:
        """Ask the agent of the seat to move for its move: ``(seat, answer, legal_moves)``, nothing played."""
        if self.over:
            raise IllegalMoveError("the game is over: no seat is to move")
        return self._choose(self.game.to_move)

    def _choose(self, seat: int) -> tuple[int, Any, list[Any]]:
        # choose() for a running game and the seat to move (run() knows both already).
        game = self.game
        agent = self.agents[seat]
        if agent is None:
            raise ValueError(f"seat {seat} has no agent: its moves come from outside (GameLoop.play)")
        legal = game.legal_moves()
        view = game.view(seat) if self._needs_view[seat] else None
        t0 = time.perf_counter()
        try:
            if self.guard is None:  # the environments' hot path: _call's handling without its frame
                try:
                    answer = agent.act(view, legal, self.rngs[seat])
                except AgentError:
                    raise
                except Exception as exc:
                    self._failed(seat, "act", exc)
            else:
                answer = self._call(seat, "act", agent.act, view, legal, self.rngs[seat])
        finally:
            self.think[seat] += time.perf_counter() - t0
        return seat, answer, legal

    def commit(self, seat: int, answer: Any, legal: Sequence[Any] | None = None, tell: bool = True) -> Any:
        """Check the agent's ``answer`` for ``seat`` and play it; tell every agent. Returns what ``play`` returns.

        ``answer`` may be a legal move or its text. Anything the game's checked ``play``
        refuses (``None``, a number, an illegal move) raises :class:`IllegalMoveError` naming
        the agent, the seat and why; the game is left untouched. So does an answer that is
        none of ``legal`` when ``play`` fails on it with another exception; an exception
        ``play`` raises on a legal move (other than ``ValueError``) is the game's own and
        passes through. ``tell=False`` plays without telling the agents
        (:meth:`Match.step <mulle_env.engine.match.Match.step>`, whose caller decides who
        hears the move).
        """
        game = self.game
        if game.to_move != seat:
            raise IllegalMoveError(f"seat {seat} answered, but seat {game.to_move} is to move")
        move = answer
        if isinstance(answer, str) and legal is not None:
            # Text is the notation of one of the legal moves; the agents then hear the move itself.
            move = next((m for m in legal if str(m) == answer), answer)
        if move is None:
            self._illegal(seat, "it returned no move (None)")
        try:
            result = self._play(move)
        except ValueError as exc:  # the engine's checked play: an IllegalMoveError or InvalidMoveError
            self._illegal(seat, str(exc))
        except Exception as exc:
            if legal is None or _one_of(move, legal):
                raise  # the game failed on a legal move: its own error, no agent's
            # A game whose play is not ready for any object (a number where it compares moves)
            # must not turn an agent's bad answer into an error of the game.
            self._illegal(seat, f"it answered {answer!r}, which is none of the legal moves "
                                f"(the game's play raised {_describe(exc)})")
        return self._after(seat, move, result) if tell else result

    def play(self, move: Any) -> Any:
        """Play a move that arrives from outside (a person, a learner): checked by the game, then every agent told.

        Errors are the game's own (an illegal move raises the engine's error, not naming
        an agent: no agent chose it).
        """
        seat = self.game.to_move
        return self._after(seat, move, self._play(move))

    def notify(self, seat: int, move: Any) -> None:
        """Tell every agent that ``seat`` played ``move``, applied elsewhere (a batched stepper's learner move)."""
        self._after(seat, move, None)

    def step(self) -> Any:
        """One agent move: :meth:`choose`, then :meth:`commit`. Returns what the game's ``play`` returns."""
        seat, answer, legal = self.choose()
        return self.commit(seat, answer, legal)

    def run(self, until: Callable[[], bool] | None = None, on_move: Callable[[Any], None] | None = None) -> int:
        """Step while the game runs and an agent is to move (and ``until()`` is false); return the moves played.

        Stops at a seat without an agent (a person's or learner's turn). ``on_move`` gets
        what each ``play`` returned (a :class:`~mulle_env.engine.match.MoveEvent` for a Match).
        """
        n = 0
        game, agents, plain = self.game, self.agents, self._plain_over
        while not (game.over if plain else game.is_over()):
            seat = game.to_move
            if agents[seat] is None or (until is not None and until()):
                break
            result = self.commit(*self._choose(seat))
            n += 1
            if on_move is not None:
                on_move(result)
        return n

    # ----- internals ---------------------------------------------------------------------
    def _after(self, seat: int, move: Any, result: Any) -> Any:
        # The move every agent hears is the one the game played (a Match's event knows it; text was parsed).
        played = getattr(result, "move", None) if result is not None else move
        if played is None:
            last = getattr(self.game, "last_move", None)
            played = last[1] if isinstance(last, tuple) and len(last) == 2 else move
        self.count += 1
        if self._record:
            self.moves.append(str(played))
        event = (seat, played)
        if self.guard is None:  # the environments' hot path: _call's handling without its frame
            s = seat
            try:
                for s, observe in self._observers:
                    observe(event)
            except AgentError:
                raise
            except Exception as exc:
                self._failed(s, "observe", exc)
        else:
            for s, observe in self._observers:
                self._call(s, "observe", observe, event)
        return result

    def _call(self, seat: int, stage: str, fn: Callable[..., Any], *args: Any) -> Any:
        if self.guard is None:  # the environments' hot path: no context manager to enter
            try:
                return fn(*args)
            except AgentError:  # from a loop inside the agent: already names who failed
                raise
            except Exception as exc:
                self._failed(seat, stage, exc)
        with self.guard(seat, stage):
            try:
                return fn(*args)
            except AgentError:
                raise
            except Exception as exc:
                self._failed(seat, stage, exc)

    def _failed(self, seat: int, stage: str, exc: Exception) -> NoReturn:
        what = {"reset": "raised in reset()", "act": "raised", "observe": "raised in observe()"}[stage]
        raise AgentError(f"agent {self.name(seat)!r} (seat {seat}) {what}: {_describe(exc)}",
                         agent=self.name(seat), seat=seat, stage=stage) from exc

    def _illegal(self, seat: int, reason: str) -> NoReturn:
        name = self.name(seat)
        raise IllegalMoveError(f"agent {name!r} (seat {seat}) chose an illegal move: {reason}",
                               agent=name, seat=seat, reason=reason) from None

    def __repr__(self) -> str:
        names = [None if a is None else self.name(s) for s, a in enumerate(self.agents)]
        return f"<GameLoop seats {names}, {self.count} moves>"


def _one_of(move: Any, legal: Sequence[Any]) -> bool:
    try:
        return any(m is move or m == move for m in legal)
    except Exception:  # an answer whose == fails is no legal move
        return False


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
