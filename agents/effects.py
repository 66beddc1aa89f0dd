"""What a move does and what a card is worth, from a player's view: the scripted agents' helpers.

Exact, for agents that decide from a :class:`~mulle_env.engine.PlayerView`
(:func:`move_effect`, :func:`discard_cost`). What a move takes is computed by the engine
itself on a copy of the position (``GameState.from_view`` with a placeholder opponent
hand), so these helpers never re-implement a rule. The state-level helpers of searches
(rollouts, :func:`~agents.rollout.set_value`) are in :mod:`agents.rollout`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mulle_env.engine import GameState, Move, PlayerView, Ruleset, build_cards, set_points
from mulle_env.engine.cards import HAND_VALUE, INTAKE_POINTS, NUM_FACES, TABLE_VALUE

__all__ = ["MoveEffect", "discard_cost", "move_effect", "pile_points", "twin_counts", "view_state"]

_DEFAULT_MULLE_VALUES = Ruleset().mulle_values


@dataclass(frozen=True, slots=True)
class MoveEffect:
    """What one move does to the mover's piles, found by playing it on a copy.

    Attributes:
        move: The move.
        taken: Cards taken off the table (captures only; the played card excluded).
        mulles: Mulle pairs made by the move.
        mulle_points: Mulle points gained.
        intake_points: Intake points gained (played card included).
        tabbe: True if the capture empties the table.
        build_value: For a build or trotta, the value of the mover's build afterwards.
        build_cards: For a build or trotta, how many cards that build holds.
        build_points: For a build or trotta, intake + mulle points inside that build
            (what capturing it later is worth, before new mulles).
    """

    move: Move
    taken: tuple[int, ...] = ()
    mulles: int = 0
    mulle_points: int = 0
    intake_points: int = 0
    tabbe: bool = False
    build_value: int | None = None
    build_cards: int = 0
    build_points: int = 0

    @property
    def points(self) -> int:
        """Points the move banks now: mulle points + tabbe + intake points."""
        return self.mulle_points + int(self.tabbe) + self.intake_points


def view_state(view: PlayerView) -> GameState:
    """A full state for applying the viewer's moves to: only the viewer's side is real.

    The opponent gets one placeholder card so that playing the viewer's last card never
    ends the deal (which would deal from an unknown deck and could score the set).
    """
    filler = [0] * max(1, view.opponent_hand_size)
    return GameState.from_view(view, filler, [])


def move_effect(view: PlayerView, move: Move, base: GameState | None = None) -> MoveEffect:
    """What ``move`` (legal in ``view``) takes, scores and builds, by the engine's own rules.

    ``base`` is :func:`view_state` of ``view``, passed in to share it across moves.
    """
    base = view_state(view) if base is None else base
    p = view.player
    st = base.copy()
    before_m = len(st.mulle[p])
    before = set_points(st, p)
    st.play_unchecked(move)
    if move.kind == "capture":
        after = set_points(st, p)
        return MoveEffect(
            move=move,
            taken=st.last_taken,
            mulles=len(st.mulle[p]) - before_m,
            mulle_points=after.mulle - before.mulle,
            intake_points=after.intake - before.intake,
            tabbe=after.tabbe > before.tabbe,
        )
    if move.kind in ("build", "trotta"):
        # A build has its value. (No typing.cast: a function call on the heuristic's hot path.)
        value: int = move.to if move.kind == "build" else HAND_VALUE[move.card]  # type: ignore[assignment]
        cards = build_cards(st, value)
        return MoveEffect(
            move=move,
            build_value=value,
            build_cards=len(cards),
            build_points=pile_points(cards, view.ruleset.mulle_values),
        )
    return MoveEffect(move=move)


def pile_points(cards: Iterable[int], mulle_value: Sequence[int] | None = None) -> int:
    """Intake points of ``cards`` plus the mulle points of identical pairs among them.

    ``mulle_value`` is the ruleset's table, ``Ruleset.mulle_values`` (default: the default ruleset's).
    """
    mulle_value = _DEFAULT_MULLE_VALUES if mulle_value is None else mulle_value
    pts = sum(INTAKE_POINTS[f] for f in cards)
    seen: set[int] = set()
    for f in cards:
        if f in seen:
            pts += mulle_value[f]
            seen.discard(f)
        else:
            seen.add(f)
    return pts


def twin_counts(view: PlayerView) -> list[int]:
    """Per face, how many copies the viewer has not seen (0, 1 or 2)."""
    counts = [0] * NUM_FACES
    for f in view.unseen():
        counts[f] += 1
    return counts


def discard_cost(card: int, hand: Iterable[int], unseen_counts: Sequence[int],
                 mulle_value: Sequence[int] | None = None) -> float:
    """How much laying ``card`` loose on the table may give away (lower = safer discard).

    A loose card can be mulled by whoever holds its twin, and any loose card can be
    captured by value. Holding the twin oneself turns the discard into bait only the
    discarder can mull, so it costs little. Intake points are what any capture of it
    hands over; the table value breaks ties (low cards make more sums). ``mulle_value``
    is the ruleset's table, ``Ruleset.mulle_values`` (default: the default ruleset's).
    """
    mulle_value = _DEFAULT_MULLE_VALUES if mulle_value is None else mulle_value
    twin_out = unseen_counts[card] > 0
    own_twin = sum(1 for f in hand if f == card) >= 2
    cost = 2.0 * INTAKE_POINTS[card]
    if twin_out and not own_twin:
        cost += 0.35 * mulle_value[card]
    if own_twin:
        cost -= 0.2 * mulle_value[card]
    return cost + 0.01 * TABLE_VALUE[card]
