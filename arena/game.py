"""The arena's game protocol: what a game module must offer to be played by ``mulle-arena``.

The arena plays any game, not only Mulle: ``--game MODULE`` names a module (or
``module:object``) that satisfies :class:`Game`, whose states satisfy :class:`GameState`
and whose results satisfy :class:`GameResult`. :func:`check_game` checks a game when the
arena loads it, so a module that is not a game is refused with a message naming what it
lacks, before any game is scheduled.

Games have short names (``mulle``, ``casino``): :data:`GAMES` maps the project's own to
their modules, so ``--game casino`` and ``--game mulle_env.casino`` are one game with one
set of game ids. A game module says its short name with ``GAME_NAME``; agents declare the
short names of the games they play (:attr:`agents.Agent.games`), and
:func:`seating_refusal` refuses a tournament that seats an agent at a game it does not play.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

__all__ = ["GAMES", "AgentGameError", "Game", "GameProtocolError", "GameResult", "GameState", "UnknownGameError",
           "check_game", "game_name", "known_games", "make_ruleset", "resolve_game", "result_check",
           "seating_refusal"]

#: The project's games by short name, and the module of each: ``--game casino`` is
#: ``--game mulle_env.casino``. The one place the arena names a game: a game's module says
#: its own short name (``GAME_NAME``), and this table also names the module of one that
#: predates the attribute (Mulle's ``mulle_env``).
GAMES: dict[str, str] = {"mulle": "mulle_env", "casino": "mulle_env.casino"}


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

    Optional: ``GAME_NAME``, the game's short name (``"casino"``), which agents name in
    their :attr:`~agents.Agent.games` (without it, and outside :data:`GAMES`, a game has no
    short name and every agent may be seated at it); ``Ruleset`` with ``from_dict``/
    ``to_dict`` (and ``from_strings`` for ``--rule``); ``ENGINE_VERSION`` and ``BACKEND``
    (which of its engines runs, e.g. ``"c"``), recorded in every result line;
    ``fallback_notice()``, a warning ``mulle-arena`` prints when it is not ``None`` (the
    game runs on a slow fallback); and ``check_result(result, ruleset)``, the game's own
    check of a finished game's result (a dict with ``scores``, ``winner`` and ``sheets``),
    raising ``ValueError`` for one no game can end with (:func:`result_check`; Mulle's is
    :func:`mulle_env.check_result`).
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


class UnknownGameError(ValueError):
    """A ``--game`` that is neither a short name of :data:`GAMES` nor a module that can be found."""


class AgentGameError(ValueError):
    """A tournament that seats an agent at a game it does not play (:attr:`agents.Agent.games`)."""


def known_games() -> str:
    """The short names of :data:`GAMES` with their modules, for messages: ``casino (mulle_env.casino), mulle (...)``."""
    return ", ".join(f"{name} ({path})" for name, path in sorted(GAMES.items()))


def resolve_game(name: str) -> str:
    """The import path ``name`` stands for: a short name's module (``casino``: ``mulle_env.casino``), else ``name``.

    Tournaments record the path, so a short name and its module give the same game ids.
    """
    return GAMES.get(name, name)


def unknown_game(name: str, exc: ModuleNotFoundError) -> UnknownGameError | None:
    """The :class:`UnknownGameError` for ``--game name`` when ``exc`` says its own module is missing, else ``None``.

    ``None`` when the missing module is another one (the game imports something that is
    not installed): that is the game's problem, said as the import error it is.
    """
    path = resolve_game(name)
    module = path.partition(":")[0]
    if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
        return None
    close = difflib.get_close_matches(name, list(GAMES), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    what = f"no game is named {name!r}{hint}" if path == name else f"the game {name!r} is not installed ({exc})"
    return UnknownGameError(f"--game {name!r}: {what}; the games by short name: {known_games()}; or give the import "
                            "path of a game module (package.module, or package.module:object)")


def game_name(game: Any, path: str) -> str | None:
    """The short name of the game ``game`` loaded from ``path``: its ``GAME_NAME``, else its name in :data:`GAMES`.

    ``None`` for a game with neither (a game of one's own without ``GAME_NAME``): no agent
    can declare it, so :func:`seating_refusal` refuses nobody at it.
    """
    name = getattr(game, "GAME_NAME", None)
    if isinstance(name, str) and name:
        return name
    path = resolve_game(path)
    return next((short for short, module in GAMES.items() if module == path), None)


def seating_refusal(specs: Sequence[str], game: Any, path: str) -> str | None:
    """Why ``specs`` cannot play a tournament of ``game`` (loaded from ``path``), or ``None`` if every one plays it.

    The registry answers (:func:`agents.plays`: whether the spec's name has an agent for
    the game), without building anything; a spec that is no agent at all is left to the
    checks of specs. The message names the agents that do play the game. A game without a
    short name (:func:`game_name`) refuses nobody.
    """
    import agents

    name = game_name(game, path)
    if name is None:
        return None
    refused = []
    for spec in specs:
        try:
            if not agents.plays(spec, name):
                refused.append(spec)
        except ValueError:
            continue  # no agent: the spec checks say so
    if not refused:
        return None
    players = ", ".join(agents.available(game=name)) or "none yet"
    which = ", ".join(repr(s) for s in refused)
    return (f"{'agents' if len(refused) > 1 else 'agent'} {which} {'do' if len(refused) > 1 else 'does'} not play "
            f"{name} (an agent declares the games it plays); the agents that play {name}: {players}")


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
