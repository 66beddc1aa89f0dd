"""One-ply look-ahead: bank points now, keep what the opponent can take next small.

Evaluation of a move ``m`` (higher is better)::

    value(m) = points(m) + build(m) - risk * exposure(m)

* ``points(m)``: mulle points + tabbe + intake points the move banks now (the set's
  score difference is exactly mulle + tabbe + intake-point difference, see
  :mod:`agents.effects`).
* ``build(m)``: for a build or trotta, the points inside the mover's build, which the
  mover is committed to capture next turn.
* ``exposure(m)``: the opponent's best reply capture on the table the move leaves:
  ``max over faces c`` of ``P(opponent holds c) * points of capturing with c`` where
  ``c`` ranges over the faces the player has not seen and ``P`` is the chance that at
  least one unseen copy of ``c`` is in the opponent's hand (drawn without replacement
  from the unseen cards). Captures of the player's own build count here too.

Ties go to the heuristic's order (:func:`agents.heuristic.rank_moves`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.engine import GameState, Move, PlayerView, build_cards, set_points
from mulle_env.engine.cards import INTAKE_POINTS
from mulle_env.engine.knowledge import hold_probability as hold_probability  # its one home; a name here too
from mulle_env.engine.moves import CAPTURE_ID, MOVES

from .base import Agent
from .effects import pile_points, twin_counts, view_state
from .heuristic import rank_moves


def reply_exposure(st: GameState, opponent: int, counts: list[int], hand_size: int, unseen: int) -> float:
    """Largest ``P(hold c) * points(capture with c)`` for the opponent to move in ``st``."""
    worst = 0.0
    saved = st.hands[opponent]
    before = set_points(st, opponent).banked
    # A bound on what any capture here can bank, to skip faces that cannot beat ``worst``.
    # A capture takes table cards (loose and built) plus the played card: at most the
    # intake points of all of them, the mulle points of identical pairs among them, and
    # one tabbe. Only two copies of a face exist, so the played card adds at most its own
    # intake and one new pair. No fixed constant is safe: a [13] build holding three ace
    # pairs is worth 51 points by itself.
    mv = st.ruleset.mulle_values
    table_points = pile_points(list(st.loose) + [f for v in st.builds for f in build_cards(st, v)], mv) + 1
    for face, k in enumerate(counts):
        if not k:
            continue
        p = hold_probability(k, hand_size, unseen)
        if p * (table_points + INTAKE_POINTS[face] + mv[face]) <= worst:
            continue
        # The state is this agent's own scratch copy: try each face as the opponent's hand
        # (two copies, so the capture never empties the hand and ends the deal).
        st.set_hand(opponent, (face, face))
        if CAPTURE_ID[face] in st.legal_ids():
            trial = st.copy()
            trial.play_unchecked(_capture_move(face))
            gain = set_points(trial, opponent).banked - before
            worst = max(worst, p * gain)
    st.set_hand(opponent, saved)
    return worst


def _capture_move(face: int) -> Move:
    return MOVES[CAPTURE_ID[face]]


class GreedyAgent(Agent):
    """One-ply look-ahead: points now plus own build, minus the opponent's best reply capture.

    Args:
        risk: Weight of the opponent's expected best reply capture (0 ignores it).
    """

    name = spec = "greedy"
    games = ("mulle",)  # it values Mulle's points

    def __init__(self, risk: float = 1.0) -> None:
        if risk < 0:
            raise ValueError(f"risk must be >= 0, not {risk!r}")
        self.risk = risk

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The move with the best one-ply value (module docstring)."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        me = view.player
        opp = 1 - me
        counts = twin_counts(view)
        unseen = sum(counts)
        base = view_state(view)
        best: Move | None = None
        best_value: float | None = None
        for key, eff in rank_moves(view, legal_moves):
            st = base.copy()
            st.play_unchecked(eff.move)
            value: float = eff.points + eff.build_points
            if self.risk:
                hand = view.opponent_hand_size or min(8, unseen)
                value -= self.risk * reply_exposure(st, opp, counts, hand, unseen)
            if best_value is None or value > best_value + 1e-9:
                best, best_value = eff.move, value
        assert best is not None  # legal_moves is not empty
        return best
