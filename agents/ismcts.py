"""OpenSpiel's Information Set MCTS as a Mulle and a Casino agent: ``ismcts:simulations=200``.

Needs the ``openspiel`` extra (``pip install -e ".[openspiel]"``); :mod:`agents.builtin`
registers the spec only when OpenSpiel imports. The search is OpenSpiel's own
``open_spiel.python.algorithms.ismcts.ISMCTSBot`` (Cowling, Powley and Whitehouse 2011) on
the ``python_mulle`` game (:mod:`mulle_env.openspiel`), so its moves are the engine's.

The agent plays from its seat's :class:`~mulle_env.PlayerView` only. Every simulation starts
from a fresh determinization of that view: the cards the seat has not seen are dealt into
an opponent hand and a deck uniformly among the deals consistent with the view and the public
history (:func:`agents.inference.sample_hidden`, the sampler ``pimc`` uses: an opponent who
owns or built a build holds a card of its value), and the later sets from a fresh seed. That
sampler is the bot's resampler (``ISMCTSBot.set_resampler``), so the bot never touches the
real hidden cards. The tree's nodes are keyed by the mover's observation string (what that
seat sees), so every determinization of one view shares the root.

Evaluators (``evaluator=``) value a new leaf for both seats in points:

* ``rollout`` (default): ``rollouts`` fast playouts of ``horizon`` plies with the heuristic
  rollout policy ``pimc`` uses (:func:`agents.rollout.rollout_values`, compiled when the engine is), then
  :func:`agents.rollout.set_value`: finished sets exactly, the set in play by the points
  banked so far. Priors are uniform.
* ``random``: OpenSpiel's own ``RandomRolloutEvaluator``: ``rollouts`` uniformly random
  playouts through the OpenSpiel API to the end of the game (faithful to the stock algorithm;
  a simulation costs about 13 times a ``rollout`` one).

``uct_c`` is UCT's exploration constant, in points (returns are point differences of the
whole game); the final move is the most visited child (ties broken at random by the bot's
seeded random state, itself seeded from the ``rng`` the arena passes).

At Casino (:class:`CasinoISMCTSAgent`, ``ismcts`` for game casino) the same bot searches the
``python_casino`` game: each simulation's determinization deals the view's unseen cards
with :func:`agents.determinized.deal_hidden` (an opponent who owns a build holds a card of
its value), and a new leaf is valued by ``rollouts`` playouts of Casino's heuristic for
``horizon`` plies, the position then valued by Casino's own estimate of the round's points
(:meth:`agents.determinized.DeterminizedSearchAgent.rollout_value`, the rollout ``pimc`` uses).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mulle_env.codec import check_ruleset
from mulle_env.engine import GameState, Move, PlayerView, Ruleset

from .base import Agent
from .determinized import DeterminizedSearchAgent, deal_hidden, game_hooks
from .inference import HistorySearchAgent, sample_hidden
from .rollout import rollout_values

if TYPE_CHECKING:
    from mulle_env import openspiel as mos

EVALUATORS = ("rollout", "random")
_GAMES: dict[Ruleset, mos.MulleGame] = {}


def _spiel() -> tuple[ModuleType, ModuleType, ModuleType]:
    """OpenSpiel's game module of this project, its ISMCTS and its MCTS, imported on first use.

    OpenSpiel costs about 30 MB resident: a process that registers the built-in agents but never
    builds ``ismcts`` (the live server, an arena of other agents) never loads it.
    """
    from open_spiel.python.algorithms import ismcts, mcts

    from mulle_env import openspiel

    return openspiel, ismcts, mcts


def game_for(ruleset: Ruleset) -> mos.MulleGame:
    """The ``python_mulle`` game of ``ruleset`` (one per ruleset and process)."""
    game = _GAMES.get(ruleset)
    if game is None:
        game = _GAMES[ruleset] = _spiel()[0].MulleGame({k: v for k, v in ruleset.to_dict().items()})
    return game


class RolloutEvaluator:
    """OpenSpiel evaluator: ``rollouts`` heuristic playouts of ``horizon`` plies, valued in points for both seats.

    It offers what OpenSpiel's ``mcts.Evaluator`` asks (``evaluate``, ``prior``) without subclassing it, so
    that this module imports OpenSpiel only when a search runs.
    """

    def __init__(self, rollouts: int, horizon: int, random_state: np.random.RandomState) -> None:
        self.rollouts = rollouts
        self.horizon = horizon
        self._random_state = random_state

    def evaluate(self, state: mos.MulleState) -> np.ndarray:
        """Mean point difference (seat 0's, seat 1's) after the playouts."""
        total = 0.0
        for _ in range(self.rollouts):
            seed = int(self._random_state.randint(1 << 31))
            # The leaf itself (candidate None); the plies count a first ply as played: ask one more.
            # Searches start from dealt determinizations, so every leaf has its engine state.
            leaf = cast(GameState, state.engine)
            total += rollout_values(leaf, [None], 0, "heuristic", self.horizon + 1, "", 0, 0, seed)[0]
        v = total / self.rollouts
        return np.array([v, -v])

    def prior(self, state: mos.MulleState) -> list[tuple[int, float]]:
        """Uniform over the legal actions."""
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


class ISMCTSAgent(HistorySearchAgent):
    """OpenSpiel's ISMCTS on determinizations of the seat's view (see the module docstring).

    Args:
        simulations: Simulations a decision (each from a new determinization).
        uct_c: UCT exploration constant, in points.
        evaluator: ``rollout`` (heuristic playouts of ``horizon`` plies, valued by points
            banked) or ``random`` (OpenSpiel's random playouts to the end of the game).
        rollouts: Playouts per leaf evaluation.
        horizon: Plies a ``rollout`` playout plays from the leaf.
        history: Deal the determinizations by what the heard moves prove too (as ``pimc``).
    """

    name = spec = "ismcts"
    games = ("mulle",)  # it searches Mulle determinizations
    version = "1"

    def __init__(self, simulations: int = 200, uct_c: float = 20.0, evaluator: str = "rollout", rollouts: int = 1,
                 horizon: int = 4, history: bool = True) -> None:
        for name, value in (("simulations", simulations), ("rollouts", rollouts), ("horizon", horizon)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, not {value!r}")
        if not uct_c >= 0:
            raise ValueError(f"uct_c must be >= 0, not {uct_c!r}")
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, not {evaluator!r}")
        self.simulations = simulations
        self.uct_c = uct_c
        self.evaluator = evaluator
        self.rollouts = rollouts
        self.horizon = horizon
        super().__init__(history)

    def check_ruleset(self, ruleset: Ruleset) -> None:
        """The OpenSpiel game's fixed action ids need ``forced_capture=True``."""
        check_ruleset(ruleset)

    def _evaluator(self, random_state: np.random.RandomState) -> Any:
        if self.evaluator == "random":
            return _spiel()[2].RandomRolloutEvaluator(self.rollouts, random_state)
        return RolloutEvaluator(self.rollouts, self.horizon, random_state)

    def move_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                    ) -> list[tuple[Move, float]]:
        """``(move, visit share)`` for every legal move, from one ISMCTS search of ``simulations``."""
        game = game_for(view.ruleset)
        required = self.known_values(view)

        def resample(_state: Any, _player: int) -> mos.MulleState:
            hand, deck = sample_hidden(view, rng, required)
            return game.state_from_engine(GameState.from_view(view, hand, deck, seed=rng.getrandbits(31)), copy=False)

        random_state = np.random.RandomState(rng.getrandbits(32))
        ismcts = _spiel()[1]
        bot = ismcts.ISMCTSBot(
            game, self._evaluator(random_state), self.uct_c, self.simulations, random_state=random_state,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
            use_observation_string=True,
        )
        bot.set_resampler(resample)
        share = dict(bot.get_policy(resample(None, view.player)))
        return [(m, float(share.get(m.id, 0.0))) for m in legal_moves]


