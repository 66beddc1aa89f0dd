"""The games a live table plays, each as one object: what differs between Mulle and Casino at a table.

A :class:`~live.table.Table` holds one :class:`LiveGame` (``table.game``) and asks it for everything
that is a game's own: the rules a table's ``sets`` option means, a new match (a game with its move
history, advanced by the engine's one :class:`~mulle_env.engine.loop.GameLoop`), the JSON views a
seat and a spectator receive, what each legal move would do (the page's previews), the words of a
deal, a set's end and the game's end, a stored record read back, and a replay's frames. Agents are
built for the game by name (``agents.make(spec, game=...)``, :attr:`LiveGame.name`).

Mulle's match is the engine's :class:`~mulle_env.engine.match.Match`. Casino's is
:class:`CasinoMatch`, the same shape over :mod:`mulle_env.casino` (its events say what a capture
took, a sweep, a round's end and the cards left to the last capturer), and its record
:class:`CasinoRecord` (``"game": "casino"`` in the JSON; a record without ``game`` is Mulle's).
A Casino table also reads drops (CASINO.md 8) through :mod:`mulle_env.casino.drops`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mulle_env import casino
from mulle_env.casino import rules as casino_rules
from mulle_env.casino.state import GameState as CasinoState
from mulle_env.engine.cards import CARD_NAMES, CARDS, Card
from mulle_env.engine.errors import MulleError
from mulle_env.engine.match import Match
from mulle_env.engine.moves import Move
from mulle_env.engine.record import GameRecord, InvalidRecordError
from mulle_env.engine.rng import seed_problem
from mulle_env.engine.ruleset import Ruleset

from .views import move_previews, seat_view, spectator_view

__all__ = ["CASINO", "GAMES", "MULLE", "CasinoEvent", "CasinoMatch", "CasinoRecord", "LiveGame", "live_game",
           "record_from_dict"]

#: Version of :class:`CasinoRecord`'s JSON form.
CASINO_RECORD_VERSION = 1


class LiveGame:
    """What a table asks of its game (Mulle's answers; :class:`_Casino` gives Casino's)."""

    #: The game's short name (agents, records, the protocol's ``game``).
    name = "mulle"
    #: The game's name for people.
    title = "Mulle"
    #: Whether the table reads drops (CASINO.md 8) for this game.
    drops = False

    def ruleset(self, sets: int | None) -> Any:
        """The rules of a table opened with ``sets`` (``None``: the defaults); Casino's ``sets`` are rounds."""
        return Ruleset(sets=sets) if sets else Ruleset()

    def match(self, seed: int, ruleset: Any, specs: Sequence[str]) -> Any:
        """A new game with its history (the engine's Match for Mulle)."""
        return Match(seed, ruleset, specs)

    def parse(self, text: str) -> Any:
        """A move's text as the game's move (syntax only; ``MulleError`` saying what is wrong)."""
        return Move.from_str(text)

    def seat_view(self, state: Any, seat: int) -> dict:
        """The JSON view of ``seat`` (its own hand, the public position)."""
        return seat_view(state, seat)

    def spectator_view(self, state: Any, show_hands: bool) -> dict:
        """The public position; both hands only when ``show_hands`` (agents' tables, replays)."""
        return spectator_view(state, show_hands)

    def previews(self, state: Any, legal: list) -> dict[str, dict]:
        """What each legal move would do (the page shows it before the person plays)."""
        return move_previews(state, legal)

    def hand(self, state: Any, seat: int) -> list[int]:
        """The faces in ``seat``'s hand."""
        return list(state.hands[seat])

    def deal_data(self, state: Any) -> dict:
        """The ``deal`` notification's data."""
        return {"set": state.set_no, "deal": state.deal_no, "deck_size": len(state.deck), "leader": state.to_move}

    def set_over_data(self, state: Any, event: Any) -> dict:
        """The ``set_over`` notification's data (a Mulle set; a Casino round)."""
        a, b = state.sheets[-1]
        return {"set": event.set_no, "sheets": [a, b], "scores": list(state.scores())}

    def over_data(self, match: Any) -> dict:
        """``game_over``'s facts of a finished match: scores, winner, sheets, totals."""
        result = match.result()
        return {"scores": list(result.scores), "winner": result.winner,
                "sheets": [[a, b] for a, b in match.state.sheets], "totals": list(result.totals)}

    def replay_match(self, record: Any) -> Any:
        """A fresh match of ``record``'s game (its seed, rules and seats), no move played."""
        return Match(record.seed, record.ruleset, record.specs)

    def __repr__(self) -> str:
        return f"live.games.{self.name.upper()}"


