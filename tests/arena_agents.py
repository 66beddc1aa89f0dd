"""Misbehaving agents for the arena tests, registered in each worker by ``worker_init``.

The arena builds agents from specs in its worker processes, where agents registered by
a test function do not exist; ``--worker-init arena_agents:register`` (or
``Plan(worker_init=...)``) runs :func:`register` there first.
"""

from __future__ import annotations

import os
import signal
import time

import agents
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent


class _Misbehaver(RandomAgent):
    """Plays randomly until its ``at``-th move of a game, then calls :meth:`misbehave`."""

    def __init__(self, at: int = 3) -> None:  # agents.make types parameters by their defaults
        self.at = at
        self.n = 0

    def reset(self) -> None:
        self.n = 0

    def act(self, view, legal_moves, rng):
        self.n += 1
        if self.n >= self.at:
            self.misbehave()
        return super().act(view, legal_moves, rng)

    def misbehave(self) -> None:
        raise NotImplementedError


class Crasher(_Misbehaver):
    """Plays randomly, then raises at its ``at``-th move."""

    def misbehave(self) -> None:
        raise ValueError("boom")


class Shouter(_Misbehaver):
    """Plays randomly, then raises an exception whose text is ``size`` characters long."""

    def __init__(self, at: int = 2, size: int = 5_000_000) -> None:
        super().__init__(at)
        self.size = size

    def misbehave(self) -> None:
        raise ValueError("x" * self.size)


class Hanger(_Misbehaver):
    """Plays randomly, then sleeps far beyond any time limit at its ``at``-th move."""

    def __init__(self, at: int = 2) -> None:
        super().__init__(at)

    def misbehave(self) -> None:
        time.sleep(60)


class Swallower(Hanger):
    """Hangs inside ``except Exception``: the time limit must still get through."""

    def act(self, view, legal_moves, rng):
        try:
            return super().act(view, legal_moves, rng)
        except Exception:  # noqa: BLE001 - the point of this agent
            return legal_moves[0]


class Dier(RandomAgent):
    """Kills its own worker process (SIGKILL) once: when the file ``marker`` does not exist yet."""

    def __init__(self, marker: str = "") -> None:
        self.marker = marker

    def act(self, view, legal_moves, rng):
        if self.marker:
            try:
                # Atomic, so two workers playing a Dier at once cannot both die.
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return super().act(view, legal_moves, rng)


class BlasProbe(RandomAgent):
    """Plays like ``random``, but raises at its first move if its process's BLAS runs more than one thread."""

    def act(self, view, legal_moves, rng):
        from threadpoolctl import threadpool_info

        threads = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        if any(n != 1 for n in threads):
            raise RuntimeError(f"this worker's BLAS runs {threads} threads")
        return super().act(view, legal_moves, rng)


class DealHanger(HeuristicAgent):
    """Plays like ``heuristic``, but hangs at its first move of deal ``seed`` when in ``seat``.

    The view carries no seed, so the deal is recognised by the hand dealt for it.
    """

    def __init__(self, seed: int = 0, seat: int = 0) -> None:
        super().__init__()
        self.seed = seed
        self.seat = seat
        self.first = True

    def reset(self) -> None:
        super().reset()
        self.first = True

    def act(self, view, legal_moves, rng):
        if self.first:
            self.first = False
            import mulle_env as me

            dealt = me.new_game(seed=self.seed, ruleset=view.ruleset).view(self.seat).hand
            if view.player == self.seat and tuple(view.hand) == tuple(dealt):
                time.sleep(60)
        return super().act(view, legal_moves, rng)


class Illegal(RandomAgent):
    """Answers with a move that is not in the legal list."""

    def act(self, view, legal_moves, rng):
        import mulle_env as me

        legal = set(legal_moves)
        return next(m for m in me.MOVES if m not in legal)


class _BrokenState:
    """A Mulle game state whose ``legal_moves`` raises once ``break_at`` moves are played."""

    def __init__(self, inner, break_at: int) -> None:
        self._inner = inner
        self._break_at = break_at
        self._played = 0

    def legal_moves(self):
        if self._played >= self._break_at:
            raise RuntimeError("engine bug")
        return self._inner.legal_moves()

    def play(self, move):
        self._inner.play(move)
        self._played += 1

    def __getattr__(self, name):
        return getattr(self._inner, name)


class BrokenGame:
    """A game "module" (``--game arena_agents:BrokenGame``): Mulle with an engine bug at move 5."""

    ENGINE_VERSION = "broken-1"
    BREAK_AT = 4

    @staticmethod
    def new_game(seed, ruleset=None):
        import mulle_env as me

        return _BrokenState(me.new_game(seed=seed, ruleset=ruleset), BrokenGame.BREAK_AT)


def _ruleset_class():
    import mulle_env as me

    return me.Ruleset


BrokenGame.Ruleset = _ruleset_class()


