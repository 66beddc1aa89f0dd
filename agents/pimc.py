"""Perfect-information Monte Carlo (determinized search): the strong baseline.

For each decision:

1. Draw ``samples`` determinizations: deal the cards the player has not seen
   (``view.unseen()``) into an opponent hand of the right size and a deck, uniformly
   at random subject to what the player knows. The hard constraints the public
   record gives come from reservation (RULES.md 4.5): an opponent who owns the build
   ``[V]`` holds a card of hand value ``V``, and one who built ``[V]`` earlier in the
   deal still holds it until it plays a card of that value
   (:mod:`agents.inference`, fed by ``observe``).
2. For every candidate move and every determinization, play the move on a copy, then
   finish with a fast rollout policy up to the horizon (4 plies by default),
   and score the result with :func:`agents.rollout.set_value` (the score difference,
   exact for finished sets and mulle + tabbe + intake points for the set in play).
3. Play the move with the best mean.

All candidates see the same determinizations and the same rollout random numbers
(common random numbers), so their difference is measured with far less noise than
their values. Ties go to the heuristic's order.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from mulle_env.engine import GameState, Move, PlayerView

from .heuristic import rank_moves
from .inference import HistorySearchAgent, sample_hidden
from .rollout import POLICIES, rollout_values
from .rollout import rollout_value as rollout_value  # its old home: a kept compatibility name (CHANGELOG, 0.2.0)

ROLLOUTS = tuple(POLICIES)
HORIZONS = ("deal", "set", "game")


def determinize(view: PlayerView, rng: random.Random, required: Iterable[int] = ()) -> tuple[list[int], list[int]]:
    """A random (opponent hand, deck) consistent with ``view`` and the hand values in ``required``.

    Uniform over the deals of the unseen cards in which the opponent holds a card of the
    hand value of every build it owns and of every value in ``required`` (what the
    public history proves: :class:`agents.inference.PublicHistory`); see
    :func:`agents.inference.sample_hidden`.
    """
    return sample_hidden(view, rng, required)


class PIMCAgent(HistorySearchAgent):
    """Determinized Monte Carlo search with fast rollouts (see the module docstring).

    Args:
        samples: Determinizations per decision (each candidate is rolled out once per
            determinization). The default, 200, costs on the compiled core about what the
            old default 40 cost on the Python engine, and beat it by +4.2 points a game
            [0.8, 7.5] (docs/agents.md); ``pimc:samples=40`` is the old agent.
        rollout: Rollout policy: ``heuristic`` (captures first, cheap discards; the
            default, a few microseconds a move) or ``random``.
        horizon: Where rollouts stop: a number of plies (default 4: the move, the
            opponent's reply and one more exchange), ``deal`` (end of the current
            deal), ``set`` or ``game``. Short horizons measured stronger than long
            ones: the fast rollout policy adds more noise and bias than it adds
            information (docs/agents.md).
        width: Search only the heuristic's best ``width`` moves (0 = all of them).
        history: Deal the determinizations by what the heard moves prove too (a card kept
            for a build that was lost); ``false`` uses the view alone (for comparisons).
    """

    name = spec = "pimc"
    games = ("mulle",)  # Mulle's determinizations, rollouts and set values
    #: 2: the determinizations respect the public history (``history``) and the default is
    #: ``samples=200`` (was 40): results of version 1 (no recorded version) are of another agent.
    version = "2"
    def __init__(self, samples: int = 200, rollout: str = "heuristic", horizon: str = "4", width: int = 0,
                 history: bool = True) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, not {samples!r}")
        if rollout not in POLICIES:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {rollout!r}")
        horizon = str(horizon)
        if horizon not in HORIZONS and not (horizon.isdigit() and int(horizon) > 0):
            raise ValueError(
                f"horizon must be one of {', '.join(HORIZONS)} or a positive number of plies, not {horizon!r}"
            )
        if width < 0:
            raise ValueError(f"width must be >= 0, not {width!r}")
        self.samples = samples
        self.rollout = rollout
        self.horizon = horizon
        self.width = width
        super().__init__(history)

    def move_values(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random
                    ) -> list[tuple[Move, float]]:
        """``(move, value)`` for every searched move, in the heuristic's order (the tie-break order).

        The value is the mean over the determinizations of the rollout's
        :func:`~agents.rollout.set_value` (points, from the mover's seat); every move
        is searched unless ``width`` limits the search to the heuristic's best moves.
        This is what :meth:`act` maximizes, and what teacher data labels decisions with.
        A lone candidate is returned with value 0.0 without searching (nothing to compare).
        """
        cands = [eff.move for _, eff in rank_moves(view, legal_moves)]
        if self.width:
            cands = cands[: self.width]
        if len(cands) == 1:
            return [(cands[0], 0.0)]
        me = view.player
        plies = int(self.horizon) if self.horizon.isdigit() else 10**6
        root_set, root_deal = view.set_no, view.deal_no
        totals = [0.0] * len(cands)
        required = self.known_values(view)
        for _ in range(self.samples):
            hand, deck = determinize(view, rng, required)
            root = GameState.from_view(view, hand, deck, seed=rng.getrandbits(31))
            values = rollout_values(root, cands, me, self.rollout, plies, self.horizon, root_set, root_deal,
                                    rng.getrandbits(63))
            totals = [t + v for t, v in zip(totals, values)]
        return [(move, total / self.samples) for move, total in zip(cands, totals)]
