"""Casino's env side (mulle_env/games/casino.py): the action codec, the observation and their bounds.

* Every legal move is reachable through the codec, under every flag, on many random games:
  ``decode(encode(m)) == m``, the legal actions decode to exactly the legal moves, the mask marks
  exactly them.
* Refusals name the action, why, and the legal actions; a ``gather_all=False`` position with more
  legal moves than the action space has actions is an error, never a silent cut.
* The observation shows only what the seat may know: two states with one view (hidden cards
  dealt differently) encode identically, and ``encode_state`` is ``encode_view`` of the view.
* Observations lie within the ruleset's bounds; finished games within the score bound.
"""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest

from mulle_env import casino
from mulle_env.casino import Ruleset
from mulle_env.engine.errors import GameOverError, InvalidMoveError
from mulle_env.games import IllegalActionError
from mulle_env.games import casino as ce

#: Every flag of the brief, alone, and gather_all=False with the others (one round each unless the
#: flag is the game's length itself, to keep the suite quick).
RULESETS = {
    "default": Ruleset(),
    "rounds=1": Ruleset(rounds=1),
    "gather_all=False": Ruleset(gather_all=False, rounds=1),
    "court_capture=all": Ruleset(court_capture="all", rounds=1),
    "sweeps=False": Ruleset(sweeps=False, rounds=1),
    "trail_with_build": Ruleset(trail_with_build=True, rounds=1),
    "app": Ruleset.app(),
    "gather_all=False+app+court=all": Ruleset(gather_all=False, sum_build_max_card=5, increase_max_cards=4,
                                              court_capture="all", rounds=1),
    "gather_all=False+trail_with_build+sweeps=False": Ruleset(gather_all=False, trail_with_build=True,
                                                              sweeps=False, rounds=1),
}
GAMES_PER_RULESET = 12


def random_games(ruleset: Ruleset, games: int, seed0: int = 0):
    """Yield every position (before each move) of ``games`` random games, then the finished state."""
    for seed in range(seed0, seed0 + games):
        st = casino.new_game(seed, ruleset)
        rng = random.Random(seed * 7 + 1)
        while not st.over:
            yield st
            moves = st.legal_moves()
            st.play(moves[rng.randrange(len(moves))])
        yield st


@pytest.mark.parametrize("name", list(RULESETS))
def test_every_legal_move_is_reachable_and_round_trips(name):
    rs = RULESETS[name]
    size = ce.num_actions(rs)
    assert size == (ce.MOVE_ACTIONS if rs.gather_all else ce.CHOICE_ACTIONS)
    positions = 0
    for st in random_games(rs, GAMES_PER_RULESET):
        if st.over:
            assert ce.legal_actions(st) == ()
            assert not ce.legal_mask(st).any()
            continue
        positions += 1
        moves = st.legal_moves()
        actions = ce.legal_actions(st)
        assert list(actions) == sorted(set(actions)), "legal actions are ascending and distinct"
        assert all(0 <= a < size for a in actions)
        assert [ce.decode(st, a) for a in actions] == moves, "the legal actions are exactly the legal moves"
        mask = ce.legal_mask(st)
        assert mask.dtype == np.int8 and mask.shape == (size,)
        assert sorted(np.flatnonzero(mask).tolist()) == list(actions)
        for m in moves:
            a = ce.encode(st, m)
            assert ce.decode(st, a) == m
            assert ce.encode(st, str(m)) == a, "a move's text encodes as the move"
            assert ce.describe(st, a) == str(m)
            if rs.gather_all:
                assert a == m.id and casino.MOVES[a] == m, "under gather_all an action is the move id"
    assert positions > GAMES_PER_RULESET * 20


def test_an_action_means_the_same_move_in_every_position_under_gather_all():
    seen: dict[int, str] = {}
    for st in random_games(Ruleset(rounds=1), 4):
        for a in ce.legal_actions(st):
            assert seen.setdefault(a, str(ce.decode(st, a))) == str(casino.MOVES[a])


def test_gather_all_false_actions_are_the_legal_moves_in_canonical_order():
    st = casino.new_game(7, Ruleset(gather_all=False))
    assert [str(ce.decode(st, a)) for a in ce.legal_actions(st)] == [str(m) for m in st.legal_moves()]
    assert ce.legal_mask(st)[: len(st.legal_moves())].all()
    assert not ce.legal_mask(st)[len(st.legal_moves()):].any()


