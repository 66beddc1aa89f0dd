"""Mulle and Casino as OpenSpiel games: ``pyspiel.load_game("python_mulle")``, ``pyspiel.load_game("python_casino")``.

Importing this module registers both games (OpenSpiel is an optional extra:
``pip install -e ".[openspiel]"``). One set of classes serves both (:class:`SpielGame`,
:class:`SpielState`, :class:`SpielObserver`), each game told apart only by its
:class:`SpielSpec`: its engine (``new_game``, the state's ``legal_ids``/``play_id``), its
env-side game object (:mod:`mulle_env.games`: the action codec, the observation, the score
bound), how one move is written in the information-state tensor and how a seat's view is
written as text. The rules are each engine's: every state wraps an engine state, legal
actions are its move ids (the fixed action space of the environments), and applying an
action plays that move on the engine. So OpenSpiel's algorithms play exactly the games the
engine, the environments and the arena play. ``MulleGame``/``MulleState``/``MulleObserver``
and ``CasinoGame``/``CasinoState`` are the two games' classes.

What is said below of Mulle holds for Casino with its words: a round for a set, the stock
for the deck, ``rounds`` for ``sets``. Casino's parameters are its :class:`~mulle_env.casino.Ruleset`
flags under the default ``gather_all=True`` (the one action space of move ids), with 0 for
``increase_max_cards`` and ``rounds`` meaning ``None`` (no limit, play to ``target_score``): OpenSpiel's
parameters have no "none".

**Chance nodes: the deal seed.** The engine deals every set from one integer seed
(``new_game(seed)``: a SplitMix64-driven Fisher-Yates shuffle per set). The OpenSpiel game
lets the chance player choose that seed and nothing else:

* ``seeds=0`` (the default): eight chance nodes of 256 equally likely outcomes each choose
  the seed's bytes, least significant first, so every 64-bit seed, and so every game the
  engine can deal, is reachable, and chance outcome lists stay short.
  :func:`chance_actions` gives the eight actions of a seed: engine seed 7 is
  ``[7, 0, 0, 0, 0, 0, 0, 0]``.
* ``seeds=N``: one chance node with outcomes ``0 .. N-1``, each the seed itself, uniform.
  A game over a small, fixed set of deals (for tabular studies, or to enumerate chance).

After the last chance node the state is ``mulle_env.new_game(seed, ruleset)`` exactly, and
every later deal, in every set, comes from that seed as in the engine; there are no chance
nodes mid-game. This keeps both sides exact (the same seed is the same game, move for move)
at the price that a state "knows" its future deals before they are dealt. No player sees
them: the information state and observation are built from the seat's view only, and the
deals' distribution is the engine's (a uniform shuffle per set). Per-card chance outcomes
were the alternative; they would need the engine's shuffle replayed outside the engine and
the dealt position rebuilt by hand at every set, for no gain to a player.

**Returns** are points: at the end, each seat's game total minus the opponent's (zero
sum); 0 before the end.

**Observations.** ``observation_tensor`` is the environments' 524-float observation
(:mod:`mulle_env.observation`) and ``observation_string`` a compact text of the same view.
``information_state_string`` is perfect recall: the seat's hand at each deal and every move
of the game, in order. ``information_state_tensor`` is the observation followed by one row
per move played (:data:`PLY_SIZE` entries: who moved, the card, and what it was played as:
capture, trotta, discard, build onto a loose face or onto a build value, up or down), which
with the current hand determines the information state exactly.

**Positions from outside.** :meth:`MulleGame.state_from_engine` wraps any engine state
(a determinization from ``GameState.from_view``, a hand-made position). Such a state was not
reached by actions from the start: its ``history()`` is empty. Every state serializes
(``pyspiel.serialize_game_and_state``) and pickles: OpenSpiel stores a Python game's state
by pickling it, engine state included, so a wrapped position round-trips too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

try:
    import pyspiel
except ImportError as _exc:  # an optional extra: say how to get it
    raise ImportError(
        "mulle_env.openspiel needs OpenSpiel, an optional extra: pip install -e '.[openspiel]' "
        "(or pip install 'mulle-env[openspiel]'; the package is open_spiel)"
    ) from _exc

import numpy as np

from . import casino
from .codec import NUM_ACTIONS, check_ruleset, max_game_length
from .engine import CARDS, MOVES, GameState, IllegalMoveError, Ruleset, new_game, seed_problem
from .games import casino as casino_env
from .observation import OBS_SLICES, encode_into

__all__ = [
    "CASINO_GAME_TYPE", "CASINO_PLY_SIZE", "CASINO_SHORT_NAME", "CASINO_SPEC", "GAME_TYPE", "MAX_POINTS_PER_SET",
    "MULLE_SPEC", "PLY_SIZE", "SHORT_NAME", "CasinoGame", "CasinoObserver", "CasinoState", "MulleGame",
    "MulleObserver", "MulleState", "SpielGame", "SpielObserver", "SpielSpec", "SpielState", "chance_actions",
    "ruleset_of", "state_for_seed",
]

#: The name OpenSpiel knows Mulle by.
SHORT_NAME = "python_mulle"
#: The name OpenSpiel knows Casino by.
CASINO_SHORT_NAME = "python_casino"
#: A bound on one set's points (all 52 mulles score at most 435, tabbes fewer than 96, the bonus 40).
MAX_POINTS_PER_SET = 600
#: Chance nodes and outcomes of the default seed choice: the eight bytes of a 64-bit seed.
SEED_BYTES = 8


# ----- what tells one game from another ----------------------------------------------------------
@dataclass(frozen=True)
class SpielSpec:
    """Everything the OpenSpiel classes need of one game (Mulle's :data:`MULLE_SPEC`, Casino's :data:`CASINO_SPEC`).

    Attributes:
        game_type: The ``pyspiel.GameType`` registered for it.
        parameters: The game's parameters with their defaults (its ruleset flags and ``seeds``).
        ruleset_of: The checked ruleset of a parameter dict (``seeds`` ignored).
        new_game: ``new_game(seed, ruleset)`` of the engine.
        num_actions: The fixed action space (move ids).
        move_of: The move an action stands for (for messages and history text).
        max_plies: The most moves of a game under a ruleset.
        utility_bound: The largest score difference a game under a ruleset can end with.
        obs_slices: The observation's named slices (the observer's dict), in order.
        encode: ``encode(state, player, out)``: the environments' observation of an engine state.
        ply_size: Entries of one move in the information-state tensor's history.
        ply_slots: The entries a move id sets in its history row (besides who moved).
        deal_key: A value of an engine state that changes exactly when new cards are dealt.
        deal_text: One line of the information state at a deal: the seat's hand and the table.
        view_text: Everything one seat may see, compactly (the observation string).
    """

    game_type: Any
    parameters: dict[str, Any]
    ruleset_of: Callable[[dict[str, Any]], Any]
    new_game: Callable[[int, Any], Any]
    num_actions: int
    move_of: Callable[[int], Any]
    max_plies: Callable[[Any], int]
    utility_bound: Callable[[Any], float]
    obs_slices: dict[str, slice]
    encode: Callable[[Any, int, Any], Any]
    ply_size: int
    ply_slots: Callable[[int], tuple[int, ...]]
    deal_key: Callable[[Any], tuple[int, ...]]
    deal_text: Callable[[Any, int], str]
    view_text: Callable[[Any, int], str]

    @property
    def obs_size(self) -> int:
        """Entries of one observation."""
        return max(s.stop for s in self.obs_slices.values())


def _game_type(short_name: str, long_name: str, parameters: dict[str, Any]) -> Any:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters,
    )


# ----- Mulle ---------------------------------------------------------------------------------------
#: Game parameters: every Ruleset flag with the engine's default, plus ``seeds`` (see the module docstring).
PARAMETERS = {**Ruleset().to_dict(), "seeds": 0}

GAME_TYPE = _game_type(SHORT_NAME, "Mulle (mulle-env engine)", PARAMETERS)

# One row of the information-state history: who moved (me, the opponent), the card (52),
# and what it was played as: capture, trotta, discard, build onto a loose face (52), build
# up onto [V] (15, V = 2..16), build down onto [V] (15).
_WHO, _CARD, _WHAT = 0, 2, 54
_BUILD_FACE, _BUILD_UP, _BUILD_DOWN = _WHAT + 3, _WHAT + 3 + 52, _WHAT + 3 + 52 + 15
#: Entries per move in Mulle's information-state tensor's history.
PLY_SIZE = _BUILD_DOWN + 15
_KIND_SLOT = {"capture": _WHAT, "trotta": _WHAT + 1, "discard": _WHAT + 2}


def _ply_slots(move_id: int) -> tuple[int, int]:
    """The card entry and the what-entry of a move id in a history row."""
    m = MOVES[move_id]
    if m.kind != "build":
        return _CARD + m.card, _KIND_SLOT[m.kind]
    if m.on is not None:
        return _CARD + m.card, _BUILD_FACE + m.on
    return _CARD + m.card, (_BUILD_DOWN if m.is_build_down else _BUILD_UP) + cast(int, m.on_build) - 2  # onto a build


_PLY_SLOTS = [_ply_slots(i) for i in range(NUM_ACTIONS)]


def ruleset_of(params: dict[str, Any]) -> Ruleset:
    """The :class:`Ruleset` of a ``python_mulle`` game's parameters (``seeds`` is not a rule and is ignored).

    Raises :class:`mulle_env.codec.UnsupportedRulesetError` for ``forced_capture=False``,
    which the fixed action ids cannot express, and ``InvalidRulesetError`` for bad values.
    """
    flags = {k: params.get(k, v) for k, v in PARAMETERS.items() if k != "seeds"}
    return check_ruleset(Ruleset(**flags))


def _cards(faces: Iterable[int]) -> str:
    return " ".join(str(CARDS[f]) for f in faces) or "-"


def _view_text(st: GameState, player: int) -> str:
    """Everything ``player`` may see, compactly (what ISMCTS keys its nodes on)."""
    v = st.view(player)
    builds = " ".join(
        f"[{b.value}:{_cards(b.cards)}/{'-' if b.owner is None else b.owner}{'L' if b.locked else ''}]"
        for b in v.builds
    ) or "-"
    sheets = " ".join(f"{s[0]['total']}:{s[1]['total']}" for s in v.sheets) or "-"
    last = "-" if v.last_move is None else f"P{v.last_move[0]} {v.last_move[1]}"
    return (
        f"P{player} to move P{v.to_move} set {v.set_no} deal {v.deal_no}{' over' if v.over else ''}\n"
        f"hand {_cards(v.hand)}\nopponent holds {v.opponent_hand_size}, deck {v.deck_size}\n"
        f"loose {_cards(v.loose)}\nbuilds {builds}\n"
        f"mulle {_cards(v.mulle[0])} | {_cards(v.mulle[1])}\nintake {_cards(v.intake[0])} | {_cards(v.intake[1])}\n"
        f"tabbe {v.tabbe[0]}:{v.tabbe[1]} sets {sheets} totals {v.scores[0]['total']}:{v.scores[1]['total']}\n"
        f"last capturer {'-' if v.last_capturer is None else v.last_capturer}, last move {last}"
    )


def _mulle_deal_text(st: GameState, player: int) -> str:
    return f"set {st.set_no} deal {st.deal_no}: hand {_cards(st.hands[player])}; table {_cards(st.loose)}"


MULLE_SPEC = SpielSpec(
    game_type=GAME_TYPE,
    parameters=PARAMETERS,
    ruleset_of=ruleset_of,
    new_game=new_game,
    num_actions=NUM_ACTIONS,
    move_of=MOVES.__getitem__,
    max_plies=max_game_length,
    utility_bound=lambda rs: float(MAX_POINTS_PER_SET * rs.sets),
    obs_slices=dict(OBS_SLICES),
    encode=encode_into,
    ply_size=PLY_SIZE,
    ply_slots=_PLY_SLOTS.__getitem__,
    deal_key=lambda st: (st.set_no, st.deal_no),
    deal_text=_mulle_deal_text,
    view_text=_view_text,
)


# ----- Casino --------------------------------------------------------------------------------------
#: ``python_casino``'s parameters: Casino's ruleset flags but ``gather_all`` (its action space is the move ids),
#: 0 standing for ``None`` in ``increase_max_cards`` and ``rounds``, and ``seeds``.
CASINO_PARAMETERS = {**{k: (0 if v is None else v) for k, v in casino.Ruleset().to_dict().items()
                        if k != "gather_all"}, "seeds": 0}
CASINO_GAME_TYPE = _game_type(CASINO_SHORT_NAME, "Casino (mulle-env engine)", CASINO_PARAMETERS)

# One row of Casino's history: who moved (me, the opponent), the card (52), the kind (capture, build,
# increase, trail), the value a build or increase makes (1..10), and the card a court card took (52).
_C_CARD, _C_KIND = 2, 54
_C_VALUE = _C_KIND + 4
_C_TAKEN = _C_VALUE + 10
#: Entries per move in Casino's information-state tensor's history.
CASINO_PLY_SIZE = _C_TAKEN + 52
_C_KINDS = {"capture": 0, "build": 1, "increase": 2, "trail": 3}


def _casino_ply_slots(move_id: int) -> tuple[int, ...]:
    m = casino.MOVES[move_id]
    slots = [_C_CARD + m.card, _C_KIND + _C_KINDS[m.kind]]
    if m.kind == "build":
        slots.append(_C_VALUE + cast(int, m.value) - 1)
    elif m.kind == "increase":
        slots.append(_C_VALUE + cast(int, m.value) + casino.VALUE[m.card] - 1)  # the value it makes
    if m.take is not None:
        slots.append(_C_TAKEN + cast(int, m.take[0]))  # a court card's one card
    return tuple(slots)


_CASINO_PLY_SLOTS = [_casino_ply_slots(i) for i in range(casino.NUM_MOVE_IDS)]


def casino_ruleset_of(params: dict[str, Any]) -> casino.Ruleset:
    """The Casino :class:`~mulle_env.casino.Ruleset` of ``python_casino``'s parameters (0: ``None``; no ``seeds``)."""
    flags = {k: params.get(k, v) for k, v in CASINO_PARAMETERS.items() if k != "seeds"}
    for key in ("increase_max_cards", "rounds"):
        if flags[key] == 0:
            flags[key] = None
    return casino.Ruleset(**flags)


