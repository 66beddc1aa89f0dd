"""Mulle as an OpenSpiel game: ``pyspiel.load_game("python_mulle")``.

Importing this module registers the game (OpenSpiel is an optional extra:
``pip install -e ".[openspiel]"``). The rules are the engine's: every state wraps a
:class:`mulle_env.GameState`, legal actions are its move ids (``Move.id``, the fixed
action space of :mod:`mulle_env.codec`), and applying an action plays that move on the
engine. So OpenSpiel's algorithms play exactly the games the engine, the environments and
the arena play.

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

from collections.abc import Iterable
from typing import Any, cast

try:
    import pyspiel
except ImportError as _exc:  # an optional extra: say how to get it
    raise ImportError(
        "mulle_env.openspiel needs OpenSpiel, an optional extra: pip install -e '.[openspiel]' "
        "(or pip install 'mulle-env[openspiel]'; the package is open_spiel)"
    ) from _exc

import numpy as np

from .codec import NUM_ACTIONS, check_ruleset, max_game_length
from .engine import CARDS, MOVES, GameState, IllegalMoveError, Ruleset, new_game, seed_problem
from .observation import OBS_SIZE, OBS_SLICES, encode_into

__all__ = [
    "GAME_TYPE", "SHORT_NAME", "PLY_SIZE", "MAX_POINTS_PER_SET", "MulleGame", "MulleState", "MulleObserver",
    "chance_actions", "ruleset_of", "state_for_seed",
]

#: The name OpenSpiel knows the game by.
SHORT_NAME = "python_mulle"
#: A bound on one set's points (all 52 mulles score at most 435, tabbes fewer than 96, the bonus 40).
MAX_POINTS_PER_SET = 600
#: Chance nodes and outcomes of the default seed choice: the eight bytes of a 64-bit seed.
SEED_BYTES = 8

#: Game parameters: every Ruleset flag with the engine's default, plus ``seeds`` (see the module docstring).
PARAMETERS = {**Ruleset().to_dict(), "seeds": 0}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Mulle (mulle-env engine)",
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
    parameter_specification=PARAMETERS,
)

# One row of the information-state history: who moved (me, the opponent), the card (52),
# and what it was played as: capture, trotta, discard, build onto a loose face (52), build
# up onto [V] (15, V = 2..16), build down onto [V] (15).
_WHO, _CARD, _WHAT = 0, 2, 54
_BUILD_FACE, _BUILD_UP, _BUILD_DOWN = _WHAT + 3, _WHAT + 3 + 52, _WHAT + 3 + 52 + 15
#: Entries per move in the information-state tensor's history.
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
    """The :class:`Ruleset` of a game's parameters (``seeds`` is not a rule and is ignored).

    Raises :class:`mulle_env.codec.UnsupportedRulesetError` for ``forced_capture=False``,
    which the fixed action ids cannot express, and ``InvalidRulesetError`` for bad values.
    """
    flags = {k: params.get(k, v) for k, v in PARAMETERS.items() if k != "seeds"}
    return check_ruleset(Ruleset(**flags))


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


def state_for_seed(game: MulleGame, seed: int) -> MulleState:
    """A new state of ``game`` with the chance nodes played for ``seed``: the engine's ``new_game(seed)``."""
    state = game.new_initial_state()
    for a in chance_actions(seed, game.seeds):
        state.apply_action(a)
    return state


