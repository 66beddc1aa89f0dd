"""Casino's agents: legal moves everywhere, determinism, views only, common sense on set positions, strength.

The strength checks play small seeded duplicate matches (each deal twice, seats swapped)
with ``rounds=1``. Measured the same way over more games (seeds 1000 on; wins-draws-losses,
mean points a game for the first agent):

* heuristic vs random, 200 games: 192-2-6, +7.5; greedy vs random, 200: 192-1-7, +7.4;
* greedy vs heuristic, 200: 116-6-78, +1.0;
* pimc (the determinized search, defaults) vs random, 100: 98-0-2, +8.6; vs heuristic, 100:
  67-4-29, +2.6; vs greedy, 100: 63-1-36, +2.2.
"""

from __future__ import annotations

import itertools
import pickle
import random
from collections.abc import Sequence
from typing import Any

import pytest

import agents
from agents.base import Agent
from agents.casino import CasinoGreedyAgent, CasinoHeuristicAgent, hidden_requirements
from agents.casino.effects import Pricing, capture_class, sweep_threats, view_table
from agents.casino.greedy import capture_worth, expected_best_reply
from agents.determinized import DeterminizedSearchAgent, deal_hidden, game_hooks
from agents.random_agent import RandomAgent
from mulle_env import casino
from mulle_env.engine.cards import parse_card

ONE_ROUND = casino.Ruleset(rounds=1)
#: Rule variants every agent must play (the defaults, and each flag that changes the moves).
RULESETS = [
    ONE_ROUND,
    casino.Ruleset(rounds=1, gather_all=False),
    casino.Ruleset(rounds=1, court_capture="all"),
    casino.Ruleset(rounds=1, sum_build_max_card=5, increase_max_cards=4),
    casino.Ruleset(rounds=1, trail_with_build=True, sweeps=False),
]


def cheap_search() -> DeterminizedSearchAgent:
    """The search at a size that keeps the tests quick (the defaults take about 0.1 s a move)."""
    return DeterminizedSearchAgent(samples=3, horizon="4")


def agents_under_test() -> list[Agent]:
    return [CasinoHeuristicAgent(), CasinoGreedyAgent(), cheap_search()]


def position(hand: str, other: str, table: Sequence[Any], **extra: Any) -> casino.GameState:
    """A hand-made position, seat 0 to move (cards not named are out of play)."""
    return casino.GameState.from_dict({"to_move": 0, "hands": [hand.split(", "), other.split(", ")],
                                       "table": list(table), **extra}, ONE_ROUND)


def choose(agent: Agent, st: casino.GameState, seed: int = 0) -> str:
    return str(agent.act(st.view(st.to_move), st.legal_moves(), random.Random(seed)))


def random_positions(count: int, seed: int, ruleset: casino.Ruleset = ONE_ROUND):
    """``count`` positions from random games (random moves), each with its seat to move."""
    rng = random.Random(seed)
    made = 0
    game = 0
    while made < count:
        st = casino.new_game(seed * 1000 + game, ruleset)
        game += 1
        while not st.is_over() and made < count:
            yield st
            made += 1
            moves = st.legal_moves()
            st.play(moves[rng.randrange(len(moves))])


# ----- legality, determinism, hidden information ----------------------------------------------
@pytest.mark.parametrize("ruleset", RULESETS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.changes().items()))
def test_every_agent_plays_a_legal_move(ruleset):
    heuristic, greedy, search = agents_under_test()
    rng = random.Random(7)
    for i, st in enumerate(random_positions(600, 3, ruleset)):
        view, legal = st.view(st.to_move), st.legal_moves()
        for agent in (heuristic, greedy) if i % 8 else (heuristic, greedy, search):
            move = agent.act(view, legal, rng)
            assert move in legal, (agent.spec, str(move), st.to_dict())