def test_decode_names_the_action_why_and_the_legal_actions():
    st = casino.new_game(7)  # seat 0 holds KL 6, KL 8, HJ 8, RU Q
    with pytest.raises(IllegalActionError) as err:
        ce.decode(st, 0)
    text = str(err.value)
    assert "action 0 (capture KL A)" in text and "KL A is not in the hand of seat 0" in text
    assert "legal actions: 5 (capture KL 6), 7 (capture KL 8)" in text
    with pytest.raises(IllegalActionError, match="out of range: actions are ints from 0 to 503"):
        ce.decode(st, 504)
    with pytest.raises(IllegalActionError, match="not a float or bool"):
        ce.decode(st, 5.0)
    with pytest.raises(IllegalActionError, match="not a float or bool"):
        ce.decode(st, True)
    assert ce.decode(st, np.int64(5)) == casino.MOVES[5]


def test_gather_all_false_decode_says_how_many_moves_there_are():
    st = casino.new_game(7, Ruleset(gather_all=False))
    n = len(st.legal_moves())
    with pytest.raises(IllegalActionError) as err:
        ce.decode(st, n)
    text = str(err.value)
    assert f"action {n} is not legal for seat 0" in text and f"this position has {n}" in text
    assert "legal actions: 0 (capture KL 6 take RU 6)" in text
    with pytest.raises(IllegalActionError, match=f"from 0 to {ce.CHOICE_ACTIONS - 1}"):
        ce.decode(st, ce.CHOICE_ACTIONS)


def test_encode_refuses_an_illegal_move_saying_why():
    st = casino.new_game(7)
    with pytest.raises(IllegalActionError, match=r"trail KL A is not legal for seat 0: KL A is not in the hand"):
        ce.encode(st, "trail KL A")
    with pytest.raises(InvalidMoveError):
        ce.encode(st, "fish KL A")
    with pytest.raises(IllegalActionError, match="the rules decide what a move takes"):
        ce.encode(st, "capture KL 6 take RU 6")  # gather_all=False notation under the default rules


def test_the_game_over_is_said_as_such():
    st = next(s for s in random_games(Ruleset(rounds=1), 1) if s.over)
    with pytest.raises(GameOverError, match="the game is over"):
        ce.decode(st, 5)
    with pytest.raises(GameOverError):
        ce.encode(st, "trail KL A")
    rs = Ruleset(gather_all=False, rounds=1)
    st = next(s for s in random_games(rs, 1) if s.over)
    with pytest.raises(GameOverError, match="the game is over"):
        ce.decode(st, 0)


def test_a_position_beyond_the_bound_is_refused_not_cut(monkeypatch):
    st = casino.new_game(7, Ruleset(gather_all=False))
    n = len(st.legal_moves())
    monkeypatch.setattr(ce, "CHOICE_ACTIONS", n - 1)
    calls = (ce.legal_actions, ce.legal_mask, lambda s: ce.decode(s, 0), lambda s: ce.encode(s, s.legal_moves()[0]))
    for call in calls:
        with pytest.raises(ce.TooManyMovesError, match=f"seat 0 has {n} legal moves .* more than the {n - 1} actions"):
            call(st)
    monkeypatch.setattr(ce, "CHOICE_ACTIONS", n)
    assert ce.legal_actions(st) == tuple(range(n))


# ----- observation ---------------------------------------------------------------------------

def hidden_redealt(st: casino.GameState, seat: int, rng: random.Random) -> casino.GameState:
    """A state with ``seat``'s view whose hidden cards (the other hand, the stock) are dealt anew."""
    view = st.view(seat)
    unseen = view.unseen()
    rng.shuffle(unseen)
    k = view.opponent_hand_size
    return casino.GameState.from_view(view, unseen[:k], unseen[k:], seed=rng.getrandbits(32))


@pytest.mark.parametrize("name", ["default", "gather_all=False", "app", "sweeps=False"])
def test_the_observation_never_shows_hidden_cards(name):
    rs = RULESETS[name]
    rng = random.Random(5)
    checked = 0
    for st in random_games(rs, 6):
        for seat in (0, 1):
            view = st.view(seat)
            x = ce.encode_state(st, seat)
            np.testing.assert_array_equal(x, ce.encode_view(view))
            if st.over or not view.stock_size or not view.opponent_hand_size:
                continue  # no hidden card could lie elsewhere: the unseen cards are all in one place
            other = hidden_redealt(st, seat, rng)
            while other.hands[1 - seat] == st.hands[1 - seat] and other.stock == st.stock:
                other = hidden_redealt(st, seat, rng)
            np.testing.assert_array_equal(ce.encode_state(other, seat), x)
            checked += 1
    assert checked > 100