def _casino_view_text(st: casino.GameState, player: int) -> str:
    """Everything ``player`` may see of a Casino position, compactly."""
    v = st.view(player)
    builds = " ".join(f"[{b.value}:{_cards(b.cards)}/{b.owner}]" for b in v.builds) or "-"
    sheets = " ".join(f"{s[0]['total']}:{s[1]['total']}" for s in st.sheets) or "-"
    last = "-" if v.last_move is None else f"P{v.last_move[0]} {v.last_move[1]}"
    return (
        f"P{player} to move P{v.to_move} round {v.round}{' over' if v.over else ''}\n"
        f"hand {_cards(v.hand)}\nopponent holds {v.opponent_hand_size}, stock {v.stock_size}\n"
        f"loose {_cards(v.loose)}\nbuilds {builds}\n"
        f"captured {_cards(v.captured[0])} | {_cards(v.captured[1])}\nsweeps {v.sweeps[0]}:{v.sweeps[1]} "
        f"rounds {sheets} totals {v.scores[0]}:{v.scores[1]}\n"
        f"last capturer {'-' if v.last_capturer is None else v.last_capturer}, last move {last}"
    )


def _casino_deal_text(st: casino.GameState, player: int) -> str:
    return f"round {st.round} stock {len(st.stock)}: hand {_cards(st.hands[player])}; table {_cards(st.loose)}"


