"""The engine's Match (one game loop with history), GameRecord and PlayerView JSON forms."""

from __future__ import annotations

import json
import random

import pytest

import mulle_env as me
from mulle_env.engine.match import Match, MoveEvent, NotYourTurnError
from mulle_env.engine.record import RECORD_VERSION, GameRecord, InvalidRecordError


class Uniform:
    """A minimal duck-typed agent (the engine must not need the agents package)."""

    spec = "uniform"

    def __init__(self):
        self.resets = 0
        self.heard = []

    def reset(self):
        self.resets += 1

    def observe(self, event):
        self.heard.append(event)

    def act(self, view, legal, rng):
        return legal[rng.randrange(len(legal))]


def _random_match(seed: int, ruleset=None) -> Match:
    m = Match(seed, ruleset, specs=("uniform", "uniform"))
    a = Uniform()
    m.play_out([a, a], [random.Random(seed), random.Random(seed + 1)])
    return m


def test_play_records_events_and_checks_turn():
    m = Match(seed=7)
    first = m.legal_moves()[0]
    with pytest.raises(NotYourTurnError, match="player 1 is not to move"):
        m.play(first, player=1)
    assert m.history == []
    ev = m.play(str(first), player=0)
    assert isinstance(ev, MoveEvent)
    assert (ev.number, ev.player, ev.move) == (1, 0, first)
    assert m.moves == [str(first)]
    assert m.to_move == 1


def test_illegal_move_leaves_match_untouched():
    m = Match(seed=7)
    before = m.state.to_json()
    hand = set(m.state.hands[0])
    absent = next(f for f in range(52) if f not in hand)
    with pytest.raises(me.IllegalMoveError, match="not in your hand"):
        m.play(f"discard {me.CARDS[absent]}")
    with pytest.raises(me.InvalidMoveError):
        m.play("fly away")
    assert m.state.to_json() == before and m.history == []


def test_step_blames_the_agent_for_an_illegal_choice():
    class Cheat(Uniform):
        spec = "cheat"

        def act(self, view, legal, rng):
            hand = set(view.hand)
            absent = next(f for f in range(52) if f not in hand)
            return me.Move.from_str(f"discard {me.CARDS[absent]}")

    m = Match(seed=1)
    with pytest.raises(me.IllegalMoveError, match=r"agent 'cheat' \(seat 0\) chose an illegal move"):
        m.step(Cheat(), random.Random(0))
    assert m.history == []


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_events_agree_with_the_state_over_a_whole_game(seed):
    m = Match(seed, specs=("uniform", "uniform"))
    a = Uniform()
    rngs = [random.Random(seed), random.Random(seed + 1)]
    sets_seen = 0
    while not m.over:
        st = m.state
        p = st.to_move
        mulle_before, tabbe_before, deal = len(st.mulle[p]), st.tabbe[p], (st.set_no, st.deal_no)
        ev = m.step(a, rngs[p])
        assert ev.player == p and (ev.set_no, ev.deal_no) == deal
        assert ev.taken == (st.last_taken if ev.move.kind == "capture" else ())
        if not ev.set_over:
            assert ev.mulles == len(st.mulle[p]) - mulle_before
            assert ev.tabbe == (st.tabbe[p] > tabbe_before)
            assert ev.deal_over == ((st.set_no, st.deal_no) != deal)
        else:
            sets_seen += 1
            assert ev.deal_over and len(st.sheets) == sets_seen
        assert ev.game_over == m.over
    assert sets_seen == m.ruleset.sets
    assert [e.number for e in m.history] == list(range(1, len(m.history) + 1))
    assert len(m.history) == 96 * m.ruleset.sets


def test_play_out_resets_and_notifies_every_agent_once_per_move():
    a, b = Uniform(), Uniform()
    events = []
    m = Match(4)
    result = m.play_out([a, b], [random.Random(1), random.Random(2)], on_event=events.append)
    assert a.resets == b.resets == 1
    assert len(a.heard) == len(b.heard) == len(events) == len(m.history)
    assert a.heard[0] == (events[0].player, events[0].move)
    assert result == m.result() and m.over