def test_thousands_of_decisions_stay_legal():
    heuristic, greedy = CasinoHeuristicAgent(), CasinoGreedyAgent()
    rng = random.Random(11)
    n = 0
    for st in random_positions(2500, 5):
        view, legal = st.view(st.to_move), st.legal_moves()
        assert heuristic.act(view, legal, rng) in legal
        assert greedy.act(view, legal, rng) in legal
        n += 1
    assert n == 2500


def test_same_rng_same_move():
    for agent in agents_under_test():
        twin = pickle.loads(pickle.dumps(agent))  # agents pickle (the arena builds them in workers)
        for i, st in enumerate(random_positions(60, 9)):
            view, legal = st.view(st.to_move), st.legal_moves()
            first = agent.act(view, legal, random.Random(i))
            assert agent.act(view, legal, random.Random(i)) == first
            assert twin.act(view, legal, random.Random(i)) == first


def test_ties_are_drawn_with_the_rng():
    # Four trails of worthless cards score alike: the rng picks, and different seeds pick differently.
    st = position("KL J, RU J, KL Q, RU Q", "SP 5, SP 6, HJ 7, HJ 9", ["SP K", "HJ K"])
    picks = {choose(CasinoHeuristicAgent(), st, seed) for seed in range(20)}
    assert len(picks) > 1


def hidden_swapped(st: casino.GameState, seat: int, seed: int) -> casino.GameState:
    """The same position as ``seat`` sees it, with the opponent's hand and the stock dealt anew."""
    view = st.view(seat)
    hidden = [*st.hands[1 - seat], *st.stock]
    random.Random(seed).shuffle(hidden)
    h = len(st.hands[1 - seat])
    other = casino.GameState.from_view(view, hidden[:h], hidden[h:], seed=12345)
    assert other.view(seat) == view and other.hands[1 - seat] != st.hands[1 - seat]
    return other


def test_agents_read_only_the_view():
    # Two states that differ only in what the seat cannot see: every agent plays the same move in both.
    for agent in agents_under_test():
        for i, st in enumerate(random_positions(40, 13)):
            if len(st.hands[1 - st.to_move]) < 2:
                continue
            other = hidden_swapped(st, st.to_move, i)
            a = agent.act(st.view(st.to_move), st.legal_moves(), random.Random(i))
            b = agent.act(other.view(st.to_move), other.legal_moves(), random.Random(i))
            assert a == b, (agent.spec, st.to_dict())


def test_declarations():
    for agent, name in zip(agents_under_test(), ("heuristic", "greedy", "pimc")):
        assert agent.name == agent.spec == name
        assert agent.games == ("casino",) and agent.version
        assert type(agent).__doc__ and type(agent).act.__doc__


def test_search_parameters_are_checked():
    for bad in ({"samples": 0}, {"horizon": "deal"}, {"horizon": "0"}, {"rollout": ""}):
        with pytest.raises(ValueError):
            DeterminizedSearchAgent(**bad)
    # A playout no game of the agent offers is refused when the agent is built, not at its first decision
    # (a tournament seating pimc:rollout=nope forfeited every game).
    with pytest.raises(ValueError, match=r"playout policy of casino \(heuristic, random\), not 'nope'"):
        agents.make("pimc:rollout=nope", game="casino")
    searcher = DeterminizedSearchAgent()
    searcher.rollout = "nope"  # set after the checks: the decision still says which playouts the game has
    st = casino.new_game(1, ONE_ROUND)
    with pytest.raises(ValueError, match="offers playouts"):
        searcher.act(st.view(0), st.legal_moves(), random.Random(0))


def test_search_finds_the_game_from_the_view():
    st = casino.new_game(2, ONE_ROUND)
    hooks = game_hooks(st.view(0))
    assert hooks.game == "casino" and hooks.state_type is casino.GameState
    assert set(hooks.playouts) == {"random", "heuristic"} and hooks.evaluate is not None


