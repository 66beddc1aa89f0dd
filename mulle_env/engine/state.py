"""The game state: one mutable type with a canonical JSON form and a stable hash.

:class:`GameStateBase` is the behaviour both backends share; :class:`GameState` here is
the pure-Python reference backend (:mod:`.cstate` is the compiled one). Both hand out
read-only attributes that return fresh values, so no caller can change a position except
through moves, :meth:`GameStateBase.set_hand` and the checked readers ``from_dict`` and
``from_view``.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Self, TypeVar

from . import rules
from .canonical import CanonicalForm
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
from .rng import check_seed, derive_seed, seed_problem, shuffled
from .rules import INTAKE_BONUS_FROM as INTAKE_BONUS_FROM  # public here too
from .rules import SHEET_KEYS as SHEET_KEYS
from .rules import Sheet as Sheet
from .rules import add_sheets as add_sheets
from .rules import intake_bonus as intake_bonus
from .rules import sheet as sheet
from .ruleset import Ruleset

#: Version of the engine's rules and canonical form; results files record it.
ENGINE_VERSION = "1.0"

# Seeds for determinizations made without one (GameState.from_view); not for real games.
_FRESH_SEEDS = random.SystemRandom()

#: A build as a state holds it (``GameState.builds`` maps its value to this): (cards (faces,
#: sorted), owner seat or None, locked).
StoredBuild = tuple[tuple[int, ...], int | None, bool]
#: Cards of the two seats, seat 0 first (mulle and intake piles in a view).
CardPair = tuple[tuple[Card, ...], tuple[Card, ...]]
#: What views share until a capture or a set's end: (mulle, intake, tabbe, scores, sheets), as views show them.
PublicPart = tuple[CardPair, CardPair, tuple[int, int], tuple[Sheet, Sheet], tuple[tuple[Sheet, Sheet], ...]]

_State = TypeVar("_State", bound="GameStateBase")


def _seat(player: Any) -> int:
    """``player`` as the int 0 or 1 (numpy ints too); a ``ValueError`` for anything else (1.0, True, 2)."""
    try:
        p = operator.index(player)
    except TypeError:
        p = None
    if isinstance(player, bool) or p is None or p not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    return p


def _guessed_face(card: Any, what: str) -> int:
    """A card of a determinization: a face 0..51 (an int or a Card, not a bool) or a card text."""
    if isinstance(card, str):
        return parse_card(card)
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < NUM_FACES:
        raise InvalidPositionError(f"{what}: a card is a face 0..{NUM_FACES - 1} (an int or a Card) or a text such "
                                   f"as 'SP 2', not {card!r:.40}")
    return int(card)


def hand_faces(cards: Iterable[Any]) -> list[int]:
    """``cards`` (faces or Cards) as a sorted list of faces; a ``ValueError`` for anything else (1.5, 52)."""
    cards = list(cards)
    try:
        hand = sorted(operator.index(c) for c in cards)  # 1.5 is no card, and int() would make it one
    except TypeError:
        raise ValueError(f"cards must be faces 0..{NUM_FACES - 1} (ints or Cards), not {cards!r}") from None
    if any(not 0 <= f < NUM_FACES for f in hand):
        raise ValueError(f"cards must be faces 0..{NUM_FACES - 1}, not {hand!r}")
    return hand


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

    sheets: tuple[tuple[Sheet, ...], tuple[Sheet, ...]]
    totals: tuple[Sheet, Sheet]
    scores: tuple[int, int]
    winner: int | None

    def to_dict(self) -> dict[str, Any]:
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
    mulle: CardPair
    intake: CardPair
    tabbe: tuple[int, int]
    scores: tuple[Sheet, Sheet]
    sheets: tuple[tuple[Sheet, Sheet], ...]
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what the live server sends a person); see :mod:`mulle_env.engine.record`."""
        from .record import view_to_dict

        return view_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlayerView:
        """Read :meth:`to_dict`'s form back; raises :class:`~mulle_env.engine.record.InvalidRecordError`."""
        from .record import view_from_dict

        return view_from_dict(data)

    def legal_moves(self) -> list[Move]:
        """The player's legal moves (they depend only on what the player can see)."""
        if self.to_move != self.player:
            return []
        return GameState.from_view(self, [], []).legal_moves() if self.hand else []


