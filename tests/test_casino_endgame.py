"""Casino's last deal solved exactly (``agents.casino.endgame``) and ``learned`` playing it (issue 51, item 3).

What is checked: the state rebuilt from a view once the stock is empty is the real game's (nothing is hidden then,
and nothing is rebuilt before); the alpha-beta value equals a plain minimax over every line, on both backends,
under the default rules and under rules with other move lists; the chosen move is of the best value, the caller's
order breaking ties; a search past its position limit gives up instead of guessing; ``learned`` plays the solver's
move in the last deal and the net's elsewhere (``endgame=false`` the net's everywhere), and says so in its version.
Small sizes: seconds on 2 cores. How much it is worth: docs/casino.md, "The learned agent".
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import agents
from agents.casino.endgame import WIN, SearchLimit, endgame_choice, endgame_state, endgame_value, endgame_values
from agents.learned.casino import CasinoLearnedAgent, casino_afterstate_scores
from agents.learned.policy import load_policy
from mulle_env import casino

RULES: list[dict[str, Any] | None] = [None, {"rounds": 1}, {"gather_all": False, "rounds": 1},
                                      {"court_capture": "all", "sweeps": False, "rounds": 1}]


def last_deals(games: int, seed: int, rules: dict[str, Any] | None = None, backend: Any = None,
               cards: int = 8) -> Iterator[tuple[Any, Any, list[Any]]]:
    """``(state, view, legal)`` at every decision of ``games`` random games once the stock is empty, with at most
    ``cards`` cards left in the hands (the plain minimax below is exponential in them)."""
    r = random.Random(seed)
    for g in range(games):
        st = casino.new_game(seed * 100 + g, rules) if backend is None else backend.new_game(seed * 100 + g, rules)
        while not st.over:
            legal = st.legal_moves()
            view = st.view(st.to_move)
            if view.stock_size == 0 and len(view.hand) + view.opponent_hand_size <= cards:
                yield st, view, legal
            st.play(r.choice(legal))


def minimax(state: Any, seat: int, round_no: int) -> float:
    """The definition: every line to the round's end, no pruning."""
    if state.over or state.round != round_no:
        a, b = state.scores()
        diff = a - b if seat == 0 else b - a
        if state.over:
            diff += WIN if diff > 0 else -WIN if diff < 0 else 0
        return float(diff)
    values = []
    for move in state.legal_moves():
        child = state.copy()
        child.play(move)
        values.append(minimax(child, seat, round_no))
    return max(values) if state.to_move == seat else min(values)


def move_minimax(view: Any, legal: list[Any]) -> list[float]:
    """Each legal move's value by the definition (:func:`minimax` of the position it leaves)."""
    state = endgame_state(view)
    values = []
    for move in legal:
        child = state.copy()
        child.play(move)
        values.append(minimax(child, view.player, state.round))
    return values


def test_nothing_is_rebuilt_while_cards_are_hidden_and_the_whole_state_once_the_stock_is_empty():
    r = random.Random(3)
    rebuilt = 0
    for g in range(4):
        st = casino.new_game(300 + g)
        while not st.over:
            view = st.view(st.to_move)
            got = endgame_state(view)
            if view.stock_size:
                assert got is None
            else:
                rebuilt += 1
                real, mine = st.to_dict(), got.to_dict()
                # Not compared: the later rounds' deck (hidden, never searched) and earlier rounds' sheets (a view
                # carries their totals, "scores", which are compared).
                for key in ("seed", "sheets"):
                    del real[key], mine[key]
                assert mine == real
                assert got.legal_moves() == st.legal_moves()
            st.play(r.choice(st.legal_moves()))
    assert rebuilt > 20


@pytest.mark.parametrize("rules", RULES)
def test_the_alpha_beta_value_is_the_minimax_value_of_every_line(rules):
    checked = 0
    for st, view, _ in last_deals(3, 11, rules, cards=8 if rules is None else 6):
        state = endgame_state(view)
        exact = minimax(state, view.player, state.round)
        assert endgame_value(state, view.player) == exact
        # Fail-hard bounds around it: below the window says "at most", above says "at least".
        assert endgame_value(state, view.player, exact, exact + 1) <= exact
        assert endgame_value(state, view.player, exact - 1, exact) >= exact
        checked += 1
    assert checked > 10


def test_both_backends_give_the_same_values():
    backends = casino.backends()
    if len(backends) < 2:
        pytest.fail(f"the compiled Casino core is not built: only {sorted(backends)}")
    values = {}
    for name, module in backends.items():
        states = [(endgame_state(view, state_type=module.GameState), view.player)
                  for _, view, _ in last_deals(3, 5, {"rounds": 1}, module)]
        assert all(type(st) is module.GameState for st, _ in states)  # each backend searches its own states
        values[name] = [endgame_value(st, seat) for st, seat in states]
    first, second = values.values()
    assert first == second and len(first) > 10