class _Casino(LiveGame):
    name = "casino"
    title = "Casino"
    drops = True

    def ruleset(self, sets: int | None) -> Any:
        return casino.Ruleset(rounds=sets) if sets else casino.Ruleset()

    def match(self, seed: int, ruleset: Any, specs: Sequence[str]) -> Any:
        return CasinoMatch(seed, ruleset, specs)

    def parse(self, text: str) -> Any:
        return casino.Move.from_str(text)

    def seat_view(self, state: Any, seat: int) -> dict:
        return casino_view(state, seat)

    def spectator_view(self, state: Any, show_hands: bool) -> dict:
        view = casino_view(state, 0)
        view["player"] = None
        view["hand"] = []
        view["hand_sizes"] = [len(state.hands[0]), len(state.hands[1])]
        view["hands"] = [[CARD_NAMES[c] for c in sorted(h)] for h in state.hands] if show_hands else None
        return view

    def previews(self, state: Any, legal: list) -> dict[str, dict]:
        plans = state.view(state.to_move).move_plans()
        out = {}
        for move in legal:
            plan = plans[move]
            out[str(move)] = {"loose": [CARD_NAMES[f] for f in plan.loose],
                              "builds": [b[0] for b in plan.builds] + ([plan.base[0]] if plan.base else []),
                              "value": plan.value, "mulles": 0, "tabbe": False}
        return out

    def deal_data(self, state: Any) -> dict:
        return {"set": state.round, "deal": 0, "deck_size": len(state.stock), "leader": state.to_move}

    def set_over_data(self, state: Any, event: Any) -> dict:
        a, b = state.sheets[-1]
        return {"set": event.set_no, "sheets": [a, b], "scores": list(state.scores())}

    def over_data(self, match: Any) -> dict:
        result = match.result()
        return {"scores": list(result.scores), "winner": result.winner,
                "sheets": [[a, b] for a, b in result.sheets], "totals": list(result.scores)}

    def replay_match(self, record: Any) -> Any:
        return CasinoMatch(record.seed, record.ruleset, record.specs)


def casino_view(state: CasinoState, seat: int) -> dict:
    """The JSON view of ``seat`` at a Casino table: :meth:`PlayerView.to_dict` with the table split into loose
    cards and builds (each with its value, owner and cards), as the page draws them."""
    v = state.view(seat)
    out = v.to_dict()
    del out["table"]
    out.update({
        "game": "casino", "loose": [CARD_NAMES[c] for c in v.loose],
        "builds": [{"value": b.value, "owner": b.owner, "cards": [CARD_NAMES[c] for c in b.cards],
                    "single": b.single} for b in v.builds],
        "captured_sizes": [len(p) for p in v.captured], "sheets": [[dict(a), dict(b)] for a, b in state.sheets],
        "last_move": [v.last_move[0], str(v.last_move[1])] if v.last_move is not None else None,
        "ruleset": v.ruleset.to_dict(),
    })
    return out