class GameStateBase(CanonicalForm):
    """What both backends' :class:`GameState` share, written once on their primitives.

    A backend's class provides the position (read-only attributes: ``hands``, ``loose``,
    ``builds``, ``deck``, ``mulle``, ``intake``, ``tabbe``, ``mpts``, ``ipts``, ``to_move``,
    ``set_no``, ``deal_no``, ``last_capturer``, ``sheets``, ``over``, ``last_move``,
    ``last_taken``, ``seed``, ``ruleset``; every read a fresh value) and the primitives
    ``_ids``, ``legal_ids``, ``legal_move_ids``, ``play_unchecked``, ``play_id``,
    ``copy``, ``deal_set``, ``view``, ``_load`` and ``_set_hand``. Everything else (checked
    play, scores, the canonical form, reading positions) is here, so the two behave alike
    by construction; the golden playthroughs (tests/playthroughs) check the primitives.
    """

    __slots__ = ()

    if TYPE_CHECKING:
        # What each backend's class provides (the list above), declared for the type checker
        # only: the shared code below, and every user of either backend, is checked against
        # this one API. The primitives the compiled core writes in C take their arguments by
        # position only. Nothing of this block exists at run time.
        def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None: ...
        @property
        def ruleset(self) -> Ruleset:
            """The Ruleset."""
        @property
        def seed(self) -> int | None:
            """The game's seed (None: 0)."""
        @property
        def to_move(self) -> int:
            """Seat to move."""
        @property
        def set_no(self) -> int:
            """Set in play (1-based)."""
        @property
        def deal_no(self) -> int:
            """Deal in play (1-based)."""
        @property
        def last_capturer(self) -> int | None:
            """Last seat to capture, or None."""
        @property
        def over(self) -> bool:
            """True once the last set is scored."""
        @property
        def last_move(self) -> tuple[int, Move] | None:
            """(player, Move) of the last move, or None."""
        @property
        def last_taken(self) -> tuple[Card, ...]:
            """Table cards the last move captured."""
        @property
        def hands(self) -> list[list[int]]:
            """Both hands (faces, sorted): a new list on every read."""
        @property
        def loose(self) -> list[int]:
            """Loose table cards (faces, sorted)."""
        @property
        def builds(self) -> dict[int, StoredBuild]:
            """Builds: {value: (cards, owner, locked)}."""
        @property
        def deck(self) -> list[int]:
            """The undealt cards, next card first."""
        @property
        def mulle(self) -> list[list[int]]:
            """Both mulle piles."""
        @property
        def intake(self) -> list[list[int]]:
            """Both intake piles."""
        @property
        def tabbe(self) -> list[int]:
            """Tabbes of the set in play."""
        @property
        def mpts(self) -> list[int]:
            """Mulle points of the set in play."""
        @property
        def ipts(self) -> list[int]:
            """Intake points of the set in play."""
        @property
        def sheets(self) -> list[tuple[Sheet, Sheet]]:
            """Score sheets of the finished sets: [(sheet0, sheet1), ...]."""
        _public: PublicPart | None
        def deal_set(self) -> None:
            """Shuffle a fresh 104-card deck for the current set and make its first deal."""
        def legal_move_ids(self) -> list[int]:
            """Ids of the legal moves (``Move.id``, the action codec's indices), canonical order."""
        def legal_ids(self) -> tuple[int, ...]:
            """The legal move ids as the state's own cached tuple (immutable), without a copy, for hot paths."""
        def _ids(self) -> tuple[int, ...]: ...
        def play_unchecked(self, move: Move, /) -> Self:
            """Apply a move known to be legal (from :meth:`legal_moves`), skipping the check."""
        def play_id(self, move_id: int, /) -> None:
            """Apply the legal move with id ``move_id`` (from :meth:`legal_move_ids`), unchecked."""
        def copy(self) -> Self:
            """An independent copy."""
        def view(self, player: int) -> PlayerView:
            """What ``player`` may know: own hand, the table, public piles and counts."""
        def _load(self, hands: Sequence[Iterable[int]], loose: Iterable[int], builds: Mapping[int, StoredBuild],
                  deck: Iterable[int], mulle: Sequence[Iterable[int]], intake: Sequence[Iterable[int]],
                  tabbe: Sequence[int], to_move: int, set_no: int, deal_no: int, last_capturer: int | None,
                  sheets: Iterable[tuple[Sheet, Sheet]], over: bool, last_move: tuple[int, Move] | None = None,
                  last_taken: Iterable[int] = (), /) -> None: ...
        def _set_hand(self, player: int, hand: list[int], /) -> None: ...

    # ----- rules -----------------------------------------------------------------
    def leader(self) -> int:
        """Seat leading the current deal: seat 0 leads the game's first deal, then they alternate."""
        return rules.leader(self.set_no, self.deal_no)

    def legal_moves(self) -> list[Move]:
        """Every legal move for the player to move, in canonical order."""
        if self.ruleset.forced_capture:
            return [MOVES[i] for i in self._ids()]
        out: list[Move] = []
        for i in self._ids():
            m = MOVES[i]
            if m.kind == "capture":
                out.extend(rules.capture_choices(self, m.card))
            else:
                out.append(m)
        return out

    def is_legal(self, move: Move | str) -> bool:
        """True if ``move`` (a Move or its text) is legal here."""
        try:
            self.check(move)
        except MulleError:
            return False
        return True

    def check(self, move: Move | str) -> Move:
        """The legal :class:`Move` that ``move`` (a Move or its text) names here, nothing played.

        Raises :class:`InvalidMoveError` for text that is no move, :class:`IllegalMoveError`
        (saying why, e.g. ``KL 5 is not in your hand``) for a move not legal here, and
        :class:`GameOverError` once the game is over.
        """
        if self.over:
            raise GameOverError(f"the game is over (final scores {self.scores()}); no move can be played")
        if isinstance(move, str):
            move = Move.from_str(move)
        elif not isinstance(move, Move):
            raise InvalidMoveError(f"a move must be a Move or its text, not {move!r}")
        forced = self.ruleset.forced_capture
        if move.id is not None:
            if move.id in self._ids() and (forced or move.kind != "capture"):
                return move
            if not forced and move.kind == "capture" and move.id in self._ids():
                choices = rules.capture_choices(self, move.card)
                if move in choices:
                    return move
                raise IllegalMoveError(
                    f"illegal move {str(move)!r} for player {self.to_move}: with forced_capture=False a capture "
                    f"names what it takes; choose one of: {', '.join(map(str, choices))}"
                )
        elif move in self.legal_moves():
            return move
        raise IllegalMoveError(f"illegal move {str(move)!r} for player {self.to_move}: {rules.explain(self, move)}")

    def play(self, move: Move | str) -> Self:
        """Check and apply one move (a :class:`Move` or its text); returns ``self``.

        Raises :class:`IllegalMoveError` (saying why) and leaves the state untouched
        when the move is not legal here.
        """
        self.play_unchecked(self.check(move))
        return self

    def set_hand(self, player: int, cards: Iterable[int]) -> Self:
        """Replace ``player``'s hand with ``cards`` (faces or Cards); returns ``self``.

        For search agents trying hypotheses on their own copies: no rule is checked
        (``check_invariants`` does that), but the cards are (faces 0..51, at most
        :data:`~mulle_env.engine.rules.MAX_STATE_CARDS` cards in the state) and cached
        legal moves are dropped.
        """
        self._set_hand(_seat(player), hand_faces(cards))
        return self

    def is_over(self) -> bool:
        """True once the last set has been scored."""
        return self.over

    # ----- scores ----------------------------------------------------------------
    def set_sheet(self, player: int) -> Sheet:
        """The current set's score sheet for ``player`` so far."""
        player = _seat(player)
        return sheet(self.mpts[player], self.tabbe[player], self.ipts[player])

    def score(self, player: int) -> Sheet:
        """``player``'s game sheet so far: finished sets plus the set in play."""
        if player.__class__ is not int or player not in (0, 1):
            player = _seat(player)
        sheets = self.sheets
        if not sheets:
            return self.set_sheet(player)
        done = [s[player] for s in sheets]
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
        sheets = self.sheets
        per = (tuple(s[0] for s in sheets), tuple(s[1] for s in sheets))
        totals = (add_sheets(per[0]), add_sheets(per[1]))
        a, b = totals[0]["total"], totals[1]["total"]
        return GameResult(per, totals, (a, b), 0 if a > b else 1 if b > a else None)

    # ----- views and the canonical form --------------------------------------------
    def _public_part(self) -> PublicPart:
        """(mulle, intake, tabbe, scores, sheets) as views show them; cached until a capture or a set's end."""
        public = self._public
        if public is None:
            card = CARDS.__getitem__  # map() with a C-level getter: views are built every decision
            mulle, intake, tabbe = self.mulle, self.intake, self.tabbe
            public = self._public = (  # type: ignore[misc]  # the slot is the backend class's
                (tuple(map(card, mulle[0])), tuple(map(card, mulle[1]))),
                (tuple(map(card, intake[0])), tuple(map(card, intake[1]))),
                (tabbe[0], tabbe[1]),
                (self.score(0), self.score(1)),
                tuple(self.sheets),
            )
        return public

    def _build_views(self) -> tuple[Build, ...]:
        return tuple(Build(v, tuple(CARDS[f] for f in b[0]), b[1], b[2]) for v, b in sorted(self.builds.items()))

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form: every field, piles sorted, builds by value."""
        table: list[Any] = [CARD_NAMES[f] for f in self.loose]
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

    def __repr__(self) -> str:
        return (
            f"<GameState set {self.set_no} deal {self.deal_no} to_move {self.to_move} "
            f"scores {self.scores()}{' over' if self.over else ''}>"
        )

    def __str__(self) -> str:
        from .render import render_state

        return render_state(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # The canonical form plus what it leaves out: the last move (and what it took).
        return (_restore, (type(self), self.to_dict(), self.last_move, self.last_taken))

    # ----- making positions ----------------------------------------------------------
    def _load_fields(self, hands: Sequence[Iterable[int]], loose: Iterable[int], builds: Mapping[int, StoredBuild],
                     deck: Iterable[int], mulle: Sequence[Iterable[int]], intake: Sequence[Iterable[int]],
                     tabbe: Sequence[int], to_move: int, set_no: int, deal_no: int, last_capturer: int | None,
                     sheets: Iterable[tuple[Sheet, Sheet]], over: bool, last_move: tuple[int, Move] | None = None,
                     last_taken: Iterable[int] = ()) -> Self:
        """Load a whole position (the backend's ``_load``, which checks what memory safety needs)."""
        self._load(hands, loose, builds, deck, mulle, intake, tabbe, to_move, set_no, deal_no, last_capturer,
                   sheets, over, last_move, last_taken)
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any], ruleset: Ruleset | dict[str, Any] | None = None) -> Self:
        """Read a position (canonical or hand-written); see docs/engine.md for the keys.

        Only ``to_move``, ``hands`` and ``table`` are required. ``ruleset`` given here
        wins over the dict's. Raises :class:`InvalidPositionError` naming what is wrong.
        """
        from .position import read_position

        return read_position(cls, data, ruleset)

    @classmethod
    def from_view(cls, view: PlayerView, opponent_hand: Iterable[int | str], deck: Iterable[int | str],
                  seed: int | None = None) -> Self:
        """A full state consistent with ``view``, given guesses for the hidden cards.

        Search agents determinize with this: ``opponent_hand`` and ``deck`` are their
        sample of what the viewer cannot see; ``seed`` fixes the later sets' deals. Without
        a seed they are dealt from a fresh random one: a fixed default would make every
        determinization of a game deal the same later sets (and, for a game played with
        that very seed, the real ones).
        """
        if seed is None:
            seed = _FRESH_SEEDS.getrandbits(63)
        elif (why := seed_problem(seed)) is not None:
            # Here, for both backends: the compiled core's constructor took -1 and 2**64 (masked to other seeds'
            # deals) and worded a bad type its own way, while the reference refused them; Casino's from_view alike.
            raise InvalidPositionError(why)
        hidden = sorted(_guessed_face(f, "opponent_hand") for f in opponent_hand)
        dealt = [_guessed_face(f, "deck") for f in deck]
        if len(dealt) % (2 * rules.HAND_SIZE):
            # The deck is dealt a hand to each player at a time: any other size ends a set with cards undealt
            # and leaves a player to move without a card (both backends, one refusal).
            raise InvalidPositionError(
                f"a determinization's deck is dealt {rules.HAND_SIZE} cards to each player at a time, so it holds a "
                f"multiple of {2 * rules.HAND_SIZE} cards, not {len(dealt)} (the view's deck holds {view.deck_size})")
        st = cls(view.ruleset, seed)
        p = view.player
        own = list(view.hand)
        st._load(
            (own, hidden) if p == 0 else (hidden, own),
            view.loose,
            {b.value: (b.cards, b.owner, b.locked) for b in view.builds},
            dealt,
            view.mulle,
            view.intake,
            view.tabbe,
            view.to_move,
            view.set_no,
            view.deal_no,
            view.last_capturer,
            view.sheets,
            view.over,
            view.last_move,
            view.last_taken,
        )
        return st

    def check_invariants(self, complete: bool = True) -> None:
        """Assert the invariants of RULES.md; raise :class:`InvalidPositionError` if broken.

        ``complete``: the state comes from a full deal, so all 104 cards of the set
        must be accounted for exactly once.
        """
        from .position import check_invariants

        check_invariants(self, complete)


