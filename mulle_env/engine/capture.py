"""Exact group search for captures and builds (RULES.md 3, 4.1.3).

A capture with hand value ``v`` takes the largest collection of disjoint groups of two
or more loose cards whose table values sum to ``v``; ties go to the most mulle points,
then to the sorted card list that comes first in the canonical card order.

The search runs in two layers. Which *values* can be grouped depends only on how many
loose cards of each value lie there, so the layer that finds the largest groupings
works on count vectors, with a memo shared by all games (tables repeat a lot). Which
*cards* of a value to take only matters for mulle pairs and the final tie-break, and
that choice is independent per value: mulle pairs only form between identical cards,
and the lexicographically first union of per-value choices is the union of the
per-value firsts. So the second layer picks suits per value from at most 8 cards.
"""

from __future__ import annotations

from itertools import combinations, product

from .cards import TABLE_VALUE

_MAX_V = 13
_MEMO_LIMIT = 500_000

#: A group shape: ((table value - 1, how many cards of it), ...).
Shape = tuple[tuple[int, int], ...]
#: A shape and its number of cards.
Pattern = tuple[Shape, int]


def _partitions(total: int, largest: int) -> list[list[int]]:
    """Partitions of ``total`` into parts no larger than ``largest``, parts descending."""
    if total == 0:
        return [[]]
    out: list[list[int]] = []
    for part in range(min(total, largest), 0, -1):
        for rest in _partitions(total - part, part):
            out.append([part, *rest])
    return out


def _patterns(v: int) -> list[Pattern]:
    """Ways to make ``v`` from 2+ table values below ``v``: ((value-1, count), ...), size."""
    pats: list[Pattern] = []
    for parts in _partitions(v, v - 1):
        counts: dict[int, int] = {}
        for p in parts:
            counts[p - 1] = counts.get(p - 1, 0) + 1
        pats.append((tuple(sorted(counts.items())), len(parts)))
    return pats


#: ``PATTERNS[v]``: every group shape summing to ``v`` (v = 2..13).
PATTERNS: dict[int, list[Pattern]] = {v: _patterns(v) for v in range(2, _MAX_V + 1)}

_best_memo: dict[tuple[int, tuple[int, ...]], int] = {}


def _fits(r: tuple[int, ...], pat: Shape) -> bool:
    for i, k in pat:
        if r[i] < k:
            return False
    return True


def _sub(r: tuple[int, ...], pat: Shape) -> tuple[int, ...]:
    out = list(r)
    for i, k in pat:
        out[i] -= k
    return tuple(out)


def _top(r: tuple[int, ...]) -> int:
    for i in range(len(r) - 1, -1, -1):
        if r[i]:
            return i
    return -1


def _best(v: int, r: tuple[int, ...], by_top: list[list[Pattern]]) -> int:
    """Most cards coverable by disjoint groups summing to ``v`` from counts ``r``.

    Exact-cover recursion: the highest remaining card is either left out or is the
    largest part of one group, so only the shapes whose largest part it is are tried.
    """
    top = _top(r)
    if top < 0:
        return 0
    key = (v, r)
    got = _best_memo.get(key)
    if got is not None:
        return got
    dropped = list(r)
    dropped[top] -= 1
    best = _best(v, tuple(dropped), by_top)
    total = sum(r)
    for pat, size in by_top[top]:
        if _fits(r, pat):
            cand = size + _best(v, _sub(r, pat), by_top)
            if cand > best:
                best = cand
                if best == total:  # every card grouped: nothing can do better
                    break
    if len(_best_memo) > _MEMO_LIMIT:
        _best_memo.clear()
    _best_memo[key] = best
    return best


def _counts(cards: list[int], v: int) -> tuple[int, ...]:
    r = [0] * (v - 1)
    for c in cards:
        t = TABLE_VALUE[c]
        if t < v:
            r[t - 1] += 1
    return tuple(r)


def _by_value(cards: list[int], v: int) -> list[tuple[int, ...]]:
    """The cards of each table value below ``v`` (index value - 1), each sorted."""
    buckets: list[list[int]] = [[] for _ in range(v - 1)]
    for c in cards:
        t = TABLE_VALUE[c]
        if t < v:
            buckets[t - 1].append(c)
    return [tuple(sorted(b)) for b in buckets]


def _usable_patterns(v: int, n: tuple[int, ...]) -> list[Pattern]:
    # Counts only fall during the search, so a shape that does not fit the table
    # never will: filtering once keeps the inner loops short.
    return [p for p in PATTERNS[v] if _fits(n, p[0])]


def _by_top(v: int, pats: list[Pattern]) -> list[list[Pattern]]:
    by_top: list[list[Pattern]] = [[] for _ in range(v - 1)]
    for pat, size in pats:
        by_top[pat[-1][0]].append((pat, size))
    return by_top


def _optimal_covers(v: int, n: tuple[int, ...], pats: list[Pattern]) -> tuple[int, set[tuple[int, ...]]]:
    """The most cards coverable, and every count vector of covered cards achieving it."""
    by_top = _by_top(v, pats)
    best = _best(v, n, by_top)
    found: set[tuple[int, ...]] = set()
    if best == 0:
        return 0, found
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()

    def dfs(r: tuple[int, ...], taken: tuple[int, ...], used: int) -> None:
        top = _top(r)
        if top < 0:
            if used == best:
                found.add(taken)
            return
        if (r, taken) in seen:
            return
        seen.add((r, taken))
        dropped = list(r)
        dropped[top] -= 1
        dropped_t = tuple(dropped)
        if used + _best(v, dropped_t, by_top) == best:
            dfs(dropped_t, taken, used)
        for pat, size in by_top[top]:
            if _fits(r, pat):
                r2 = _sub(r, pat)
                if used + size + _best(v, r2, by_top) == best:
                    t2 = list(taken)
                    for i, k in pat:
                        t2[i] += k
                    dfs(r2, tuple(t2), used + size)

    dfs(n, (0,) * len(n), 0)
    return best, found