_CASINO_GAMES: dict[Any, mos.CasinoGame] = {}


def casino_game_for(ruleset: Any) -> mos.CasinoGame:
    """The ``python_casino`` game of a Casino ruleset (one per ruleset and process; ``None`` flags as 0)."""
    game = _CASINO_GAMES.get(ruleset)
    if game is None:
        params = {k: (0 if v is None else v) for k, v in ruleset.to_dict().items() if k != "gather_all"}
        game = _CASINO_GAMES[ruleset] = _spiel()[0].CasinoGame(params)
    return game


class CasinoRolloutEvaluator:
    """OpenSpiel evaluator for Casino: playouts by the determinized search's rollout, in points for both seats.

    Duck-typed as :class:`RolloutEvaluator` is (``evaluate``, ``prior``).
    """

    def __init__(self, search: DeterminizedSearchAgent, hooks: Any, rollouts: int,
                 random_state: np.random.RandomState) -> None:
        self.search = search
        self.hooks = hooks
        self.policy = hooks.playouts.get(search.rollout, hooks.playouts["random"])
        self.rollouts = rollouts
        self._random_state = random_state

    def evaluate(self, state: mos.CasinoState) -> np.ndarray:
        """Mean point difference (seat 0's, seat 1's) the playouts add from the leaf, plus the score so far."""
        leaf: Any = state.engine  # a search starts from dealt determinizations: every leaf has its engine state
        scores = leaf.scores()
        total = 0.0
        for _ in range(self.rollouts):
            rng = random.Random(int(self._random_state.randint(1 << 31)))
            total += self.search.rollout_value(leaf.copy(), 0, scores, self.policy, self.hooks.evaluate, rng)
        v = total / self.rollouts
        return np.array([v, -v])

    def prior(self, state: mos.CasinoState) -> list[tuple[int, float]]:
        """Uniform over the legal actions."""
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