@dataclass(frozen=True, slots=True)
class CasinoEvent:
    """One Casino move as both players saw it (the shape of Mulle's :class:`~mulle_env.engine.match.MoveEvent`).

    ``set_no`` is the round; ``deal_over`` a new deal (or the round's end); ``set_over`` the round's end,
    with ``swept`` the cards left on the table that went to ``swept_to``, the last to capture (CASINO.md 5.2).
    """

    number: int
    player: int
    move: casino.Move
    taken: tuple[Card, ...] = ()
    sweep: bool = False
    set_no: int = 1
    deal_no: int = 0
    deal_over: bool = False
    set_over: bool = False
    game_over: bool = False
    swept: tuple[Card, ...] = ()
    swept_to: int | None = None
    mulles: int = field(default=0)
    tabbe: bool = field(default=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the keys of Mulle's (no mulle or tabbe in Casino), plus ``table_swept`` (the capture
        scored a sweep) and ``round``."""
        return {"number": self.number, "player": self.player, "move": str(self.move),
                "taken": [CARD_NAMES[f] for f in self.taken], "mulles": 0, "tabbe": False, "table_swept": self.sweep,
                "set": self.set_no, "round": self.set_no, "deal": self.deal_no, "deal_over": self.deal_over,
                "set_over": self.set_over, "game_over": self.game_over,
                "swept": [CARD_NAMES[f] for f in self.swept], "swept_to": self.swept_to}

    def describe(self, names: Sequence[str] | None = None) -> str:
        """One line for people, e.g. ``P0 plays capture HJ 5, taking KL 5 (sweep!)``."""
        who = names[self.player] if names is not None else f"P{self.player}"
        if self.move.kind != "capture":
            return f"{who} plays {self.move}"
        taken = ", ".join(CARD_NAMES[f] for f in self.taken)
        text = f"{who} plays capture {CARD_NAMES[self.move.card]}, taking {taken}"
        return text + (" (sweep!)" if self.sweep else "")


class CasinoMatch:
    """A Casino game with its history: :class:`~mulle_env.engine.match.Match`'s shape over :mod:`mulle_env.casino`."""

    def __init__(self, seed: int, ruleset: Any = None, specs: Sequence[str | None] | None = None) -> None:
        self.state: CasinoState = casino.new_game(seed, ruleset)
        self.seed = seed
        self.ruleset: casino.Ruleset = self.state.ruleset
        self.specs: tuple[str | None, str | None] | None = (specs[0], specs[1]) if specs is not None else None
        self.history: list[CasinoEvent] = []

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self.state.to_move

    @property
    def over(self) -> bool:
        """True once the last round is scored."""
        return self.state.over

    def is_over(self) -> bool:
        """True once the last round is scored (the game loop's question)."""
        return self.state.over

    def legal_moves(self) -> list[casino.Move]:
        """The legal moves of the seat to move."""
        return self.state.legal_moves()

    def view(self, player: int) -> casino.PlayerView:
        """What ``player`` may know."""
        return self.state.view(player)

    def result(self) -> casino.GameResult:
        """How the finished game ended."""
        return self.state.result()

    @property
    def moves(self) -> list[str]:
        """The move texts so far."""
        return [str(e.move) for e in self.history]

    def play(self, move: casino.Move | str) -> CasinoEvent:
        """Check and play ``move`` for the seat to move; its event (an illegal move raises, the game unchanged)."""
        st = self.state
        m = st.check(move)
        p = st.to_move
        plan = st.view(p).move_plans()[m]
        rnd, stock, sweeps, rounds = st.round, len(st.stock), st.sweeps[p], len(st.sheets)
        table = [*st.loose, *(c for b in st.builds for c in b.cards)]
        last_capturer = st.last_capturer
        st.play(m)
        taken = tuple(CARDS[f] for f in sorted(casino_rules.taken_cards(plan))) if plan.kind == "capture" else ()
        round_over = len(st.sheets) > rounds
        swept: tuple[Card, ...] = ()
        swept_to = None
        if round_over:
            left = [f for f in table if f not in set(casino_rules.taken_cards(plan))] if plan.kind == "capture" \
                else [*table, plan.card]
            swept_to = p if plan.kind == "capture" else last_capturer
            swept = tuple(CARDS[f] for f in sorted(left)) if left and swept_to is not None else ()
            swept_to = swept_to if swept else None
        event = CasinoEvent(len(self.history) + 1, p, m, taken, st.sweeps[p] > sweeps and not round_over, rnd, 0,
                            round_over or len(st.stock) != stock, round_over, st.over, swept, swept_to)
        self.history.append(event)
        return event

    def record(self) -> CasinoRecord:
        """The game so far as a :class:`CasinoRecord` (with its result once over)."""
        return CasinoRecord(self.seed, tuple(self.moves), self.ruleset, self.specs,
                            self.state.result().to_dict() if self.state.over else None)


