"""Casino's rules as plain functions over a position: what each card may do, and what it takes.

The engine asks :func:`plans` for every legal move of the seat to move and what each would
take (a :class:`Plan`); :meth:`GameState.play <mulle_env.casino.state.GameState.play>`
applies a plan. The sum searches (which loose cards make a value, and the best collection
of disjoint groups) work on bitmasks over the loose numeral cards, whose bits are in the
canonical card order, so that the last tie-break of CASINO.md 4.1.2 (the earlier card wins)
is a comparison of two masks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, TypeVar

from mulle_env.engine.cards import CARD_NAMES, CARDS

from .cards import COURT, POINTS, RANK, SPADE, VALUE
from .moves import (
    BUILD,
    BUILD_ID,
    CAPTURE,
    CAPTURE_ID,
    CAPTURE_TAKE_ID,
    INCREASE,
    INCREASE_ID,
    MOVES,
    TRAIL,
    TRAIL_ID,
    Move,
    Take,
    sort_key,
)
from .ruleset import Ruleset

__all__ = ["Plan", "StoredBuild", "build_is_single", "build_problem", "plans", "refusal", "table_after", "taken_cards"]

#: A build as a position holds it: (value, owner seat, cards (faces, sorted)).
StoredBuild = tuple[int, int, tuple[int, ...]]


class Plan(NamedTuple):
    """What a legal move does: the card played, the loose cards and builds it takes, and what it makes.

    ``base`` is the build an increase adds to; ``value`` the value of the build a build or an
    increase makes (``None`` for a capture or a trail).
    """

    kind: str
    card: int
    loose: tuple[int, ...]
    builds: tuple[StoredBuild, ...]
    base: StoredBuild | None
    value: int | None


def taken_cards(plan: Plan) -> list[int]:
    """The table cards ``plan`` moves off the table: its loose cards, the builds it takes, the build it increases."""
    out = list(plan.loose)
    for b in plan.builds:
        out.extend(b[2])
    if plan.base is not None:
        out.extend(plan.base[2])
    return out


def table_after(loose: Sequence[int], builds: Sequence[StoredBuild], plan: Plan, player: int
                ) -> tuple[list[int], list[StoredBuild]]:
    """The table once ``player`` has played ``plan``: its loose cards and builds, both sorted.

    What :meth:`GameState.play <mulle_env.casino.state.GameState.play>` leaves on the table, and
    what an agent asks to see the table a move leaves: a trail adds the card; every other move
    removes what it takes; a build or an increase lays one build of its value, owned by
    ``player``, holding the card played and everything it took.
    """
    if plan.kind == TRAIL:
        return sorted((*loose, plan.card)), list(builds)
    taken = set(plan.loose)
    left = [f for f in loose if f not in taken] if taken else list(loose)
    gone = [*plan.builds, *((plan.base,) if plan.base is not None else ())]
    kept = [b for b in builds if b not in gone] if gone else list(builds)
    if plan.kind != CAPTURE:
        assert plan.value is not None  # a build's or an increase's plan says the value it makes
        kept.append((plan.value, player, tuple(sorted((plan.card, *taken_cards(plan))))))
        kept.sort()
    return left, kept


def build_is_single(build: StoredBuild) -> bool:
    """A single build: its cards sum to its value (CASINO.md 3); only these can be increased."""
    return sum(VALUE[c] for c in build[2]) == build[0]


def build_problem(value: int, cards: Sequence[int]) -> str | None:
    """Why ``cards`` cannot be a build of ``value`` (``None``: they can), by CASINO.md 3."""
    if not 1 <= value <= 10:
        return f"a build's value is 1 to 10, not {value}"
    if len(cards) < 2:
        return "a build holds at least two cards"
    courts = [CARD_NAMES[c] for c in cards if COURT[c]]
    if courts:
        return f"{', '.join(courts)} has no value and cannot be in a build"
    vals = sorted((VALUE[c] for c in cards), reverse=True)
    total = sum(vals)
    if total == value and value >= 2:
        return None
    if total % value or total == value:
        return (f"its cards sum to {total}, which is neither {value} (a single build) nor split into "
                f"groups of {value} (a multiple build)")
    if not _partition(vals, value, total // value):
        return f"its cards sum to {total} but do not split into groups of {value} each"
    return None


def _partition(vals: list[int], value: int, k: int) -> bool:
    # Exact partition of vals (sorted descending) into k bins of `value` each: a tiny search.
    bins = [0] * k

    def place(i: int) -> bool:
        if i == len(vals):
            return all(b == value for b in bins)
        seen: set[int] = set()
        for j in range(k):
            if bins[j] + vals[i] <= value and bins[j] not in seen:
                seen.add(bins[j])
                bins[j] += vals[i]
                if place(i + 1):
                    return True
                bins[j] -= vals[i]
        return False

    return place(0)


# ----- sums over loose cards as bitmasks ---------------------------------------------------
class _Loose:
    """The loose numeral cards of a position as bit positions, with their points and spades for the tie-breaks."""

    __slots__ = ("faces", "vals", "pts", "spd", "_by_sum")

    def __init__(self, faces: Sequence[int]) -> None:
        self.faces = [f for f in faces if VALUE[f]]  # sorted faces in, sorted out: bit order = card order
        self.vals = [VALUE[f] for f in self.faces]
        self.pts = [POINTS[f] for f in self.faces]
        self.spd = [int(SPADE[f]) for f in self.faces]
        self._by_sum: list[list[tuple[int, int]]] | None = None

    def cards(self, mask: int) -> tuple[int, ...]:
        return tuple(f for i, f in enumerate(self.faces) if mask >> i & 1)

    def _sums(self) -> list[list[tuple[int, int]]]:
        """Every non-empty subset of the loose cards whose values sum to at most 10, as ``(mask, size)`` by sum.

        Sums and builds never exceed 10, so one walk of the table serves every value a position
        asks about (a dozen values, each card, each build), instead of one walk per question.
        """
        by_sum = self._by_sum
        if by_sum is None:
            by_sum = self._by_sum = [[] for _ in range(11)]
            vals, n = self.vals, len(self.vals)

            def walk(start: int, total: int, mask: int, size: int) -> None:
                for i in range(start, n):
                    v = total + vals[i]
                    if v <= 10:
                        m = mask | 1 << i
                        by_sum[v].append((m, size + 1))
                        walk(i + 1, v, m, size + 1)

            walk(0, 0, 0, 0)
        return by_sum

    def subsets(self, allowed: int, total: int, min_size: int) -> list[int]:
        """Masks of the subsets of ``allowed`` with at least ``min_size`` cards whose values sum to ``total``."""
        if not 0 < total <= 10:
            return []
        return [m for m, size in self._sums()[total] if size >= min_size and m & allowed == m]

    def key(self, mask: int) -> tuple[int, int, int]:
        """CASINO.md 4.1.2's first three tie-breaks: most cards, most scoring points, most spades."""
        n = p = s = 0
        i = 0
        while mask:
            if mask & 1:
                n += 1
                p += self.pts[i]
                s += self.spd[i]
            mask >>= 1
            i += 1
        return (n, p, s)

    def better(self, x: int, y: int) -> bool:
        """Whether taking ``x`` beats taking ``y`` by 4.1.2 (cards, points, spades, then the earlier card)."""
        kx, ky = self.key(x), self.key(y)
        if kx != ky:
            return kx > ky
        d = x ^ y
        return bool(x & d & -d)  # the lowest card in one set and not the other: its holder wins