CASINO_SPEC = SpielSpec(
    game_type=CASINO_GAME_TYPE,
    parameters=CASINO_PARAMETERS,
    ruleset_of=casino_ruleset_of,
    new_game=casino.new_game,
    num_actions=casino.NUM_MOVE_IDS,
    move_of=casino.MOVES.__getitem__,
    max_plies=lambda rs: 2 * casino_env.max_decisions(rs),
    utility_bound=casino_env.score_bound,
    obs_slices=dict(casino_env.OBS_SLICES),
    encode=lambda st, player, out: casino_env.encode_state(st, player, out),
    ply_size=CASINO_PLY_SIZE,
    ply_slots=_CASINO_PLY_SLOTS.__getitem__,
    deal_key=lambda st: (st.round, len(st.stock)),
    deal_text=_casino_deal_text,
    view_text=_casino_view_text,
)


# ----- the chance nodes: the deal seed -------------------------------------------------------------
def chance_actions(seed: int, seeds: int = 0) -> list[int]:
    """The chance actions that make the engine's ``new_game(seed)``: eight bytes, or ``[seed]`` when ``seeds > 0``."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, not {seed!r}")
    if seeds:
        if not 0 <= seed < seeds:
            raise ValueError(f"with seeds={seeds} the seed must be in 0..{seeds - 1}, not {seed}")
        return [seed]
    if (why := seed_problem(seed)) is not None:  # the one seed domain: 8 chance bytes give every seed in it
        raise ValueError(why)
    return [(seed >> (8 * k)) & 0xFF for k in range(SEED_BYTES)]


def state_for_seed(game: SpielGame, seed: int) -> SpielState:
    """A new state of ``game`` with the chance nodes played for ``seed``: the engine's ``new_game(seed)``."""
    state = game.new_initial_state()
    for a in chance_actions(seed, game.seeds):
        state.apply_action(a)
    return state