@pytest.mark.parametrize("horizon, rollout", [("round", "random"), ("game", "heuristic"), ("2", "heuristic")])
def test_search_horizons(horizon, rollout):
    agent = DeterminizedSearchAgent(samples=2, rollout=rollout, horizon=horizon)
    st = casino.new_game(4, casino.Ruleset(rounds=2))
    values = agent.move_values(st.view(0), st.legal_moves(), random.Random(1))
    assert [m for m, _ in values] == st.legal_moves()
    assert all(abs(v) <= 40 for _, v in values)


# ----- determinizations --------------------------------------------------------------------------
def test_determinizations_respect_the_reservation():
    # The opponent owns a build of 9: every determinization gives it a 9 (the puzzle's other cards are
    # out of play, so the unseen cards outnumber the hand: the rest are drawn out of play).
    st = position("KL 3, HJ 4", "SP 9, HJ 2", [{"build": ["KL 4", "KL 5"], "value": 9, "owner": 1}, "RU 6"])
    view = st.view(0)
    required = hidden_requirements(view)
    assert required == [frozenset(f for f in view.unseen() if f % 13 == 8)]
    rng = random.Random(3)
    for _ in range(200):
        hand, stock = deal_hidden(view, rng, required)
        assert len(hand) == 2 and stock == [] and any(f % 13 == 8 for f in hand)
        assert casino.GameState.from_view(view, hand, stock, seed=1).legal_moves()


def test_determinizations_are_uniform_given_the_facts():
    # A hand of 2 from the 48 unseen cards, four of them 9s, at least one 9 required:
    # P(two 9s) = C(4, 2) / (C(48, 2) - C(44, 2)) = 6 / 182.
    st = position("KL 3, HJ 4", "SP 9, HJ 2", [{"build": ["KL 4", "KL 5"], "value": 9, "owner": 1}])
    view = st.view(0)
    assert len(view.unseen()) == 48
    required = hidden_requirements(view)
    rng = random.Random(5)
    n = 4000
    both = sum(sum(f % 13 == 8 for f in deal_hidden(view, rng, required)[0]) == 2 for _ in range(n))
    assert abs(both / n - 6 / 182) < 0.012


# ----- common sense on set positions --------------------------------------------------------------
@pytest.mark.parametrize("spec", ["heuristic", "greedy"])
@pytest.mark.parametrize(
    "hand, table, best",
    [
        # Big casino: the 10 takes RU 10 (2 points) rather than the 7 taking a lone 7.
        ("KL 10, SP 7, HJ 3", ["RU 10", "HJ 7", "KL K"], "capture KL 10"),
        # A sweep: the 8 clears 3 + 5; the 4 would take only the 4 and leave the rest.
        ("HJ 8, KL 4, RU K", ["SP 3", "HJ 5"], "capture HJ 8"),
        # Take the opponent's build of 9 before it captures it.
        ("KL 9, HJ 2, RU Q", [{"build": ["KL 4", "KL 5"], "value": 9, "owner": 1}, "SP K"], "capture KL 9"),
    ],
)
def test_takes_points_and_sweeps(spec, hand, table, best):
    agent = CasinoHeuristicAgent() if spec == "heuristic" else CasinoGreedyAgent()
    st = position(hand, "SP 9, HJ 6, RU 4", table)
    assert choose(agent, st) == best


@pytest.mark.parametrize("spec", ["heuristic", "greedy"])
def test_keeps_point_cards(spec):
    agent = CasinoHeuristicAgent() if spec == "heuristic" else CasinoGreedyAgent()
    # Nothing captures or builds here; trailing SP 2 or HJ A gives points away, RU J is the cheapest trail.
    st = position("SP 2, HJ A, KL 7, RU J", "SP 9, HJ 6, RU 4, KL 5", ["KL 10", "HJ Q"])
    assert choose(agent, st) == "trail RU J"


@pytest.mark.parametrize("spec", ["heuristic", "greedy"])
def test_avoids_leaving_an_easy_sweep(spec):
    agent = CasinoHeuristicAgent() if spec == "heuristic" else CasinoGreedyAgent()
    # KL 6 next to SP 4 makes a table that any 10 sweeps; HJ 9 next to it does not.
    st = position("KL 6, HJ 9", "SP 9, HJ 6", ["SP 4"])
    assert choose(agent, st) == "trail HJ 9"