def _by_low_bit(groups: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for g in groups:
        out.setdefault((g & -g).bit_length() - 1, []).append(g)
    return out


def _best_packing(lo: _Loose, groups: list[int], avail: int) -> int:
    """The best collection (4.1.2's order) of disjoint ``groups`` inside ``avail``, as the mask of its cards."""
    if not groups:
        return 0
    by_low = _by_low_bit(groups)
    cache: dict[int, int] = {}

    def best(av: int) -> int:
        if av == 0:
            return 0
        hit = cache.get(av)
        if hit is not None:
            return hit
        low = av & -av
        result = best(av & ~low)  # the lowest card stays on the table
        for g in by_low.get(low.bit_length() - 1, ()):
            if g & av == g:
                cand = g | best(av & ~g)
                if lo.better(cand, result):
                    result = cand
        cache[av] = result
        return result

    usable = 0
    for g in groups:
        usable |= g
    return best(avail & usable)


def _all_packings(groups: list[int], avail: int) -> set[int]:
    """Every union of a collection (the empty one too) of disjoint ``groups`` inside ``avail``."""
    by_low = _by_low_bit(groups)
    usable = 0
    for g in groups:
        usable |= g
    cache: dict[int, frozenset[int]] = {}

    def every(av: int) -> frozenset[int]:
        if av == 0:
            return frozenset((0,))
        hit = cache.get(av)
        if hit is not None:
            return hit
        low = av & -av
        out = set(every(av & ~low))
        for g in by_low.get(low.bit_length() - 1, ()):
            if g & av == g:
                out.update(g | r for r in every(av & ~g))
        res = cache[av] = frozenset(out)
        return res

    return set(every(avail & usable))


_T = TypeVar("_T")


def _subsets_of(items: Sequence[_T]) -> Iterator[tuple[_T, ...]]:
    for bits in range(1 << len(items)):
        yield tuple(x for i, x in enumerate(items) if bits >> i & 1)


# ----- the legal moves ---------------------------------------------------------------------
def plans(ruleset: Ruleset, hand: Sequence[int], loose: Sequence[int], builds: Sequence[StoredBuild],
          player: int) -> dict[Move, Plan]:
    """Every legal move of ``player`` (holding ``hand``) and its :class:`Plan`, in the canonical move order.

    ``loose`` sorted faces; ``builds`` the table's builds. The reservation of CASINO.md 4.4 is
    checked on what each move leaves: every build the player owns after it needs a card of its
    value in the player's hand.
    """
    out: list[tuple[Move, Plan]] = []
    lo = _Loose(loose)
    everything = (1 << len(lo.faces)) - 1
    owned = [b for b in builds if b[1] == player]
    owned_values = {b[0] for b in owned}
    gather = ruleset.gather_all
    in_hand = [0] * 11  # cards of each value in the hand (index 0: court cards)
    for c in hand:
        in_hand[VALUE[c]] += 1

    def keeps_reserve(card: int, gone: Sequence[StoredBuild], made: int | None) -> bool:
        a = VALUE[card]
        need = {b[0] for b in owned if b not in gone} if gone else set(owned_values)
        if made is not None:
            need.add(made)
        return all(in_hand[v] - (v == a) > 0 for v in need)

    by_value: dict[int, tuple[list[StoredBuild], list[int]]] = {}

    def fixed_items(value: int, exclude: StoredBuild | None = None) -> tuple[list[StoredBuild], list[int]]:
        hit = by_value.get(value)
        if hit is None:
            hit = by_value[value] = ([b for b in builds if b[0] == value], [f for f in loose if VALUE[f] == value])
        if exclude is None:
            return hit
        return [b for b in hit[0] if b is not exclude], hit[1]

    # The sums over the loose cards depend on the value only, not on the card played: each once.
    sums: dict[tuple[int, int], list[int]] = {}

    def subsets(total: int, min_size: int) -> list[int]:
        hit = sums.get((total, min_size))
        if hit is None:
            hit = sums[(total, min_size)] = lo.subsets(everything, total, min_size)
        return hit

    packed: dict[tuple[int, int], int] = {}

    def best_packing(value: int, avail: int) -> int:
        hit = packed.get((value, avail))
        if hit is None:
            hit = packed[(value, avail)] = _best_packing(lo, subsets(value, 2), avail)
        return hit

    for card in sorted(hand):
        a = VALUE[card]
        # -- captures (4.1) --
        if COURT[card]:
            same = [f for f in loose if RANK[f] == RANK[card]]
            if same and keeps_reserve(card, (), None):
                if ruleset.court_capture == "all":
                    out.append((MOVES[CAPTURE_ID[card]], Plan(CAPTURE, card, tuple(same), (), None, None)))
                else:
                    for f in same:
                        out.append((MOVES[CAPTURE_TAKE_ID[card][f]], Plan(CAPTURE, card, (f,), (), None, None)))
        else:
            fb, fl = fixed_items(a)
            groups = subsets(a, 2)
            if gather:
                mask = best_packing(a, everything)
                if (fb or fl or mask) and keeps_reserve(card, fb, None):
                    taken = tuple(sorted(fl + list(lo.cards(mask))))
                    out.append((MOVES[CAPTURE_ID[card]], Plan(CAPTURE, card, taken, tuple(fb), None, None)))
            else:
                for opt in _choices(lo, fb, fl, [(0, groups)], everything):
                    loose_taken, builds_taken = opt
                    if (loose_taken or builds_taken) and keeps_reserve(card, builds_taken, None):
                        move = Move(CAPTURE, CARDS[card], take=_take(loose_taken, builds_taken))
                        out.append((move, Plan(CAPTURE, card, loose_taken, builds_taken, None, None)))
            # -- new builds (4.2.1) --
            for value in range(a, 11):
                if value > a and a > ruleset.sum_build_max_card:
                    break  # the app's rule: a card above the limit builds only its own value
                if in_hand[value] - (value == a) <= 0:
                    continue  # no card left to capture the build with (4.2.3): the cheap test first
                fb, fl = fixed_items(value)
                if not keeps_reserve(card, fb, value):
                    continue
                partners = subsets(value - a, 1) if value > a else [0]
                groups = subsets(value, 2)
                if gather:
                    best: int | None = None
                    for s in partners:
                        cand = s | best_packing(value, everything & ~s)
                        if best is None or lo.better(cand, best):
                            best = cand
                    if best is None or not (best or fb or fl):
                        continue
                    taken = tuple(sorted(fl + list(lo.cards(best))))
                    out.append((MOVES[BUILD_ID[card][value]], Plan(BUILD, card, taken, tuple(fb), None, value)))
                else:
                    seen: set[tuple[tuple[int, ...], tuple[StoredBuild, ...]]] = set()
                    for s in partners:
                        for opt in _choices(lo, fb, fl, [(s, groups)], everything & ~s):
                            if opt in seen or not (opt[0] or opt[1]):
                                continue
                            seen.add(opt)
                            move = Move(BUILD, CARDS[card], value=value, take=_take(*opt))
                            out.append((move, Plan(BUILD, card, opt[0], opt[1], None, value)))
            # -- increases (4.2.2) --
            for base in builds:
                value = base[0] + a
                if value > 10 or not build_is_single(base):
                    continue
                limit = ruleset.increase_max_cards
                if limit is not None and base[1] != player and len(base[2]) > limit:
                    continue
                if in_hand[value] - (value == a) <= 0:
                    continue
                fb, fl = fixed_items(value, base)
                if not keeps_reserve(card, [base, *fb], value):
                    continue
                groups = subsets(value, 2)
                if gather:
                    mask = best_packing(value, everything)
                    taken = tuple(sorted(fl + list(lo.cards(mask))))
                    move = MOVES[INCREASE_ID[card][base[0]]]
                    out.append((move, Plan(INCREASE, card, taken, tuple(fb), base, value)))
                else:
                    for opt in _choices(lo, fb, fl, [(0, groups)], everything):
                        take = _take(*opt) if (opt[0] or opt[1]) else None
                        move = Move(INCREASE, CARDS[card], value=base[0], build=tuple(CARDS[c] for c in base[2]),
                                    take=take)
                        out.append((move, Plan(INCREASE, card, opt[0], opt[1], base, value)))
        # -- trail (4.3) --
        if (not owned or ruleset.trail_with_build) and keeps_reserve(card, (), None):
            out.append((MOVES[TRAIL_ID[card]], Plan(TRAIL, card, (), (), None, None)))
    out.sort(key=lambda mp: sort_key(mp[0]))
    return dict(out)


def _choices(lo: _Loose, fb: list[StoredBuild], fl: list[int], parts: list[tuple[int, list[int]]],
             avail: int) -> list[tuple[tuple[int, ...], tuple[StoredBuild, ...]]]:
    """Under ``gather_all=False``: every distinct (loose cards, builds) a move can take.

    ``parts``: ``(must, groups)``, the cards it must take (a new build's partners of the played
    card) and the sum groups it may add from ``avail``; ``fb``/``fl`` builds and loose cards of
    the value, each optional.
    """
    out: set[tuple[tuple[int, ...], tuple[StoredBuild, ...]]] = set()
    for must, groups in parts:
        for packed in _all_packings(groups, avail):
            mask = must | packed
            for builds_taken in _subsets_of(fb):
                for singles in _subsets_of(fl):
                    out.add((tuple(sorted([*lo.cards(mask), *singles])), builds_taken))
    return sorted(out)


def _take(loose_taken: Sequence[int], builds_taken: Sequence[StoredBuild]) -> tuple[Take, ...]:
    items: list[Take] = [CARDS[f] for f in loose_taken]
    items += sorted(tuple(CARDS[c] for c in b[2]) for b in builds_taken)
    return tuple(items)


def refusal(ruleset: Ruleset, move: Move, hand: Sequence[int], loose: Sequence[int],
            builds: Sequence[StoredBuild], player: int, legal: Callable[[], list[Move]]) -> str:
    """Why ``move`` (well formed, not legal here) is refused, in a player's words; ``legal`` lists the legal ones."""
    name = CARD_NAMES[move.card]
    if move.card not in hand:
        return f"{name} is not in the hand of seat {player}"
    owned = sorted({b[0] for b in builds if b[1] == player})
    a = VALUE[move.card]
    if move.kind == TRAIL and owned and not ruleset.trail_with_build:
        return f"seat {player} owns a build of {', '.join(map(str, owned))} and may not trail (CASINO.md 4.3)"
    if move.kind != TRAIL and not COURT[move.card] and ((move.take is None) != ruleset.gather_all) \
            and not (move.kind == INCREASE and move.build is not None and not ruleset.gather_all):
        if ruleset.gather_all:
            return ("under gather_all=True the rules decide what a move takes: write it without 'take' "
                    f"(e.g. '{move.kind} {name}')")
        if move.kind == INCREASE:
            example = next((b for b in builds if b[0] == move.value), None)
            shown = "[" + " ".join(CARD_NAMES[c] for c in example[2]) + "]" if example else "[<cards>]"
            return (f"under gather_all=False an increase names the build it increases by its cards: "
                    f"'increase {shown} with {name}', and what else it takes after 'take' (docs/casino.md, notation)")
        return "under gather_all=False a move names what it takes after 'take' (docs/casino.md, notation)"
    same_card = [m for m in legal() if m.card == move.card]
    if move.kind == CAPTURE and COURT[move.card]:
        same = [CARD_NAMES[f] for f in loose if f % 13 == move.card % 13]
        if not same:
            return f"there is no loose {CARD_NAMES[move.card].split()[1]} on the table for {name} to capture"
    if move.kind == CAPTURE and not COURT[move.card] and not any(m.kind == CAPTURE for m in same_card):
        return f"nothing on the table makes {a}, so {name} captures nothing"
    if move.kind == INCREASE:
        if move.build is None and not any(b[0] == move.value for b in builds):
            return f"there is no build of {move.value} on the table"
        limit = ruleset.increase_max_cards
        for b in builds:
            if b[0] == move.value and not build_is_single(b):
                return f"the build of {b[0]} is a multiple build, and a multiple build is never increased (4.2.2)"
            if b[0] == move.value and limit is not None and b[1] != player and len(b[2]) > limit:
                return f"the build of {b[0]} has {len(b[2])} cards, more than increase_max_cards={limit}"
    if move.kind == BUILD and move.value is not None and move.value > a and a > ruleset.sum_build_max_card:
        return (f"{name} may build only its own value {a}: sum_build_max_card={ruleset.sum_build_max_card} "
                "limits the card played into a sum build")
    made = move.value + a if move.kind == INCREASE and move.value is not None else move.value
    left = [VALUE[c] for c in hand if c != move.card]
    need = sorted({v for v in (*owned, *((made,) if made is not None else ())) if v not in left})
    if need and move.kind in (BUILD, INCREASE, TRAIL, CAPTURE):
        keep = ", ".join(map(str, need))
        return (f"after it seat {player} would own a build of {keep} without a card of that value in the hand "
                "(a build's owner must keep one to capture it, CASINO.md 4.2.3 and 4.4)")
    if move.kind == BUILD:
        return f"nothing on the table joins {name} to make a build of {move.value}"
    if move.take is not None:
        return "the cards named after 'take' are not a collection of groups this card can take here"
    return "it is not one of the legal moves here"