# ----- the classes both games share -----------------------------------------------------------------
class SpielGame(pyspiel.Game):
    """A game of this module; parameters are the game's ruleset flags and ``seeds``. Subclasses set :attr:`spec`."""

    spec: SpielSpec
    #: The state and observer classes this game makes (its own subclasses, for their names).
    state_class: type[SpielState]
    observer_class: type[SpielObserver]

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = self.spec
        params = {**spec.parameters, **(params or {})}
        seeds = params["seeds"]
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 0:
            raise ValueError(f"seeds must be 0 (any 64-bit seed) or a positive number of seeds, not {seeds!r}")
        self.ruleset = spec.ruleset_of(params)
        self.seeds = seeds
        self.chance_nodes = 1 if seeds else SEED_BYTES
        self.max_plies = spec.max_plies(self.ruleset)
        bound = float(spec.utility_bound(self.ruleset))
        info = pyspiel.GameInfo(
            num_distinct_actions=spec.num_actions,
            max_chance_outcomes=seeds or 256,
            num_players=2,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=self.max_plies,
        )
        super().__init__(spec.game_type, info, params)

    def __deepcopy__(self, memo: dict[int, Any]) -> SpielGame:
        # OpenSpiel clones a Python state with copy.deepcopy, which would rebuild the game its state points to
        # from pybind's pickle, without __init__'s attributes (seeds, ruleset): a game never changes, so a
        # clone shares it.
        return self

    def new_initial_state(self) -> SpielState:
        """The state before the deal: the chance player chooses the seed."""
        return self.state_class(self)

    def state_from_engine(self, engine_state: Any, copy: bool = True) -> SpielState:
        """A state at ``engine_state`` (copied unless ``copy=False``), past the chance nodes; ``history()`` is empty.

        Search agents build their determinizations this way (``GameState.from_view`` with
        sampled hidden cards). Its information-state history starts at this position.
        """
        if engine_state.ruleset != self.ruleset:
            raise ValueError(f"the engine state's ruleset {engine_state.ruleset} is not this game's {self.ruleset}")
        state = self.state_class(self)
        state._attach(engine_state.copy() if copy else engine_state, reached=False)
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> SpielObserver:
        """The observer OpenSpiel asks for tensors and strings (perfect recall = information state)."""
        return self.observer_class(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params,
                                   self.max_plies)