def test_record_round_trips_through_json_and_replays():
    m = _random_match(5, {"sets": 1})
    rec = m.record()
    data = json.loads(json.dumps(rec.to_dict()))
    assert data["record_version"] == RECORD_VERSION
    assert data["result"]["scores"] == list(m.result().scores)
    again = GameRecord.from_dict(data)
    assert again == rec
    assert again.replay().state == m.state
    assert Match.from_record(data).state.key() == m.state.key()


def test_unfinished_record_has_no_result():
    m = Match(2)
    for _ in range(5):
        m.play(m.legal_moves()[-1])
    rec = m.record()
    assert rec.result is None and len(rec.moves) == 5
    assert rec.replay().state == m.state


def test_record_reads_an_arena_results_line():
    m = _random_match(8, {"sets": 1})
    line = {"game_id": "x", "specs": ["random", "greedy"], "seed": 8, "ruleset": m.ruleset.to_dict(),
            "moves": len(m.history), "move_list": m.moves, "scores": list(m.result().scores)}
    rec = GameRecord.from_dict(line)
    assert rec.specs == ("random", "greedy") and rec.replay().state == m.state
    del line["move_list"]
    with pytest.raises(InvalidRecordError, match="--save-games"):
        GameRecord.from_dict(line)


@pytest.mark.parametrize("data, message", [
    ([], "JSON object"),
    ({"moves": []}, "lacks 'seed'"),
    ({"seed": 1.5, "moves": []}, "seed must be a whole number"),
    ({"seed": True, "moves": []}, "seed must be a whole number"),
    ({"seed": 1}, "no move list"),
    ({"seed": 1, "moves": "capture KL 2"}, "list of move texts"),
    ({"seed": 1, "moves": ["capture XX 2"]}, "move 1"),
    ({"seed": 1, "moves": [], "ruleset": {"nope": 1}}, "unknown ruleset flag"),
    ({"seed": 1, "moves": [], "specs": ["a"]}, "two seat names"),
    ({"seed": 1, "moves": [], "record_version": 99}, "record_version 99"),
    ({"seed": 1, "moves": [], "result": [1, 2]}, "result must be"),
])
def test_malformed_records_are_clear_errors(data, message):
    with pytest.raises(InvalidRecordError, match=message):
        GameRecord.from_dict(data)


def test_replay_names_the_illegal_move_and_a_forged_result():
    m = _random_match(9, {"sets": 1})
    moves = list(m.moves)
    moves[3] = moves[0]  # a card played twice
    with pytest.raises(me.IllegalMoveError, match=r"move 4 of the record"):
        GameRecord(9, tuple(moves), m.ruleset).replay()
    forged = dict(m.record().to_dict())
    forged["result"] = {**forged["result"], "scores": [999, 0]}
    with pytest.raises(InvalidRecordError, match="differs from the replayed game"):
        GameRecord.from_dict(forged).replay()
    # Only the winner changed: the message names the winner, not the (equal) scores twice.
    good = m.record().to_dict()
    flipped = {**good, "result": {**good["result"], "winner": 1 - (good["result"]["winner"] or 0)}}
    forged_winner = r"differs from the replayed game.s in winner \(winner: recorded [01], replayed [01]\)"
    with pytest.raises(InvalidRecordError, match=forged_winner):
        GameRecord.from_dict(flipped).replay()
    # Only a sheet changed (mulle and tabbe swapped, the total kept): named, without a garbled comparison.
    sheets = [[dict(x) for x in seat] for seat in good["result"]["sheets"]]
    sheets[0][0]["mulle"], sheets[0][0]["tabbe"] = sheets[0][0]["tabbe"], sheets[0][0]["mulle"]
    if sheets != good["result"]["sheets"]:
        swapped = {**good, "result": {**good["result"], "sheets": sheets}}
        with pytest.raises(InvalidRecordError, match=r"differs from the replayed game's in sheets: the record"):
            GameRecord.from_dict(swapped).replay()
    # A result with the moves cut short: the replayed game does not end, so it cannot end with that result.
    cut = {**good, "moves": good["moves"][:10]}
    with pytest.raises(InvalidRecordError, match="holds a result but its 10 moves stop before the game ends"):
        GameRecord.from_dict(cut).replay()
    assert not GameRecord.from_dict({**cut, "result": None}).replay().over  # a game in progress is fine


