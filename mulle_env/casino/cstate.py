"""Casino's game state on the compiled rules core: the C backend of the Casino engine.

:class:`GameState` keeps the position in a C struct (``csrc/casino.h``: bitmasks over the 52
faces) and runs legal move generation (every ``Ruleset`` flag, ``gather_all=False``'s choice
moves too), moves, deals and round ends in C (:mod:`mulle_env.casino._core`). Everything else
(checked play, parsing, validation of outside input, errors and their messages, views, the
canonical form) is the shared :class:`~mulle_env.casino.state.GameStateBase`, the same code the
Python reference runs; the core hands over plans as plain tuples and this module names them as
the reference's :class:`~mulle_env.casino.moves.Move` and :class:`~mulle_env.casino.rules.Plan`.

When this module is imported it configures the core with the Python definitions (card values,
points, ranks, the move table, the deal sizes, the scoring constants, the observation layout):
the C code holds no copy of them. A core built from other sources (a stale build) is refused
here with a message that says to rebuild, never run.

:data:`GAME_OPS` is the core's game table for the env layer's compiled stepper: a PyCapsule
named ``mulle_env.casino._core.GAME_OPS`` holding a ``GameOps`` (mulle_env/engine/csrc/game_ops.h).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mulle_env.engine.cards import CARDS

from . import _core, rules
from . import observation_layout as layout
from .cards import ACE, BIG_CASINO, COURT, LITTLE_CASINO, POINTS, RANK, SPADE, VALUE
from .moves import BUILD, CAPTURE, INCREASE, KINDS, MOVES, NUM_MOVE_IDS, Move, sort_key
from .ruleset import MAX_ROUNDS, Ruleset
from .state import (
    _DEAL_STREAM,
    CARDS_TO_WIN,
    ENGINE_VERSION,
    HAND_DEAL,
    ITEM_POINTS,
    MAX_SWEEPS,
    SHEET_KEYS,
    SPADES_TO_WIN,
    TABLE_DEAL,
    Build,
    GameResult,
    GameStateBase,
    PlayerView,
    Sheet,
    replay_game,
    start_game,
)

__all__ = ["ENGINE_VERSION", "GAME_OPS", "Build", "GameResult", "GameState", "PlayerView", "new_game", "replay"]

#: The ABI this module speaks; the compiled core must speak the same.
ABI = 1

_STALE = "it is a stale build; rebuild it with pip install -e ."


def _configure() -> None:
    """Give the core the Python tables; refuse a core built for others."""
    if getattr(_core, "ABI", None) != ABI:
        raise ImportError(f"the compiled core mulle_env.casino._core speaks ABI {getattr(_core, 'ABI', None)}, "
                          f"this code ABI {ABI}: {_STALE}")
    known = {"FACE_BLOCKS": layout.FACE_BLOCKS, "BUILD_FEATURES": layout.BUILD_FEATURES,
             "RACE_FEATURES": layout.RACE_FEATURES, "SCALAR_FEATURES": layout.SCALAR_FEATURES,
             "RULE_FEATURES": layout.RULE_FEATURES, "SHEET_KEYS": SHEET_KEYS}
    for name, ours in known.items():
        if tuple(getattr(_core, name, ())) != tuple(ours):
            raise ImportError(f"the compiled Casino core writes the {name.lower()} {tuple(getattr(_core, name, ()))}, "
                              f"the Python definitions have {tuple(ours)}: {_STALE}")
    s = layout.OBS_SLICES
    lay = (layout.OBS_SIZE, *(s[name].start for name in layout.FACE_BLOCKS), s["builds"].start,
           len(layout.BUILD_FEATURES), s["my_race"].start, s["opp_race"].start, s["scalars"].start, s["rules"].start)
    sc = layout.SCALES
    scales = (layout.SCORE_SCALE, sc["build_cards"], sc["cards"], sc["spades"], sc["aces"], sc["sweeps"], sc["hand"],
              sc["stock"], sc["sum_build_max_card"], sc["increase_max_cards"], sc["target_score"], sc["rounds"])
    cards = (VALUE, POINTS, RANK, tuple(map(int, SPADE)), tuple(map(int, COURT)), tuple(map(int, ACE)))
    moves = tuple((KINDS.index(m.kind), int(m.card), -1 if m.value is None else m.value,
                   -1 if not m.taken_loose else int(m.taken_loose[0]))  # a court capture's one card
                  for m in MOVES)
    consts = (HAND_DEAL, TABLE_DEAL, CARDS_TO_WIN, SPADES_TO_WIN, ITEM_POINTS["cards"], ITEM_POINTS["spades"],
              BIG_CASINO, LITTLE_CASINO, MAX_SWEEPS, MAX_ROUNDS, _DEAL_STREAM >> 30, _DEAL_STREAM & (2**30 - 1))
    _core.configure(ABI, cards, moves, consts, lay, scales, (MOVES, SHEET_KEYS))


_configure()

#: The core's game table for the env layer's stepper: a PyCapsule named ``mulle_env.casino._core.GAME_OPS``
#: holding a ``GameOps`` (mulle_env/engine/csrc/game_ops.h). Its ``write_obs`` writes exactly what
#: ``mulle_env.games.casino.encode_state`` does, ``write_mask`` the mask of ``legal_ids()``; ``ids_ok`` is 0
#: for a ``gather_all=False`` state (those are stepped in Python).
GAME_OPS = _core._game_ops()


def _flags(rs: Ruleset) -> tuple[int, ...]:
    """The ruleset as the core reads it (csrc/module.c, read_rules)."""
    return (int(rs.gather_all), int(rs.court_capture == "all"), int(rs.sweeps), rs.sum_build_max_card,
            -1 if rs.increase_max_cards is None else rs.increase_max_cards, int(rs.trail_with_build),
            rs.target_score, -1 if rs.rounds is None else rs.rounds, rs.max_rounds)


def _choice_move(kind: str, card: int, plan: rules.Plan) -> Move:
    """The move of a plan that names what it takes (``gather_all=False``), as rules.plans names it."""
    taken = plan.loose or plan.builds
    take = rules._take(plan.loose, plan.builds) if taken else None
    if kind == CAPTURE:
        return Move(CAPTURE, CARDS[card], take=take)
    if kind == BUILD:
        return Move(BUILD, CARDS[card], value=plan.value, take=take)
    base = plan.base
    assert base is not None  # an increase's plan names its build
    return Move(INCREASE, CARDS[card], value=base[0], build=tuple(CARDS[c] for c in base[2]), take=take)


_new_plan = rules.Plan._make


class GameState(_core.Core, GameStateBase):
    """A Casino position on the compiled core; the API of :class:`.state.GameState`.

    Create one with :func:`new_game` or :meth:`from_dict`; play with :meth:`play`.
    ``play`` mutates the state (and returns it); :meth:`copy` gives an independent one.
    Attributes are read-only and every read is a fresh value, as on the Python reference.
    """

    __slots__ = ()

    def __init__(self, ruleset: Ruleset | None = None, seed: int | None = None) -> None:
        rs = ruleset or Ruleset()
        self._init(rs, _flags(rs), None if seed is None else int(seed))

    def _load(self, hands: list[list[int]], loose: list[int], builds: list[rules.StoredBuild],
              captured: list[list[int]], sweeps: list[int], last_capturer: int | None, stock: list[int],
              round_: int, scores: list[int], sheets: list[tuple[Sheet, Sheet]], to_move: int) -> None:
        rows = [tuple(tuple(sheet[k] for k in SHEET_KEYS) for sheet in pair) for pair in sheets]
        self._load_raw(hands, loose, builds, captured, sweeps, last_capturer, stock, round_, scores, rows, to_move)

    # ----- the plan table: the core's plans named as the reference names them -----------------
    def _table(self) -> tuple[dict[Move, rules.Plan], dict[Move, int], int]:
        cached = self._plans_cache
        if cached is None:
            raw = self._raw_plans()
            builds = self._stored_builds() if raw else []
            rows = []
            for i, (mid, kind_i, card, loose, bidx, base, value) in enumerate(raw):
                kind = KINDS[kind_i]
                plan = _new_plan((kind, card, loose, tuple(builds[j] for j in bidx),
                                  builds[base] if base >= 0 else None, value if value >= 0 else None))
                rows.append((MOVES[mid] if mid >= 0 else _choice_move(kind, card, plan), plan, i))
            if not self.ruleset.gather_all:
                rows.sort(key=lambda r: sort_key(r[0]))  # the core orders by id; the reference by sort_key
            cached = ({m: p for m, p, _ in rows}, {m: i for m, _, i in rows}, len(raw))
            self._plans_cache = cached
        return cached  # type: ignore[no-any-return]  # what this method stored

    def _plan_table(self) -> dict[Move, rules.Plan]:
        return self._table()[0]

    def _apply(self, move: Move, plan: rules.Plan) -> None:
        if move.id is not None:
            if not self._play_id(move.id):
                raise RuntimeError(f"the core refused {move}, a legal move of its own plan table")
            return
        p = self.to_move
        _, index, n = self._table()
        self._play_plan(index[move], n)
        self._set_last_move((p, move))

    # ----- the hot paths, without naming every plan -------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every legal move of the seat to move, in the canonical order (empty once the game is over)."""
        if self.ruleset.gather_all:
            return [MOVES[i] for i in self.legal_ids()]
        return list(self._table()[0])

    def check(self, move: Move | str) -> Move:
        """``move`` parsed and checked legal, as the engine's own value; raises saying why it is not."""
        if isinstance(move, Move) and move.id is not None and self.ruleset.gather_all and not self.over:
            if move.id in self.legal_ids():
                return move
        return GameStateBase.check(self, move)

    def play(self, move: Move | str) -> GameState:
        """Play ``move`` (a Move or its text) for the seat to move, checked; returns the state."""
        if isinstance(move, Move) and move.id is not None and self._play_id(move.id):
            return self
        GameStateBase.play(self, move)
        return self

    def play_id(self, move_id: int) -> None:
        """Play the move with id ``move_id`` (an environment's action) for the seat to move, checked."""
        if move_id.__class__ is int and 0 <= move_id < NUM_MOVE_IDS and self._play_id(move_id):
            return
        GameStateBase.play_id(self, move_id)


def new_game(seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """A new game: round 1 dealt from ``seed`` (a whole number from 0 to 2**64 - 1), seat 0 to move."""
    return start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """The state reached by playing ``moves`` (each checked) from ``new_game(seed, ruleset)``."""
    return replay_game(GameState, seed, moves, ruleset)