class SpielState(pyspiel.State):
    """A state of a game of this module: the chance bytes chosen so far, then an engine state."""

    def __init__(self, game: SpielGame) -> None:
        super().__init__(game)
        self._game = game
        self._bytes: list[int] = []
        self.engine: Any = None
        # (player, move id) of every move, and each deal's position, for the information state.
        self._moves: list[tuple[int, int]] = []
        self._deals: list[tuple[int, tuple[int, ...], str, str]] = []
        self._reached = True

    def _attach(self, engine: Any, reached: bool) -> None:
        self.engine = engine
        self._reached = reached
        self._note_deal()

    def _note_deal(self) -> None:
        st, spec = self.engine, self._game.spec
        self._deals.append((len(self._moves), spec.deal_key(st), spec.deal_text(st, 0), spec.deal_text(st, 1)))

    # -- the OpenSpiel API --------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` before the deal, ``TERMINAL`` at the end."""
        if self.engine is None:
            return pyspiel.PlayerId.CHANCE
        if self.engine.over:
            return pyspiel.PlayerId.TERMINAL
        return int(self.engine.to_move)

    def _legal_actions(self, player: int) -> list[int]:
        st = self.engine  # OpenSpiel asks a player's actions after the deal only
        return list(st.legal_ids()) if player == st.to_move else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Every seed byte (or seed) with its probability: uniform."""
        n = self._game.seeds or 256
        p = 1.0 / n
        return [(a, p) for a in range(n)]

    def _apply_action(self, action: int) -> None:
        action = int(action)
        game = self._game
        if self.engine is None:
            n = game.seeds or 256
            if not 0 <= action < n:
                raise ValueError(f"chance action {action} is not a seed byte 0..{n - 1}")
            self._bytes.append(action)
            if len(self._bytes) == game.chance_nodes:
                seed = sum(b << (8 * k) for k, b in enumerate(self._bytes)) if not game.seeds else action
                self._attach(game.spec.new_game(seed, game.ruleset), reached=True)
            return
        st, spec = self.engine, game.spec
        if action not in st.legal_ids():
            raise IllegalMoveError(
                f"action {action} ({spec.move_of(action) if 0 <= action < spec.num_actions else 'out of range'}) "
                f"is not legal; legal actions: {list(st.legal_ids())}"
            )
        player, deal = st.to_move, spec.deal_key(st)
        st.play_id(action)
        self._moves.append((player, action))
        if not st.over and spec.deal_key(st) != deal:
            self._note_deal()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._game.seeds:
                return f"seed {action}"
            return f"seed byte {len(self._bytes)}: {action}"
        return str(self._game.spec.move_of(action))

    def is_terminal(self) -> bool:
        """True once the game is over."""
        return self.engine is not None and bool(self.engine.over)

    def returns(self) -> list[float]:
        """Each seat's game total minus the opponent's at the end; zeros before."""
        if not self.is_terminal():
            return [0.0, 0.0]
        a, b = self.engine.scores()  # terminal: dealt
        return [float(a - b), float(b - a)]

    @property
    def seed(self) -> int | None:
        """The engine seed the chance nodes chose (``None`` before the deal, and for wrapped positions)."""
        seed: int | None = self.engine.seed if self.engine is not None and self._reached else None
        return seed

    def __str__(self) -> str:
        if self.engine is None:
            return f"seed bytes so far: {self._bytes}"
        return str(self.engine)

    def __deepcopy__(self, memo: dict[int, Any]) -> SpielState:
        # OpenSpiel clones Python states with deepcopy; the engine state copies itself
        # (its compiled form cannot be deep-copied attribute by attribute).
        clone = type(self)(self._game)
        clone._bytes = self._bytes[:]
        clone.engine = None if self.engine is None else self.engine.copy()
        clone._moves = self._moves[:]
        clone._deals = self._deals[:]
        clone._reached = self._reached
        return clone


class SpielObserver:
    """OpenSpiel's observer: the observation, or with perfect recall the information state. Subclasses set :attr:`spec`.

    Only observations of one seat's private information plus the public information are
    offered (``IIGObservationType(perfect_recall=...)`` with the default private and public
    parts); other kinds raise ``ValueError``.
    """

    spec: SpielSpec

    def __init__(self, iig_obs_type: Any, params: dict[str, Any] | None, max_plies: int) -> None:
        name = self.spec.game_type.short_name
        if params:
            raise ValueError(f"the {name} observer takes no parameters, not {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{name} offers the observation and the information state of one seat (public information "
                "plus that seat's hand): IIGObservationType(perfect_recall=False or True) with the default "
                f"private_info and public_info, not {iig_obs_type}"
            )
        self.perfect_recall = iig_obs_type.perfect_recall
        pieces: list[tuple[str, int, tuple[int, ...]]] = [(n, s.stop - s.start, (s.stop - s.start,))
                                                          for n, s in self.spec.obs_slices.items()]
        if self.perfect_recall:
            pieces.append(("history", max_plies * self.spec.ply_size, (max_plies, self.spec.ply_size)))
        self.tensor = np.zeros(sum(size for _, size, _ in pieces), np.float32)
        self.dict: dict[str, Any] = {}
        start = 0
        for piece, size, shape in pieces:
            self.dict[piece] = self.tensor[start:start + size].reshape(shape)
            start += size
        self._obs = self.tensor[:self.spec.obs_size]

    def set_from(self, state: SpielState, player: int) -> None:
        """Write ``player``'s observation (and with perfect recall the move history) of ``state``."""
        self.tensor.fill(0)
        if state.engine is None:
            return
        spec = self.spec
        spec.encode(state.engine, player, self._obs)
        if self.perfect_recall:
            hist = self.dict["history"]
            for k, (actor, action) in enumerate(state._moves):
                row = hist[k]
                row[_WHO + (actor != player)] = 1.0
                for slot in spec.ply_slots(action):
                    row[slot] = 1.0

    def string_from(self, state: SpielState, player: int) -> str:
        """The observation (or with perfect recall the information state) of ``player`` as text."""
        if state.engine is None:
            return f"P{player} before the deal"
        if self.perfect_recall:
            return _history_text(state, player)
        return self.spec.view_text(state.engine, player)