class CasinoISMCTSAgent(Agent):
    """OpenSpiel's ISMCTS at Casino, on determinizations of the seat's view (the module docstring).

    Args:
        simulations: Simulations a decision (each from a new determinization).
        uct_c: UCT exploration constant, in points (a Casino round hands out 11).
        rollouts: Playouts per leaf evaluation.
        horizon: Plies a playout plays from the leaf (then Casino's estimate of the round's points).
    """

    name = spec = "ismcts"
    games = ("casino",)
    version = "1"

    def __init__(self, simulations: int = 100, uct_c: float = 3.0, rollouts: int = 1, horizon: int = 8) -> None:
        for what, value in (("simulations", simulations), ("rollouts", rollouts), ("horizon", horizon)):
            if value < 1:
                raise ValueError(f"{what} must be >= 1, not {value!r}")
        if not uct_c >= 0:
            raise ValueError(f"uct_c must be >= 0, not {uct_c!r}")
        self.simulations = simulations
        self.uct_c = uct_c
        self.rollouts = rollouts
        self.horizon = horizon
        self._search = DeterminizedSearchAgent(samples=1, rollout="heuristic", horizon=str(horizon))

    def check_ruleset(self, ruleset: Any) -> None:
        """``python_casino``'s actions are the move ids: ``gather_all=True`` only."""
        if not getattr(ruleset, "gather_all", True):
            raise ValueError("ismcts searches python_casino, whose actions are Casino's move ids: it plays "
                             "gather_all=True only (under gather_all=False moves name what they take)")

    def move_values(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> list[tuple[Any, float]]:
        """``(move, visit share)`` for every legal move, from one ISMCTS search of ``simulations``."""
        game = casino_game_for(view.ruleset)
        hooks = game_hooks(view)
        required = hooks.requirements(view) if hooks.requirements is not None else []

        def resample(_state: Any, _player: int) -> mos.CasinoState:
            hand, stock = deal_hidden(view, rng, required)
            return cast("mos.CasinoState", game.state_from_engine(
                hooks.state_type.from_view(view, hand, stock, seed=rng.getrandbits(63)), copy=False))

        random_state = np.random.RandomState(rng.getrandbits(32))
        evaluator = CasinoRolloutEvaluator(self._search, hooks, self.rollouts, random_state)
        ismcts = _spiel()[1]
        bot = ismcts.ISMCTSBot(
            game, evaluator, self.uct_c, self.simulations, random_state=random_state,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
            use_observation_string=True,
        )
        bot.set_resampler(resample)
        share = dict(bot.get_policy(resample(None, view.player)))
        return [(m, float(share.get(m.id, 0.0))) for m in legal_moves]

    # The choice the determinized search makes from its move_values: the best (here the most visited), ties to the
    # earlier legal move.
    act = DeterminizedSearchAgent.act
