"""Casino's side of the environments: its action codec, its observation, and its game object.

The env core and its faces know no rules (:mod:`mulle_env.games`); this module tells them
Casino's (``shared/CASINO.md``, the engine in :mod:`mulle_env.casino`).

Actions. Casino has two action schemes, chosen by the one ruleset flag that decides whether
moves have ids:

* ``gather_all=True`` (the default): an action is a move id, ``Discrete(504)``
  (:data:`mulle_env.casino.NUM_MOVE_IDS`): action ``i`` is always the move
  ``casino.MOVES[i]``, in every position (the captures and court captures by card, then the
  new builds by card and value, the increases by card and build value, the trails).
* ``gather_all=False``: every valid choice of cards is its own move and names what it takes
  (``capture HJ 5 take KL 5, [KL 2 SP 3]``), so moves have no ids. Action ``k`` is the
  ``k``-th legal move of the position in the engine's canonical order
  (``state.legal_moves()[k]``), ``Discrete(`` :data:`CHOICE_ACTIONS` ``)``. Every legal move
  is reachable; the trade-off is that an index means a different move in each position (a
  policy must score moves from features of the move, not learn a fixed meaning per index),
  and that the number of legal moves has no small bound: collections of disjoint groups
  grow combinatorially with the loose cards. Measured under random play with every
  combination of the other flags (7.7 million decisions, ``benchmarks/bench_casino_choices.py``,
  docs/casino_env.md): median 4 legal moves, 99.99% of decisions at most 285, the most seen
  2,171. :data:`CHOICE_ACTIONS` is close to twice that; a position with more legal moves is
  refused with a :class:`TooManyMovesError` that says how many, never silently cut short.

Observation: a float32 vector of :data:`OBS_SIZE` entries built only from
:meth:`GameState.view <mulle_env.casino.GameState.view>` (:data:`OBS_SLICES`, described slice
by slice in :func:`layout_description`); its bounds depend on the ruleset
(:func:`observation_bounds`).

>>> from mulle_env import casino
>>> from mulle_env.games import casino as cenv
>>> st = casino.new_game(seed=7)
>>> a = cenv.legal_actions(st)[0]
>>> cenv.decode(st, a) == st.legal_moves()[0] and cenv.encode(st, st.legal_moves()[0]) == a
True
>>> cenv.encode_state(st, 0).shape == (cenv.OBS_SIZE,)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from .. import casino
from ..casino.cards import BIG_CASINO, LITTLE_CASINO, SPADE
from ..casino.observation_layout import (
    BUILD_FEATURES,
    BUILD_VALUES,
    FACE_BLOCKS,
    OBS_SIZE,
    OBS_SLICES,
    OBS_VERSION,
    RACE_FEATURES,
    RULE_FEATURES,
    SCALAR_FEATURES,
    SCALES,
    SCORE_SCALE,
)
from ..casino.render import render_view
from ..engine.errors import GameOverError, IllegalMoveError, InvalidRulesetError
from . import EnvGame, IllegalActionError, action_index

if TYPE_CHECKING:
    from ..stepper import Stepper

__all__ = [
    "CASINO", "CASINO_CHOICES", "CasinoGame", "ChoiceState", "UnsupportedRulesetError", "render_view",
    "BUILD_FEATURES", "BUILD_VALUES", "CHOICE_ACTIONS", "FACE_BLOCKS", "MAX_SWEEPS_PER_ROUND", "MOVE_ACTIONS",
    "OBS_DTYPE", "OBS_SIZE", "OBS_SLICES", "RACE_FEATURES", "ROUND_POINT_BOUND", "RULE_FEATURES",
    "SCALAR_FEATURES", "SCALES", "SCORE_SCALE", "TooManyMovesError", "decode", "describe", "encode",
    "encode_state", "encode_view", "layout_description", "legal_actions", "legal_mask", "max_decisions",
    "num_actions", "observation_bounds", "score_bound",
]

# ----- actions -------------------------------------------------------------------------------

#: Actions under ``gather_all=True``: one per move id (``casino.MOVES``).
MOVE_ACTIONS: int = casino.NUM_MOVE_IDS
#: Actions under ``gather_all=False``: action ``k`` is the ``k``-th legal move. Close to twice the most
#: legal moves measured in one position under random play (2,171; module docstring).
CHOICE_ACTIONS: int = 4096

#: How many legal actions an error message lists before it says how many more there are.
_LISTED = 40


class TooManyMovesError(RuntimeError):
    """A ``gather_all=False`` position with more legal moves than the action space has actions.

    The action space cannot reach every move of such a position, so the env refuses it
    instead of dropping moves. It is not the learner's fault (not an :class:`IllegalActionError`):
    the message says how many moves there are, the bound, and how to avoid it.
    """


def num_actions(ruleset: casino.Ruleset | None = None) -> int:
    """Size of the ``Discrete`` action space under ``ruleset``: :data:`MOVE_ACTIONS` or :data:`CHOICE_ACTIONS`."""
    return MOVE_ACTIONS if ruleset is None or ruleset.gather_all else CHOICE_ACTIONS


def _choices(state: casino.GameState) -> list[casino.Move]:
    """The legal moves of a ``gather_all=False`` position, refusing one the action space cannot hold."""
    moves = state.legal_moves()
    if len(moves) > CHOICE_ACTIONS:
        raise TooManyMovesError(
            f"seat {state.to_move} has {len(moves)} legal moves in this position (round {state.round}, "
            f"{len(state.loose)} loose cards on the table), more than the {CHOICE_ACTIONS} actions of the "
            f"gather_all=False action space (action k = the k-th legal move); the env cannot offer every "
            f"move, so it refuses the position instead of dropping moves. Play with gather_all=True (one "
            f"action per move id), or play such positions through the engine (state.legal_moves())")
    return moves


def legal_actions(state: casino.GameState) -> tuple[int, ...]:
    """The legal actions of the seat to move, ascending (empty once the game is over).

    ``gather_all=True``: the legal move ids; ``gather_all=False``: ``0 .. n - 1`` for the ``n``
    legal moves (a :class:`TooManyMovesError` if ``n`` exceeds :data:`CHOICE_ACTIONS`).
    """
    if state.over:
        return ()
    if state.ruleset.gather_all:
        return state.legal_ids()
    return tuple(range(len(_choices(state))))


def legal_mask(state: casino.GameState, dtype: DTypeLike = np.int8, out: NDArray[Any] | None = None
               ) -> NDArray[Any]:
    """A mask of :func:`num_actions` entries, 1 exactly at :func:`legal_actions` (all 0 once the game is over).

    ``dtype=np.int8`` is what Gymnasium's ``Discrete.sample(mask=...)`` and PettingZoo expect.
    ``out`` (zeroed here) avoids an allocation.
    """
    size = num_actions(state.ruleset)
    if out is None:
        out = np.zeros(size, dtype=dtype)
    else:
        out[:] = 0
    if state.over:
        return out
    if state.ruleset.gather_all:
        out[list(state.legal_ids())] = 1
    else:
        out[: len(_choices(state))] = 1
    return out


def _listed(pairs: Sequence[tuple[int, casino.Move]]) -> str:
    shown = ", ".join(f"{a} ({m})" for a, m in pairs[:_LISTED])
    if len(pairs) > _LISTED:
        shown += f", ... and {len(pairs) - _LISTED} more"
    return shown or "none"


def _legal_pairs(state: casino.GameState) -> list[tuple[int, casino.Move]]:
    if state.ruleset.gather_all:
        return [(i, casino.MOVES[i]) for i in state.legal_ids()]
    return list(enumerate(_choices(state)))


def _refusal(state: casino.GameState, move: casino.Move) -> str:
    """Why the engine refuses ``move`` here (its own words)."""
    try:
        state.check(move)
    except IllegalMoveError as exc:
        reason = getattr(exc, "reason", None)
        return str(reason) if reason else str(exc)
    return "it is legal"  # not reached: callers ask only about moves that are not legal


def decode(state: casino.GameState, action: Any) -> casino.Move:
    """The legal move ``action`` stands for in ``state``.

    Raises :class:`IllegalActionError` naming the action, the move it stands for (under
    ``gather_all=True``), why it is not legal, and the legal actions with their moves;
    :class:`~mulle_env.GameOverError` once the game is over; :class:`TooManyMovesError` for a
    ``gather_all=False`` position the action space cannot hold.
    """
    rs = state.ruleset
    i = action_index(action, num_actions(rs))
    if rs.gather_all:
        move = casino.MOVES[i]
        if state.over:
            raise GameOverError(f"action {i} ({move}): the game is over, no action is legal")
        if i in state.legal_ids():
            return move
        raise IllegalActionError(
            f"action {i} ({move}) is not legal for seat {state.to_move}: {_refusal(state, move)}; "
            f"legal actions: {_listed(_legal_pairs(state))}")
    if state.over:
        raise GameOverError(f"action {i}: the game is over, no action is legal")
    moves = _choices(state)
    if i < len(moves):
        return moves[i]
    raise IllegalActionError(
        f"action {i} is not legal for seat {state.to_move}: under gather_all=False action k is the k-th legal "
        f"move, and this position has {len(moves)} (actions 0 to {len(moves) - 1}); "
        f"legal actions: {_listed(list(enumerate(moves)))}")


def encode(state: casino.GameState, move: casino.Move | str) -> int:
    """The action of ``move`` (a :class:`~mulle_env.casino.Move` or its text), which must be legal in ``state``.

    Raises :class:`IllegalActionError` saying why for a move that is not legal here (malformed
    text: :class:`~mulle_env.engine.errors.InvalidMoveError`; after the end:
    :class:`~mulle_env.GameOverError`).
    """
    try:
        m = state.check(move)
    except GameOverError:
        raise
    except IllegalMoveError as exc:
        why = exc.reason or str(exc)
        raise IllegalActionError(f"{move} is not legal for seat {state.to_move}: {why}; "
                                 f"legal actions: {_listed(_legal_pairs(state))}", reason=exc.reason) from None
    if state.ruleset.gather_all:
        assert m.id is not None  # every legal move has an id under gather_all=True
        return m.id
    return _choices(state).index(m)


def describe(state: casino.GameState, action: Any) -> str:
    """The move ``action`` stands for, as text: any action under ``gather_all=True``, a legal one otherwise."""
    if state.ruleset.gather_all:
        return str(casino.MOVES[action_index(action, MOVE_ACTIONS)])
    return str(decode(state, action))


# ----- observation ---------------------------------------------------------------------------

OBS_DTYPE = np.float32

#: Most sweeps one seat makes in a round: it plays 24 cards (the engine's ``MAX_SWEEPS``).
MAX_SWEEPS_PER_ROUND = casino.state.MAX_SWEEPS
#: Most points one seat scores in a round besides sweeps (3 + 1 + 2 + 1 + 4): the engine's ``ROUND_POINTS``.
ROUND_POINT_BOUND = casino.state.ROUND_POINTS
#: Most cards in builds of one value: every numeral card (their values sum to 220, 22 groups of 10).
_MAX_BUILD_CARDS = 40
#: Most builds one seat owns: every build holds at least two of the 40 numeral cards.
_MAX_BUILDS = 20
_NF = len(BUILD_FEATURES)
_NR = len(RACE_FEATURES)
_UNSEEN = OBS_SLICES["unseen"].start
_BUILDS = OBS_SLICES["builds"].start
_MY_RACE = OBS_SLICES["my_race"].start
_OPP_RACE = OBS_SLICES["opp_race"].start
_SCALARS = OBS_SLICES["scalars"].start
_RULES = OBS_SLICES["rules"].start
_CARD = np.arange(52, dtype=np.intp)


def layout_description() -> dict[str, Any]:
    """The observation layout as plain JSON data: every slice's offsets, every feature's name and every scale."""
    return {
        "game": "casino",
        "version": OBS_VERSION,
        "size": OBS_SIZE,
        "slices": [[name, s.start, s.stop] for name, s in OBS_SLICES.items()],
        "face_blocks": list(FACE_BLOCKS),
        "build_values": list(BUILD_VALUES),
        "build_features": list(BUILD_FEATURES),
        "race_features": list(RACE_FEATURES),
        "scalar_features": list(SCALAR_FEATURES),
        "rule_features": list(RULE_FEATURES),
        "scales": dict(SCALES),
    }


def _round_bound(ruleset: casino.Ruleset) -> int:
    """Most points one seat scores in one round under ``ruleset``."""
    return ROUND_POINT_BOUND + (MAX_SWEEPS_PER_ROUND if ruleset.sweeps else 0)


def score_bound(ruleset: casino.Ruleset | None = None) -> float:
    """The largest difference of game totals a game under ``ruleset`` can end with.

    ``rounds=N``: ``N`` rounds of at most :func:`_round_bound` each. Played to a target, every
    round but the last ends with both totals below the target or with equal totals (else the
    game would be over), so the difference before the last round is below the target and the
    last round adds at most one round's points.
    """
    rs = ruleset or casino.Ruleset()
    if rs.rounds is not None:
        return float(rs.rounds * _round_bound(rs))
    return float(rs.target_score - 1 + _round_bound(rs))


def max_decisions(ruleset: casino.Ruleset | None = None) -> int:
    """The most decisions one seat makes in a game: 24 card plays a round, for the most rounds the rules allow."""
    return 24 * (ruleset or casino.Ruleset()).max_rounds


def observation_bounds(ruleset: casino.Ruleset | None = None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Elementwise ``(low, high)`` of the observation under ``ruleset`` (every entry is at least 0)."""
    rs = ruleset or casino.Ruleset()
    low = np.zeros(OBS_SIZE, dtype=OBS_DTYPE)
    high = np.ones(OBS_SIZE, dtype=OBS_DTYPE)
    builds = high[OBS_SLICES["builds"]]
    count = 1 if rs.gather_all else _MAX_BUILDS
    builds[0::_NF] = count
    builds[1::_NF] = count
    builds[2::_NF] = _MAX_BUILD_CARDS / SCALES["build_cards"]
    builds[3::_NF] = _MAX_BUILD_CARDS / SCALES["build_cards"]
    for race in (OBS_SLICES["my_race"], OBS_SLICES["opp_race"]):
        # Also under sweeps=False, where the entry stays 0: a Box entry with low == high draws Gymnasium's warning.
        high[race.start + RACE_FEATURES.index("sweeps")] = MAX_SWEEPS_PER_ROUND / SCALES["sweeps"]
    score = rs.max_rounds * _round_bound(rs) / SCORE_SCALE
    high[_SCALARS + SCALAR_FEATURES.index("my_score")] = score
    high[_SCALARS + SCALAR_FEATURES.index("opp_score")] = score
    return low, high