def test_builds_for_points_when_it_holds_the_card():
    # HJ 4 on SP 2 (little casino) makes a 6, and the KL 6 in hand takes it next turn.
    st = position("HJ 4, KL 6, RU K", "SP 9, HJ 6, RU 4, KL 8", ["SP 2", "HJ Q"])
    assert choose(CasinoHeuristicAgent(), st) == "build HJ 4 to 6"


def test_sweep_threats():
    tbl = view_table(position("KL 3", "SP 9", ["HJ 4", "RU 4"]).view(0))
    assert sweep_threats(tbl) == {4, 8}
    tbl = view_table(position("KL 3", "SP 9", ["HJ Q"]).view(0))
    assert sweep_threats(tbl) == {capture_class(parse_card("HJ Q"))}
    assert sweep_threats(view_table(position("KL 3", "SP 9", ["HJ Q", "KL 2"]).view(0))) == set()
    build = {"build": ["KL 4", "KL 5"], "value": 9, "owner": 1}
    assert sweep_threats(view_table(position("KL 3", "SP 9", [build, "RU 9"]).view(0))) == {9}
    assert sweep_threats(view_table(position("KL 3", "SP 9", [build, "RU 8"]).view(0))) == set()


def test_expected_best_reply_is_exact():
    # Brute force over every opponent hand of two unseen cards: the mean of the best capture.
    st = position("KL 3, HJ 4", "SP 9, HJ 2", ["RU 10", "SP 5", "KL 2", "HJ 7"])
    view = st.view(0)
    pricing = Pricing(view)
    table = view_table(view)
    gains = {f: capture_worth(table, f, 1, pricing, False) for f in pricing.unseen}
    hands = list(itertools.combinations(pricing.unseen, 2))
    brute = sum(max(0.0, *(gains[f] for f in hand)) for hand in hands) / len(hands)
    assert expected_best_reply(table, 1, pricing, False) == pytest.approx(brute)


# ----- strength ---------------------------------------------------------------------------------
def duplicate_match(a: Agent, b: Agent, deals: int, seed: int = 500) -> tuple[int, int, int, float]:
    """``a`` against ``b`` over ``deals`` one-round deals, each played twice with the seats swapped.

    Returns (wins, draws, losses, mean point difference) for ``a``.
    """
    wins = draws = losses = 0
    diff = 0
    for deal in range(deals):
        for a_seat in (0, 1):
            seats = [a, b] if a_seat == 0 else [b, a]
            st = casino.new_game(seed + deal, ONE_ROUND)
            rngs = [random.Random(deal * 4 + a_seat * 2 + s) for s in (0, 1)]
            while not st.is_over():
                p = st.to_move
                st.play(seats[p].act(st.view(p), st.legal_moves(), rngs[p]))
            mine, theirs = st.result().scores[a_seat], st.result().scores[1 - a_seat]
            wins += mine > theirs
            draws += mine == theirs
            losses += mine < theirs
            diff += mine - theirs
    return wins, draws, losses, diff / (2 * deals)


def score(result: tuple[int, int, int, float]) -> float:
    wins, draws, losses, _ = result
    return (wins + draws / 2) / (wins + draws + losses)


def test_heuristic_beats_random():
    result = duplicate_match(CasinoHeuristicAgent(), RandomAgent(), 50)
    assert score(result) >= 0.85 and result[3] > 4, result


def test_greedy_beats_random():
    result = duplicate_match(CasinoGreedyAgent(), RandomAgent(), 50)
    assert score(result) >= 0.85 and result[3] > 4, result


def test_search_beats_random():
    result = duplicate_match(DeterminizedSearchAgent(samples=2, horizon="2"), RandomAgent(), 30)
    assert score(result) >= 0.8 and result[3] > 3, result


