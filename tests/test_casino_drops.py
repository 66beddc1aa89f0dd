"""mulle_env.casino.drops: a drop at the table as the moves it means (CASINO.md 8, the seed's interaction rules).

The seed's own cases (its "Testing Scenarios" and "Examples"), the priority order, the temporary
stack, refusals in words, and two properties over random positions of random rulesets: every
move a drop returns is legal (and plays the card and takes every pile named), and every legal
move is reached by some drop.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mulle_env import casino
from mulle_env.casino.drops import drop_choices, drop_moves, drop_refusal, move_words, pile_of
from mulle_env.casino.rules import Plan
from mulle_env.engine.cards import parse_card


def position(hand: list[str], table: list, other: list[str] | None = None, **rules) -> casino.PlayerView:
    other = other if other is not None else ["RU Q", "SP Q", "HJ Q", "RU J"][:len(hand)]
    st_ = casino.GameState.from_dict({"to_move": 0, "hands": [hand, other], "table": table},
                                     ruleset=casino.Ruleset(**rules))
    return st_.view(0)


def texts(moves) -> list[str]:
    return [str(m) for m in moves]


# ----- the seed's cases ----------------------------------------------------------------------------
@pytest.mark.parametrize("hand", [["SP 5", "KL 7", "HJ 3"], ["SP 9", "KL 7", "HJ 3"], ["SP 6", "KL 7", "HJ 3"]])
def test_a_same_value_drop_with_no_build_option_captures_at_once(hand):
    # The seed: {hand: [5♠, 7♣, 3♥], table: [5♣]} -> auto-capture (and the 9 and 6 cases).
    card = hand[0]
    loose = "KL " + card.split()[1]
    view = position(hand, [loose])
    moves = drop_moves(view, card, pile_of(loose))
    assert texts(moves) == [f"capture {card}"]
    assert move_words(view, moves[0]) == f"Capture {card.split()[1]} and {card.split()[1]}"


@pytest.mark.parametrize(("hand", "expected"), [
    (["SP 5", "HJ 5", "RU 10"], ["Capture 5 and 5", "Build 5", "Build 10"]),
    (["SP 5", "KL 7", "RU 10"], ["Capture 5 and 5", "Build 10"]),
    (["SP 5", "HJ 5", "KL 7"], ["Capture 5 and 5", "Build 5"]),
])
def test_a_same_value_drop_with_build_options_offers_a_chooser_in_the_seeds_order(hand, expected):
    view = position(hand, ["KL 5"])
    assert [w for _, w in drop_choices(view, "SP 5", pile_of("KL 5"))] == expected


def test_captures_come_before_raising_own_then_opponents_builds_then_new_builds():
    view = position(["SP 2", "RU 5", "HJ 7"], ["KL 3", {"build": ["KL 2", "RU 3"], "value": 5, "owner": 1}],
                    other=["KL 5", "HJ 4", "SP 9"])
    build = pile_of(["KL 2", "RU 3"])
    # SP 2 on the opponent's build of 5: raise it to 7 (a 7 is in hand), or build 5 with the loose 3, which
    # gathers the build of 5 too (gather_all): the raise (the seed's 38) before the new build (35).
    assert [w for _, w in drop_choices(view, "SP 2", build)] == ["Raise the opponent's build of 5 to 7 with 2",
                                                                 "Build 5"]
    # On the loose 3: a new build of 5 (which also gathers the build of 5 under gather_all).
    assert [w for _, w in drop_choices(view, "SP 2", pile_of("KL 3"))] == ["Build 5"]
    # RU 5 on the build: the capture comes first.
    assert texts(drop_moves(view, "RU 5", build)) == ["capture RU 5"]


def test_own_build_raised_before_the_opponents():
    view = position(["SP 2", "RU 7", "HJ 9", "KL 6"],
                    [{"build": ["KL 3", "SP 4"], "value": 7, "owner": 0}, {"build": ["HJ 2", "RU 3"], "value": 5,
                                                                            "owner": 1}],
                    other=["KL 5", "HJ 4", "SP 9"])
    # SP 2 staged with both builds cannot be one move; each build alone is one.
    assert drop_choices(view, "SP 2", pile_of(["KL 3", "SP 4"]))[0][1] == "Raise your build of 7 to 9 with 2"
    assert drop_choices(view, "SP 2", pile_of(["HJ 2", "RU 3"]))[0][1] == "Raise the opponent's build of 5 to 7 with 2"


def test_a_drop_on_the_empty_table_trails():
    view = position(["SP 5", "KL 7", "HJ 3"], ["KL 9"])
    assert texts(drop_moves(view, "KL 7")) == ["trail KL 7"]
    assert drop_refusal(view, "KL 7") is None


def test_the_temporary_stack_names_what_to_take():
    # Under gather_all=False every choice is a move: staging 2 and 3 with the drop on 5 means taking all three.
    view = position(["SP 5", "KL 7", "HJ 3"], ["KL 5", "RU 2", "SP 3"], gather_all=False)
    alone = texts(drop_moves(view, "SP 5", pile_of("KL 5")))
    assert alone == ["capture SP 5 take KL 5", "capture SP 5 take KL 5, SP 3, RU 2"]
    staged = texts(drop_moves(view, "SP 5", pile_of("KL 5"), staged=[pile_of("RU 2"), pile_of("SP 3")]))
    assert staged == ["capture SP 5 take KL 5, SP 3, RU 2"]
    # The stack alone (dropped on the stack, no other target) means the same pair.
    assert texts(drop_moves(view, "SP 5", None, staged=[pile_of("RU 2"), pile_of("SP 3")])) == [
        "capture SP 5 take SP 3, RU 2"]
    # Under gather_all=True the rules decide what a capture takes: staging narrows to the moves taking it all.
    view = position(["SP 5", "KL 7", "HJ 3"], ["KL 5", "RU 2", "SP 3"])
    assert texts(drop_moves(view, "SP 5", pile_of("RU 2"), staged=[pile_of("SP 3")])) == ["capture SP 5"]


@pytest.mark.parametrize(("hand", "table", "card", "target", "why"), [
    (["SP 8", "HJ 5", "KL 9"], [{"build": ["KL 3", "RU 5"], "value": 8, "owner": 0}], "SP 8", None,
     "you own a build of 8, so you may not trail"),
    # SP 8 with the ace would build 9 (KL 9 is in hand), but SP 8 is the only 8 for the build of 8 owned.
    (["SP 8", "HJ 5", "KL 9"], [{"build": ["KL 3", "RU 5"], "value": 8, "owner": 0}, "RU A"], "SP 8", "RU A",
     "you own a build of 8 and must keep an 8"),
    (["SP 7", "HJ 5", "KL 9"], ["KL 5"], "SP 7", "KL 5", "makes 12: a build is at most 10"),
    (["SP 2", "HJ 5", "KL 9"], ["KL 5"], "SP 2", "KL 5", "building 7 needs another 7 in your hand"),
    (["SP K", "HJ 5", "KL 9"], ["KL 5"], "SP K", "KL 5", "captures only loose Ks"),
    (["SP 5", "HJ 5", "KL 9"], ["KL Q"], "SP 5", "KL Q", "KL Q is captured only by a card of its rank"),
    (["SP 5", "HJ 5", "KL 9"], ["KL 7"], "RU 5", "KL 7", "RU 5 is not in your hand"),
    (["SP 5", "HJ 5", "KL 9"], ["KL 7"], "SP 5", "KL 6", "KL 6 is not a loose card on the table"),
    (["SP 5", "HJ 5", "KL 9"], ["KL 7"], "SP 5", ["KL 2", "KL 3"], "there is no build [KL 2 KL 3] on the table"),
])
def test_a_drop_that_means_nothing_is_refused_saying_why(hand, table, card, target, why):
    view = position(hand, table)
    t = None if target is None else pile_of(target)
    if card in hand:
        assert drop_moves(view, card, t) == []
    reason = drop_refusal(view, card, t)
    assert reason is not None and why in reason, reason


def test_not_your_turn_is_refused():
    st_ = casino.GameState.from_dict({"to_move": 1, "hands": [["SP 5", "HJ 4"], ["KL 2", "KL 3"]], "table": ["KL 5"]})
    assert drop_moves(st_.view(0), "SP 5", pile_of("KL 5")) == []
    assert drop_refusal(st_.view(0), "SP 5", pile_of("KL 5")) == "it is not your turn"


def test_pile_of_reads_cards_and_builds_and_refuses_nonsense():
    assert pile_of("SP 5") == parse_card("SP 5")
    assert pile_of(["SP 5", "KL 2"]) == tuple(sorted((parse_card("SP 5"), parse_card("KL 2"))))
    with pytest.raises(ValueError, match="empty list"):
        pile_of([])
    with pytest.raises(ValueError):
        pile_of("XX 5")


# ----- properties over random positions ------------------------------------------------------------
rulesets = st.builds(casino.Ruleset, gather_all=st.booleans(), court_capture=st.sampled_from(["one", "all"]),
                     sum_build_max_card=st.sampled_from([5, 10]), increase_max_cards=st.sampled_from([None, 4]),
                     trail_with_build=st.booleans(), rounds=st.just(1))


def _involved(plan: Plan) -> list:
    out: list = [int(f) for f in plan.loose]
    out += [tuple(sorted(b[2])) for b in plan.builds]
    if plan.base is not None:
        out.append(tuple(sorted(plan.base[2])))
    return out


def _positions(seed: int, ruleset: casino.Ruleset, plies: int):
    rng = random.Random(seed)
    state = casino.new_game(seed=seed, ruleset=ruleset)
    for _ in range(plies):
        if state.over:
            return
        yield state.view(state.to_move)
        state.play(rng.choice(state.legal_moves()))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), ruleset=rulesets, plies=st.integers(1, 40))
def test_every_legal_move_is_reached_by_some_drop(seed, ruleset, plies):
    for view in _positions(seed, ruleset, plies):
        for move, plan in view.move_plans().items():
            piles = _involved(plan)
            target, staged = (piles[0], piles[1:]) if piles else (None, [])
            assert move in drop_moves(view, move.card, target, staged), (str(move), piles)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), ruleset=rulesets, plies=st.integers(1, 40), pick=st.randoms(use_true_random=False))
def test_every_move_a_drop_returns_is_legal_and_takes_what_was_named(seed, ruleset, plies, pick):
    for view in _positions(seed, ruleset, plies):
        plans = view.move_plans()
        piles: list = [int(f) for f in view.loose] + [tuple(sorted(b.cards)) for b in view.builds]
        for card in view.hand:
            for _ in range(4):
                target = pick.choice([None, *piles])
                staged = pick.sample(piles, k=min(len(piles), pick.randint(0, 2)))
                moves = drop_moves(view, card, target, staged)
                named = {p for p in [target, *staged] if p is not None}
                for m in moves:
                    assert m in plans and m.card == card
                    assert named <= set(_involved(plans[m])) if named else m.kind == "trail"
                assert len(moves) == len(set(moves))
                why = drop_refusal(view, card, target, staged)
                assert (why is None) == bool(moves), (why, texts(moves))
                words = [w for _, w in drop_choices(view, card, target, staged)]
                assert len(words) == len(set(words))