def _restore(cls: type[_State], data: dict[str, Any], last_move: tuple[int, Move] | None,
             last_taken: tuple[Card, ...]) -> _State:
    """Unpickle a state: its canonical form plus its last move (:meth:`GameStateBase.__reduce__`)."""
    st = cls.from_dict(data)
    if last_move is not None or last_taken:
        st._load(st.hands, st.loose, st.builds, st.deck, st.mulle, st.intake, st.tabbe, st.to_move, st.set_no,
                 st.deal_no, st.last_capturer, st.sheets, st.over, last_move, last_taken)
    return st


class GameState(GameStateBase):
    """A position of a game of Mulle, and the game's rules applied to it: the pure-Python reference.

    Create one with :func:`new_game` or :meth:`from_dict`; play with :meth:`play`.
    ``play`` mutates the state (and returns it); :meth:`copy` gives an independent one.
    The position lives in private fields that :mod:`.rules` changes; the public attributes
    are read-only and hand out fresh values, as the compiled core's do.
    """

    __slots__ = (
        "_ruleset", "_seed", "_hands", "_loose", "_builds", "_deck", "_mulle", "_intake",
        "_tabbe", "_to_move", "_set_no", "_deal_no", "_last_capturer", "_sheets", "_over",
        "_mpts", "_ipts", "_last_move", "_last_taken", "_legal", "_public",
    )

    def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None:
        if ruleset is None:
            ruleset = Ruleset()
        elif not isinstance(ruleset, Ruleset):
            raise ValueError(f"ruleset must be a Ruleset, not {ruleset!r}")
        if seed is not None:
            seed = check_seed(seed)  # the one seed domain (docs/engine.md, "Seeds"); None: a position by hand
        self._ruleset = ruleset
        self._seed = seed
        self._hands: list[list[int]] = [[], []]
        self._loose: list[int] = []
        self._builds: dict[int, tuple[tuple[int, ...], int | None, bool]] = {}
        self._deck: list[int] = []
        self._mulle: list[list[int]] = [[], []]
        self._intake: list[list[int]] = [[], []]
        self._tabbe = [0, 0]
        self._to_move = 0
        self._set_no = 1
        self._deal_no = 1
        self._last_capturer: int | None = None
        self._sheets: list[tuple[Sheet, Sheet]] = []
        self._over = False
        self._mpts = [0, 0]
        self._ipts = [0, 0]
        self._last_move: tuple[int, Move] | None = None
        self._last_taken: tuple[Card, ...] = ()
        self._legal: tuple[int, ...] | None = None
        # Captured piles and scores as views show them; they change only when a capture
        # or a set end happens, which is when rules.py clears this cache.
        self._public: PublicPart | None = None

    # ----- the position, read-only ---------------------------------------------------
    ruleset = property(lambda self: self._ruleset, doc="The Ruleset.")
    seed = property(lambda self: self._seed, doc="The game's seed (None: 0).")
    to_move = property(lambda self: self._to_move, doc="Seat to move.")
    set_no = property(lambda self: self._set_no, doc="Set in play (1-based).")
    deal_no = property(lambda self: self._deal_no, doc="Deal in play (1-based).")
    last_capturer = property(lambda self: self._last_capturer, doc="Last seat to capture, or None.")
    over = property(lambda self: self._over, doc="True once the last set is scored.")
    last_move = property(lambda self: self._last_move, doc="(player, Move) of the last move, or None.")
    last_taken = property(lambda self: self._last_taken, doc="Table cards the last move captured.")
    hands = property(lambda self: [self._hands[0][:], self._hands[1][:]],
                     doc="Both hands (faces, sorted): a new list on every read.")
    loose = property(lambda self: self._loose[:], doc="Loose table cards (faces, sorted).")
    builds = property(lambda self: dict(self._builds), doc="Builds: {value: (cards, owner, locked)}.")
    deck = property(lambda self: self._deck[:], doc="The undealt cards, next card first.")
    mulle = property(lambda self: [self._mulle[0][:], self._mulle[1][:]], doc="Both mulle piles.")
    intake = property(lambda self: [self._intake[0][:], self._intake[1][:]], doc="Both intake piles.")
    tabbe = property(lambda self: self._tabbe[:], doc="Tabbes of the set in play.")
    mpts = property(lambda self: self._mpts[:], doc="Mulle points of the set in play.")
    ipts = property(lambda self: self._ipts[:], doc="Intake points of the set in play.")
    sheets = property(lambda self: [(dict(a), dict(b)) for a, b in self._sheets],
                      doc="Score sheets of the finished sets: [(sheet0, sheet1), ...].")

    # ----- dealing -------------------------------------------------------------------
    def deal_set(self) -> None:
        """Shuffle a fresh 104-card deck for the current set and make its first deal."""
        seed = 0 if self._seed is None else self._seed
        deck = shuffled([f for f in range(NUM_FACES) for _ in range(COPIES)], derive_seed(seed, self._set_no))
        h = rules.HAND_SIZE
        self._hands = [sorted(deck[:h]), sorted(deck[h : 2 * h])]
        self._loose = sorted(deck[2 * h : 2 * h + rules.TABLE_DEAL])
        self._deck = deck[2 * h + rules.TABLE_DEAL :]
        self._builds = {}
        self._mulle = [[], []]
        self._intake = [[], []]
        self._tabbe = [0, 0]
        self._mpts = [0, 0]
        self._ipts = [0, 0]
        self._last_capturer = None
        self._deal_no = 1
        self._to_move = self.leader()
        self._legal = None
        self._public = None

    # ----- legal moves and playing ---------------------------------------------------
    def legal_move_ids(self) -> list[int]:
        """Ids of the legal moves (``Move.id``, the action codec's indices), canonical order.

        Under ``forced_capture=False`` a capture's id stands for all its choices.
        The list is the caller's own.
        """
        return list(self._ids())

    def legal_ids(self) -> tuple[int, ...]:
        """The legal move ids as the state's own cached tuple, without a copy, for hot paths.

        A tuple, so what is handed out cannot be written back: an id appended to a cached
        list would have been "legal" for every caller that checks against it.
        """
        return self._ids()

    def _ids(self) -> tuple[int, ...]:
        # The cache itself (immutable), for the package's hot paths.
        ids = self._legal
        if ids is None:
            ids = self._legal = tuple(rules.legal_ids(self))
        return ids

    def play_unchecked(self, move: Move) -> GameState:
        """Apply a move known to be legal (from :meth:`legal_moves`), skipping the check."""
        rules.apply(self, move)
        return self

    def play_id(self, move_id: int) -> None:
        """Apply the legal move with id ``move_id`` (from :meth:`legal_move_ids`), unchecked.

        The fastest way to play from Python (environments, rollouts, benchmarks): the
        same as ``play_unchecked(MOVES[move_id])``; returns ``None``. ``move_id`` is an
        int from 0 to ``NUM_MOVE_IDS - 1`` (a bool is refused: it is no action id).
        """
        if move_id.__class__ is not int or not 0 <= move_id < _NUM_IDS:
            move_id = _move_id(move_id)
        if self._over:
            raise GameOverError("the game is over")
        rules.apply(self, MOVES[move_id])

    def copy(self) -> GameState:
        """An independent copy (cheap: lists and tuples only)."""
        st = GameState.__new__(GameState)
        st._ruleset = self._ruleset
        st._seed = self._seed
        st._hands = [self._hands[0][:], self._hands[1][:]]
        st._loose = self._loose[:]
        st._builds = dict(self._builds)
        st._deck = self._deck[:]
        st._mulle = [self._mulle[0][:], self._mulle[1][:]]
        st._intake = [self._intake[0][:], self._intake[1][:]]
        st._tabbe = self._tabbe[:]
        st._to_move = self._to_move
        st._set_no = self._set_no
        st._deal_no = self._deal_no
        st._last_capturer = self._last_capturer
        st._sheets = self._sheets[:]
        st._over = self._over
        st._mpts = self._mpts[:]
        st._ipts = self._ipts[:]
        st._last_move = self._last_move
        st._last_taken = self._last_taken
        st._legal = self._legal
        st._public = self._public
        return st

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: own hand, the table, public piles and counts."""
        if player.__class__ is not int or player not in (0, 1):
            player = _seat(player)
        card = CARDS.__getitem__
        public = self._public_part()
        return PlayerView(
            player=player,
            to_move=self._to_move,
            hand=tuple(map(card, self._hands[player])),
            opponent_hand_size=len(self._hands[1 - player]),
            deck_size=len(self._deck),
            loose=tuple(map(card, self._loose)),
            builds=self._build_views() if self._builds else (),
            mulle=public[0],
            intake=public[1],
            tabbe=public[2],
            scores=public[3],
            sheets=public[4],
            set_no=self._set_no,
            deal_no=self._deal_no,
            last_capturer=self._last_capturer,
            last_move=self._last_move,
            last_taken=self._last_taken,
            ruleset=self._ruleset,
            over=self._over,
        )

    # ----- loading ---------------------------------------------------------------------
    def _load(self, hands: Sequence[Iterable[int]], loose: Iterable[int], builds: Mapping[int, StoredBuild],
              deck: Iterable[int], mulle: Sequence[Iterable[int]], intake: Sequence[Iterable[int]],
              tabbe: Sequence[int], to_move: int, set_no: int, deal_no: int, last_capturer: int | None,
              sheets: Iterable[tuple[Sheet, Sheet]], over: bool, last_move: tuple[int, Move] | None = None,
              last_taken: Iterable[int] = ()) -> None:
        """The whole position at once (from_dict, from_view); the same bounds as the compiled core's ``_load``."""
        check_load_bounds(self._ruleset, hands, loose, builds, deck, mulle, intake, tabbe, to_move, set_no,
                          deal_no, last_capturer, sheets, over, last_move, last_taken)
        self._hands = [sorted(map(int, hands[0])), sorted(map(int, hands[1]))]
        self._loose = sorted(map(int, loose))
        self._builds = {int(v): (tuple(sorted(map(int, b[0]))), b[1], bool(b[2])) for v, b in builds.items()}
        self._deck = [int(f) for f in deck]
        self._mulle = [sorted(map(int, mulle[0])), sorted(map(int, mulle[1]))]
        self._intake = [sorted(map(int, intake[0])), sorted(map(int, intake[1]))]
        self._tabbe = [int(tabbe[0]), int(tabbe[1])]
        self._to_move = int(to_move)
        self._set_no = int(set_no)
        self._deal_no = int(deal_no)
        self._last_capturer = last_capturer
        self._sheets = [(dict(a), dict(b)) for a, b in sheets]
        self._over = bool(over)
        self._last_move = last_move
        self._last_taken = tuple(CARDS[int(f)] for f in last_taken)
        mv = self._ruleset.mulle_values
        self._mpts = [sum(mv[f] for f in self._mulle[p]) for p in (0, 1)]
        self._ipts = [sum(INTAKE_POINTS[f] for f in self._mulle[p] + self._intake[p]) for p in (0, 1)]
        self._legal = None
        self._public = None

    def _set_hand(self, player: int, hand: list[int]) -> None:
        total = sum(map(len, (*self._hands, self._loose, self._deck, *self._mulle, *self._intake)))
        total += sum(len(b[0]) for b in self._builds.values()) - len(self._hands[player]) + len(hand)
        if total > rules.MAX_STATE_CARDS:
            raise ValueError(f"the hand would make the state hold {total} cards; at most {rules.MAX_STATE_CARDS}")
        self._hands[player] = sorted(hand)
        self._legal = None