@pytest.mark.slow
def test_search_beats_greedy():
    # The defaults against greedy (about 0.1 s a search move): measured +2.2 points a game over 100 games.
    result = duplicate_match(DeterminizedSearchAgent(), CasinoGreedyAgent(), 50)
    assert result[3] > 0, result


# ----- netsearch at Casino: the net's search (agents/casino/netsearch.py) ---------------------------
def test_netsearch_plays_casino_legally_deterministically_and_from_the_view_only():
    from agents.casino.netsearch import CasinoNetSearchAgent

    search = agents.make("netsearch:samples=3,width=3,depth=3", game="casino")
    assert isinstance(search, CasinoNetSearchAgent) and search.games == ("casino",)
    assert search.version.startswith("3+") and search.net.game == "casino" and search.leaf == "score"
    assert agents.make("netsearch:endgame=false", game="casino").version.startswith("2+")  # version 2's play
    assert agents.make("netsearch:leaf=auto", game="casino").leaf == "value"  # the shipped net has a value head
    twin = pickle.loads(pickle.dumps(search))
    for ruleset in [r for r in RULESETS if r.gather_all]:
        for i, st in enumerate(random_positions(10, 17, ruleset)):
            view, legal = st.view(st.to_move), st.legal_moves()
            move = search.act(view, legal, random.Random(i))
            assert move in legal, (str(move), st.to_dict())
            assert twin.act(view, legal, random.Random(i)) == move
            values = search.move_values(view, legal, random.Random(i))
            # The last deal values every legal move exactly (test_casino_endgame.py); before it, the 3 best.
            assert len(values) == (len(legal) if view.stock_size == 0 else min(3, len(legal)))
            assert all(m in legal for m, _ in values)
            if len(st.hands[1 - st.to_move]) >= 2:
                other = hidden_swapped(st, st.to_move, i)
                assert search.act(other.view(st.to_move), other.legal_moves(), random.Random(i)) == move


def test_netsearch_leaves_are_the_round_as_it_stands_or_the_value_head():
    # Depth 1: each candidate's value is its leaf right after it, which reads only what the searcher sees
    # (its captured piles and the totals; the net reads the searcher's view), so it is exact.
    from agents.casino import evaluate
    from agents.learned.policy import VALUE_SCALE
    from mulle_env.games.casino import encode_state

    # endgame=false: the last deal's leaves too (with the endgame solve its values are exact: test_casino_endgame.py).
    score = agents.make("netsearch:samples=2,width=0,depth=1,leaf=score,endgame=false", game="casino")
    value = agents.make("netsearch:samples=2,width=0,depth=1,leaf=value,endgame=false", game="casino")
    for st in list(random_positions(80, 19))[::8]:
        me, legal = st.to_move, st.legal_moves()
        if len(legal) < 2:
            continue
        after = {str(m): st.copy().play(m) for m in legal}
        for m, v in score.move_values(st.view(me), legal, random.Random(0)):
            assert v == pytest.approx(evaluate(after[str(m)], me)), str(m)
        for m, v in value.move_values(st.view(me), legal, random.Random(0)):
            want = float(value.net.value(encode_state(after[str(m)], me)[None])[0]) * VALUE_SCALE
            assert v == pytest.approx(want, abs=1e-4), str(m)


def test_netsearch_at_casino_refuses_what_it_cannot_search():
    mulle_net = agents.make("learned").path
    with pytest.raises(agents.AgentSpecError, match="is a Mulle net"):
        agents.make(f"netsearch:policy={mulle_net}", game="casino")
    for bad in ("samples=0", "depth=0", "width=-1", "leaf=nope"):
        with pytest.raises(agents.AgentSpecError):
            agents.make(f"netsearch:{bad}", game="casino")
    search = agents.make("netsearch", game="casino")
    with pytest.raises(ValueError, match="gather_all=False moves have no ids"):
        search.check_ruleset(casino.Ruleset(gather_all=False))
    with pytest.raises(ValueError, match="trained for other rules"):
        search.check_ruleset(casino.Ruleset(sweeps=False))
