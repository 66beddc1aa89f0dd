"""agents.match.play_agents (and its old name play_game): the game loop the agents' own tools share."""

from __future__ import annotations

import random

import pytest

import agents
import mulle_env as me
from agents.match import play_agents, play_game


class Recorder(agents.Agent):
    """Plays its first legal move and remembers what it was told."""

    def __init__(self):
        self.resets = 0
        self.heard = []

    def reset(self):
        self.resets += 1
        self.heard = []

    def act(self, view, legal_moves, rng):
        assert view.player == view.to_move and len(view.hand) > 0
        return legal_moves[0]

    def observe(self, event):
        self.heard.append(event)


def test_play_game_is_a_full_replayable_game():
    a, b = Recorder(), Recorder()
    seen = []
    st = play_game([a, b], 5, [random.Random(0), random.Random(1)], on_move=lambda s, p, legal, m: seen.append((p, m)))
    assert st.is_over() and a.resets == b.resets == 1
    assert a.heard == b.heard == seen and len(seen) == 192
    assert me.replay(5, [m for _, m in seen]).key() == st.key()


def test_one_agent_in_both_seats_is_reset_and_told_once():
    a = Recorder()
    play_game([a, a], 6, [random.Random(0)] * 2, ruleset=me.Ruleset(sets=1))
    assert a.resets == 1 and len(a.heard) == 96


def test_an_illegal_move_raises():
    class Cheat(Recorder):
        def act(self, view, legal_moves, rng):
            return me.Move.from_str("discard RU K") if "discard RU K" not in map(str, legal_moves) else legal_moves[0]

    with pytest.raises(me.IllegalMoveError):
        play_game([Cheat(), Cheat()], 7, [random.Random(0)] * 2)


def test_play_agents_returns_the_match_with_its_history_and_record():
    a, b = Recorder(), Recorder()
    seen = []
    m = play_agents([a, b], 5, [random.Random(0), random.Random(1)],
                    on_move=lambda s, p, legal, mv: seen.append((p, mv)))
    assert [(e.player, e.move) for e in m.history] == seen == a.heard
    record = m.record()
    assert record.specs == ("agent", "agent") and record.result == m.result().to_dict()
    assert me.GameRecord.from_dict(record.to_dict()).replay().state == m.state
    # The same game as the old name returns as a state.
    assert play_game([Recorder(), Recorder()], 5, [random.Random(0), random.Random(1)]).key() == m.state.key()


def test_on_move_sees_the_position_before_the_move():
    def check(st, p, legal, move):
        assert st.to_move == p and st.legal_moves() == legal and move in legal

    play_agents([Recorder(), Recorder()], 8, [random.Random(0)] * 2, ruleset=me.Ruleset(sets=1), on_move=check)
