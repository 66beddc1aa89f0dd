"""OpenSpiel's Information Set MCTS as a Mulle agent: ``ismcts:simulations=200``.

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
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from open_spiel.python.algorithms import ismcts as _ismcts
from open_spiel.python.algorithms import mcts as _mcts

from mulle_env import openspiel as mos
from mulle_env.codec import check_ruleset
from mulle_env.engine import GameState, Move, PlayerView, Ruleset

from .inference import HistorySearchAgent, sample_hidden
from .rollout import rollout_values

EVALUATORS = ("rollout", "random")
_GAMES: dict[Ruleset, mos.MulleGame] = {}


def game_for(ruleset: Ruleset) -> mos.MulleGame:
    """The ``python_mulle`` game of ``ruleset`` (one per ruleset and process)."""
    game = _GAMES.get(ruleset)
    if game is None:
        game = _GAMES[ruleset] = mos.MulleGame({k: v for k, v in ruleset.to_dict().items()})
    return game


class RolloutEvaluator(_mcts.Evaluator):
    """OpenSpiel evaluator: ``rollouts`` heuristic playouts of ``horizon`` plies, valued in points for both seats."""

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

    def _evaluator(self, random_state: np.random.RandomState) -> _mcts.Evaluator:
        if self.evaluator == "random":
            return _mcts.RandomRolloutEvaluator(self.rollouts, random_state)
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
        bot = _ismcts.ISMCTSBot(
            game, self._evaluator(random_state), self.uct_c, self.simulations, random_state=random_state,
            final_policy_type=_ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
            use_observation_string=True,
        )
        bot.set_resampler(resample)
        share = dict(bot.get_policy(resample(None, view.player)))
        return [(m, float(share.get(m.id, 0.0))) for m in legal_moves]