@dataclass(frozen=True)
class CasinoRecord:
    """A Casino game as JSON: :class:`~mulle_env.engine.record.GameRecord`'s fields and ``"game": "casino"``."""

    seed: int
    moves: tuple[str, ...] = ()
    ruleset: casino.Ruleset = field(default_factory=casino.Ruleset)
    specs: tuple[str | None, str | None] | None = None
    result: dict[str, Any] | None = None
    game: str = "casino"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"game": "casino", "record_version": CASINO_RECORD_VERSION, "seed": self.seed,
                "ruleset": self.ruleset.to_dict(), "specs": list(self.specs) if self.specs is not None else None,
                "moves": list(self.moves), "result": self.result}

    @classmethod
    def from_dict(cls, data: Any) -> CasinoRecord:
        """Read the JSON form; :class:`InvalidRecordError` naming what is wrong."""
        if not isinstance(data, dict):
            raise InvalidRecordError(f"a Casino game record is a JSON object, not {type(data).__name__}")
        if data.get("record_version", CASINO_RECORD_VERSION) != CASINO_RECORD_VERSION:
            raise InvalidRecordError(f"record_version {data.get('record_version')!r} is not supported")
        if "seed" not in data or (why := seed_problem(data["seed"])) is not None:
            raise InvalidRecordError("the Casino record's seed: " + (why if "seed" in data else "missing"))
        moves = data.get("move_list", data.get("moves"))
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise InvalidRecordError(f"moves must be a list of move texts such as 'capture HJ 5', not {moves!r:.80}")
        for i, text in enumerate(moves, 1):
            try:
                casino.Move.from_str(text)
            except MulleError as exc:
                raise InvalidRecordError(f"move {i}: {exc}") from None
        specs = data.get("specs")
        if specs is not None and (not isinstance(specs, list) or len(specs) != 2
                                  or not all(s is None or isinstance(s, str) for s in specs)):
            raise InvalidRecordError(f"specs must be a list of two seat names (or null), not {specs!r:.80}")
        result = data.get("result")
        if result is not None and not isinstance(result, dict):
            raise InvalidRecordError(f"result must be a JSON object or null, not {result!r:.80}")
        try:
            ruleset = casino.Ruleset.from_dict(data.get("ruleset"))
        except (MulleError, TypeError, ValueError) as exc:
            raise InvalidRecordError(f"ruleset: {exc}") from None
        return cls(int(data["seed"]), tuple(moves), ruleset, tuple(specs) if specs is not None else None, result)

    def replay(self) -> CasinoMatch:
        """The match this record describes, every move checked (and the result, when recorded)."""
        m = CasinoMatch(self.seed, self.ruleset, self.specs)
        for i, text in enumerate(self.moves, 1):
            try:
                m.play(text)
            except MulleError as exc:
                raise type(exc)(f"move {i} of the record ({text!r}): {exc}") from None
        if self.result is not None and (not m.over or m.result().to_dict() != self.result):
            raise InvalidRecordError("the recorded result differs from the replayed game's: the record was changed "
                                     "or made by another engine version")
        return m


MULLE = LiveGame()
CASINO = _Casino()
#: The games a table may play, by name.
GAMES: dict[str, LiveGame] = {"mulle": MULLE, "casino": CASINO}


def live_game(name: str | None) -> LiveGame:
    """The game named ``name`` (``None``: Mulle); ``ValueError`` naming the games otherwise."""
    game = GAMES.get(name or "mulle")
    if game is None:
        raise ValueError(f"unknown game {name!r}; games: {', '.join(GAMES)}")
    return game


def game_of_record(data: Any) -> LiveGame:
    """The game a record's JSON is of (``"game"``, absent for Mulle's)."""
    name = data.get("game") if isinstance(data, dict) else None
    try:
        return live_game(name)
    except ValueError as exc:
        raise InvalidRecordError(str(exc)) from None


def record_from_dict(data: Any) -> GameRecord | CasinoRecord:
    """A stored or uploaded record of either game (by its ``"game"``); :class:`InvalidRecordError` naming why not."""
    if game_of_record(data) is CASINO:
        return CasinoRecord.from_dict(data)
    return GameRecord.from_dict(data)
