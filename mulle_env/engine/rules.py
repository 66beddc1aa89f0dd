"""Legal move generation and move application (RULES.md 3-5).

These functions work on a :class:`~mulle_env.engine.state.GameState`'s internals with
ints and precomputed tables; they trust their caller. Legality is checked once, where
input arrives (``GameState.play``), and :func:`explain` says why a move is not legal.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .capture import forced_groups, gather_pairs, maximal_group_sets
from .cards import (
    CARD_NAMES,
    CARDS,
    HAND_VALUE,
    INTAKE_POINTS,
    TABLE_VALUE,
)
from .moves import (
    BUILD,
    BUILD_DOWN_ID,
    BUILD_LOOSE_ID,
    BUILD_UP_ID,
    CAPTURE,
    CAPTURE_ID,
    DISCARD,
    DISCARD_ID,
    MIN_BUILD_VALUE,
    MOVES,
    TROTTA,
    TROTTA_ID,
    Move,
)

if TYPE_CHECKING:
    from .state import GameState, GameStateBase

TV = TABLE_VALUE
HV = HAND_VALUE
HAND_SIZE = 8
TABLE_DEAL = 8
DEALS_PER_SET = 6
#: The most cards a state may hold (104 in any real game): a bound both backends keep, so
#: that a position made by hand can never overrun the compiled core's piles.
MAX_STATE_CARDS = 128
#: The highest hand value of a card that can make a mulle capture (A, SP 2 and RU 10 in hand count 14-16).
MAX_MULLE_HAND_VALUE = 13
#: The largest count (a tabbe count, a score-sheet entry) a position may hold, on both backends.
COUNT_LIMIT = 1_000_000

# ----- scoring (RULES.md 6) ------------------------------------------------------------

#: The entries of a score sheet, in order.
SHEET_KEYS = ("mulle", "tabbe", "intake", "bonus", "total")
#: A score sheet: each of :data:`SHEET_KEYS` and its points (:func:`sheet`).
Sheet = dict[str, int]
#: Intake points above this earn the bonus (RULES.md 6.4): 20 is half of a set's 40.
INTAKE_BONUS_FROM = 20


def intake_bonus(intake: int) -> int:
    """The bonus of RULES.md 6.4 for ``intake`` intake points: 2 x (intake - 20) above 20, else 0."""
    return 2 * (intake - INTAKE_BONUS_FROM) if intake > INTAKE_BONUS_FROM else 0


def sheet(mulle: int, tabbe: int, intake: int) -> Sheet:
    """A set's score sheet from its mulle points, tabbes and intake points (RULES.md 6)."""
    bonus = intake_bonus(intake)
    return {"mulle": mulle, "tabbe": tabbe, "intake": intake, "bonus": bonus, "total": mulle + tabbe + bonus}


def add_sheets(sheets: Iterable[Sheet]) -> Sheet:
    """Sum score sheets key by key."""
    out = dict.fromkeys(SHEET_KEYS, 0)
    for s in sheets:
        for k in SHEET_KEYS:
            out[k] += s[k]
    return out


def leader(set_no: int, deal_no: int) -> int:
    """Seat leading deal ``deal_no`` of set ``set_no``: seat 0 leads the game's first deal,
    then the lead alternates every deal, across sets too (RULES.md 1.4)."""
    return ((set_no - 1) * DEALS_PER_SET + deal_no - 1) % 2


