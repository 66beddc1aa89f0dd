"""The arena's game protocol: what a game module must offer to be played by ``mulle-arena``.

The arena plays any game, not only Mulle: ``--game MODULE`` names a module (or
``module:object``) that satisfies :class:`Game`, whose states satisfy :class:`GameState`
and whose results satisfy :class:`GameResult`. :func:`check_game` checks a game when the
arena loads it, so a module that is not a game is refused with a message naming what it
lacks, before any game is scheduled.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["Game", "GameProtocolError", "GameResult", "GameState", "check_game", "make_ruleset", "result_check"]


@runtime_checkable
class GameResult(Protocol):
    """How a finished game ended: the two scores by seat and the winning seat (``None``: a draw)."""

    scores: Sequence[float]
    winner: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form; its ``"sheets"`` entry, if any, is recorded in the result line."""


@runtime_checkable
class GameState(Protocol):
    """A game in progress between seats 0 and 1, as the arena drives it."""

    to_move: int

    def legal_moves(self) -> Sequence[Any]:
        """The legal moves of the seat to move (moves print as text with ``str``)."""

    def play(self, move: Any) -> Any:
        """Play ``move`` for the seat to move, checking it (an illegal move raises ``ValueError``)."""

    def view(self, player: int) -> Any:
        """What seat ``player`` may know: the argument agents' ``act`` receives."""

    def is_over(self) -> bool:
        """True once the game has ended."""

    def result(self) -> GameResult:
        """How the finished game ended."""


@runtime_checkable
class Game(Protocol):
    """A game module: ``new_game(seed=..., ruleset=...)`` makes a :class:`GameState`.

    Optional: ``Ruleset`` with ``from_dict``/``to_dict`` (and ``from_strings`` for
    ``--rule``); ``ENGINE_VERSION`` and ``BACKEND`` (which of its engines runs, e.g.
    ``"c"``), recorded in every result line; ``fallback_notice()``, a warning
    ``mulle-arena`` prints when it is not ``None`` (the game runs on a slow fallback); and
    ``check_result(result, ruleset)``, the game's own check of a finished game's result
    (a dict with ``scores``, ``winner`` and ``sheets``), raising ``ValueError`` for one
    no game can end with (:func:`result_check`; Mulle's is :func:`mulle_env.check_result`).
    """

    def new_game(self, seed: int, ruleset: Any = None) -> GameState:
        """A new game from a deal seed and the game's ruleset object."""


def make_ruleset(game: Any, rules: dict[str, Any] | None) -> Any:
    """The game's ruleset object for the dict ``rules`` (the dict itself if the game has no ``Ruleset``).

    Part of the game protocol (a game's optional ``Ruleset.from_dict``), so it lives here;
    ``arena.worker.make_ruleset`` is the same function under its old home.
    """
    cls = getattr(game, "Ruleset", None)
    return cls.from_dict(rules or {}) if cls is not None and hasattr(cls, "from_dict") else rules


class GameProtocolError(TypeError):
    """A game module that does not satisfy the arena's game protocol."""


_STATE_MEMBERS = ("to_move", "legal_moves", "play", "view", "is_over", "result")


def check_game(game: Any, name: str = "the game") -> None:
    """Raise :class:`GameProtocolError` unless ``game`` satisfies :class:`Game` and makes :class:`GameState`\\ s.

    A new game (seed 0, the game's default ruleset) is made to check its state.
    """
    if not isinstance(game, Game):
        raise GameProtocolError(f"{name} is not a game for the arena: it has no new_game(seed, ruleset) function")
    cls = getattr(game, "Ruleset", None)
    ruleset = cls.from_dict({}) if cls is not None and hasattr(cls, "from_dict") else None
    state = game.new_game(seed=0, ruleset=ruleset)
    if not isinstance(state, GameState):
        missing = [m for m in _STATE_MEMBERS if not hasattr(state, m)]
        raise GameProtocolError(
            f"{name}: new_game() returns a {type(state).__name__}, which lacks {', '.join(missing)}; "
            f"a game state needs {', '.join(_STATE_MEMBERS)} (see arena.game.GameState)"
        )


def result_check(game: Any, name: str) -> Callable[[dict[str, Any]], str | None] | None:
    """What is wrong with the result of a finished results line of ``game`` (named ``name``), by the game's check.

    ``None`` when the game has no ``check_result``. The function returned says why a
    line's ``scores``, ``winner`` and ``sheets`` cannot be (disagree with each other, or
    with what a game under the line's ruleset can score), or ``None``; lines that are not
    finished games, or are of another game, it leaves to the other checks.
    :func:`arena.results.load` takes it as its ``check``.
    """
    check = getattr(game, "check_result", None)
    if check is None:
        return None

    rulesets: dict[str, Any] = {}  # a results file holds one or a few rulesets: build each once

    def ruleset_of(line: dict[str, Any]) -> Any:
        key = repr(sorted((line.get("ruleset") or {}).items()))
        if key not in rulesets:
            rulesets[key] = make_ruleset(game, line.get("ruleset"))
        return rulesets[key]

    def problem(line: dict[str, Any]) -> str | None:
        if line.get("status") != "ok" or line.get("game", "mulle_env") != name:
            return None
        try:
            check({k: line.get(k) for k in ("scores", "winner", "sheets")}, ruleset_of(line))
        except ValueError as exc:
            return f"its result is not one the game can end with: {exc}"
        return None

    return problem
