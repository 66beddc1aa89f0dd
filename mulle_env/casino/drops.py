"""A person's gesture at a Casino table as the moves it means (CASINO.md 8, the seed's interaction rules).

The engine knows nothing of drags: this module is the one place a front end (the live card
room, a terminal, any other page) turns "this hand card was dropped there" into moves, so no
page re-derives a rule. A drop is

* a hand card (``card``),
* dropped on a table pile (``target``: a loose card's face, or a build as its cards) or on the
  empty table area (``target=None``),
* optionally with a **temporary stack** (``staged``): table piles the player gathered before
  playing the card (interface state, never engine state; CASINO.md 8.2).

:func:`drop_moves` gives the legal moves that play the card and take (or build on) every pile
named, in the seed's priority order (its rule list, ``shared/seeds/casino-rule-system.en.md``):
captures first (same-value, loose, build and temp-stack captures, 205 to 190), then adding to
the player's own build (40), extending the opponent's build (38), and new builds (35), each kind
by the value it makes; a drop on the empty table with nothing staged trails (8.3). Exactly one
move: a front end plays it at once (the seed's "same-value capture principle"); several: it
shows a chooser naming them in words (:func:`move_words`, :func:`drop_choices`: "Capture 5 and
5", "Build 5", "Build 10"); none: it refuses the drop with :func:`drop_refusal`'s reason ("you
own a build of 8 and must keep an 8").

Under ``gather_all=False`` a move names what it takes; a drop with a temporary stack then means
the moves taking exactly the piles named when there are any (the player said what to take).

>>> from mulle_env import casino
>>> st = casino.GameState.from_dict({"to_move": 0, "hands": [["SP 5", "HJ 5", "RU 10"], ["KL 2", "KL 3", "KL 4"]],
...                                  "table": ["KL 5"]})
>>> [words for move, words in drop_choices(st.view(0), "SP 5", pile_of("KL 5"))]
['Capture 5 and 5', 'Build 5', 'Build 10']
>>> drop_moves(st.view(0), "RU 10")
[Move.from_str('trail RU 10')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from mulle_env.engine.cards import CARD_NAMES, parse_card

from . import rules
from .cards import COURT, VALUE
from .moves import BUILD, CAPTURE, INCREASE, TRAIL, Move
from .state import PlayerView

__all__ = ["Pile", "drop_choices", "drop_moves", "drop_refusal", "move_words", "pile_of"]

#: A table pile: a loose card's face, or a build as its cards (faces, any order).
Pile = Union[int, tuple[int, ...]]

# The seed's priority of each kind of move a drop can mean (higher first); an increase ranks by whose build it is.
_CAPTURE, _OWN_BUILD, _OPPONENT_BUILD, _NEW_BUILD, _TRAIL = 205, 40, 38, 35, 0


def pile_of(value: object) -> Pile:
    """A pile from its JSON form: a card text (``"SP 5"``) or face, or a build as a list of card texts or faces.

    Raises ``ValueError`` (an :class:`~mulle_env.engine.errors.InvalidCardError`) naming what is wrong.
    """
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError("a build is named by its cards, not by an empty list")
        return tuple(sorted(parse_card(v) for v in value))
    return parse_card(value)


def _face(card: int | str) -> int:
    return parse_card(card) if isinstance(card, str) else int(card)


def _norm(pile: Pile) -> Pile:
    return tuple(sorted(int(c) for c in pile)) if isinstance(pile, tuple) else int(pile)


def _involved(plan: rules.Plan) -> set[Pile]:
    """The piles a move's plan takes or builds on: its loose cards, the builds it takes, the build it increases."""
    out: set[Pile] = set(int(f) for f in plan.loose)
    out.update(tuple(sorted(b[2])) for b in plan.builds)
    if plan.base is not None:
        out.add(tuple(sorted(plan.base[2])))
    return out


def _priority(plan: rules.Plan, player: int) -> int:
    if plan.kind == CAPTURE:
        return _CAPTURE
    if plan.kind == INCREASE:
        assert plan.base is not None  # an increase's plan names the build it adds to
        return _OWN_BUILD if plan.base[1] == player else _OPPONENT_BUILD
    return _NEW_BUILD if plan.kind == BUILD else _TRAIL