_NUM_IDS = len(MOVES)


def _move_id(move_id: Any) -> int:
    """``move_id`` as an int 0..NUM_MOVE_IDS-1 (numpy ints too); a ``ValueError`` for a bool or anything else."""
    try:
        i = operator.index(move_id)
    except TypeError:
        i = None
    if isinstance(move_id, bool) or i is None or not 0 <= i < _NUM_IDS:
        raise ValueError(f"a move id is an int from 0 to {_NUM_IDS - 1}, not {move_id!r}")
    return i


def check_load_bounds(ruleset: Ruleset, hands: Any, loose: Any, builds: Any, deck: Any, mulle: Any, intake: Any,
                      tabbe: Any, to_move: Any, set_no: Any, deal_no: Any, last_capturer: Any, sheets: Any,
                      over: Any, last_move: Any = None, last_taken: Any = ()) -> None:
    """The bounds every loaded position keeps on both backends (what memory safety needs in C).

    Faces 0..51; at most :data:`~mulle_env.engine.rules.MAX_STATE_CARDS` cards; build values
    2..16; counts (tabbes, sheet entries) 0..:data:`~mulle_env.engine.rules.COUNT_LIMIT`; seats
    0 or 1; set 1..sets; deal 1..6; at most ``sets`` finished sets (``sets - 1`` unless over).
    Anything of another shape is a ``ValueError`` too. The rules of a position (each face at
    most twice, an owner holds its build's value, ...) are checked by
    :func:`~mulle_env.engine.position.check_invariants`.
    """
    try:
        pairs = [_two(hands, "hands"), _two(mulle, "mulle"), _two(intake, "intake")]
        if not isinstance(builds, dict):
            raise ValueError(f"builds must be a dict {{value: (cards, owner, locked)}}, not {builds!r}")
        piles = [*pairs[0], list(loose), list(deck), *pairs[1], *pairs[2]]
        for v, b in builds.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 2 <= v <= 16 or not isinstance(b, tuple) \
                    or len(b) != 3 or not b[0]:
                raise ValueError(f"a build is value 2..16: (cards, owner, locked) with cards, not {v!r}: {b!r}")
            if b[1] not in (0, 1, None) or isinstance(b[1], bool):
                raise ValueError(f"a build's owner is 0, 1 or None, not {b[1]!r}")
            piles.append(list(b[0]))
        counts = _two(tabbe, "tabbe")
        finished = [(_two(pair, "a finished set")) for pair in sheets]
        taken = list(last_taken)
    except TypeError as exc:
        raise ValueError(f"a position's parts are sequences of faces: {exc}") from None
    if last_move is not None and not (isinstance(last_move, tuple) and len(last_move) == 2
                                      and last_move[0] in (0, 1) and not isinstance(last_move[0], bool)):
        raise ValueError(f"last_move is None or (player, Move), not {last_move!r}")
    for pile in (*piles, taken):
        for f in pile:
            if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f < NUM_FACES:
                raise ValueError(f"cards are faces 0..{NUM_FACES - 1}, not {f!r}")
    total = sum(len(p) for p in piles)
    if total > rules.MAX_STATE_CARDS:
        raise ValueError(f"the position holds {total} cards; a state holds at most {rules.MAX_STATE_CARDS}")
    for x in counts:
        _bounded(x, "a tabbe count")
    for pair in finished:
        for side in pair:
            for k in ("mulle", "tabbe", "intake"):
                if not isinstance(side, dict) or k not in side:
                    raise ValueError(f"a score sheet is a dict with the key {k!r}, not {side!r}")
                _bounded(side[k], "a score sheet entry")
    if to_move not in (0, 1) or isinstance(to_move, bool):
        raise ValueError(f"to_move must be 0 or 1, not {to_move!r}")
    if last_capturer not in (0, 1, None) or isinstance(last_capturer, bool):
        raise ValueError(f"last_capturer must be 0, 1 or None, not {last_capturer!r}")
    if isinstance(set_no, bool) or not isinstance(set_no, int) or not 1 <= set_no <= ruleset.sets:
        raise ValueError(f"set_no must be 1..{ruleset.sets} (the ruleset's sets), not {set_no!r}")
    if isinstance(deal_no, bool) or not isinstance(deal_no, int) or not 1 <= deal_no <= rules.DEALS_PER_SET:
        raise ValueError(f"deal_no must be 1..{rules.DEALS_PER_SET}, not {deal_no!r}")
    if len(finished) > ruleset.sets or (len(finished) == ruleset.sets and not over):
        raise ValueError(f"{len(finished)} finished sets do not fit a game of {ruleset.sets} sets")