def _pair_exists(lc: list[int], value: int) -> bool:
    for x in range(max(1, value - 13), (value + 1) // 2):
        if lc[x] and lc[value - x]:
            return True
    if value % 2 == 0 and value // 2 <= 13:
        return lc[value // 2] >= 2
    return False


def legal_ids(st: GameState) -> list[int]:
    """Ids of every legal move for the player to move, in canonical order."""
    p = st._to_move
    hand = st._hands[p]
    if st._over or not hand:
        return []
    opp = 1 - p
    builds = st._builds
    lc = [0] * 14
    reach = 1
    targets = []  # distinct loose faces with their table values, in face order
    prev = -1
    for f in st._loose:
        t = TV[f]
        lc[t] += 1
        reach = (reach | (reach << t)) & 0x3FFF
        if f != prev:
            prev = f
            targets.append((f, t))
    # Bit v of `hold` / `hold2`: the hand has at least one / two cards of hand value v.
    hold = hold2 = 0
    for c in hand:
        bit = 1 << HV[c]
        if hold & bit:
            hold2 |= bit
        hold |= bit
    opp_locked = 0
    critical = 0
    owns = False
    open_targets = []
    for v, b in builds.items():
        owner = b[1]
        if owner == p:
            owns = True
            if not (hold2 >> v) & 1:
                critical |= 1 << v
        elif b[2]:
            if owner == opp:
                opp_locked |= 1 << v
        else:
            open_targets.append((v, owner == opp))
    free = ~opp_locked
    discard_needs_no_capture = st._ruleset.discard_only_if_no_capture
    caps: list[int] = []
    blds: list[int] = []
    trots: list[int] = []
    discs: list[int] = []
    prev = -1
    for c in hand:
        if c == prev:
            continue
        prev = c
        hv = HV[c]
        if hv <= 13:
            can = lc[hv] or hv in builds or (reach >> hv) & 1
        else:
            can = hv in builds
        if can:
            caps.append(CAPTURE_ID[c])
        if (critical >> hv) & 1:
            continue  # the last card reserved for an own build may only capture it
        bit = 1 << hv
        # Reservation is checked on the hand after c leaves it; merging into the
        # opponent's locked build is never allowed.
        after = (hold & ~bit | hold2 & bit) & free
        tv = TV[c]
        if targets:
            row = BUILD_LOOSE_ID[c]
            blds += [row[f] for f, t in targets if (after >> (t + tv)) & 1]
        for v0, is_opp in open_targets:
            if (after >> (v0 + tv)) & 1:
                blds.append(BUILD_UP_ID[c][v0])
            if is_opp and v0 - tv >= MIN_BUILD_VALUE and (after >> (v0 - tv)) & 1:
                blds.append(BUILD_DOWN_ID[c][v0])
        if (after >> hv) & 1:
            if hv in builds or (hv <= 13 and lc[hv]) or _pair_exists(lc, hv):
                trots.append(TROTTA_ID[c])
        if not owns and not (can and discard_needs_no_capture):
            discs.append(DISCARD_ID[c])
    if len(open_targets) > 1:
        blds.sort()  # up/down targets of one card can interleave across builds
    return caps + blds + trots + discs


def legal_moves(st: GameState) -> list[Move]:
    """Every legal :class:`Move`; expands captures under ``forced_capture=False``."""
    ids = legal_ids(st)
    if st.ruleset.forced_capture:
        return [MOVES[i] for i in ids]
    out: list[Move] = []
    for i in ids:
        m = MOVES[i]
        if m.kind == CAPTURE:
            out.extend(capture_choices(st, m.card))
        else:
            out.append(m)
    return out


def capture_choices(st: GameStateBase, c: int) -> list[Move]:
    """The capture moves of card ``c`` under ``forced_capture=False`` (RULES.md 4.1.3)."""
    p = st.to_move
    hv = HV[c]
    b = st.builds.get(hv)
    if hv > 13 or (c in st.loose and not (b and b[1] == p)):
        return [MOVES[CAPTURE_ID[c]]]  # special card or mulle capture: nothing to choose
    singles = [f for f in st.loose if TV[f] == hv]
    sets = maximal_group_sets(st.loose, hv) or [()]
    card = CARDS[c]
    return [
        Move(CAPTURE, card, taking=tuple(CARDS[f] for f in sorted(singles + list(s))))
        if singles or s
        else MOVES[CAPTURE_ID[c]]  # only the build is taken: nothing to name
        for s in sets
    ]


def _remove_all(pile: list[int], cards: Iterable[int]) -> None:
    for f in cards:
        pile.remove(f)


def _gather(st: GameState, value: int) -> list[int]:
    """Take value ``value`` off the table for a build or trotta (RULES.md 3)."""
    out: list[int] = []
    b = st._builds.pop(value, None)
    if b is not None:
        out.extend(b[0])
    loose = st._loose
    if loose:
        singles = [f for f in loose if TV[f] == value] if value <= 13 else []
        pairs = gather_pairs(loose, value)
        if singles or pairs:
            _remove_all(loose, singles)
            _remove_all(loose, pairs)
            out.extend(singles)
            out.extend(pairs)
    return out


def _capture(st: GameState, p: int, c: int, taking: list[int] | None) -> list[int]:
    hv = HV[c]
    loose = st._loose
    builds = st._builds
    b = builds.get(hv)
    if hv <= 13 and c in loose and not (b is not None and b[1] == p):
        loose.remove(c)
        taken = [c]
    elif hv > 13:
        taken = list(b[0])  # type: ignore[index]  # a capture with a special card always has its build
        del builds[hv]
    else:
        taken = []
        if b is not None:
            taken.extend(b[0])
            del builds[hv]
        if taking is not None:
            chosen = list(taking)
        else:
            singles = [f for f in loose if TV[f] == hv]
            chosen = singles + forced_groups(loose, hv, taken, st._ruleset.mulle_values)
        _remove_all(loose, chosen)
        taken.extend(chosen)
    taken.sort()
    captured = sorted(taken + [c])
    mv = st._ruleset.mulle_values
    mulle = st._mulle[p]
    intake = st._intake[p]
    prev = -1
    pts = 0
    ipts = 0
    for f in captured:
        ipts += INTAKE_POINTS[f]
        if f == prev:  # both copies of one face: a mulle (RULES.md 4.1.5)
            insort(mulle, f)  # piles stay sorted so views and JSON need no sort
            pts += mv[f]
            prev = -1
        else:
            insort(intake, f)
            prev = f
    st._mpts[p] += pts
    st._ipts[p] += ipts
    st._public = None
    if not loose and not builds:
        st._tabbe[p] += 1
    st._last_capturer = p
    return taken


def apply(st: GameState, move: Move) -> None:
    """Apply a legal move (trusted) and advance turn, deal and set."""
    p = st._to_move
    c = int(move.card)
    st._hands[p].remove(c)
    kind = move.kind
    if kind == CAPTURE:
        taking = None if move.taking is None else [int(f) for f in move.taking]
        st._last_taken = tuple(map(CARDS.__getitem__, _capture(st, p, c, taking)))
    elif kind == BUILD:
        if move.on is not None:
            st._loose.remove(move.on)
            cards = [int(move.on), c]
        else:
            cards = list(st._builds.pop(move.on_build)[0])  # type: ignore[arg-type]  # a build names one target
            cards.append(c)
        to: int = move.to  # type: ignore[assignment]  # every build has its new value
        gathered = _gather(st, to)
        cards.extend(gathered)
        cards.sort()
        st._builds[to] = (tuple(cards), p, bool(gathered) or st._ruleset.lock_every_build)
    elif kind == TROTTA:
        cards = _gather(st, HV[c])
        cards.append(c)
        cards.sort()
        st._builds[HV[c]] = (tuple(cards), p, True)
    else:
        insort(st._loose, c)
    if kind != CAPTURE:
        st._last_taken = ()
    # The other player moves next; one without cards passes. A dealt game never has that (the hands empty
    # together), but a position written by hand may give one player more cards (docs/engine.md, RULES gaps).
    st._to_move = 1 - p if st._hands[1 - p] or not st._hands[p] else p
    st._last_move = (p, move)
    st._legal = None
    if not st._hands[0] and not st._hands[1]:
        end_deal(st)


def end_deal(st: GameState) -> None:
    """Deal the next 8 cards each, or end the set when the deck is empty (RULES.md 5)."""
    deck = st._deck
    if deck:
        st._hands[0] = sorted(deck[:HAND_SIZE])
        st._hands[1] = sorted(deck[HAND_SIZE : 2 * HAND_SIZE])
        del deck[: 2 * HAND_SIZE]
        st._deal_no += 1
        st._to_move = st.leader()
        return
    end_set(st)


def end_set(st: GameState) -> None:
    """Leftovers to the last capturer, score the set, start the next or end the game."""
    left = list(st._loose)
    for b in st._builds.values():
        left.extend(b[0])
    st._loose = []
    st._builds = {}
    if left and st._last_capturer is not None:
        st._intake[st._last_capturer].extend(left)
        st._intake[st._last_capturer].sort()
        st._ipts[st._last_capturer] += sum(INTAKE_POINTS[f] for f in left)
    st._sheets.append((sheet(st._mpts[0], st._tabbe[0], st._ipts[0]), sheet(st._mpts[1], st._tabbe[1], st._ipts[1])))
    st._public = None
    if len(st._sheets) >= st._ruleset.sets:
        st._over = True
        return
    st._set_no += 1
    st.deal_set()


def explain(st: GameStateBase, move: Move) -> str:
    """Why ``move`` is not legal here, in words a player understands."""
    p = st.to_move
    hand = st.hands[p]
    c = int(move.card)
    name = CARD_NAMES[c]
    if c not in hand:
        return f"{name} is not in your hand (hand: {', '.join(CARD_NAMES[f] for f in hand)})"
    hv = HV[c]
    own = sorted(v for v, b in st.builds.items() if b[1] == p)
    hc = [0] * 17
    for f in hand:
        hc[HV[f]] += 1
    if hv in own and hc[hv] == 1 and move.kind != CAPTURE:
        return f"{name} is your last card of value {hv}, reserved for your build [{hv}]: it may only capture it"
    if move.kind == CAPTURE:
        if hv > 13:
            return f"{name} has hand value {hv} and can only capture the build [{hv}], and there is none"
        if move.taking is not None:
            if st.ruleset.forced_capture:
                return "captures name no cards under forced capture: write 'capture <card>'"
            options = capture_choices(st, c)
            return f"{name} cannot take exactly those cards; its captures are: {', '.join(map(str, options))}"
        return f"{name} captures nothing: no loose card of value {hv}, no build [{hv}], no loose cards summing to {hv}"
    if move.kind == DISCARD:
        if own:
            builds = " ".join(f"[{v}]" for v in own)
            return f"you own the build{'s' if len(own) > 1 else ''} {builds}, so you may not discard"
        return f"{name} could capture (capture {name}), so it may not be discarded"
    hc[hv] -= 1
    opp_locked = {v for v, b in st.builds.items() if b[1] == 1 - p and b[2]}
    if move.kind == TROTTA:
        if not hc[hv]:
            return f"trotta needs another card of hand value {hv} in your hand after {name}"
        if hv in opp_locked:
            return f"the opponent owns the locked build [{hv}]"
        return f"trotta {name} would gather nothing: no build [{hv}], no loose card or pair of value {hv}"
    # What is left is a build, and a build has its new value (to) and, without a loose target, a build's (on_build).
    if move.on is not None:
        if move.on not in st.loose:
            return f"there is no loose {CARD_NAMES[move.on]} on the table"
    else:
        b = st.builds.get(move.on_build)  # type: ignore[arg-type]
        if b is None:
            return f"there is no build [{move.on_build}] on the table"
        if b[1] == p:
            return f"you own the build [{move.on_build}]: you may not change its value until the opponent builds on it"
        if b[2]:
            return f"the build [{move.on_build}] is locked"
        if move.to < move.on_build and b[1] != 1 - p:  # type: ignore[operator]
            return f"only an opponent's build may be built down, and [{move.on_build}] has no owner"
    if move.to in opp_locked:
        return f"the new build [{move.to}] would merge into the opponent's locked build [{move.to}]"
    if not hc[move.to]:  # type: ignore[index]
        return f"after playing {name} you would hold no card of hand value {move.to} to capture [{move.to}] with"
    return f"{move} is not legal here"