def _history_text(state: SpielState, player: int) -> str:
    """Perfect recall: the seat's hand and the table at each deal, and every move in order."""
    lines = [f"P{player}"]
    deals = iter(state._deals)
    nxt = next(deals, None)
    move_of = state._game.spec.move_of
    for k in range(len(state._moves) + 1):
        while nxt is not None and nxt[0] == k:
            lines.append(nxt[3] if player else nxt[2])
            nxt = next(deals, None)
        if k < len(state._moves):
            actor, action = state._moves[k]
            lines.append(f"P{actor} {move_of(action)}")
    return "\n".join(lines)


# ----- the two games -------------------------------------------------------------------------------
class MulleObserver(SpielObserver):
    """``python_mulle``'s observer (:class:`SpielObserver` with Mulle's spec)."""

    spec = MULLE_SPEC


class MulleState(SpielState):
    """A ``python_mulle`` state: the chance bytes chosen so far, then an engine :class:`mulle_env.GameState`."""

    engine: GameState | None


class MulleGame(SpielGame):
    """The ``python_mulle`` game; parameters are the :class:`Ruleset` flags and ``seeds``."""

    spec = MULLE_SPEC
    state_class = MulleState
    observer_class = MulleObserver


class CasinoObserver(SpielObserver):
    """``python_casino``'s observer: Casino's env observation (:mod:`mulle_env.games.casino`) or its history."""

    spec = CASINO_SPEC


class CasinoState(SpielState):
    """A ``python_casino`` state: the chance bytes chosen so far, then a :class:`mulle_env.casino.GameState`."""

    engine: casino.GameState | None


class CasinoGame(SpielGame):
    """The ``python_casino`` game; parameters are Casino's ruleset flags (0 for ``None``) and ``seeds``."""

    spec = CASINO_SPEC
    state_class = CasinoState
    observer_class = CasinoObserver


pyspiel.register_game(GAME_TYPE, MulleGame)
pyspiel.register_game(CASINO_GAME_TYPE, CasinoGame)
