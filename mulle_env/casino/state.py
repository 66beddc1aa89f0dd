"""The Casino game state: one mutable type with a canonical JSON form and a stable hash.

A game is a sequence of rounds (CASINO.md 1.2, 5): each round deals a freshly shuffled deck,
4 cards to each player and 4 to the table, then 4 to each player whenever both hands are
empty; after the sixth deal the table goes to the last capturer and the round is scored.
The stock is dealt from its front: 4 cards to the player who plays first (the dealer's
opponent), 4 to the dealer, and in a round's first deal 4 to the table.

The state hands out fresh values: no caller changes a position except through moves and
the checked readers ``from_dict``, ``from_json`` and ``from_view``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Self, TypeVar

from mulle_env.engine.canonical import CanonicalForm
from mulle_env.engine.cards import CARD_NAMES, CARDS, Card, parse_card
from mulle_env.engine.errors import (
    GameNotOverError,
    GameOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidPositionError,
    MulleError,
)
from mulle_env.engine.rng import derive_seed, seed_problem, shuffled

from . import rules
from .cards import ACE, BIG_CASINO, DECK, LITTLE_CASINO, POINTS, SPADE
from .moves import CAPTURE, MOVES, NUM_MOVE_IDS, Move
from .ruleset import Ruleset

__all__ = [
    "CARDS_TO_WIN", "ENGINE_VERSION", "HAND_DEAL", "TABLE_DEAL", "Build", "GameResult", "GameState", "GameStateBase",
    "ITEM_POINTS", "MAX_SWEEPS", "PlayerView", "ROUND_POINTS", "SHEET_KEYS", "SPADES_TO_WIN", "new_game", "replay",
    "replay_game", "round_sheets", "start_game",
]

#: Version of Casino's rules and canonical form; results files record it.
ENGINE_VERSION = "1.0"

#: A round's score sheet, item by item (CASINO.md 5.3), then its total.
SHEET_KEYS = ("cards", "spades", "big_casino", "little_casino", "aces", "sweeps", "total")

#: The most points each item of a round's sheet hands out in all, sweeps aside (CASINO.md 5.3): the cards
#: and spades points to the winner of each race, the two casinos and the four aces to whoever captured them.
ITEM_POINTS: Mapping[str, int] = MappingProxyType(
    {"cards": 3, "spades": 1, "big_casino": 2, "little_casino": 1, "aces": 4})
#: Cards a player needs for the cards point (more than 26 of 52), and spades for the spades point (more than 6).
CARDS_TO_WIN = 27
SPADES_TO_WIN = 7
#: Points a round hands out besides sweeps when every card is captured: 3 + 1 + 2 + 1 + 4.
ROUND_POINTS = sum(ITEM_POINTS.values())
#: Most sweeps one seat makes in a round: it plays 24 cards (6 deals of 4).
MAX_SWEEPS = 24

#: Cards dealt to each player at a time, and to the table at a round's start (CASINO.md 1.2).
HAND_DEAL = 4
TABLE_DEAL = 4

#: Why ``legal_ids`` refuses under ``gather_all=False`` (both backends say it).
_NO_IDS = ("under gather_all=False moves name what they take and have no ids; "
           "use legal_moves() (the environments index the legal moves instead)")

#: Stream number that separates Casino's deals from Mulle's for the same seed.
_DEAL_STREAM = 0xCA5140

# Seeds for determinizations made without one (GameState.from_view); not for real games.
_FRESH_SEEDS = random.SystemRandom()

Sheet = dict[str, int]
_CARD = CARDS.__getitem__
_S = TypeVar("_S", bound="GameStateBase")


@dataclass(frozen=True, slots=True)
class Build:
    """A build on the table: its value, its owner (a seat) and its cards (sorted)."""

    value: int
    owner: int
    cards: tuple[Card, ...]

    @property
    def single(self) -> bool:
        """Its cards sum to its value (CASINO.md 3): only a single build can be increased."""
        return rules.build_is_single(self.stored)

    @property
    def stored(self) -> rules.StoredBuild:
        """The build as the rules take it: ``(value, owner, faces)`` (:data:`~mulle_env.casino.rules.StoredBuild`)."""
        return (self.value, self.owner, tuple(int(c) for c in self.cards))

    def __str__(self) -> str:
        return f"[{' '.join(map(str, self.cards))}]={self.value} (seat {self.owner})"

    def to_dict(self) -> dict[str, Any]:
        """The form of the table entry in the canonical JSON."""
        return {"build": [CARD_NAMES[c] for c in self.cards], "value": self.value, "owner": self.owner}


class GameResult(NamedTuple):
    """How a finished game ended: the game totals by seat, the winner (``None``: a draw), and every round's sheets."""

    scores: tuple[int, int]
    winner: int | None
    sheets: tuple[tuple[Sheet, Sheet], ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (the arena records ``sheets`` with each game)."""
        return {"scores": list(self.scores), "winner": self.winner,
                "sheets": [[dict(a), dict(b)] for a, b in self.sheets]}


class PlayerView(NamedTuple):
    """What seat ``player`` may know: its own hand and everything played in the open.

    Captured piles are public: every capture is made face up, and a player who remembers
    knows them (as in Mulle). The opponent's hand and the stock are hidden; :meth:`unseen`
    lists the cards they hold between them.
    """

    player: int
    to_move: int
    over: bool
    hand: tuple[Card, ...]
    opponent_hand_size: int
    loose: tuple[Card, ...]
    builds: tuple[Build, ...]
    captured: tuple[tuple[Card, ...], tuple[Card, ...]]
    sweeps: tuple[int, int]
    last_capturer: int | None
    stock_size: int
    round: int
    dealer: int
    scores: tuple[int, int]
    ruleset: Ruleset
    last_move: tuple[int, Move] | None

    def unseen(self) -> list[Card]:
        """The cards this seat cannot see: the opponent's hand and the stock, in the canonical order."""
        seen = {*self.hand, *self.loose, *self.captured[0], *self.captured[1]}
        for b in self.builds:
            seen.update(b.cards)
        return [CARDS[f] for f in DECK if f not in seen]

    def legal_moves(self) -> list[Move]:
        """The legal moves of this seat (empty unless it is to move): its own hand and the table decide them."""
        return list(self.move_plans())

    def move_plans(self) -> Mapping[Move, rules.Plan]:
        """Every legal move of this seat with what it does (:class:`~mulle_env.casino.rules.Plan`: what it takes and
        makes), in the canonical order; empty unless this seat is to move. Agents ask here, never re-derive a rule."""
        if self.over or self.to_move != self.player:
            return MappingProxyType({})
        return MappingProxyType(rules.plans(
            self.ruleset, list(self.hand), list(self.loose), [b.stored for b in self.builds], self.player))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (hidden cards are not in it)."""
        return {
            "player": self.player, "to_move": self.to_move, "over": self.over,
            "hand": [CARD_NAMES[c] for c in self.hand], "opponent_hand_size": self.opponent_hand_size,
            "table": [CARD_NAMES[c] for c in self.loose] + [b.to_dict() for b in self.builds],
            "captured": [[CARD_NAMES[c] for c in p] for p in self.captured], "sweeps": list(self.sweeps),
            "last_capturer": self.last_capturer, "stock_size": self.stock_size, "round": self.round,
            "dealer": self.dealer, "scores": list(self.scores), "ruleset": self.ruleset.changes(),
        }


class GameStateBase(CanonicalForm):
    """What a Casino state is, written once for both backends: checked play, the end, views, the canonical form.

    A backend supplies the position (the read-only attributes below, fresh values on every read)
    and a few primitives: ``_plan_table`` (the legal moves with their plans), ``_apply`` (play a
    plan), ``_load`` (a checked position), ``_start_game`` (round 1 dealt from the seed),
    ``_stored_builds``, ``_set_last_move`` and ``copy``. The Python reference is :class:`GameState`
    here; the compiled core's is :class:`mulle_env.casino.cstate.GameState`. Both give the same
    answers and refuse the same input with the same messages.
    """

    __slots__ = ()

    if TYPE_CHECKING:
        @property
        def ruleset(self) -> Ruleset: ...
        @property
        def seed(self) -> int | None: ...
        @property
        def to_move(self) -> int: ...
        @property
        def over(self) -> bool: ...
        @property
        def round(self) -> int: ...
        @property
        def dealer(self) -> int: ...
        @property
        def hands(self) -> list[list[int]]: ...
        @property
        def loose(self) -> list[int]: ...
        @property
        def captured(self) -> list[list[int]]: ...
        @property
        def sweeps(self) -> list[int]: ...
        @property
        def last_capturer(self) -> int | None: ...
        @property
        def stock(self) -> list[int]: ...
        @property
        def sheets(self) -> list[tuple[Sheet, Sheet]]: ...
        @property
        def last_move(self) -> tuple[int, Move] | None: ...
        def scores(self) -> tuple[int, int]: ...
        def copy(self) -> Self: ...
        def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None: ...

    # ----- the primitives each backend supplies --------------------------------------------
    def _plan_table(self) -> dict[Move, rules.Plan]:
        raise NotImplementedError

    def _apply(self, move: Move, plan: rules.Plan) -> None:
        raise NotImplementedError

    def _stored_builds(self) -> list[rules.StoredBuild]:
        raise NotImplementedError

    def _load(self, hands: list[list[int]], loose: list[int], builds: list[rules.StoredBuild],
              captured: list[list[int]], sweeps: list[int], last_capturer: int | None, stock: list[int],
              round_: int, scores: list[int], sheets: list[tuple[Sheet, Sheet]], to_move: int) -> None:
        raise NotImplementedError

    def _start_game(self) -> None:
        raise NotImplementedError

    def _set_last_move(self, last_move: tuple[int, Move] | None) -> None:
        raise NotImplementedError

    # ----- reading -------------------------------------------------------------------------
    @property
    def builds(self) -> tuple[Build, ...]:
        """The builds on the table, by value then cards."""
        return tuple(Build(v, o, tuple(map(_CARD, cs))) for v, o, cs in self._stored_builds())

    def is_over(self) -> bool:
        """True once the game has ended."""
        return self.over

    # ----- moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every legal move of the seat to move, in the canonical order (empty once the game is over)."""
        return list(self._plan_table())

    def move_plans(self) -> Mapping[Move, rules.Plan]:
        """Every legal move with what it does (:class:`~mulle_env.casino.rules.Plan`), in the canonical order.

        The state's own table, read-only and computed once per position: the same one
        :meth:`legal_moves` lists and :meth:`play` applies, so a searcher that reads it and then
        plays costs one move generation, not two.
        """
        return MappingProxyType(self._plan_table())

    def legal_ids(self) -> tuple[int, ...]:
        """The ids of the legal moves, ascending (the environments' actions); only under ``gather_all=True``."""
        if not self.ruleset.gather_all:
            raise ValueError(_NO_IDS)
        return tuple(m.id for m in self._plan_table())  # type: ignore[misc]  # every such move has an id

    def is_legal(self, move: Move | str) -> bool:
        """Whether ``move`` (a Move or its text) is legal now; malformed text is not."""
        try:
            self.check(move)
        except MulleError:
            return False
        return True

    def check(self, move: Move | str) -> Move:
        """``move`` parsed and checked legal, as the engine's own value; raises saying why it is not.

        Malformed text raises :class:`~mulle_env.engine.errors.InvalidMoveError`; a move after the
        end :class:`~mulle_env.engine.errors.GameOverError`; an illegal one
        :class:`~mulle_env.engine.errors.IllegalMoveError`, naming the reason and the legal moves.
        """
        if self.over:
            raise GameOverError(f"the game is over (scores {self.scores()}); no move {str(move)!r:.80} can be played")
        m = Move.from_str(move)
        plans = self._plan_table()
        if m in plans:
            return next(k for k in plans if k == m) if m.id is None else m
        raise self._illegal(m, plans)

    def _illegal(self, m: Move, plans: Mapping[Move, rules.Plan]) -> IllegalMoveError:
        p = self.to_move
        why = rules.refusal(self.ruleset, m, self.hands[p], self.loose, self._stored_builds(), p,
                            lambda: list(plans))
        legal = ", ".join(map(str, plans))
        return IllegalMoveError(f"illegal move {str(m)!r} for seat {p}: {why}; legal: {legal}", reason=why)

    def play(self, move: Move | str) -> Self:
        """Play ``move`` (a Move or its text) for the seat to move, checked; returns the state."""
        m = self.check(move)
        self._apply(m, self._plan_table()[m])
        return self

    def play_id(self, move_id: int) -> None:
        """Play the move with id ``move_id`` (an environment's action) for the seat to move, checked."""
        if self.over:
            raise GameOverError(f"the game is over (scores {self.scores()}); no move can be played")
        if isinstance(move_id, bool) or not isinstance(move_id, int) or not 0 <= move_id < NUM_MOVE_IDS:
            raise IllegalMoveError(f"a move id is a whole number from 0 to {NUM_MOVE_IDS - 1}, not {move_id!r:.40}")
        m = MOVES[move_id]
        plan = self._plan_table().get(m)
        if plan is None:
            self.check(m)  # raises, saying why
        else:
            self._apply(m, plan)

    # ----- the end -------------------------------------------------------------------------
    def result(self) -> GameResult:
        """How the finished game ended; :class:`~mulle_env.engine.errors.GameNotOverError` before the end."""
        if not self.over:
            raise GameNotOverError(f"the game is not over: round {self.round}, seat {self.to_move} to move")
        a, b = self.scores()
        return GameResult((a, b), 0 if a > b else 1 if b > a else None, tuple(self.sheets))

    # ----- views ---------------------------------------------------------------------------
    def view(self, player: int) -> PlayerView:
        """What seat ``player`` may know (its hand, the table, both captured piles, sizes of the hidden ones)."""
        if isinstance(player, bool) or player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player!r:.40}")
        hands, captured, sweeps = self.hands, self.captured, self.sweeps
        card = _CARD  # map() over a bound lookup: a view is made for every decision of every agent
        return PlayerView(
            player, self.to_move, self.over, tuple(map(card, hands[player])),
            len(hands[1 - player]), tuple(map(card, self.loose)), self.builds,
            (tuple(map(card, captured[0])), tuple(map(card, captured[1]))),
            (sweeps[0], sweeps[1]), self.last_capturer, len(self.stock), self.round, self.dealer,
            self.scores(), self.ruleset, self.last_move,
        )

    # ----- canonical form ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (CASINO.md 6): piles sorted, builds by value, the stock in dealing order.

        Besides section 6's fields it holds ``seed`` (later rounds' decks), ``sheets`` (the
        finished rounds' score sheets) and ``over``; ``ruleset`` lists the flags that differ
        from the defaults.
        """
        return {
            "to_move": self.to_move,
            "hands": [[CARD_NAMES[c] for c in h] for h in self.hands],
            "table": [CARD_NAMES[c] for c in self.loose]
            + [{"build": [CARD_NAMES[c] for c in cs], "value": v, "owner": o} for v, o, cs in self._stored_builds()],
            "captured": [[CARD_NAMES[c] for c in p] for p in self.captured],
            "sweeps": list(self.sweeps),
            "last_capturer": self.last_capturer,
            "stock": [CARD_NAMES[c] for c in self.stock],
            "round": self.round,
            "dealer": self.dealer,
            "scores": list(self.scores()),
            "sheets": [[dict(a), dict(b)] for a, b in self.sheets],
            "ruleset": self.ruleset.changes(),
            "seed": self.seed,
            "over": self.over,
        }

    def __repr__(self) -> str:
        return (f"<casino.GameState round {self.round} to_move {self.to_move} scores {self.scores()}"
                f"{' over' if self.over else ''}>")

    def __str__(self) -> str:
        from .render import render_state

        return render_state(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_as, (type(self), self.to_dict(), self.last_move))

    @classmethod
    def from_dict(cls, data: dict[str, Any], ruleset: Ruleset | dict[str, Any] | None = None) -> Self:
        """Read a position in the form of CASINO.md 6 (canonical or hand-written), validating every field.

        Required: ``to_move``, ``hands`` and ``table``; the rest default to a fresh round 1
        (nothing captured, no stock). ``ruleset`` given here wins over the dict's. Raises
        :class:`~mulle_env.engine.errors.InvalidPositionError` naming the field that is wrong.
        """
        from .position import read_position

        return read_position(cls, data, ruleset)

    @classmethod
    def from_view(cls, view: PlayerView, opponent_hand: Iterable[int | str], stock: Iterable[int | str],
                  seed: int | None = None) -> Self:
        """A full state consistent with ``view``, given guesses for the hidden cards (a determinization).

        ``opponent_hand`` and ``stock`` are the searcher's sample of the cards ``view.unseen()``
        lists (the stock in dealing order); ``seed`` fixes later rounds' decks (a fresh random
        one without it, so determinizations do not all deal the real game's later rounds).
        """
        if not isinstance(view, PlayerView):
            raise InvalidPositionError(f"from_view takes a casino.PlayerView (GameState.view(seat)), "
                                       f"not {type(view).__name__}")
        if seed is not None and (why := seed_problem(seed)) is not None:
            raise InvalidPositionError(why)  # later rounds are dealt from it, and to_dict()/pickles must read it back
        hidden = [_face(f, "opponent_hand") for f in _card_list(opponent_hand, "opponent_hand")]
        deal = [_face(f, "stock") for f in _card_list(stock, "stock")]
        unseen = set(view.unseen())
        wrong = [CARD_NAMES[f] for f in (*hidden, *deal) if f not in unseen]
        if wrong or len(set(hidden) | set(deal)) != len(hidden) + len(deal):
            raise InvalidPositionError(
                f"a determinization deals each unseen card once; {', '.join(wrong) or 'a card twice'} "
                "is not one of the view's unseen cards (PlayerView.unseen())")
        if len(hidden) != view.opponent_hand_size or len(deal) != view.stock_size:
            raise InvalidPositionError(
                f"the view shows an opponent hand of {view.opponent_hand_size} and a stock of {view.stock_size} "
                f"cards, not {len(hidden)} and {len(deal)}")
        st = cls(view.ruleset, _FRESH_SEEDS.getrandbits(63) if seed is None else int(seed))
        own = [int(c) for c in view.hand]
        p = view.player
        # the dealer and the end follow from the round and the hands
        captured = [[int(c) for c in view.captured[0]], [int(c) for c in view.captured[1]]]
        st._load([own, sorted(hidden)] if p == 0 else [sorted(hidden), own], [int(c) for c in view.loose],
                 [b.stored for b in view.builds], captured, list(view.sweeps), view.last_capturer, deal, view.round,
                 list(view.scores), [], view.to_move)
        st._set_last_move(view.last_move)
        return st


class GameState(GameStateBase):
    """A Casino game in progress (or over): the whole position, the rules and the seed of later rounds.

    The pure-Python reference (:class:`GameStateBase` holds what both backends share). Read it
    through its attributes (fresh values every time); change it with :meth:`play` (checked) or
    :meth:`play_id` (an action id of the environments). ``to_dict``/``from_dict`` give the
    canonical form of CASINO.md 6 and :meth:`key` its stable hash.
    """

    __slots__ = ("_ruleset", "_seed", "_hands", "_loose", "_builds", "_captured", "_sweeps", "_last_capturer",
                 "_stock", "_round", "_scores", "_sheets", "_to_move", "_plans",
                 "_last_move")

    def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None:
        self._ruleset = ruleset or Ruleset()
        self._seed = seed
        self._hands: list[list[int]] = [[], []]
        self._loose: list[int] = []
        self._builds: list[rules.StoredBuild] = []
        self._captured: list[list[int]] = [[], []]
        self._sweeps = [0, 0]
        self._last_capturer: int | None = None
        self._stock: list[int] = []
        self._round = 1
        self._scores = [0, 0]
        self._sheets: list[tuple[Sheet, Sheet]] = []
        self._to_move = 0
        self._plans: dict[Move, rules.Plan] | None = None
        self._last_move: tuple[int, Move] | None = None

    # ----- reading -------------------------------------------------------------------------
    @property
    def ruleset(self) -> Ruleset:
        """The rules of this game."""
        return self._ruleset

    @property
    def seed(self) -> int | None:
        """The seed every round's deck is shuffled from (``None``: a hand-made position, dealt on from 0)."""
        return self._seed

    @property
    def to_move(self) -> int:
        """The seat to move (0 or 1)."""
        return self._to_move

    @property
    def over(self) -> bool:
        """True once the game has ended: both hands empty (a round that does not end the game deals the next)."""
        return not self._hands[0] and not self._hands[1]

    @property
    def round(self) -> int:
        """The round being played (1, 2, ...; the last one once over)."""
        return self._round

    @property
    def dealer(self) -> int:
        """The dealer of this round: seat 1 in round 1, then the seats alternate (CASINO.md 1.3)."""
        return self._round % 2

    @property
    def hands(self) -> list[list[int]]:
        """Both hands as sorted faces (the referee's knowledge; agents get :meth:`view`)."""
        return [list(self._hands[0]), list(self._hands[1])]

    @property
    def loose(self) -> list[int]:
        """The loose cards on the table, sorted faces."""
        return list(self._loose)

    @property
    def captured(self) -> list[list[int]]:
        """Each seat's captured cards this round, sorted faces."""
        return [sorted(self._captured[0]), sorted(self._captured[1])]

    @property
    def sweeps(self) -> list[int]:
        """Each seat's sweeps this round."""
        return list(self._sweeps)

    @property
    def last_capturer(self) -> int | None:
        """The seat that captured last this round (``None`` before any capture)."""
        return self._last_capturer

    @property
    def stock(self) -> list[int]:
        """The cards still to be dealt this round, in dealing order."""
        return list(self._stock)

    @property
    def sheets(self) -> list[tuple[Sheet, Sheet]]:
        """The score sheets of the finished rounds, one pair (seat 0, seat 1) per round."""
        return [(dict(a), dict(b)) for a, b in self._sheets]

    @property
    def last_move(self) -> tuple[int, Move] | None:
        """``(seat, move)`` of the last move played, or ``None``."""
        return self._last_move

    def scores(self) -> tuple[int, int]:
        """The game totals by seat: the points of the finished rounds."""
        return (self._scores[0], self._scores[1])

    def _stored_builds(self) -> list[rules.StoredBuild]:
        return list(self._builds)

    # ----- moves ---------------------------------------------------------------------------
    def _plan_table(self) -> dict[Move, rules.Plan]:
        plans = self._plans
        if plans is None:
            if self.over:
                plans = {}
            else:
                p = self._to_move
                plans = rules.plans(self._ruleset, self._hands[p], self._loose, self._builds, p)
            self._plans = plans
        return plans

    def _apply(self, move: Move, plan: rules.Plan) -> None:
        p = self._to_move
        self._hands[p].remove(plan.card)
        self._loose, self._builds = rules.table_after(self._loose, self._builds, plan, p)
        if plan.kind == CAPTURE:
            self._captured[p].append(plan.card)
            self._captured[p].extend(rules.taken_cards(plan))
            self._last_capturer = p
            last_play = not self._hands[0] and not self._hands[1] and not self._stock
            if not self._loose and not self._builds and self._ruleset.sweeps and not last_play:
                self._sweeps[p] += 1
        self._last_move = (p, move)
        self._plans = None
        self._to_move = 1 - p
        if not self._hands[0] and not self._hands[1]:
            if self._stock:
                self._deal()
            else:
                self._end_round()
        elif not self._hands[self._to_move]:
            self._to_move = p  # a hand-made position with unequal hands: a player without cards passes

    def _deal(self) -> None:
        dealer = self.dealer
        stock = self._stock
        self._hands[1 - dealer] = sorted(stock[:HAND_DEAL])
        self._hands[dealer] = sorted(stock[HAND_DEAL:2 * HAND_DEAL])
        self._stock = stock[2 * HAND_DEAL:]
        self._to_move = 1 - dealer

    def _end_round(self) -> None:
        rest = [*self._loose, *(c for b in self._builds for c in b[2])]
        if rest and self._last_capturer is not None:
            self._captured[self._last_capturer].extend(rest)  # not a sweep (5.2)
        self._loose, self._builds = [], []
        sheet = round_sheets(self._captured, self._sweeps, self._ruleset)
        self._sheets.append(sheet)
        self._scores = [self._scores[0] + sheet[0]["total"], self._scores[1] + sheet[1]["total"]]
        rs = self._ruleset
        a, b = self._scores
        if rs.rounds is not None:
            done = self._round >= rs.rounds
        else:
            done = (max(a, b) >= rs.target_score and a != b) or self._round >= rs.max_rounds
        if done:
            self._to_move = 1 - self.dealer  # the hands stay empty: that is what over means
            return
        self._round += 1  # and the other seat deals
        self._start_round()

    def _start_round(self) -> None:
        seed = self._seed if self._seed is not None else 0
        deck = shuffled(DECK, derive_seed(seed, _DEAL_STREAM, self._round))
        self._captured = [[], []]
        self._sweeps = [0, 0]
        self._last_capturer = None
        first = 2 * HAND_DEAL  # the first deal's hands come off the top, then the table's cards
        self._loose = sorted(deck[first:first + TABLE_DEAL])
        self._stock = deck[:first] + deck[first + TABLE_DEAL:]
        self._builds = []
        self._deal()

    def _start_game(self) -> None:
        self._start_round()

    def _load(self, hands: list[list[int]], loose: list[int], builds: list[rules.StoredBuild],
              captured: list[list[int]], sweeps: list[int], last_capturer: int | None, stock: list[int],
              round_: int, scores: list[int], sheets: list[tuple[Sheet, Sheet]], to_move: int) -> None:
        self._hands = [sorted(hands[0]), sorted(hands[1])]
        self._loose = sorted(loose)
        self._builds = sorted(builds)
        self._captured = [list(captured[0]), list(captured[1])]
        self._sweeps = list(sweeps)
        self._last_capturer = last_capturer
        self._stock = list(stock)
        self._round = round_
        self._scores = list(scores)
        self._sheets = [(dict(a), dict(b)) for a, b in sheets]
        self._to_move = to_move
        self._plans = None

    def _set_last_move(self, last_move: tuple[int, Move] | None) -> None:
        self._last_move = last_move

    def copy(self) -> GameState:
        """An independent copy (its moves do not touch this state)."""
        st = GameState(self._ruleset, self._seed)
        st._hands = [list(self._hands[0]), list(self._hands[1])]
        st._loose = list(self._loose)
        st._builds = list(self._builds)
        st._captured = [list(self._captured[0]), list(self._captured[1])]
        st._sweeps = list(self._sweeps)
        st._last_capturer = self._last_capturer
        st._stock = list(self._stock)
        st._round, st._to_move = self._round, self._to_move
        st._scores = list(self._scores)
        st._sheets = list(self._sheets)
        st._plans = self._plans  # a dict nobody changes: rebuilt, not edited, after a move
        st._last_move = self._last_move
        return st


def _card_list(x: Any, what: str) -> list[Any]:
    """``x`` as a list of cards; a string (whose letters would each be read as a card) or a non-iterable is refused."""
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise InvalidPositionError(f"{what} must be a list of cards (faces or texts like \"SP 2\"), not {x!r:.60}")
    return list(x)


def _face(x: int | str, what: str) -> int:
    if isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 52:
        return int(x)
    try:
        return parse_card(x)
    except InvalidCardError as exc:
        raise InvalidPositionError(f"{what}: {exc}") from None


def round_sheets(captured: Sequence[Sequence[int]], sweeps: Sequence[int], ruleset: Ruleset) -> tuple[Sheet, Sheet]:
    """The two score sheets of a finished round (CASINO.md 5.3) from the captured piles and sweeps."""
    n = [len(captured[0]), len(captured[1])]
    sp = [sum(SPADE[c] for c in captured[0]), sum(SPADE[c] for c in captured[1])]
    out: list[Sheet] = []
    for s in (0, 1):
        pile = captured[s]
        sheet = {
            "cards": ITEM_POINTS["cards"] if n[s] >= CARDS_TO_WIN else 0,
            "spades": ITEM_POINTS["spades"] if sp[s] >= SPADES_TO_WIN else 0,
            "big_casino": POINTS[BIG_CASINO] if BIG_CASINO in pile else 0,
            "little_casino": POINTS[LITTLE_CASINO] if LITTLE_CASINO in pile else 0,
            "aces": sum(1 for c in pile if ACE[c]),
            "sweeps": sweeps[s] if ruleset.sweeps else 0,
        }
        sheet["total"] = sum(sheet.values())
        out.append(sheet)
    return out[0], out[1]



def _restore(data: dict[str, Any], last_move: tuple[int, Move] | None) -> GameState:
    """Pickles of the Python reference written before the backends shared a base."""
    return _restore_as(GameState, data, last_move)


def _restore_as(cls: type[_S], data: dict[str, Any], last_move: tuple[int, Move] | None) -> _S:
    st = cls.from_dict(data)
    st._set_last_move(last_move)
    return st


def start_game(cls: type[_S], seed: int, ruleset: Ruleset | dict[str, Any] | None) -> _S:
    """``new_game`` on the backend ``cls``: the seed and the ruleset checked, round 1 dealt."""
    why = seed_problem(seed)
    if why is not None:
        raise ValueError(why)
    if ruleset is not None and not isinstance(ruleset, Ruleset):
        ruleset = Ruleset.from_dict(ruleset)
    st = cls(ruleset, int(seed))
    st._start_game()
    return st


def replay_game(cls: type[_S], seed: int, moves: Iterable[Move | str],
                ruleset: Ruleset | dict[str, Any] | None = None) -> _S:
    """``replay`` on the backend ``cls``: each move checked, an illegal one named by its place in the list."""
    if isinstance(moves, (str, Move)):
        raise InvalidMoveError(f"moves must be a list of moves, not a single {type(moves).__name__} "
                               f"{str(moves)!r:.80}; write replay(seed, [{str(moves)!r:.80}])")
    st = start_game(cls, seed, ruleset)
    for i, m in enumerate(moves):
        try:
            st.play(m)
        except MulleError as exc:
            raise type(exc)(f"move {i + 1} of the replay: {exc}") from None
    return st


def new_game(seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """A new game: round 1 dealt from ``seed`` (a whole number from 0 to 2**64 - 1), seat 0 to move."""
    return start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """The state reached by playing ``moves`` (each checked) from ``new_game(seed, ruleset)``."""
    return replay_game(GameState, seed, moves, ruleset)