def _two(value: Any, what: str) -> list[Any]:
    """``value`` as a list of its two entries; a ``ValueError`` for anything else."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{what} must be two entries (seat 0, seat 1), not {value!r}")
    if what in ("hands", "mulle", "intake") and not all(isinstance(v, (list, tuple)) for v in value):
        raise ValueError(f"{what} must be two piles of faces, not {value!r}")
    return list(value)


def _bounded(x: object, what: str) -> None:
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= rules.COUNT_LIMIT:
        raise ValueError(f"{what} must be a whole number 0..{rules.COUNT_LIMIT}, not {x!r}")


def new_game(seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """A new game: first deal of the first set done, seat 0 to move."""
    return start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """The state reached by playing ``moves`` from ``new_game(seed, ruleset)``.

    Each move is checked; an illegal one raises :class:`IllegalMoveError` naming its
    position in the list.
    """
    return replay_game(GameState, seed, moves, ruleset)


def start_game(cls: type[_State], seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> _State:
    """``new_game`` of the backend whose state class is ``cls`` (both backends use this).

    Checks ``seed`` (the one seed domain, :func:`~mulle_env.engine.rng.seed_problem`) and
    reads a dict ``ruleset`` with :meth:`Ruleset.from_dict`, then deals the first set.
    """
    why = seed_problem(seed)
    if why is not None:
        raise ValueError(why)
    seed = int(seed)
    if ruleset is not None and not isinstance(ruleset, Ruleset):
        ruleset = Ruleset.from_dict(ruleset)
    st = cls(ruleset, seed)
    st.deal_set()
    return st


def replay_game(cls: type[_State], seed: int, moves: Iterable[Move | str],
                ruleset: Ruleset | dict[str, Any] | None = None) -> _State:
    """``replay`` of the backend whose state class is ``cls`` (both backends use this)."""
    return play_all(start_game(cls, seed, ruleset), moves, "replay")


def play_all(st: _State, moves: Iterable[Move | str], what: str = "replay") -> _State:
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
