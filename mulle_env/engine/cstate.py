"""The game state on the compiled rules core (``_core.c``), behind :mod:`.state`'s public API.

:class:`GameState` here keeps the position in a C struct and runs legal move generation,
move application, the forced-capture search, deals and scoring in C. Everything else
(parsing, validation of outside input, errors and their messages, views, the canonical
form) is the Python reference's own code, shared with :class:`.state.GameState`, so the
two behave alike by construction; ``tests/test_engines_agree.py`` checks the rest.

State attributes (``hands``, ``loose``, ``builds``, ...) read like the Python engine's,
with the same values, but each read builds a fresh snapshot: assign a whole attribute
(``st.hands = [...]``) or use :meth:`GameState.set_hand` to change one; mutating the
returned list changes nothing.

Under ``forced_capture=False`` the C core still generates the legal ids and applies the
chosen capture; only the enumeration of a capture's choices (``capture ... taking ...``)
runs in Python (:func:`.rules.capture_choices`).
"""

from __future__ import annotations

from collections.abc import Iterable

from . import _core, rules
from . import state as _py
from .cards import CARDS, parse_card
from .errors import InvalidPositionError
from .moves import CAPTURE, MOVES, Move
from .position import read_position
from .ruleset import Ruleset

_core.setup(MOVES, CARDS, InvalidPositionError, _py.Build)
_DEFAULT_RULES = Ruleset()  # frozen, so one instance serves every default game

# Public names of the state module that do not depend on the backend.
ENGINE_VERSION = _py.ENGINE_VERSION
Build = _py.Build
GameResult = _py.GameResult
PlayerView = _py.PlayerView

#: The compiled batched stepper: ``Stepper(num_envs, ruleset, internal_random, over=None, to_move=None)``
#: runs K games in C for :class:`mulle_env.vector_env.MulleVectorEnv` (its "Steppers" section documents
#: the contract). Public here so that callers reach it as ``backends()["c"].Stepper``, not through ``_core``.
Stepper = _core.Stepper

_new_tuple = tuple.__new__

# The methods whose Python reference code works unchanged on the C attributes.
_SHARED = (
    "leader", "is_legal", "_check", "is_over", "set_sheet", "score", "scores", "result",
    "_build_views", "to_dict", "to_json", "key", "__repr__", "__str__", "check_invariants",
)


