"""The game state: one mutable type with a canonical JSON form and a stable hash."""

from __future__ import annotations

import hashlib
import json
import operator
import random
from dataclasses import dataclass
from typing import Iterable, NamedTuple

from . import rules
from .cards import (
    CARD_NAMES,
    CARDS,
    COPIES,
    INTAKE_POINTS,
    NUM_FACES,
    Card,
    parse_card,
)
from .errors import (
    GameNotOverError,
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    MulleError,
)
from .moves import MOVES, Move
from .rng import derive_seed, shuffled
from .ruleset import Ruleset

#: Version of the engine's rules and canonical form; results files record it.
ENGINE_VERSION = "1.0"

SHEET_KEYS = ("mulle", "tabbe", "intake", "bonus", "total")
# Seeds for determinizations made without one (GameState.from_view); not for real games.
_FRESH_SEEDS = random.SystemRandom()
INTAKE_BONUS_FROM = 20



def _seat(player) -> int:
    """``player`` as the int 0 or 1 (numpy ints too); a ``ValueError`` for anything else (1.0, True, 2)."""
    try:
        p = operator.index(player)
    except TypeError:
        p = None
    if isinstance(player, bool) or p not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    return p


def hand_faces(cards: Iterable) -> list[int]:
    """``cards`` (faces or Cards) as a sorted list of faces; a ``ValueError`` for anything else (1.5, 52)."""
    cards = list(cards)
    try:
        hand = sorted(operator.index(c) for c in cards)  # 1.5 is no card, and int() would make it one
    except TypeError:
        raise ValueError(f"cards must be faces 0..{NUM_FACES - 1} (ints or Cards), not {cards!r}") from None
    if any(not 0 <= f < NUM_FACES for f in hand):
        raise ValueError(f"cards must be faces 0..{NUM_FACES - 1}, not {hand!r}")
    return hand


def intake_bonus(intake: int) -> int:
    """The bonus of RULES.md 6.4 for ``intake`` intake points: 2 x (intake - 20) above 20, else 0."""
    return 2 * (intake - INTAKE_BONUS_FROM) if intake > INTAKE_BONUS_FROM else 0


def sheet(mulle: int, tabbe: int, intake: int) -> dict:
    """A set's score sheet from its mulle points, tabbes and intake points (RULES.md 6)."""
    bonus = intake_bonus(intake)
    return {"mulle": mulle, "tabbe": tabbe, "intake": intake, "bonus": bonus, "total": mulle + tabbe + bonus}


def add_sheets(sheets: Iterable[dict]) -> dict:
    """Sum score sheets key by key."""
    out = dict.fromkeys(SHEET_KEYS, 0)
    for s in sheets:
        for k in SHEET_KEYS:
            out[k] += s[k]
    return out


@dataclass(frozen=True, slots=True)
class Build:
    """A build on the table as a player sees it."""

    value: int
    cards: tuple[Card, ...]
    owner: int | None
    locked: bool

    def __str__(self) -> str:
        lock = ", locked" if self.locked else ""
        owner = "nobody" if self.owner is None else f"player {self.owner}"
        return f"[{self.value}] {' + '.join(map(str, self.cards))} ({owner}{lock})"


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a finished game ended.

    Attributes:
        sheets: Per player, the list of per-set score sheets.
        totals: Per player, the game sheet (sum of the set sheets).
        scores: The two game totals by seat.
        winner: 0, 1, or ``None`` for a draw.
    """

    sheets: tuple[tuple[dict, ...], tuple[dict, ...]]
    totals: tuple[dict, dict]
    scores: tuple[int, int]
    winner: int | None

    def to_dict(self) -> dict:
        """Plain JSON form."""
        return {
            "sheets": [list(s) for s in self.sheets],
            "totals": list(self.totals),
            "scores": list(self.scores),
            "winner": self.winner,
        }


class PlayerView(NamedTuple):
    """What one player may know: everything public plus their own hand, nothing more.

    Built by :meth:`GameState.view`; agents and observation encoders see only this.
    Immutable; a named tuple because views are built at every decision and a tuple
    is several times cheaper to make than a frozen dataclass.
    """

    player: int
    to_move: int
    hand: tuple[Card, ...]
    opponent_hand_size: int
    deck_size: int
    loose: tuple[Card, ...]
    builds: tuple[Build, ...]
    mulle: tuple[tuple[Card, ...], tuple[Card, ...]]
    intake: tuple[tuple[Card, ...], tuple[Card, ...]]
    tabbe: tuple[int, int]
    scores: tuple[dict, dict]
    sheets: tuple[tuple[dict, dict], ...]
    set_no: int
    deal_no: int
    last_capturer: int | None
    last_move: tuple[int, Move] | None
    ruleset: Ruleset
    over: bool
    #: The table cards the last move captured (public: both players saw them go).
    last_taken: tuple[Card, ...] = ()

    def unseen(self) -> list[Card]:
        """Cards of this set the player has not seen: the opponent's hand plus the deck."""
        counts = [COPIES] * NUM_FACES
        for pile in (self.hand, self.loose, *self.mulle, *self.intake):
            for f in pile:
                counts[f] -= 1
        for b in self.builds:
            for f in b.cards:
                counts[f] -= 1
        return [CARDS[f] for f in range(NUM_FACES) for _ in range(counts[f])]

    def to_dict(self) -> dict:
        """The JSON form (what the live server sends a person); see :mod:`mulle_env.engine.record`."""
        from .record import view_to_dict

        return view_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict) -> PlayerView:
        """Read :meth:`to_dict`'s form back; raises :class:`~mulle_env.engine.record.InvalidRecordError`."""
        from .record import view_from_dict

        return view_from_dict(data)

    def legal_moves(self) -> list[Move]:
        """The player's legal moves (they depend only on what the player can see)."""
        if self.to_move != self.player:
            return []
        return GameState.from_view(self, [], []).legal_moves() if self.hand else []


