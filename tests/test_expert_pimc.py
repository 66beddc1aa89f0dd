"""pimc's move values: every searched move gets one, and act's choices are unchanged."""

from __future__ import annotations

import random

import pytest

import agents
from agents.heuristic import rank_moves
from agents.pimc import PIMCAgent, determinize
from agents.rollout import POLICIES, set_value
from mulle_env.engine import GameState, new_game
from mulle_env.engine.moves import MOVES


def act_before_move_values(agent: PIMCAgent, view, legal_moves, rng):
    """PIMCAgent.act as it was before move_values existed (the search inlined), the reference."""
    if len(legal_moves) == 1:
        return legal_moves[0]
    cands = [eff.move for _, eff in rank_moves(view, legal_moves)]
    if agent.width:
        cands = cands[: agent.width]
    if len(cands) == 1:
        return cands[0]
    me = view.player
    policy = POLICIES[agent.rollout]
    plies = int(agent.horizon)
    totals = [0.0] * len(cands)
    required = agent.history.reserved(view, 1 - me) if agent.use_history else ()
    for _ in range(agent.samples):
        hand, deck = determinize(view, rng, required)
        root = GameState.from_view(view, hand, deck, seed=rng.getrandbits(31))
        seed = rng.getrandbits(63)
        for k, move in enumerate(cands):
            st = root.copy().play_unchecked(move)
            r = random.Random(seed)
            n = 1
            while not st.over and n < plies:
                st.play_unchecked(MOVES[policy(st, st.legal_move_ids(), r)])
                n += 1
            totals[k] += set_value(st, me)
    best = 0
    for k in range(1, len(cands)):
        if totals[k] > totals[best] + 1e-9:
            best = k
    return cands[best]


@pytest.mark.parametrize("spec", ["pimc:samples=5", "pimc:samples=3,width=3,horizon=6"])
def test_act_makes_the_same_choices_as_before_for_the_same_rng(spec):
    agent, ref = agents.make(spec), agents.make(spec)
    st = new_game(3, {"sets": 1})
    agent.reset()
    ref.reset()
    rng_a, rng_b = random.Random(11), random.Random(11)
    decisions = 0
    while not st.over:
        p = st.to_move
        legal = st.legal_moves()
        if p == 0:
            move = agent.act(st.view(p), legal, rng_a)
            assert move == act_before_move_values(ref, st.view(p), legal, rng_b)
            decisions += len(legal) > 1
        else:
            move = legal[-1]
        st.play(move)
        for bot in (agent, ref):
            bot.observe((p, move))
    assert decisions > 20
    assert rng_a.random() == rng_b.random()  # the same random numbers were drawn


def test_move_values_cover_every_legal_move_and_act_takes_the_best():
    st = new_game(5)
    rng = random.Random(0)
    while len(st.legal_moves()) < 4:
        st.play(st.legal_moves()[rng.randrange(len(st.legal_moves()))])
    view, legal = st.view(st.to_move), st.legal_moves()
    agent = PIMCAgent(samples=8)
    values = agent.move_values(view, legal, random.Random(1))
    assert sorted(map(str, (m for m, _ in values))) == sorted(map(str, legal))
    best = max(v for _, v in values)
    first_best = next(m for m, v in values if v == best)
    assert agent.act(view, legal, random.Random(1)) == first_best
    # Values are means of integer point differences over 8 samples.
    assert all(abs(v * 8 - round(v * 8)) < 1e-9 for _, v in values)
    narrow = PIMCAgent(samples=2, width=2).move_values(view, legal, random.Random(1))
    assert [m for m, _ in narrow] == [m for m, _ in values[:2]]