class Dawdler(RandomAgent):
    """Plays randomly but thinks ``seconds`` over its ``at``-th move of a game (once)."""

    def __init__(self, at: int = 2, seconds: float = 0.5) -> None:
        self.at, self.seconds, self.n = at, seconds, 0

    def reset(self) -> None:
        self.n = 0

    def act(self, view, legal_moves, rng):
        self.n += 1
        if self.n == self.at:
            time.sleep(self.seconds)
        return super().act(view, legal_moves, rng)


class Answerer(RandomAgent):
    """Chooses randomly but answers in the form ``kind`` names from its ``at``-th move of a game on.

    ``kind``: ``"move"`` (the move itself), ``"text"`` (its text), ``"none"`` (``None``),
    ``"number"`` (``7``, no move of any game here). It keeps every move it observes in
    :attr:`observed`, to check what the game loop tells agents.
    """

    def __init__(self, kind: str = "move", at: int = 1) -> None:
        self.kind, self.at, self.n = kind, at, 0
        self.observed: list = []

    def reset(self) -> None:
        self.n = 0
        self.observed = []

    def observe(self, event) -> None:
        self.observed.append(event)

    def act(self, view, legal_moves, rng):
        self.n += 1
        move = super().act(view, legal_moves, rng)
        if self.n < self.at:
            return move
        return {"move": move, "text": str(move), "none": None, "number": 7}[self.kind]


class Nester(RandomAgent):
    """Plays randomly, but first runs a game loop of its own in which a crasher fails at once."""

    def act(self, view, legal_moves, rng):
        import random

        import mulle_env as me

        inner = me.GameLoop(me.new_game(seed=1), [Crasher(at=1), RandomAgent()], [random.Random(0)] * 2)
        inner.run()
        return super().act(view, legal_moves, rng)


class _TakeAwayState:
    """Take-away: seats take 1 to 3 counters from a pile in turn; who takes the last one wins.

    A second game for the arena's protocol (:mod:`arena.game`). Its ``play`` checks a move
    by comparing numbers, so an answer that is no number raises ``TypeError``, not the
    ``ValueError`` the protocol asks for: the arena must still blame the agent.
    """

    def __init__(self, pile: int) -> None:
        self.pile, self.to_move, self.taken = pile, 0, [0, 0]
        self.last: int | None = None

    def legal_moves(self) -> list[int]:
        return list(range(1, min(3, self.pile) + 1))

    def view(self, player: int) -> dict:
        return {"pile": self.pile, "player": player}

    def play(self, move) -> None:
        if not 1 <= move <= min(3, self.pile):
            raise ValueError(f"take 1 to {min(3, self.pile)} counters, not {move!r}")
        self.pile -= move
        self.taken[self.to_move] += move
        self.last, self.to_move = self.to_move, 1 - self.to_move

    def is_over(self) -> bool:
        return self.pile == 0

    def result(self):
        import types

        winner = self.last
        scores = [1 if s == winner else 0 for s in (0, 1)]
        return types.SimpleNamespace(scores=scores, winner=winner, to_dict=lambda: {"scores": scores})


class TakeAway:
    """The take-away game "module" (``--game arena_agents:TakeAway``): a pile of 10 to 29 counters."""

    ENGINE_VERSION = "takeaway-1"

    @staticmethod
    def new_game(seed, ruleset=None):
        return _TakeAwayState(10 + seed % 20)


class NamedTakeAway(TakeAway):
    """Take-away under a short name (``GAME_NAME``), so agents must declare it: only ``random`` (any game) does."""

    GAME_NAME = "takeaway"
    ENGINE_VERSION = "takeaway-2"


class MulleTaker(RandomAgent):
    """``taker`` at Mulle: a random player of Mulle only (the name is another agent at take-away)."""

    games = ("mulle",)
    version = "mulle-taker-1"


class TakeawayTaker(agents.Agent):
    """``taker`` at take-away: the winning rule, leave the opponent a multiple of 4 (plays take-away only)."""

    games = ("takeaway",)
    version = "takeaway-taker-1"

    def act(self, view, legal_moves, rng):
        want = view["pile"] % 4
        return want if want in legal_moves else legal_moves[0]