def _piles(target: Pile | None, staged: Sequence[Pile]) -> list[Pile]:
    named = [_norm(p) for p in staged]
    if target is not None:
        named.append(_norm(target))
    return list(dict.fromkeys(named))  # a pile staged and dropped on is one pile


def drop_moves(view: PlayerView, card: int | str, target: Pile | None = None,
               staged: Sequence[Pile] = ()) -> list[Move]:
    """The legal moves a drop means, in the seed's priority order (see the module docstring).

    Args:
        view: The dropping player's view (the player to move; another seat's drop means nothing).
        card: The hand card dropped (a face or its text, ``"SP 5"``).
        target: The table pile it was dropped on (a loose card's face, or a build as its cards), or
            ``None`` for the empty table area.
        staged: The piles of the player's temporary stack (CASINO.md 8.2), taken with the drop.

    Returns:
        Every legal move that plays ``card`` and takes or builds on every pile named (``target``
        and ``staged``); the trail of ``card`` when nothing is named. Empty when the drop means no
        legal move (:func:`drop_refusal` says why).
    """
    face = _face(card)
    named = _piles(target, staged)
    found: list[tuple[int, int, int, Move]] = []
    for i, (move, plan) in enumerate(view.move_plans().items()):
        if int(move.card) != face:
            continue
        if not named:
            if plan.kind == TRAIL:
                found.append((-_TRAIL, 0, i, move))
            continue
        if plan.kind == TRAIL:
            continue
        involved = _involved(plan)
        if all(p in involved for p in named):
            extra = len(involved) - len(named)
            found.append((-_priority(plan, view.player), plan.value or 0, i, move))
            if not view.ruleset.gather_all and staged and extra == 0:
                found[-1] = (found[-1][0], found[-1][1], -1 - i, move)  # exact: marked by a negative index
    if not view.ruleset.gather_all and staged and any(f[2] < 0 for f in found):
        found = [f for f in found if f[2] < 0]
    found.sort(key=lambda f: (f[0], f[1], abs(f[2])))
    return [f[3] for f in found]


def _rank(face: int) -> str:
    return CARD_NAMES[face].split()[1]


def _whose(view: PlayerView, owner: int) -> str:
    return "your" if owner == view.player else "the opponent's"


def move_words(view: PlayerView, move: Move, detail: bool = False) -> str:
    """A legal move of ``view``'s player in a person's words: "Capture 5 and 5", "Build 10", "Trail 7".

    ``detail`` adds what a build or an increase takes besides the card (a chooser adds it where
    two choices would otherwise read alike).
    """
    plan = view.move_plans()[move]
    card = _rank(plan.card)
    loose = [_rank(f) for f in plan.loose]
    builds = [f"{_whose(view, b[1])} build of {b[0]}" for b in plan.builds]
    if plan.kind == TRAIL:
        return f"Trail {card}"
    if plan.kind == CAPTURE:
        items = [card, *loose, *builds]
        return "Capture " + (" and ".join(items) if len(items) <= 2 else ", ".join(items[:-1]) + " and " + items[-1])
    taking = " with " + ", ".join([*loose, *builds]) if detail and (loose or builds) else ""
    if plan.kind == INCREASE:
        assert plan.base is not None
        return f"Raise {_whose(view, plan.base[1])} build of {plan.base[0]} to {plan.value} with {card}{taking}"
    return f"Build {plan.value}{taking}"


def drop_choices(view: PlayerView, card: int | str, target: Pile | None = None,
                 staged: Sequence[Pile] = ()) -> list[tuple[Move, str]]:
    """:func:`drop_moves` with each move's words for a chooser, distinct: where two moves read alike, both
    say what they take besides the card (and, if they still read alike, their notation)."""
    moves = drop_moves(view, card, target, staged)
    words = [move_words(view, m) for m in moves]
    for i, w in enumerate(words):
        if words.count(w) > 1:
            words[i] = move_words(view, moves[i], detail=True)
    return [(m, w if words.count(w) == 1 else f"{w} ({m})") for m, w in zip(moves, words)]