class GameState(_core.Core):
    """A position of a game of Mulle on the compiled core; the API of :class:`.state.GameState`.

    Create one with :func:`new_game` or :meth:`from_dict`; play with :meth:`play`.
    ``play`` mutates the state (and returns it); :meth:`copy` gives an independent one.
    """

    __slots__ = ()

    def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None:
        super().__init__(ruleset if ruleset is not None else _DEFAULT_RULES, seed)

    def legal_ids(self) -> list[int]:
        """The legal move ids as the state's own cached list, without a copy, for hot paths.

        Read it, never change it (it is the cache :meth:`legal_move_ids` copies from).
        """
        return self._ids()

    def legal_moves(self) -> list[Move]:
        """Every legal move for the player to move, in canonical order."""
        if self.ruleset.forced_capture:
            return [MOVES[i] for i in self._ids()]
        out: list[Move] = []
        for i in self._ids():
            m = MOVES[i]
            if m.kind == CAPTURE:
                out.extend(rules.capture_choices(self, m.card))
            else:
                out.append(m)
        return out

    def play(self, move: Move | str) -> GameState:
        """Check and apply one move (a :class:`Move` or its text); returns ``self``.

        Raises :class:`IllegalMoveError` (saying why) and leaves the state untouched
        when the move is not legal here.
        """
        self.play_unchecked(self._check(move))
        return self

    def set_hand(self, player: int, cards: Iterable[int]) -> GameState:
        """Replace ``player``'s hand with ``cards`` (faces or Cards); returns ``self``.

        For search agents trying hypotheses on their own copies: no invariant is
        checked (``check_invariants`` does that), but cached legal moves are dropped.
        """
        player, hand = _py._seat(player), _py.hand_faces(cards)  # the reference engine's checks
        hands = self.hands
        hands[player] = hand
        self.hands = hands
        return self

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: own hand, the table, public piles and counts."""
        if player.__class__ is not int or player not in (0, 1):
            player = _py._seat(player)  # the reference engine's check (numpy ints pass, 1.0 and True do not)
        public = self._public
        if public is None:
            card = CARDS.__getitem__
            mulle, intake, tabbe = self.mulle, self.intake, self.tabbe
            public = self._public = (
                (tuple(map(card, mulle[0])), tuple(map(card, mulle[1]))),
                (tuple(map(card, intake[0])), tuple(map(card, intake[1]))),
                (tabbe[0], tabbe[1]),
                (self.score(0), self.score(1)),
            )
        return _new_tuple(PlayerView, self._view_tuple(player, public))

    def copy(self) -> GameState:
        """An independent copy (one memcpy of the C struct)."""
        return self._core_copy()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (GameState, _py.GameState)) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable: use key()

    def __reduce__(self):
        return (_from_dict_exact, (self.to_dict(), self.last_move, self.last_taken))

    @classmethod
    def from_py(cls, st: _py.GameState) -> GameState:
        """The same position as the Python engine's ``st``, on the C core."""
        out = cls(st.ruleset, st.seed)
        out.hands = st.hands
        out.loose = st.loose
        out.builds = st.builds
        out.deck = st.deck
        out.mulle = st.mulle
        out.intake = st.intake
        out.tabbe = st.tabbe
        out.mpts = st.mpts
        out.ipts = st.ipts
        out.to_move = st.to_move
        out.set_no = st.set_no
        out.deal_no = st.deal_no
        out.last_capturer = st.last_capturer
        out.sheets = st.sheets
        out.over = st.over
        out.last_move = st.last_move
        out.last_taken = st.last_taken
        return out

    @classmethod
    def from_view(cls, view: PlayerView, opponent_hand: Iterable, deck: Iterable, seed: int | None = None) -> GameState:
        """A full state consistent with ``view``, given guesses for the hidden cards.

        Search agents determinize with this: ``opponent_hand`` and ``deck`` are their
        sample of what the viewer cannot see; ``seed`` fixes the later sets' deals. Without
        a seed they are dealt from a fresh random one (as :meth:`.state.GameState.from_view`).
        """
        if seed is None:
            seed = _py._FRESH_SEEDS.getrandbits(63)
        st = cls(view.ruleset, seed)
        p = view.player
        hidden = sorted(int(f) if isinstance(f, int) else parse_card(f) for f in opponent_hand)
        st.hands = (view.hand, hidden) if p == 0 else (hidden, view.hand)
        st.loose = view.loose
        if view.builds:
            st.builds = {b.value: (b.cards, b.owner, b.locked) for b in view.builds}
        st.deck = [int(f) if isinstance(f, int) else parse_card(f) for f in deck]
        st.mulle = view.mulle
        st.intake = view.intake
        st.tabbe = view.tabbe
        st.to_move = view.to_move
        st.set_no = view.set_no
        st.deal_no = view.deal_no
        st.last_capturer = view.last_capturer
        st.sheets = view.sheets
        st.over = view.over
        st.last_move = view.last_move
        st.last_taken = view.last_taken
        st._recount()
        return st

    @classmethod
    def from_dict(cls, data: dict, ruleset: Ruleset | dict | None = None) -> GameState:
        """Read a position (canonical or hand-written); see docs/engine.md for the keys.

        Only ``to_move``, ``hands`` and ``table`` are required. ``ruleset`` given here
        wins over the dict's. Raises :class:`InvalidPositionError` naming what is wrong.
        """
        # All validation runs in the Python reference before anything reaches C.
        st = read_position(_py.GameState, data, ruleset)
        try:
            return cls.from_py(st)
        except (OverflowError, ValueError) as exc:  # e.g. a tabbe count beyond 64 bits
            raise InvalidPositionError(f"the position does not fit the compiled core: {exc}") from None

    # The reference's from_json (its checks and errors), reading through this class's from_dict.
    from_json = classmethod(_py.GameState.from_json.__func__)


for _name in _SHARED:
    setattr(GameState, _name, getattr(_py.GameState, _name))
del _name


def _from_dict_exact(data: dict, last_move, last_taken) -> GameState:
    st = GameState.from_dict(data)
    st.last_move = last_move
    st.last_taken = last_taken
    return st


def new_game(seed: int = 0, ruleset: Ruleset | None = None) -> GameState:
    """A new game: first deal of the first set done, seat 0 to move."""
    return _py.start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | None = None) -> GameState:
    """The state reached by playing ``moves`` from ``new_game(seed, ruleset)``.

    Each move is checked; an illegal one raises :class:`IllegalMoveError` naming its
    position in the list.
    """
    return _py.replay_game(GameState, seed, moves, ruleset)