class BaseCatcher(_Misbehaver):
    """Hangs at move ``at`` and catches ``BaseException`` around it, so an in-process time guard is swallowed."""

    def misbehave(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                time.sleep(60)
            except BaseException:  # noqa: BLE001 - the point of this agent
                pass


class AlarmBlocker(_Misbehaver):
    """Blocks SIGALRM at move ``at`` and spins: no signal-based time limit can reach it."""

    def misbehave(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pass


class Exiter(_Misbehaver):
    """Raises ``SystemExit(3)`` at move ``at``."""

    def misbehave(self) -> None:
        raise SystemExit(3)


class Interrupter(_Misbehaver):
    """Raises ``KeyboardInterrupt`` at move ``at``."""

    def misbehave(self) -> None:
        raise KeyboardInterrupt


class Quitter(_Misbehaver):
    """Ends its own process with ``os._exit(7)`` at move ``at`` (no cleanup, no exception)."""

    def misbehave(self) -> None:
        os._exit(7)


class Segfaulter(_Misbehaver):
    """Reads address 0 at move ``at``: its process dies of SIGSEGV."""

    def misbehave(self) -> None:
        import ctypes

        ctypes.string_at(0)


class Hog(_Misbehaver):
    """Asks for ``gb`` GiB at move ``at`` (keeping it): past an isolated agent's memory limit."""

    def __init__(self, at: int = 2, gb: int = 64) -> None:
        super().__init__(at)
        self.gb = gb
        self.kept: list = []

    def misbehave(self) -> None:
        self.kept.append(bytearray(self.gb * 2**30))


class Rambler(_Misbehaver):
    """Answers with a text of ``size`` characters at move ``at`` (a huge answer, not an exception)."""

    def __init__(self, at: int = 2, size: int = 20_000_000) -> None:
        super().__init__(at)
        self.size = size
        self.ramble = False

    def misbehave(self) -> None:
        self.ramble = True

    def act(self, view, legal_moves, rng):
        move = super().act(view, legal_moves, rng)
        return "x" * self.size if self.ramble else move


class Peeker(RandomAgent):
    """Walks the stack frames above its ``act`` for the game state and raises with the opponent's hand if it finds it.

    In the game's process it finds it (the game loop's frame holds the state); an isolated
    agent's process holds no state to find, so it plays on like ``random``.
    """

    games = ("*",)

    def act(self, view, legal_moves, rng):
        import sys

        frame = sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if hasattr(value, "view") and hasattr(value, "to_move") and hasattr(value, "legal_moves"):
                    try:
                        hand = value.view(1 - view.player).hand
                    except Exception:  # noqa: BLE001 - not a game state after all
                        continue
                    raise ValueError(f"saw the opponent's hand: {' '.join(map(str, hand))}")
            frame = frame.f_back
        return super().act(view, legal_moves, rng)


class Mutator(RandomAgent):
    """Walks the stack frames for the game state and plays a move on it itself, behind the loop's back."""

    games = ("*",)

    def act(self, view, legal_moves, rng):
        import sys

        frame = sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if hasattr(value, "play") and hasattr(value, "to_move") and hasattr(value, "legal_moves"):
                    try:
                        value.play(value.legal_moves()[0])
                    except Exception:  # noqa: BLE001 - not a game state after all
                        continue
                    break
            frame = frame.f_back
        return super().act(view, legal_moves, rng)


class Ponderer(RandomAgent):
    """Counts in a thread of its own from its first move on, and answers how far it counted since its last answer.

    An agent that thinks on the opponent's time: isolated, its process is stopped between its
    calls, so the count between two answers stays near nothing.
    """

    def __init__(self) -> None:
        self.ticks = 0
        self.seen = 0
        self.thread = None

    def _count(self) -> None:
        while True:
            time.sleep(0.001)
            self.ticks += 1

    def act(self, view, legal_moves, rng):
        import threading

        if self.thread is None:
            self.thread = threading.Thread(target=self._count, daemon=True)
            self.thread.start()
        n, self.seen = self.ticks - self.seen, self.ticks
        return f"pondered {n}"


def register_takers() -> None:
    """Register ``taker``, one name for two agents: Mulle's random player and take-away's winning rule."""
    agents.register("taker", MulleTaker, "random, at Mulle")
    agents.register("taker", TakeawayTaker, "take-away's winning rule")


def register() -> None:
    """Register the test agents under the names the tests use."""
    agents.register("crasher", Crasher, "raises at move `at`")
    agents.register("shouter", Shouter, "raises an error `size` characters long at move `at`")
    agents.register("hanger", Hanger, "hangs at move `at`")
    agents.register("swallower", Swallower, "hangs inside except Exception")
    agents.register("dier", Dier, "kills its worker process once")
    agents.register("illegal", Illegal, "plays an illegal move")
    agents.register("dawdler", Dawdler, "thinks `seconds` over move `at`")
    agents.register("blasprobe", BlasProbe, "random, but fails unless its BLAS runs one thread")
    agents.register("dealhanger", DealHanger, "heuristic that hangs on deal `seed` in `seat`")
    agents.register("answer", Answerer, "answers as move, text, none or number from move `at`")
    agents.register("nester", Nester, "runs a game loop of its own in which an agent fails")
    agents.register("basecatcher", BaseCatcher, "hangs at move `at`, catching BaseException")
    agents.register("alarmblocker", AlarmBlocker, "blocks SIGALRM and spins at move `at`")
    agents.register("exiter", Exiter, "raises SystemExit at move `at`")
    agents.register("interrupter", Interrupter, "raises KeyboardInterrupt at move `at`")
    agents.register("quitter", Quitter, "os._exit(7) at move `at`")
    agents.register("segfaulter", Segfaulter, "dies of SIGSEGV at move `at`")
    agents.register("hog", Hog, "asks for `gb` GiB at move `at`")
    agents.register("rambler", Rambler, "answers `size` characters at move `at`")
    agents.register("peeker", Peeker, "raises with the opponent's hand if it can see it")
    agents.register("mutator", Mutator, "plays a move on the game state behind the loop's back")
    agents.register("ponderer", Ponderer, "counts in a thread between its turns and answers the count")