class GameState:
    """A position of a game of Mulle, and the game's rules applied to it.

    Create one with :func:`new_game` or :meth:`from_dict`; play with :meth:`play`.
    ``play`` mutates the state (and returns it); :meth:`copy` gives an independent one.
    """

    __slots__ = (
        "ruleset", "seed", "hands", "loose", "builds", "deck", "mulle", "intake",
        "tabbe", "to_move", "set_no", "deal_no", "last_capturer", "sheets", "over",
        "mpts", "ipts", "last_move", "last_taken", "_legal", "_public",
    )

    def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None:
        self.ruleset = ruleset if ruleset is not None else Ruleset()
        self.seed = seed
        self.hands: list[list[int]] = [[], []]
        self.loose: list[int] = []
        self.builds: dict[int, tuple[tuple[int, ...], int | None, bool]] = {}
        self.deck: list[int] = []
        self.mulle: list[list[int]] = [[], []]
        self.intake: list[list[int]] = [[], []]
        self.tabbe = [0, 0]
        self.to_move = 0
        self.set_no = 1
        self.deal_no = 1
        self.last_capturer: int | None = None
        self.sheets: list[tuple[dict, dict]] = []
        self.over = False
        self.mpts = [0, 0]
        self.ipts = [0, 0]
        self.last_move: tuple[int, Move] | None = None
        #: The table cards the last move captured (empty unless it was a capture).
        self.last_taken: tuple[Card, ...] = ()
        self._legal: list[int] | None = None
        # Captured piles and scores as views show them; they change only when a capture
        # or a set end happens, which is when rules.py clears this cache.
        self._public: tuple | None = None

    # ----- dealing -------------------------------------------------------------
    def leader(self) -> int:
        """Seat leading the current deal: seat 0 leads the game's first deal, then they alternate."""
        return rules.leader(self.set_no, self.deal_no)

    def deal_set(self) -> None:
        """Shuffle a fresh 104-card deck for the current set and make its first deal."""
        seed = 0 if self.seed is None else self.seed
        deck = shuffled([f for f in range(NUM_FACES) for _ in range(COPIES)], derive_seed(seed, self.set_no))
        h = rules.HAND_SIZE
        self.hands = [sorted(deck[:h]), sorted(deck[h : 2 * h])]
        self.loose = sorted(deck[2 * h : 2 * h + rules.TABLE_DEAL])
        self.deck = deck[2 * h + rules.TABLE_DEAL :]
        self.builds = {}
        self.mulle = [[], []]
        self.intake = [[], []]
        self.tabbe = [0, 0]
        self.mpts = [0, 0]
        self.ipts = [0, 0]
        self.last_capturer = None
        self.deal_no = 1
        self.to_move = self.leader()
        self._legal = None
        self._public = None

    # ----- rules -----------------------------------------------------------------
    def legal_move_ids(self) -> list[int]:
        """Ids of the legal moves (``Move.id``, the action codec's indices), canonical order.

        Under ``forced_capture=False`` a capture's id stands for all its choices.
        The list is the caller's own.
        """
        return list(self._ids())

    def legal_ids(self) -> list[int]:
        """The legal move ids as the state's own cached list, without a copy, for hot paths.

        Read it, never change it (it is the cache :meth:`legal_move_ids` copies from).
        """
        return self._ids()

    def _ids(self) -> list[int]:
        # The cached list itself, for the package's hot paths, which never mutate it.
        ids = self._legal
        if ids is None:
            ids = self._legal = rules.legal_ids(self)
        return ids

    def legal_moves(self) -> list[Move]:
        """Every legal move for the player to move, in canonical order."""
        if self.ruleset.forced_capture:
            return [MOVES[i] for i in self._ids()]
        return rules.legal_moves(self)

    def is_legal(self, move: Move | str) -> bool:
        """True if ``move`` (a Move or its text) is legal here."""
        try:
            self._check(move)
        except MulleError:
            return False
        return True

    def _check(self, move: Move | str) -> Move:
        if self.over:
            raise GameOverError(f"the game is over (final scores {self.scores()}); no move can be played")
        if isinstance(move, str):
            move = Move.from_str(move)
        elif not isinstance(move, Move):
            raise InvalidMoveError(f"a move must be a Move or its text, not {move!r}")
        if move.id is not None:
            if move.id in self._ids() and (self.ruleset.forced_capture or move.kind != "capture"):
                return move
            if not self.ruleset.forced_capture and move.kind == "capture" and move.id in self._ids():
                choices = rules.capture_choices(self, move.card)
                if move in choices:
                    return move
                raise IllegalMoveError(
                    f"illegal move {str(move)!r} for player {self.to_move}: with forced_capture=False a capture "
                    f"names what it takes; choose one of: {', '.join(map(str, choices))}"
                )
        elif move in rules.legal_moves(self):
            return move
        raise IllegalMoveError(f"illegal move {str(move)!r} for player {self.to_move}: {rules.explain(self, move)}")

    def play(self, move: Move | str) -> GameState:
        """Check and apply one move (a :class:`Move` or its text); returns ``self``.

        Raises :class:`IllegalMoveError` (saying why) and leaves the state untouched
        when the move is not legal here.
        """
        rules.apply(self, self._check(move))
        return self

    def play_unchecked(self, move: Move) -> GameState:
        """Apply a move known to be legal (from :meth:`legal_moves`), skipping the check."""
        rules.apply(self, move)
        return self

    def play_id(self, move_id: int) -> None:
        """Apply the legal move with id ``move_id`` (from :meth:`legal_move_ids`), unchecked.

        The fastest way to play from Python (environments, rollouts, benchmarks): the
        same as ``play_unchecked(MOVES[move_id])``; returns ``None``.
        """
        rules.apply(self, MOVES[move_id])

    def set_hand(self, player: int, cards: Iterable[int]) -> GameState:
        """Replace ``player``'s hand with ``cards`` (faces or Cards); returns ``self``.

        For search agents trying hypotheses on their own copies: no invariant is
        checked (``check_invariants`` does that), but cached legal moves are dropped.
        """
        player, hand = _seat(player), hand_faces(cards)
        self.hands[player] = hand
        self._legal = None
        return self

    def is_over(self) -> bool:
        """True once the last set has been scored."""
        return self.over

    # ----- scores ----------------------------------------------------------------
    def set_sheet(self, player: int) -> dict:
        """The current set's score sheet for ``player`` so far."""
        return sheet(self.mpts[player], self.tabbe[player], self.ipts[player])

    def score(self, player: int) -> dict:
        """``player``'s game sheet so far: finished sets plus the set in play."""
        if player.__class__ is not int or player not in (0, 1):
            player = _seat(player)
        if not self.sheets:
            return self.set_sheet(player)
        done = [s[player] for s in self.sheets]
        if not self.over:
            done.append(self.set_sheet(player))
        return add_sheets(done)

    def scores(self) -> tuple[int, int]:
        """Both game totals so far."""
        return self.score(0)["total"], self.score(1)["total"]

    def result(self) -> GameResult:
        """Score sheets and winner of a finished game.

        Raises :class:`GameNotOverError` while the game is still being played: use
        :meth:`scores` for the running totals.
        """
        if not self.over:
            raise GameNotOverError(
                f"the game is not over yet (set {self.set_no} of {self.ruleset.sets}, deal {self.deal_no}): "
                "result() needs a finished game; scores() gives the running totals"
            )
        per = tuple(tuple(s[p] for s in self.sheets) for p in (0, 1))
        totals = (add_sheets(per[0]), add_sheets(per[1]))
        a, b = totals[0]["total"], totals[1]["total"]
        return GameResult(per, totals, (a, b), 0 if a > b else 1 if b > a else None)

    # ----- copies, views, canonical form ------------------------------------------
    def copy(self) -> GameState:
        """An independent copy (cheap: lists and tuples only)."""
        st = GameState.__new__(GameState)
        st.ruleset = self.ruleset
        st.seed = self.seed
        st.hands = [self.hands[0][:], self.hands[1][:]]
        st.loose = self.loose[:]
        st.builds = dict(self.builds)
        st.deck = self.deck[:]
        st.mulle = [self.mulle[0][:], self.mulle[1][:]]
        st.intake = [self.intake[0][:], self.intake[1][:]]
        st.tabbe = self.tabbe[:]
        st.to_move = self.to_move
        st.set_no = self.set_no
        st.deal_no = self.deal_no
        st.last_capturer = self.last_capturer
        st.sheets = self.sheets[:]
        st.over = self.over
        st.mpts = self.mpts[:]
        st.ipts = self.ipts[:]
        st.last_move = self.last_move
        st.last_taken = self.last_taken
        st._legal = self._legal
        st._public = self._public
        return st

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: own hand, the table, public piles and counts."""
        if player.__class__ is not int or player not in (0, 1):
            player = _seat(player)
        card = CARDS.__getitem__  # map() with a C-level getter: views are built every decision
        public = self._public
        if public is None:
            mulle, intake = self.mulle, self.intake
            public = self._public = (
                (tuple(map(card, mulle[0])), tuple(map(card, mulle[1]))),
                (tuple(map(card, intake[0])), tuple(map(card, intake[1]))),
                (self.tabbe[0], self.tabbe[1]),
                (self.score(0), self.score(1)),
            )
        return PlayerView(
            player=player,
            to_move=self.to_move,
            hand=tuple(map(card, self.hands[player])),
            opponent_hand_size=len(self.hands[1 - player]),
            deck_size=len(self.deck),
            loose=tuple(map(card, self.loose)),
            builds=self._build_views() if self.builds else (),
            mulle=public[0],
            intake=public[1],
            tabbe=public[2],
            scores=public[3],
            sheets=tuple(self.sheets),
            set_no=self.set_no,
            deal_no=self.deal_no,
            last_capturer=self.last_capturer,
            last_move=self.last_move,
            last_taken=self.last_taken,
            ruleset=self.ruleset,
            over=self.over,
        )

    def _build_views(self) -> tuple[Build, ...]:
        return tuple(
            Build(v, tuple(CARDS[f] for f in b[0]), b[1], b[2]) for v, b in sorted(self.builds.items())
        )

    @classmethod
    def from_view(cls, view: PlayerView, opponent_hand: Iterable, deck: Iterable, seed: int | None = None) -> GameState:
        """A full state consistent with ``view``, given guesses for the hidden cards.

        Search agents determinize with this: ``opponent_hand`` and ``deck`` are their
        sample of what the viewer cannot see; ``seed`` fixes the later sets' deals. Without
        a seed they are dealt from a fresh random one: a fixed default would make every
        determinization of a game deal the same later sets (and, for a game played with
        that very seed, the real ones).
        """
        if seed is None:
            seed = _FRESH_SEEDS.getrandbits(63)
        st = cls(view.ruleset, seed)
        p = view.player
        hidden = sorted(int(f) if isinstance(f, int) else parse_card(f) for f in opponent_hand)
        st.hands[p] = [int(f) for f in view.hand]
        st.hands[1 - p] = hidden
        st.loose = [int(f) for f in view.loose]
        st.builds = {b.value: (tuple(int(f) for f in b.cards), b.owner, b.locked) for b in view.builds}
        st.deck = [int(f) if isinstance(f, int) else parse_card(f) for f in deck]
        st.mulle = [sorted(map(int, view.mulle[0])), sorted(map(int, view.mulle[1]))]
        st.intake = [sorted(map(int, view.intake[0])), sorted(map(int, view.intake[1]))]
        st.tabbe = list(view.tabbe)
        st.to_move = view.to_move
        st.set_no = view.set_no
        st.deal_no = view.deal_no
        st.last_capturer = view.last_capturer
        st.sheets = list(view.sheets)
        st.over = view.over
        st.last_move = view.last_move
        st.last_taken = view.last_taken
        st._recount()
        return st

    def _recount(self) -> None:
        mv = self.ruleset.mulle_values
        self.mpts = [sum(mv[f] for f in self.mulle[p]) for p in (0, 1)]
        self.ipts = [sum(INTAKE_POINTS[f] for f in self.mulle[p] + self.intake[p]) for p in (0, 1)]

    def to_dict(self) -> dict:
        """The canonical JSON form: every field, piles sorted, builds by value."""
        table: list = [CARD_NAMES[f] for f in self.loose]
        for v, b in sorted(self.builds.items()):
            table.append({"build": [CARD_NAMES[f] for f in b[0]], "value": v, "owner": b[1], "locked": b[2]})
        return {
            "ruleset": self.ruleset.to_dict(),
            "seed": self.seed,
            "set": self.set_no,
            "deal": self.deal_no,
            "to_move": self.to_move,
            "hands": [[CARD_NAMES[f] for f in h] for h in self.hands],
            "table": table,
            "deck": [CARD_NAMES[f] for f in self.deck],
            "mulle": [[CARD_NAMES[f] for f in m] for m in self.mulle],
            "intake": [[CARD_NAMES[f] for f in m] for m in self.intake],
            "tabbe": list(self.tabbe),
            "last_capturer": self.last_capturer,
            "sheets": [[dict(s[0]), dict(s[1])] for s in self.sheets],
            "over": self.over,
        }

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys, no spaces): what :meth:`key` hashes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def key(self) -> str:
        """Stable hash of the canonical form: equal in every process and on every machine."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented  # lets the compiled core's GameState compare with this one
        return self.to_dict() == other.to_dict()

    __hash__ = None  # mutable: use key()

    def __repr__(self) -> str:
        return (
            f"<GameState set {self.set_no} deal {self.deal_no} to_move {self.to_move} "
            f"scores {self.scores()}{' over' if self.over else ''}>"
        )

    def __str__(self) -> str:
        from .render import render_state

        return render_state(self)

    @classmethod
    def from_dict(cls, data: dict, ruleset: Ruleset | dict | None = None) -> GameState:
        """Read a position (canonical or hand-written); see docs/engine.md for the keys.

        Only ``to_move``, ``hands`` and ``table`` are required. ``ruleset`` given here
        wins over the dict's. Raises :class:`InvalidPositionError` naming what is wrong.
        """
        from .position import read_position

        return read_position(cls, data, ruleset)

    @classmethod
    def from_json(cls, text: str, ruleset: Ruleset | dict | None = None) -> GameState:
        """Read a position from JSON text."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise InvalidPositionError(f"a position's JSON is text (str or bytes), not {type(text).__name__}")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidPositionError(f"position is not valid JSON: {exc}") from None
        return cls.from_dict(data, ruleset)

    def check_invariants(self, complete: bool = True) -> None:
        """Assert the invariants of RULES.md; raise :class:`InvalidPositionError` if broken.

        ``complete``: the state comes from a full deal, so all 104 cards of the set
        must be accounted for exactly once.
        """
        from .position import check_invariants

        check_invariants(self, complete)


def new_game(seed: int = 0, ruleset: Ruleset | None = None) -> GameState:
    """A new game: first deal of the first set done, seat 0 to move."""
    return start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | None = None) -> GameState:
    """The state reached by playing ``moves`` from ``new_game(seed, ruleset)``.

    Each move is checked; an illegal one raises :class:`IllegalMoveError` naming its
    position in the list.
    """
    return replay_game(GameState, seed, moves, ruleset)


def start_game(cls, seed: int = 0, ruleset: Ruleset | dict | None = None):
    """``new_game`` of the backend whose state class is ``cls`` (both backends use this).

    Checks ``seed`` (an int, not a bool) and reads a dict ``ruleset`` with
    :meth:`Ruleset.from_dict`, then deals the first set.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, not {seed!r}")  # noqa: TRY004 - the engine API raises ValueError
    if ruleset is not None and not isinstance(ruleset, Ruleset):
        ruleset = Ruleset.from_dict(ruleset)
    st = cls(ruleset, seed)
    st.deal_set()
    return st


def replay_game(cls, seed: int, moves: Iterable[Move | str], ruleset: Ruleset | dict | None = None):
    """``replay`` of the backend whose state class is ``cls`` (both backends use this)."""
    return play_all(start_game(cls, seed, ruleset), moves, "replay")


def play_all(st, moves: Iterable[Move | str], what: str = "replay"):
    """Play ``moves`` on ``st`` in order, each checked; errors name the move's number (both backends use this)."""
    if isinstance(moves, (str, Move)):
        # A string is iterable too, which would replay it letter by letter.
        raise InvalidMoveError(
            f"moves must be a list of moves (Move values or texts), not a single {type(moves).__name__} "
            f"{str(moves)!r}; write {what}(seed, [{str(moves)!r}])"
        )
    for i, m in enumerate(moves):
        try:
            st.play(m)
        except MulleError as exc:
            raise type(exc)(f"move {i + 1} of the {what}: {exc}") from None
    return st
