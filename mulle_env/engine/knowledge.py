"""Rule knowledge for agents: questions about a position that agents ask the engine.

Agents must not re-derive rules (a copied rule drifts from the engine's, as the mulle
values of ``mulle_hand_values=True`` once did). The questions they ask are answered
here, on top of :class:`~mulle_env.engine.state.GameState`:

* :func:`is_mulle_capture`: would playing this card capture only its loose twin (RULES.md 4.1.1)?
* :func:`capture_takes`: which table cards would this capture take (the engine plays it on a copy)?
* :func:`build_owner`, :func:`build_cards`, :func:`build_at`: the build of a value, without
  indexing the state's internal build tuples;
* :func:`set_points`: mulle points, tabbes and intake points of the set in play
  (:func:`intake_bonus` turns intake points into the bonus of RULES.md 6.4);
* :meth:`Ruleset.mulle_values <mulle_env.engine.ruleset.Ruleset.mulle_values>`: what a card
  scores as a mulle under a ruleset.
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import CARDS, HAND_VALUE, Card
from .moves import CAPTURE_ID, MOVES, Move
from .rules import MAX_MULLE_HAND_VALUE  # noqa: F401 - public here too
from .state import Build, GameStateBase, intake_bonus

__all__ = [
    "SetPoints", "build_at", "build_cards", "build_owner", "capture_takes", "hold_probability", "intake_bonus",
    "is_mulle_capture", "miss_probability", "score_difference", "set_points",
]


def miss_probability(copies: int, hand_size: int, unseen: int) -> float:
    """Chance that a hand of ``hand_size`` cards drawn from ``unseen`` holds none of ``copies`` cards of a value.

    The hypergeometric ``C(U - k, h) / C(U, h) = prod_{i<h} (U - k - i) / (U - i)``, the one
    home of the opponent-holds-a-card probability: ``greedy`` weighs replies with
    :func:`hold_probability`, the ``capture-v3`` extra inputs (``mulle_env.extras``) tabulate
    this function, and the compiled extras read that table (their C twin). The opponent's
    hand is taken as a uniform draw from the cards it cannot be seen not to hold.

    >>> miss_probability(1, 1, 4), miss_probability(0, 8, 40), miss_probability(1, 8, 8)
    (0.75, 1.0, 0.0)
    """
    miss = 1.0
    for i in range(hand_size):
        # max(): a hand larger than what is unseen (no real position) gives 0, never a division by zero.
        miss *= max(unseen - copies - i, 0) / max(unseen - i, 1)
    return miss


def hold_probability(copies: int, hand_size: int, unseen: int) -> float:
    """Chance that a hand of ``hand_size`` drawn from ``unseen`` cards holds at least one of ``copies``.

    ``1 - miss_probability(...)``; 0 when there are no copies or no hand.
    """
    if copies <= 0 or hand_size <= 0 or unseen <= 0:
        return 0.0
    return 1.0 - miss_probability(copies, hand_size, unseen)



class SetPoints(NamedTuple):
    """What a player has banked in the set in play (the parts of the set's score sheet)."""

    mulle: int
    tabbe: int
    intake: int

    @property
    def banked(self) -> int:
        """Mulle points + tabbes + intake points: differenced between the players, the set's
        score difference once the set is over (40 intake points per set make the bonus
        difference equal to the intake-point difference), a linear proxy for it before."""
        return self.mulle + self.tabbe + self.intake


def set_points(state: GameStateBase, player: int) -> SetPoints:
    """Mulle points, tabbes and intake points ``player`` has in the set in play."""
    return SetPoints(state.mpts[player], state.tabbe[player], state.ipts[player])


def score_difference(state: GameStateBase, player: int) -> float:
    """``player``'s score difference so far: the finished sets' sheets exactly, the set in play linearly.

    For the set in play this is the difference of :attr:`SetPoints.banked` (mulle + tabbe +
    intake points), which equals that set's score difference once it is over. It is what a
    move *banks* (searches, afterstate nets, :mod:`mulle_env.afterstates`) and what
    ``agents.rollout.set_value`` is.
    """
    o = 1 - player
    v: float = 0
    for sheets in state.sheets:
        v += sheets[player]["total"] - sheets[o]["total"]
    if not state.over:
        v += set_points(state, player).banked - set_points(state, o).banked
    return v


def build_owner(state: GameStateBase, value: int) -> int | None:
    """Owner (0, 1 or ``None``) of the build of ``value``; ``None`` also if there is no such build."""
    b = state.builds.get(value)
    return None if b is None else b[1]


def build_cards(state: GameStateBase, value: int) -> tuple[Card, ...]:
    """Cards of the build of ``value``, sorted (empty if there is none)."""
    b = state.builds.get(value)
    return () if b is None else tuple(map(CARDS.__getitem__, b[0]))


def build_at(state: GameStateBase, value: int) -> Build | None:
    """The build of ``value`` as players see it (value, cards, owner, locked), or ``None``."""
    b = state.builds.get(value)
    if b is None:
        return None
    return Build(value, tuple(CARDS[f] for f in b[0]), b[1], b[2])


def is_mulle_capture(state: GameStateBase, card: int, player: int | None = None) -> bool:
    """Whether ``player`` (default: the player to move) capturing with ``card`` takes only its twin.

    RULES.md 4.1.1: a card of hand value up to 13 whose identical twin lies loose on the
    table captures just that twin, unless the player owns the build of that value (then
    the capture is the forced capture that takes the build too).
    """
    p = state.to_move if player is None else player
    hv = HAND_VALUE[card]
    return hv <= MAX_MULLE_HAND_VALUE and card in state.loose and build_owner(state, hv) != p


def capture_takes(state: GameStateBase, move: Move | int) -> tuple[Card, ...]:
    """The table cards a capture would take (the played card not included), by the engine's rules.

    ``move`` is a capture :class:`Move` or the card it plays (the forced capture). The
    capture is played on a copy, so ``state`` is untouched; it must be legal there.
    """
    if not isinstance(move, Move):
        move = MOVES[CAPTURE_ID[int(move)]]
    if move.kind != "capture":
        raise ValueError(f"capture_takes needs a capture, not {str(move)!r}")
    trial = state.copy()
    trial.play(move)
    return trial.last_taken