def test_swapping_the_hidden_cards_of_two_states_changes_no_observation():
    st = casino.new_game(11)
    rng = random.Random(1)
    for _ in range(9):
        st.play(st.legal_moves()[rng.randrange(len(st.legal_moves()))])
    seat = st.to_move
    view = st.view(seat)
    a = casino.GameState.from_view(view, st.hands[1 - seat], st.stock, seed=1)
    b = casino.GameState.from_view(view, st.stock[: view.opponent_hand_size],
                                   st.hands[1 - seat] + st.stock[view.opponent_hand_size:], seed=1)
    assert a.hands[1 - seat] != b.hands[1 - seat] and a.stock != b.stock
    np.testing.assert_array_equal(ce.encode_state(a, seat), ce.encode_state(b, seat))
    assert not np.array_equal(ce.encode_state(a, 1 - seat), ce.encode_state(b, 1 - seat)), \
        "the other seat holds different cards, and sees them"


@pytest.mark.parametrize("name", list(RULESETS))
def test_observations_lie_within_the_bounds_and_read_right(name):
    rs = RULESETS[name]
    low, high = ce.observation_bounds(rs)
    assert low.dtype == high.dtype == np.float32 and low.shape == high.shape == (ce.OBS_SIZE,)
    assert (low <= high).all()
    sl = ce.OBS_SLICES
    out = np.full(ce.OBS_SIZE, np.nan, dtype=np.float32)
    for st in random_games(rs, 4, seed0=100):
        for seat in (0, 1):
            x = ce.encode_state(st, seat, out)
            assert x is out and x.dtype == np.float32
            bad = np.flatnonzero((x < low) | (x > high))
            assert not len(bad), f"entries {bad.tolist()} out of bounds"
            view = st.view(seat)
            blocks = np.stack([x[sl[b]] for b in ce.FACE_BLOCKS])
            assert (blocks.sum(axis=0) == 1).all(), "each card is in exactly one face block"
            assert x[sl["hand"]].sum() == len(view.hand)
            assert x[sl["unseen"]].sum() == view.opponent_hand_size + view.stock_size
            scalars = dict(zip(ce.SCALAR_FEATURES, x[sl["scalars"]]))
            assert scalars["my_turn"] == (st.to_move == seat and not st.over)
            assert scalars["seat"] == seat and scalars["over"] == st.over
            race = dict(zip(ce.RACE_FEATURES, x[sl["my_race"]]))
            assert race["cards"] * 52 == pytest.approx(len(view.captured[seat]))
            for b in view.builds:
                at = sl["builds"].start + (b.value - 1) * len(ce.BUILD_FEATURES)
                assert x[at + (0 if b.owner == seat else 1)] >= 1
        if st.over:
            a, b = st.scores()
            assert abs(a - b) <= ce.score_bound(rs)


def test_bounds_follow_the_ruleset():
    _, high = ce.observation_bounds(Ruleset())
    _, high_free = ce.observation_bounds(Ruleset(gather_all=False))
    builds = ce.OBS_SLICES["builds"]
    assert high[builds][0] == 1 and high_free[builds][0] > 1, "two builds of one value only under gather_all=False"
    sweeps = ce.OBS_SLICES["my_race"].start + ce.RACE_FEATURES.index("sweeps")
    assert ce.observation_bounds(Ruleset(sweeps=False))[1][sweeps] > 0, "low == high would draw Gymnasium's warning"
    for rs in RULESETS.values():
        low, high = ce.observation_bounds(rs)
        assert (low < high).all()
    assert ce.score_bound(Ruleset(rounds=1)) == 35 and ce.score_bound(Ruleset(rounds=2, sweeps=False)) == 22
    assert ce.score_bound(Ruleset()) == 20 + 35
    assert ce.max_decisions(Ruleset(rounds=1)) == 24


