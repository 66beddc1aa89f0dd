"""Shared helpers for the scripted and search agents: what a move does, what a card is worth.

Two layers:

* View level (:func:`move_effect`, :func:`discard_cost`): exact, for agents that decide
  from a :class:`~mulle_env.engine.PlayerView`. What a move takes is computed by the
  engine itself on a copy of the position (``GameState.from_view`` with a placeholder
  opponent hand), so these helpers never re-implement a rule.
* State level (:func:`set_value`, :func:`fast_policy_id`): cheap functions on a full
  :class:`~mulle_env.engine.GameState` for rollouts inside a search, where the state is
  a determinization the searcher made itself.

Why "mulle + tabbe + intake points" is the evaluation: a set hands out 40 intake
points, so at the end of a set the bonus difference ``2 (a - 20)`` vs ``0`` (or the
reverse) equals the intake-point difference ``a - b``. Mulle points + tabbes + intake
points, differenced between the players, is therefore exactly the set's score
difference once the set is over, and a linear proxy for it before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mulle_env.engine import (
    GameState,
    Move,
    PlayerView,
    Ruleset,
    build_cards,
    is_mulle_capture,
    set_points,
)
from mulle_env.engine.cards import HAND_VALUE, INTAKE_POINTS, NUM_FACES, TABLE_VALUE
from mulle_env.engine.moves import CAPTURE_ID, DISCARD_ID, NUM_MOVE_IDS

_DEFAULT_MULLE_VALUES = Ruleset().mulle_values

#: First id of the discard moves (ids are captures, builds, trottas, discards: moves.py).
FIRST_DISCARD_ID = DISCARD_ID[0]
#: One past the last capture id.
END_CAPTURE_ID = CAPTURE_ID[NUM_FACES - 1] + 1

assert FIRST_DISCARD_ID == NUM_MOVE_IDS - NUM_FACES


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
        value = move.to if move.kind == "build" else HAND_VALUE[move.card]
        cards = build_cards(st, value)
        return MoveEffect(
            move=move,
            build_value=value,
            build_cards=len(cards),
            build_points=pile_points(cards, view.ruleset.mulle_values),
        )
    return MoveEffect(move=move)


def pile_points(cards, mulle_value=None) -> int:
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


def discard_cost(card: int, hand, unseen_counts, mulle_value=None) -> float:
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


# ----- state level: rollouts --------------------------------------------------------


def set_value(st: GameState, player: int) -> float:
    """Score difference for ``player`` so far: finished sets exactly, the set in play linearly.

    For the set in play this is mulle + tabbe + intake points (see the module
    docstring), which equals that set's score difference once it is over.
    """
    o = 1 - player
    v = 0
    for sheets in st.sheets:
        v += sheets[player]["total"] - sheets[o]["total"]
    if not st.over:
        v += set_points(st, player).banked - set_points(st, o).banked
    return v


def quick_capture_gain(st: GameState, card: int) -> float:
    """A cheap estimate of what capturing with ``card`` is worth (for rollout policies).

    Exact for mulle captures and build-only captures; for value captures it counts the
    loose singles and the build but not the summing groups (their search is the costly
    part of a capture, and rollouts only need the order roughly right).
    """
    hv = HAND_VALUE[card]
    mulle_value = st.ruleset.mulle_values
    if is_mulle_capture(st, card):
        return 2.0 * mulle_value[card] + 2 * INTAKE_POINTS[card] + 1.0
    gain = INTAKE_POINTS[card]
    n = 0
    built = build_cards(st, hv)
    for f in built:
        gain += INTAKE_POINTS[f]
        if f == card:
            gain += mulle_value[f]
    n += len(built)
    if hv <= 13:
        for f in st.loose:
            if TABLE_VALUE[f] == hv:
                gain += INTAKE_POINTS[f]
                n += 1
    return gain + 0.5 * n


#: How much larger a later value must be to replace the best so far in :func:`best_index`.
TIE = 1e-9


def best_index(values: Sequence[float], tie: float = TIE) -> int:
    """Index of the best of ``values`` (non-empty), the earliest one on a tie.

    A value replaces the best so far only when it is larger by more than ``tie``:
    searchers average rollout values, and float rounding between two equally good moves
    must not overturn the order they were listed in (the heuristic's or the policy's),
    which is what makes their choices reproducible and the same on both engines.
    """
    best = 0
    for k in range(1, len(values)):
        if values[k] > values[best] + tie:
            best = k
    return best


def fast_policy_id(st: GameState, ids: list[int], rng) -> int:
    """The rollout policy ``heuristic``: best quick capture, else the cheapest discard, else random.

    Works on move ids and a full state (a determinization), costs a few microseconds.
    """
    if ids[0] < END_CAPTURE_ID:
        best, best_gain = ids[0], -1.0
        for i in ids:
            if i >= END_CAPTURE_ID:
                break
            g = quick_capture_gain(st, i)  # capture ids equal their card's face
            if g > best_gain:
                best, best_gain = i, g
        return best
    if ids[-1] >= FIRST_DISCARD_ID:
        best, best_cost = ids[-1], 99.0
        for i in reversed(ids):
            if i < FIRST_DISCARD_ID:
                break
            c = i - FIRST_DISCARD_ID
            cost = 2 * INTAKE_POINTS[c] + 0.01 * TABLE_VALUE[c]
            if cost < best_cost:
                best, best_cost = i, cost
        # Builds and trottas stay in the mix now and then, so rollouts are not blind to them.
        if len(ids) > 1 and ids[0] < FIRST_DISCARD_ID and rng.random() < 0.25:
            return ids[rng.randrange(len(ids))]
        return best
    return ids[rng.randrange(len(ids))]