def _rule_values(rs: casino.Ruleset) -> list[float]:
    return [
        float(rs.gather_all), float(rs.court_capture == "all"), float(rs.sweeps),
        rs.sum_build_max_card / SCALES["sum_build_max_card"],
        (rs.increase_max_cards if rs.increase_max_cards is not None else 52) / SCALES["increase_max_cards"],
        float(rs.trail_with_build), rs.target_score / SCALES["target_score"],
        (rs.rounds or 0) / SCALES["rounds"],
    ]


def _race(pile: Sequence[int], sweeps: int) -> list[float]:
    return [
        len(pile) / SCALES["cards"],
        sum(1 for c in pile if SPADE[c]) / SCALES["spades"],
        sum(1 for c in pile if c % 13 == 0) / SCALES["aces"],
        float(BIG_CASINO in pile),
        float(LITTLE_CASINO in pile),
        sweeps / SCALES["sweeps"],
    ]


def encode_view(view: casino.PlayerView, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
    """The observation of ``view.player`` from their :class:`~mulle_env.casino.PlayerView` (what agents hold).

    ``out`` (float32, :data:`OBS_SIZE`) is overwritten and returned; without it a new array is made.
    """
    if out is None:
        out = np.empty(OBS_SIZE, dtype=OBS_DTYPE)
    p = view.player
    o = 1 - p
    out.fill(0.0)
    faces: list[int] = [*view.hand, *(52 + c for c in view.loose)]
    counts = [[0, 0] for _ in BUILD_VALUES]  # per value: builds of mine, of theirs
    for b in view.builds:
        mine = b.owner == p
        faces.extend((104 if mine else 156) + c for c in b.cards)
        at = _BUILDS + (b.value - 1) * _NF
        col = 0 if mine else 1
        counts[b.value - 1][col] += 1
        out[at + 2 + col] += len(b.cards) / SCALES["build_cards"]
        if b.single:
            out[at + 4 + col] = 1.0
    for v, (mine_n, theirs_n) in enumerate(counts):
        out[_BUILDS + v * _NF] = mine_n
        out[_BUILDS + v * _NF + 1] = theirs_n
    faces.extend(208 + c for c in view.captured[p])
    faces.extend(260 + c for c in view.captured[o])
    idx = np.fromiter(faces, dtype=np.intp, count=len(faces))
    out[idx] = 1.0
    unseen = out[_UNSEEN : _UNSEEN + 52]
    unseen.fill(1.0)
    unseen[idx % 52] = 0.0
    out[_MY_RACE : _MY_RACE + _NR] = _race(view.captured[p], view.sweeps[p])
    out[_OPP_RACE : _OPP_RACE + _NR] = _race(view.captured[o], view.sweeps[o])
    rs = view.ruleset
    out[_SCALARS : _SCALARS + len(SCALAR_FEATURES)] = [
        view.scores[p] / SCORE_SCALE,
        view.scores[o] / SCORE_SCALE,
        view.round / rs.max_rounds,
        len(view.hand) / SCALES["hand"],
        view.opponent_hand_size / SCALES["hand"],
        view.stock_size / SCALES["stock"],
        float(view.to_move == p and not view.over),
        float(p),
        float(view.dealer == p),
        float(view.last_capturer == p),
        float(view.last_capturer == o),
        float(view.over),
    ]
    out[_RULES : _RULES + len(RULE_FEATURES)] = _rule_values(rs)
    return out


def encode_state(state: casino.GameState, seat: int, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
    """The observation of ``seat`` in ``state``: exactly ``encode_view(state.view(seat))``.

    It reads the state only through :meth:`~mulle_env.casino.GameState.view`, so nothing hidden
    from ``seat`` (the other hand, the stock's order) can reach the vector. A state of the
    compiled core writes the same vector in C (its ``_write_obs``, equal to
    :func:`encode_view` byte for byte: tests/test_casino_backends.py), without making the view.
    """
    write = getattr(state, "_write_obs", None)
    if write is not None and (out is None or (out.dtype == OBS_DTYPE and out.shape == (OBS_SIZE,)
                                              and out.flags.c_contiguous and out.flags.writeable)):
        if out is None:
            out = np.empty(OBS_SIZE, dtype=OBS_DTYPE)
        write(seat, out)
        return out
    return encode_view(state.view(seat), out)


# ----- the game object -----------------------------------------------------------------------

class ChoiceState:
    """A ``gather_all=False`` game as the env layer plays it: its actions are the indices of the legal moves.

    The engine's :class:`~mulle_env.casino.GameState` has move ids only under ``gather_all=True``;
    this wrapper gives a ``gather_all=False`` game the :class:`~mulle_env.games.EnvState` face
    (``legal_ids()`` is ``0 .. n - 1``, ``play_id(k)`` plays ``legal_moves()[k]``) and hands
    every other attribute to the game itself (:attr:`state`).
    """

    __slots__ = ("state",)

    def __init__(self, state: casino.GameState) -> None:
        #: The engine's game.
        self.state = state

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "state":  # copy and pickle look for these before state is set
            raise AttributeError(name)
        return getattr(self.state, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ChoiceState, (self.state,))

    def __repr__(self) -> str:
        return f"ChoiceState({self.state!r})"

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return self.state.over

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self.state.to_move

    def legal_ids(self) -> tuple[int, ...]:
        """The legal actions: ``0 .. n - 1`` for the ``n`` legal moves (:class:`TooManyMovesError` beyond the bound)."""
        return legal_actions(self.state)

    def play_id(self, action: int) -> None:
        """Play the ``action``-th legal move (checked: an :class:`IllegalActionError` saying why otherwise)."""
        self.state.play(decode(self.state, action))

    def play(self, move: casino.Move | str) -> ChoiceState:
        """Play ``move`` (a move or its text), checked; returns this wrapper."""
        self.state.play(move)
        return self

    def copy(self) -> ChoiceState:
        """An independent copy."""
        return ChoiceState(self.state.copy())


def _engine_state(state: Any) -> casino.GameState:
    """The engine's game behind ``state`` (itself, or a :class:`ChoiceState`'s)."""
    return state.state if isinstance(state, ChoiceState) else state


class UnsupportedRulesetError(InvalidRulesetError):
    """A Casino ruleset this game object's action space cannot express: the message names the object that plays it."""


class CasinoGame(EnvGame):
    """Casino's game object (:class:`mulle_env.games.EnvGame`): what the env core knows of Casino's rules.

    Two objects, one per action scheme (module docstring), both named ``"casino"`` (the agents'
    game): :data:`CASINO` (the env layer's game ``"casino"``) plays ``gather_all=True``,
    ``Discrete(504)``, an action a move id; :data:`CASINO_CHOICES` (the env layer's game
    ``"casino_choices"``) plays ``gather_all=False``, ``Discrete(4096)``, action ``k`` the
    ``k``-th legal move, and is that flag's default there. Each refuses the other's rulesets in
    :meth:`check_ruleset` with an :class:`UnsupportedRulesetError` naming the other;
    :meth:`for_ruleset` names it too (for an env core that asks).
    """

    name = "casino"
    env_id = "Casino-v0"
    aec_name = "casino_v0"
    Ruleset = casino.Ruleset
    obs_size = OBS_SIZE
    obs_dtype = np.float32

    def __init__(self, gather_all: bool) -> None:
        #: The value of ``Ruleset.gather_all`` this object's action space is for.
        self.gather_all = gather_all
        #: ``Discrete(num_actions)``: :data:`MOVE_ACTIONS` or :data:`CHOICE_ACTIONS`.
        self.num_actions = num_actions(casino.Ruleset(gather_all=gather_all))
        #: The name the env layer knows this object by (:data:`mulle_env.games.GAMES`, ``game=``).
        self.game_name = "casino" if gather_all else "casino_choices"

    def __repr__(self) -> str:
        return "CASINO" if self.gather_all else "CASINO_CHOICES"

    def __reduce__(self) -> str:
        return repr(self)  # the module's own object, as pickle finds it: one object per scheme

    def check_ruleset(self, ruleset: Any, /) -> casino.Ruleset:
        """``ruleset`` (``None``, a dict of flags or a :class:`~mulle_env.casino.Ruleset`), checked for this object.

        ``None`` and a dict without ``gather_all`` take this object's value of the flag; a ruleset
        with the other value is an :class:`UnsupportedRulesetError` naming the game that plays it.
        """
        if ruleset is None:
            ruleset = {}
        if isinstance(ruleset, dict) and "gather_all" not in ruleset:
            ruleset = {**ruleset, "gather_all": self.gather_all}
        rs: casino.Ruleset = super().check_ruleset(ruleset)
        self._refuse(rs)
        return rs

    def for_ruleset(self, ruleset: Any, /) -> CasinoGame:
        """The game object whose action space plays ``ruleset``: :data:`CASINO` or :data:`CASINO_CHOICES`.

        ``ruleset`` as the envs take it: a :class:`~mulle_env.casino.Ruleset`, a dict of flags, or
        ``None``; a dict without ``gather_all`` (or ``None``) keeps this object, and a value that is not
        a bool is left for :meth:`check_ruleset` to refuse.
        """
        flag = ruleset.gather_all if isinstance(ruleset, casino.Ruleset) else (
            ruleset.get("gather_all") if isinstance(ruleset, dict) else None)
        if flag is True:
            return CASINO
        if flag is False:
            return CASINO_CHOICES
        return self

    def _refuse(self, ruleset: casino.Ruleset) -> None:
        if ruleset.gather_all != self.gather_all:
            other = self.for_ruleset(ruleset)
            why = ("moves name what they take and have no ids, so action k is the k-th legal move"
                   if self.gather_all else "every move has an id, and an action is a move id")
            raise UnsupportedRulesetError(
                f"game {self.game_name!r} plays Casino with gather_all={self.gather_all} "
                f"(Discrete({self.num_actions})); under gather_all={ruleset.gather_all} {why}, "
                f"Discrete({other.num_actions}): play it as game={other.game_name!r} "
                f"(e.g. gymnasium.make(\"Casino-v0\", game={other.game_name!r}, ruleset=...))")

    def new_game(self, seed: int, ruleset: casino.Ruleset, /) -> casino.GameState | ChoiceState:
        """A new game dealt from ``seed``: the engine's state (in a :class:`ChoiceState` under ``gather_all=False``)."""
        self._refuse(ruleset)
        st = casino.new_game(seed, ruleset)
        return st if ruleset.gather_all else ChoiceState(st)

    def move_of(self, action: int, /) -> casino.Move:
        """The move action ``action`` always stands for (``gather_all=True`` only: a move id).

        Under ``gather_all=False`` an action means a move only in a position: :meth:`decode`.
        """
        if not self.gather_all:
            raise ValueError(
                "under gather_all=False action k is the k-th legal move of a position, so it names no move by itself: "
                "use decode(state, action)")
        return casino.MOVES[action]

    def action_of(self, move: Any, state: Any = None, /) -> int:
        """The action of ``move``: its id under ``gather_all=True``, else its index among ``state``'s legal moves."""
        if self.gather_all and getattr(move, "id", None) is not None:
            action: int = move.id
            return action
        if state is None:
            raise ValueError(f"under gather_all=False the action of {move} is its index among a position's legal "
                             "moves: pass the position (action_of(move, state))")
        return encode(_engine_state(state), move)

    def decode(self, state: Any, action: Any, /) -> casino.Move:
        """The legal move ``action`` stands for in ``state`` (:func:`decode`, with its refusals)."""
        return decode(_engine_state(state), action)

    def encode(self, state: Any, seat: int, out: NDArray[np.float32], /) -> NDArray[np.float32]:
        """Seat ``seat``'s observation of ``state`` into ``out`` (:func:`encode_view` of its view)."""
        return encode_view(state.view(seat), out)

    def observation_bounds(self, ruleset: casino.Ruleset, /) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Elementwise ``(low, high)`` of the observation under ``ruleset`` (:func:`observation_bounds`)."""
        return observation_bounds(ruleset)

    def score_bound(self, ruleset: casino.Ruleset, /) -> float:
        """The largest difference of game totals under ``ruleset`` (:func:`score_bound`)."""
        return score_bound(ruleset)

    def max_decisions(self, ruleset: casino.Ruleset, /) -> int:
        """The most decisions one seat makes in a game under ``ruleset`` (:func:`max_decisions`)."""
        return max_decisions(ruleset)

    def make_stepper(self, num_envs: int, ruleset: Any, internal_random: bool, num_threads: int | str = 1, /
                     ) -> Stepper:
        """K games stepped together, after refusing a ruleset this object's action space cannot play.

        On Casino's compiled core (:data:`mulle_env.casino.BACKEND` ``== "c"``, which follows
        ``MULLE_ENGINE``) and under ``gather_all=True`` (moves have ids): the compiled stepper
        (:func:`mulle_env.stepper.make_stepper` with ``core=`` :mod:`mulle_env.casino.cstate`), on
        ``num_threads`` threads. Otherwise the generic :class:`~mulle_env.stepper.PyStepper`: the
        pure-Python engine, and ``gather_all=False``, whose moves have no ids (action ``k`` is the
        ``k``-th legal move, which only the Python side knows). Both play the same games from the
        same seeds (tests/test_casino_envs.py).
        """
        self._refuse(ruleset)
        from ..native import NATIVE

        if ruleset.gather_all and casino.BACKEND == "c" and NATIVE is not None:
            from .. import stepper
            from ..casino import cstate

            return stepper.make_stepper(num_envs, ruleset, internal_random, num_threads, core=cstate)
        return super().make_stepper(num_envs, ruleset, internal_random, num_threads)

    def render(self, view: Any, /) -> str:
        """A seat's view as text (:func:`mulle_env.casino.render.render_view`, the engine's own)."""
        return render_view(view)


#: Casino under ``gather_all=True`` (the default rules): ``Discrete(504)``, an action is a move id.
CASINO = CasinoGame(gather_all=True)
#: Casino under ``gather_all=False``: ``Discrete(4096)``, action ``k`` is the ``k``-th legal move.
CASINO_CHOICES = CasinoGame(gather_all=False)