def test_rules_show_in_the_observation():
    rules = ce.OBS_SLICES["rules"]
    a = ce.encode_state(casino.new_game(3), 0)[rules]
    b = ce.encode_state(casino.new_game(3, Ruleset.app()), 0)[rules]
    c = ce.encode_state(casino.new_game(3, Ruleset(gather_all=False, court_capture="all", rounds=1)), 0)[rules]
    assert len({a.tobytes(), b.tobytes(), c.tobytes()}) == 3


def test_the_layout_is_contiguous_and_described():
    at = 0
    for name, s in ce.OBS_SLICES.items():
        assert s.start == at, name
        at = s.stop
    assert at == ce.OBS_SIZE
    d = json.loads(json.dumps(ce.layout_description()))
    assert d["size"] == ce.OBS_SIZE and d["game"] == "casino"


# ----- the game object -----------------------------------------------------------------------

def test_the_game_objects_and_their_action_spaces():
    assert ce.CASINO.num_actions == 504 and ce.CASINO_CHOICES.num_actions == ce.CHOICE_ACTIONS
    assert ce.CASINO.name == ce.CASINO_CHOICES.name == "casino"
    for game in (ce.CASINO, ce.CASINO_CHOICES):
        assert game.for_ruleset(Ruleset()) is ce.CASINO
        assert game.for_ruleset(Ruleset(gather_all=False)) is ce.CASINO_CHOICES
        assert pickle.loads(pickle.dumps(game)) is game
    assert ce.CASINO.check_ruleset(None) == Ruleset() and ce.CASINO.check_ruleset(Ruleset.app()) == Ruleset.app()
    assert ce.CASINO_CHOICES.check_ruleset(None) == Ruleset(gather_all=False), "the flag's default there"
    assert ce.CASINO_CHOICES.check_ruleset({"rounds": 1}) == Ruleset(gather_all=False, rounds=1)
    with pytest.raises(ce.UnsupportedRulesetError, match=r"game 'casino' plays Casino with gather_all=True "
                                                         r"\(Discrete\(504\)\); .* play it as game='casino_choices'"):
        ce.CASINO.check_ruleset({"gather_all": False})
    with pytest.raises(ce.UnsupportedRulesetError, match="play it as game='casino'"):
        ce.CASINO_CHOICES.check_ruleset(Ruleset())
    with pytest.raises(ce.UnsupportedRulesetError, match="play it as game='casino_choices'"):
        ce.CASINO.new_game(0, Ruleset(gather_all=False))
    with pytest.raises(ce.UnsupportedRulesetError, match="play it as game='casino'"):
        ce.CASINO_CHOICES.make_stepper(2, Ruleset(), True)
    with pytest.raises(ValueError, match="use decode"):
        ce.CASINO_CHOICES.move_of(0)
    assert ce.CASINO.move_of(5) == casino.MOVES[5] and ce.CASINO.action_of(casino.MOVES[5]) == 5


def test_a_choice_state_plays_by_index_and_copies():
    rs = Ruleset(gather_all=False, rounds=1)
    game = ce.CASINO_CHOICES
    st = game.new_game(4, rs)
    assert isinstance(st, ce.ChoiceState)
    plain = casino.new_game(4, rs)
    rng = random.Random(2)
    while not st.over:
        ids = st.legal_ids()
        assert list(ids) == list(range(len(plain.legal_moves())))
        k = ids[rng.randrange(len(ids))]
        move = game.decode(st, k)
        assert game.action_of(move, st) == k
        copy = pickle.loads(pickle.dumps(st))
        st.play_id(k)
        plain.play(move)
        assert st.to_dict() == plain.to_dict()
        assert copy.to_dict() != st.to_dict() and copy.copy().to_dict() == copy.to_dict()
    assert st.scores() == plain.scores() and st.result() == plain.result()
    out = np.empty(ce.OBS_SIZE, dtype=np.float32)
    game.encode(st, 0, out)
    np.testing.assert_array_equal(out, ce.encode_state(plain, 0))
    with pytest.raises(ValueError, match="pass the position"):
        game.action_of(casino.MOVES[5])


def test_render_view_shows_only_the_seats_own_hand():
    st = casino.new_game(7)
    text = ce.CASINO.render(st.view(0))
    assert "seat 0 (you): hand KL 6 KL 8 HJ 8 RU Q" in text and "seat 1: hand 4 cards" in text
    assert "stock: 40 cards" in text