@pytest.mark.parametrize("rules", RULES[:3])
def test_the_choice_is_a_move_of_the_best_value_and_the_callers_order_breaks_ties(rules):
    ties = 0
    for _, view, legal in last_deals(3, 7, rules, cards=7 if rules is None else 5):
        values = move_minimax(view, legal)
        best = max(values)
        for order in (list(range(len(legal))), list(reversed(range(len(legal))))):
            i = endgame_choice(view, legal, order)
            assert values[i] == best
            assert i == next(j for j in order if values[j] == best)  # the earliest of the best in the order
        ties += values.count(best) > 1
    assert ties > 0


def test_the_search_refuses_what_is_not_a_last_deal():
    st = casino.new_game(5)
    with pytest.raises(ValueError, match="52|cards in the stock|empty stock"):
        endgame_value(st, 0)
    _, view, legal = next(last_deals(1, 3))
    with pytest.raises(ValueError, match="not to move"):
        endgame_choice(view._replace(player=1 - view.player), legal, range(len(legal)))


def test_a_search_past_its_position_limit_gives_up_instead_of_guessing():
    _, view, legal = next(v for v in last_deals(2, 13) if len(v[2]) > 2 and v[1].opponent_hand_size >= 3)
    assert endgame_choice(view, legal, range(len(legal)), node_limit=5) is None
    with pytest.raises(SearchLimit):
        endgame_value(endgame_state(view), view.player, node_limit=5)
    assert endgame_choice(view, legal, range(len(legal))) is not None


def test_learned_plays_the_solvers_move_in_the_last_deal_and_the_nets_before_it():
    bot = agents.make("learned", game="casino")
    net = agents.make("learned:endgame=false", game="casino")
    assert bot.endgame and not net.endgame
    assert bot.version.startswith("2+") and net.version.startswith("1+")
    assert bot.version.split("+")[1] == net.version.split("+")[1]  # the same net
    policy = load_policy(bot.path)
    r = random.Random(1)
    differ = solved = 0
    for g in range(12):
        st = casino.new_game(900 + g, {"rounds": 1})
        while not st.over:
            legal = st.legal_moves()
            view = st.view(st.to_move)
            mine, plain = bot.act(view, legal, r), net.act(view, legal, r)
            if view.stock_size and len(legal) > 1:
                assert mine == plain
            elif len(legal) > 1:
                # Checked against the definition: the move is of the best minimax value, the net's favourite of those.
                values = move_minimax(view, legal)
                scores = casino_afterstate_scores(policy, view, legal)
                order = [int(i) for i in np.argsort(-scores, kind="stable")]
                assert mine == legal[next(i for i in order if values[i] == max(values))]
                assert plain == legal[order[0]]
                solved += 1
                differ += mine != plain
            st.play(r.choice(legal))
    assert solved > 50 and differ > 0


def test_exact_values_are_minimax_in_points_and_netsearch_plays_by_them_in_the_nets_order():
    search = agents.make("netsearch:samples=2,width=2,depth=2", game="casino")
    plain = agents.make("netsearch:samples=2,width=2,depth=2,endgame=false", game="casino")
    r = random.Random(4)
    checked = 0
    for _, view, legal in last_deals(4, 19, {"rounds": 1}, cards=6):
        if len(legal) < 2:
            continue
        exact = move_minimax(view, legal)
        points = [v - (WIN if v > WIN / 2 else -WIN if v < -WIN / 2 else 0) for v in exact]  # the bonus taken off
        assert endgame_values(view, legal, win=0) == points
        assert endgame_values(view, legal) == exact
        values = search.move_values(view, legal, r)
        logits = search.net.legal_logits(search._view_obs(view), [m.id for m in legal])
        assert [m for m, _ in values] == [legal[i] for i in np.argsort(-logits, kind="stable")]  # the net's order
        assert {str(m): v for m, v in values} == {str(m): p for m, p in zip(legal, points)}
        best = max(points)
        assert search.act(view, legal, r) == next(m for m, v in values if v == best)
        assert plain.version.startswith("2+") and plain.act(view, legal, r) in legal  # version 2's search
        checked += 1
    assert checked > 10
    assert endgame_values(next(last_deals(1, 3))[1], next(last_deals(1, 3))[2], node_limit=1) is None


def test_a_sampling_agent_and_a_net_in_memory_keep_the_switch(monkeypatch):
    policy = load_policy(agents.make("learned", game="casino").path)
    assert CasinoLearnedAgent.from_policy(policy).endgame
    assert not CasinoLearnedAgent.from_policy(policy, endgame=False).endgame
    sampler = agents.make("learned:sample=true,temperature=0.5", game="casino")
    assert sampler.version.startswith("1+")  # plays as version 1 did
    r = random.Random(2)
    st = next(v for v in last_deals(1, 17) if len(v[2]) > 1)

    def no_search(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the solver was asked")

    monkeypatch.setattr("agents.learned.casino.endgame_choice", no_search)
    assert sampler.act(st[1], st[2], r) in st[2]  # sampling plays the net's softmax, the solver stays out
    assert CasinoLearnedAgent.from_policy(policy, endgame=False).act(st[1], st[2], r) in st[2]
    with pytest.raises(AssertionError, match="solver was asked"):
        CasinoLearnedAgent.from_policy(policy).act(st[1], st[2], r)