class MulleGame(pyspiel.Game):
    """The ``python_mulle`` game; parameters are the :class:`Ruleset` flags and ``seeds``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        seeds = params["seeds"]
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 0:
            raise ValueError(f"seeds must be 0 (any 64-bit seed) or a positive number of seeds, not {seeds!r}")
        self.ruleset = ruleset_of(params)
        self.seeds = seeds
        self.chance_nodes = 1 if seeds else SEED_BYTES
        self.max_plies = max_game_length(self.ruleset)
        bound = float(MAX_POINTS_PER_SET * self.ruleset.sets)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=seeds or 256,
            num_players=2,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=self.max_plies,
        )
        super().__init__(GAME_TYPE, info, params)

    def new_initial_state(self) -> MulleState:
        """The state before the deal: the chance player chooses the seed."""
        return MulleState(self)

    def state_from_engine(self, engine_state: GameState, copy: bool = True) -> MulleState:
        """A state at ``engine_state`` (copied unless ``copy=False``), past the chance nodes; ``history()`` is empty.

        Search agents build their determinizations this way (``GameState.from_view`` with
        sampled hidden cards). Its information-state history starts at this position.
        """
        if engine_state.ruleset != self.ruleset:
            raise ValueError(f"the engine state's ruleset {engine_state.ruleset} is not this game's {self.ruleset}")
        state = MulleState(self)
        state._attach(engine_state.copy() if copy else engine_state, reached=False)
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> MulleObserver:
        """The observer OpenSpiel asks for tensors and strings (perfect recall = information state)."""
        return MulleObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params, self.max_plies)


class MulleState(pyspiel.State):
    """A ``python_mulle`` state: the chance bytes chosen so far, then an engine :class:`GameState`."""

    def __init__(self, game: MulleGame) -> None:
        super().__init__(game)
        self._game = game
        self._bytes: list[int] = []
        self.engine: GameState | None = None
        # (player, move id) of every move, and each deal's hands with the table, for the information state.
        self._moves: list[tuple[int, int]] = []
        self._deals: list[tuple[int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = []
        self._reached = True

    def _attach(self, engine: GameState, reached: bool) -> None:
        self.engine = engine
        self._reached = reached
        self._note_deal()

    def _note_deal(self) -> None:
        st = cast(GameState, self.engine)  # attached
        self._deals.append((len(self._moves), st.set_no, st.deal_no, tuple(st.hands[0]), tuple(st.hands[1]),
                            tuple(st.loose)))

    # -- the OpenSpiel API --------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` before the deal, ``TERMINAL`` at the end."""
        if self.engine is None:
            return pyspiel.PlayerId.CHANCE
        if self.engine.over:
            return pyspiel.PlayerId.TERMINAL
        return self.engine.to_move

    def _legal_actions(self, player: int) -> list[int]:
        st = cast(GameState, self.engine)  # OpenSpiel asks a player's actions after the deal only
        return st.legal_move_ids() if player == st.to_move else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Every seed byte (or seed) with its probability: uniform."""
        n = self._game.seeds or 256
        p = 1.0 / n
        return [(a, p) for a in range(n)]

    def _apply_action(self, action: int) -> None:
        action = int(action)
        if self.engine is None:
            n = self._game.seeds or 256
            if not 0 <= action < n:
                raise ValueError(f"chance action {action} is not a seed byte 0..{n - 1}")
            self._bytes.append(action)
            if len(self._bytes) == self._game.chance_nodes:
                seed = sum(b << (8 * k) for k, b in enumerate(self._bytes)) if not self._game.seeds else action
                self._attach(new_game(seed, self._game.ruleset), reached=True)
            return
        st = self.engine
        if action not in st.legal_ids():
            raise IllegalMoveError(
                f"action {action} ({MOVES[action] if 0 <= action < NUM_ACTIONS else 'out of range'}) is not legal; "
                f"legal actions: {st.legal_move_ids()}"
            )
        player, set_no, deal_no = st.to_move, st.set_no, st.deal_no
        st.play_id(action)
        self._moves.append((player, action))
        if not st.over and (st.set_no, st.deal_no) != (set_no, deal_no):
            self._note_deal()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._game.seeds:
                return f"seed {action}"
            return f"seed byte {len(self._bytes)}: {action}"
        return str(MOVES[action])

    def is_terminal(self) -> bool:
        """True once the last set is scored."""
        return self.engine is not None and self.engine.over

    def returns(self) -> list[float]:
        """Each seat's game total minus the opponent's at the end; zeros before."""
        if not self.is_terminal():
            return [0.0, 0.0]
        a, b = cast(GameState, self.engine).scores()  # terminal: dealt
        return [float(a - b), float(b - a)]

    @property
    def seed(self) -> int | None:
        """The engine seed the chance nodes chose (``None`` before the deal, and for wrapped positions)."""
        return self.engine.seed if self.engine is not None and self._reached else None

    def __str__(self) -> str:
        if self.engine is None:
            return f"seed bytes so far: {self._bytes}"
        return str(self.engine)

    def __deepcopy__(self, memo: dict[int, Any]) -> MulleState:
        # OpenSpiel clones Python states with deepcopy; the engine state copies itself
        # (its compiled form cannot be deep-copied attribute by attribute).
        clone = MulleState(self._game)
        clone._bytes = self._bytes[:]
        clone.engine = None if self.engine is None else self.engine.copy()
        clone._moves = self._moves[:]
        clone._deals = self._deals[:]
        clone._reached = self._reached
        return clone


class MulleObserver:
    """OpenSpiel's observer for Mulle: the observation, or with perfect recall the information state.

    Only observations of one seat's private information plus the public information are
    offered (``IIGObservationType(perfect_recall=...)`` with the default private and public
    parts); other kinds raise ``ValueError``.
    """

    def __init__(self, iig_obs_type: Any, params: dict[str, Any] | None, max_plies: int) -> None:
        if params:
            raise ValueError(f"the python_mulle observer takes no parameters, not {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                "python_mulle offers the observation and the information state of one seat (public information "
                "plus that seat's hand): IIGObservationType(perfect_recall=False or True) with the default "
                f"private_info and public_info, not {iig_obs_type}"
            )
        self.perfect_recall = iig_obs_type.perfect_recall
        pieces: list[tuple[str, int, tuple[int, ...]]] = [(name, s.stop - s.start, (s.stop - s.start,))
                                                          for name, s in OBS_SLICES.items()]
        if self.perfect_recall:
            pieces.append(("history", max_plies * PLY_SIZE, (max_plies, PLY_SIZE)))
        self.tensor = np.zeros(sum(size for _, size, _ in pieces), np.float32)
        self.dict: dict[str, Any] = {}
        start = 0
        for name, size, shape in pieces:
            self.dict[name] = self.tensor[start:start + size].reshape(shape)
            start += size
        self._obs = self.tensor[:OBS_SIZE]

    def set_from(self, state: MulleState, player: int) -> None:
        """Write ``player``'s observation (and with perfect recall the move history) of ``state``."""
        self.tensor.fill(0)
        if state.engine is None:
            return
        encode_into(state.engine, player, self._obs)
        if self.perfect_recall:
            hist = self.dict["history"]
            for k, (actor, action) in enumerate(state._moves):
                card, what = _PLY_SLOTS[action]
                row = hist[k]
                row[_WHO + (actor != player)] = 1.0
                row[card] = 1.0
                row[what] = 1.0

    def string_from(self, state: MulleState, player: int) -> str:
        """The observation (or with perfect recall the information state) of ``player`` as text."""
        if state.engine is None:
            return f"P{player} before the deal"
        if self.perfect_recall:
            return _history_text(state, player)
        return _view_text(state.engine, player)


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


def _history_text(state: MulleState, player: int) -> str:
    """Perfect recall: the seat's hand and the table at each deal, and every move in order."""
    lines = [f"P{player}"]
    deals = iter(state._deals)
    nxt = next(deals, None)
    for k in range(len(state._moves) + 1):
        while nxt is not None and nxt[0] == k:
            _, set_no, deal_no, h0, h1, loose = nxt
            lines.append(f"set {set_no} deal {deal_no}: hand {_cards((h0, h1)[player])}; table {_cards(loose)}")
            nxt = next(deals, None)
        if k < len(state._moves):
            actor, action = state._moves[k]
            lines.append(f"P{actor} {MOVES[action]}")
    return "\n".join(lines)


pyspiel.register_game(GAME_TYPE, MulleGame)