def _pile_text(pile: Pile) -> str:
    return f"the build [{' '.join(CARD_NAMES[c] for c in pile)}]" if isinstance(pile, tuple) else CARD_NAMES[pile]


def _values(values: Sequence[int]) -> str:
    return " and ".join(map(str, values))


def _keep(owned: Sequence[int]) -> str:
    cards = " and ".join(f"{'an' if v == 8 else 'a'} {v}" for v in owned)
    return f"you own a build of {_values(owned)} and must keep {cards} in your hand to capture it (CASINO.md 4.4)"


def drop_refusal(view: PlayerView, card: int | str, target: Pile | None = None,
                 staged: Sequence[Pile] = ()) -> str | None:
    """Why a drop means no legal move, in a player's words; ``None`` when it means at least one."""
    if view.over:
        return "the game is over"
    if view.to_move != view.player:
        return "it is not your turn"
    face = _face(card)
    name = CARD_NAMES[face]
    if face not in view.hand:
        return f"{name} is not in your hand"
    builds = {tuple(sorted(int(c) for c in b.cards)): b for b in view.builds}
    named = _piles(target, staged)
    for p in named:
        if isinstance(p, tuple) and p not in builds:
            return f"there is no build [{' '.join(CARD_NAMES[c] for c in p)}] on the table"
        if not isinstance(p, tuple) and p not in view.loose:
            return f"{CARD_NAMES[p]} is not a loose card on the table"
    if drop_moves(view, face, target, staged):
        return None
    hand, loose = [int(c) for c in view.hand], [int(c) for c in view.loose]
    stored = [b.stored for b in view.builds]
    owned = sorted({b.value for b in view.builds if b.owner == view.player})
    legal = view.legal_moves
    if not named:
        if owned and not view.ruleset.trail_with_build:
            return (f"you own a build of {_values(owned)}, so you may not trail (CASINO.md 4.3): drop {name} on a "
                    "pile instead")
        if owned:
            return _keep(owned)
        return rules.refusal(view.ruleset, Move(TRAIL, view.hand[view.hand.index(face)]), hand, loose, stored,
                             view.player, legal)
    a = VALUE[face]
    if COURT[face]:
        same = [p for p in named if isinstance(p, tuple) or p % 13 != face % 13]
        if same:
            return (f"{name} has no value for sums or builds: it captures only loose {_rank(face)}s "
                    f"(not {_pile_text(same[0])})")
    courts = [p for p in named if not isinstance(p, tuple) and COURT[p]]
    if courts:
        return f"{CARD_NAMES[courts[0]]} is captured only by a card of its rank, alone"
    total = sum(builds[p].value if isinstance(p, tuple) else VALUE[p] for p in named)
    mine = [m for m in legal() if int(m.card) == face]
    if not mine and owned:
        return _keep(owned)
    if total == a or (total % a == 0 and not any(isinstance(p, tuple) and builds[p].value != a for p in named)):
        what = "these cards" if len(named) > 1 else _pile_text(named[0])
        if owned and not any(m.kind == CAPTURE for m in mine):
            return f"capturing {what} with {name} would leave your build of {_values(owned)} without a card to take it"
        return f"{name} cannot capture {what} here: they do not split into groups of {a}"
    made = a + total
    if made > 10:
        return f"{name} ({a}) with {total} makes {made}: a build is at most 10, and {total} is not a capture for {a}"
    if not any(VALUE[c] == made for c in hand if c != face):
        return f"building {made} needs another {made} in your hand to capture it later, and you hold none"
    if a > view.ruleset.sum_build_max_card:
        return f"{name} builds only its own value {a} (sum_build_max_card={view.ruleset.sum_build_max_card})"
    for p in named:
        if isinstance(p, tuple) and not builds[p].single:
            return f"{_pile_text(p)} is a multiple build of {builds[p].value}: it is captured whole, never raised"
    if owned:
        return _keep(owned)
    return f"{name} on {' and '.join(_pile_text(p) for p in named)} is none of your legal moves"
