"""The group search against a brute force over every subset of cards.

The engine searches over value counts with a memo, then picks suits; the brute force
here knows nothing of that and enumerates card subsets directly, so agreement on many
random tables checks exactness, the mulle tie-break and the canonical-order tie-break.
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from mulle_env.engine.capture import forced_groups, gather_pairs, has_group, maximal_group_sets
from mulle_env.engine.cards import MULLE_VALUE, MULLE_VALUE_HAND, TABLE_VALUE


def _partitionable(cards: tuple[int, ...], v: int) -> bool:
    if not cards:
        return True
    first, rest = cards[0], cards[1:]
    for k in range(1, len(rest) + 1):
        for combo in combinations(range(len(rest)), k):
            if TABLE_VALUE[first] + sum(TABLE_VALUE[rest[i]] for i in combo) == v:
                left = tuple(c for i, c in enumerate(rest) if i not in combo)
                if _partitionable(left, v):
                    return True
    return False


def _pairs_points(cards, mulle_value) -> int:
    seen = {}
    for c in cards:
        seen[c] = seen.get(c, 0) + 1
    return sum(mulle_value[c] for c, k in seen.items() if k == 2)


def _candidates(loose, v):
    usable = [c for c in loose if TABLE_VALUE[c] < v]
    out = set()
    for k in range(0, len(usable) + 1):
        for combo in combinations(range(len(usable)), k):
            cards = tuple(sorted(usable[i] for i in combo))
            if cards not in out and sum(TABLE_VALUE[c] for c in cards) % v == 0 and _partitionable(cards, v):
                out.add(cards)
    return usable, out


def brute_forced(loose, v, fixed, mulle_value):
    _, cands = _candidates(loose, v)
    return list(min(cands, key=lambda s: (-len(s), -_pairs_points(list(s) + fixed, mulle_value), s)))


def brute_maximal(loose, v):
    usable, cands = _candidates(loose, v)
    out = set()
    for s in cands:
        left = list(usable)
        for c in s:
            left.remove(c)
        if s and not has_group(left, v):
            out.add(s)
    return sorted(out)


def random_table(rng: random.Random, size: int) -> list[int]:
    deck = [f for f in range(52) for _ in range(2)]
    rng.shuffle(deck)
    return sorted(deck[:size])


@pytest.mark.parametrize("seed", range(60))
def test_forced_groups_match_brute_force(seed):
    rng = random.Random(seed)
    # Low values make many overlapping groups: the hard case for the search.
    deck = [f for f in range(52) for _ in range(2) if TABLE_VALUE[f] <= 7]
    rng.shuffle(deck)
    loose = sorted(deck[: rng.randrange(3, 11)])
    v = rng.randrange(3, 14)
    fixed = sorted(rng.sample([f for f in range(52) if f not in loose], 3))
    table = MULLE_VALUE_HAND if seed % 2 else MULLE_VALUE
    assert forced_groups(loose, v, fixed, table) == brute_forced(loose, v, fixed, table)


@pytest.mark.parametrize("seed", range(40))
def test_maximal_group_sets_match_brute_force(seed):
    rng = random.Random(1000 + seed)
    deck = [f for f in range(52) for _ in range(2) if TABLE_VALUE[f] <= 8]
    rng.shuffle(deck)
    loose = sorted(deck[: rng.randrange(2, 10)])
    v = rng.randrange(3, 14)
    assert maximal_group_sets(loose, v) == brute_maximal(loose, v)


@pytest.mark.parametrize("seed", range(40))
def test_gather_pairs_is_the_largest_then_earliest_set_of_pairs(seed):
    rng = random.Random(2000 + seed)
    loose = random_table(rng, rng.randrange(2, 12))
    value = rng.randrange(2, 17)
    best = None
    idx = list(range(len(loose)))

    def search(avail, chosen):
        nonlocal best
        key = (-len(chosen), sorted(chosen))
        if best is None or key < best:
            best = key
        if not avail:
            return
        i, rest = avail[0], avail[1:]
        search(rest, chosen)
        for j in rest:
            if TABLE_VALUE[loose[i]] + TABLE_VALUE[loose[j]] == value:
                search([k for k in rest if k != j], chosen + [loose[i], loose[j]])

    search(idx, [])
    assert gather_pairs(loose, value) == best[1]


def test_has_group_is_subset_sum():
    assert has_group([0, 1], 3)  # KL A + KL 2
    assert not has_group([0, 1], 4)
    assert not has_group([12], 13)  # a single card is not a group... but it is a value match


def test_suit_choice_follows_the_mulle_table_in_any_call_order():
    # 2 + 2 + 3 = 7 takes two of the four 2s: under the default table KL 2 + KL 2 and
    # SP 2 + SP 2 tie at 2 points (the earliest wins); SP 2 scores 15 under hand values.
    # The choice must not depend on which ruleset asked first in this process.
    loose = [1, 1, 14, 14, 28]  # KL 2, KL 2, SP 2, SP 2, HJ 3
    for _ in range(2):
        assert forced_groups(loose, 7, [], MULLE_VALUE) == [1, 1, 28]
        assert forced_groups(loose, 7, [], MULLE_VALUE_HAND) == [14, 14, 28]