_pick_memo: dict[tuple[tuple[int, ...], int, tuple[int, ...], tuple[int, ...]], tuple[int, tuple[int, ...]]] = {}
# Value-level answers per (v, counts): random play meets the same small tables again and again.
_covers_memo: dict[tuple[int, tuple[int, ...]], tuple[int, set[tuple[int, ...]]]] = {}


def _pick(avail: tuple[int, ...], k: int, fixed: tuple[int, ...], mulle_value: tuple[int, ...]
          ) -> tuple[int, tuple[int, ...]]:
    """Best ``k`` of the same-value cards ``avail``: (mulle points gained, cards).

    ``fixed`` lists cards of that value captured anyway (from a build), which pair with
    a chosen twin. The first best by mulle points, then the earliest sorted list.
    """
    # The mulle table is part of the key: the same cards pick differently under
    # mulle_hand_values, and one process may play both rulesets.
    key = (avail, k, fixed, mulle_value)
    got = _pick_memo.get(key)
    if got is not None:
        return got
    if k == len(avail):
        choices = [avail]
    else:
        choices = sorted(set(combinations(avail, k)))
    best_pts, best = -1, avail
    for chosen in choices:
        pts = 0
        seen = fixed + chosen
        for face in set(chosen):
            if seen.count(face) == 2 and fixed.count(face) < 2:
                pts += mulle_value[face]
        if pts > best_pts:  # choices are sorted, so the first best is the earliest
            best_pts, best = pts, chosen
    if len(_pick_memo) > _MEMO_LIMIT:
        _pick_memo.clear()
    _pick_memo[key] = (best_pts, best)
    return best_pts, best


def has_group(loose: list[int], v: int) -> bool:
    """True if some 2+ loose cards sum to ``v`` (subset sum over table values)."""
    reach = 1
    mask = (1 << (v + 1)) - 1
    for c in loose:
        t = TABLE_VALUE[c]
        if t < v:
            reach = (reach | (reach << t)) & mask
    return bool(reach >> v & 1)


def forced_groups(loose: list[int], v: int, fixed: list[int], mulle_value: tuple[int, ...]) -> list[int]:
    """The cards of the largest disjoint grouping summing to ``v`` (RULES.md 4.1.3).

    ``loose`` are the loose cards (any values; those of value ``v`` and above are
    ignored), ``fixed`` the other cards the capture takes (for mulle pairs), and
    ``mulle_value`` the table of mulle points. Returns the chosen cards, sorted.
    """
    n = _counts(loose, v)
    got = _covers_memo.get((v, n))
    if got is None:
        pats = _usable_patterns(v, n)
        got = _optimal_covers(v, n, pats) if pats else (0, set())
        if len(_covers_memo) > _MEMO_LIMIT:
            _covers_memo.clear()
        _covers_memo[(v, n)] = got
    top, covers = got
    if top == 0:
        return []
    avail = _by_value(loose, v)
    fixed_t = _by_value(fixed, v)
    best_key = None
    best_cards: list[int] = []
    for taken in covers:
        pts = 0
        cards: list[int] = []
        for i in range(v - 1):
            k = taken[i]
            if k:
                p, chosen = _pick(avail[i], k, fixed_t[i], mulle_value)
                pts += p
                cards.extend(chosen)
        cards.sort()
        key = (-pts, cards)
        if best_key is None or key < best_key:
            best_key, best_cards = key, cards
    return best_cards


def maximal_group_sets(loose: list[int], v: int) -> list[tuple[int, ...]]:
    """Every distinct card set of a maximal disjoint grouping summing to ``v``.

    Used under ``forced_capture=False``: a collection is maximal when no further group
    can be formed from the loose cards it leaves. Sorted, each set sorted.
    """
    n = _counts(loose, v)
    pats = _usable_patterns(v, n)
    if not pats:
        return []
    seen: set[tuple[int, ...]] = set()
    maximal: list[tuple[int, ...]] = []
    stack = [n]
    while stack:
        r = stack.pop()
        if r in seen:
            continue
        seen.add(r)
        fitting = [p for p, _ in pats if _fits(r, p)]
        if not fitting and r != n:
            maximal.append(r)
        for p in fitting:
            stack.append(_sub(r, p))
    by_value = _by_value(loose, v)
    out: set[tuple[int, ...]] = set()
    for r in maximal:
        per_value = []
        for i in range(v - 1):
            k = n[i] - r[i]
            if k:
                per_value.append(sorted(set(combinations(by_value[i], k))))
        for combo in product(*per_value):
            out.add(tuple(sorted(c for part in combo for c in part)))
    return sorted(out)


def gather_pairs(loose: list[int], value: int) -> list[int]:
    """Cards of the largest set of disjoint loose pairs summing to ``value`` (RULES.md 3).

    Pairs of different values ``x + (value - x)`` are independent of each other, so the
    most pairs is the sum of the per-class minimums; ties take the earliest cards in
    the canonical card order, class by class.
    """
    by_value: list[list[int]] = [[] for _ in range(14)]
    for c in sorted(loose):
        by_value[TABLE_VALUE[c]].append(c)
    out: list[int] = []
    for x in range(max(1, value - 13), (value + 1) // 2):
        y = value - x
        k = min(len(by_value[x]), len(by_value[y]))
        if k:
            out.extend(by_value[x][:k])
            out.extend(by_value[y][:k])
    if value % 2 == 0 and value // 2 <= 13:
        same = by_value[value // 2]
        out.extend(same[: len(same) // 2 * 2])
    out.sort()
    return out