def test_views_round_trip_through_json_at_every_move():
    m = Match(13, {"sets": 1})
    a = Uniform()
    rng = random.Random(0)
    while not m.over:
        for p in (0, 1):
            v = m.view(p)
            data = json.loads(json.dumps(v.to_dict()))
            assert me.PlayerView.from_dict(data) == v
        m.step(a, rng)
    v = m.view(0)
    assert me.PlayerView.from_dict(v.to_dict()) == v


def test_view_json_holds_only_the_own_hand():
    st = me.new_game(21)
    data = st.view(0).to_dict()
    assert data["hand"] == [str(me.CARDS[f]) for f in st.hands[0]]
    assert data["opponent_hand_size"] == len(st.hands[1])
    text = json.dumps(data)
    assert "deck" not in data and "hands" not in data
    # A card only the opponent holds (both copies out of every public pile) never appears.
    public = set(st.hands[0]) | set(st.loose)
    secret = [f for f in st.hands[1] if f not in public]
    assert secret and all(f'"{me.CARDS[f]}"' not in text for f in secret)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("hand"), "missing: hand"),
    (lambda d: d.update(extra=1), "unknown: extra"),
    (lambda d: d.update(player=2), "player must be 0, 1"),
    (lambda d: d.update(hand=["ZZ 1"]), "hand"),
    (lambda d: d.update(builds=[{"value": 9}]), r"builds\[0\]"),
    (lambda d: d.update(tabbe=[0]), "tabbe must be a list of two"),
    (lambda d: d.update(last_move=[0, "jump"]), "last_move"),
    (lambda d: d.update(view_version=7), "view_version 7"),
    (lambda d: d.update(over="no"), "over must be true or false"),
])
def test_malformed_views_are_clear_errors(change, message):
    data = me.new_game(3).view(0).to_dict()
    change(data)
    with pytest.raises(InvalidRecordError, match=message):
        me.PlayerView.from_dict(data)


def test_preview_is_the_event_play_makes_and_changes_nothing():
    for rules in (None, {"forced_capture": False}):
        for seed in range(3):
            m = Match(seed, rules)
            rng = random.Random(seed)
            while not m.over:
                before = m.state.to_json()
                previews = {str(mv): m.preview(mv) for mv in m.legal_moves()}
                assert m.state.to_json() == before and len(m.history) == previews[next(iter(previews))].number - 1
                move = m.legal_moves()[rng.randrange(len(m.legal_moves()))]
                assert m.play(move) == previews[str(move)]
    with pytest.raises(NotYourTurnError):
        Match(seed=7).preview(Match(seed=7).legal_moves()[0], player=1)


def test_describe_lists_what_a_capture_took_once_in_every_ruleset():
    # Bug: under forced_capture=False the move text already says "taking ...", and describe()
    # appended ", taking ..." again.
    m = Match(3, {"forced_capture": False})
    move = me.Move.from_str("capture KL 8 taking KL 7, SP A")
    event = m.play(move)
    assert event.describe() == "P0 plays capture KL 8, taking KL 7, SP A"
    assert event.describe(["Anna", "Bo"]) == "Anna plays capture KL 8, taking KL 7, SP A"
    m = Match(3)
    event = m.play(next(mv for mv in m.legal_moves() if mv.kind == "build"))
    assert event.describe(["Anna", "Bo"]) == f"Anna plays {event.move}"
