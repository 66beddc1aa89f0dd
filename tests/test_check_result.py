"""``mulle_env.check_result``: a result whose scores, winner and sheets cannot be is refused, saying why."""

from __future__ import annotations

import copy
import random

import pytest

import mulle_env as me
from mulle_env.engine.record import INTAKE_PER_SET, MAX_TABBE_PER_SET


def _played(backend: str, seed: int, ruleset: me.Ruleset) -> dict:
    st = me.engine.backends()[backend].new_game(seed=seed, ruleset=ruleset)
    rng = random.Random(seed)
    while not st.is_over():
        st.play(rng.choice(st.legal_moves()))
    return st.result().to_dict()


@pytest.mark.parametrize("backend", sorted(me.engine.backends()))
def test_every_played_game_passes(backend):
    for seed in range(40):
        rules = me.Ruleset(sets=1 + seed % 3, mulle_hand_values=bool(seed % 2), forced_capture=bool(seed % 5))
        result = _played(backend, seed, rules)
        me.check_result(result, rules)
        me.check_result({k: result[k] for k in ("scores", "winner", "sheets")}, rules.to_dict())  # an arena line


def test_the_constants_are_the_rules():
    assert (MAX_TABBE_PER_SET, INTAKE_PER_SET) == (48, 40)  # RULES.md 1.2 and 6.3


def _set(result, p, k, **values):
    sheet = result["sheets"][p][k]
    sheet.update(values)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(scores=[1000000, -5], winner=0), "scores [1000000, -5] are not the sums of the set totals"),
    (lambda r: r.update(scores=[1e308, 1e308], winner=None), "scores[0] must be a whole number, not 1e+308"),
    (lambda r: r.update(scores=[True, 3]), "scores[0] must be a whole number"),
    (lambda r: r.update(winner=1 - r["winner"]) if r["winner"] is not None else r.update(winner=0), "contradicts"),
    (lambda r: r.update(winner=2), "winner must be 0, 1 or null"),
    (lambda r: r.pop("sheets"), "missing: sheets"),
    (lambda r: r.update(sheets=[r["sheets"][0]]), "sheets must hold the score sheets of the two seats"),
    (lambda r: r["sheets"][0].append(r["sheets"][0][0]), "sheets[0] must hold one score sheet per set (1 under"),
    (lambda r: r["sheets"][1][0].pop("tabbe"), "sheets[1][0] must be a score sheet with the keys"),
    (lambda r: _set(r, 0, 0, mulle=-1, total=r["sheets"][0][0]["total"] - 1 - r["sheets"][0][0]["mulle"]),
     "sheets[0][0].mulle must be at least 0"),
    (lambda r: _set(r, 0, 0, total=r["sheets"][0][0]["total"] + 1), "sheets[0][0].total"),
    (lambda r: _set(r, 1, 0, intake=30, bonus=0), "sheets[1][0].bonus 0 is not 2 x (intake - 20) above 20 (20"),
    (lambda r: _set(r, 0, 0, tabbe=49), "sheets[0][0].tabbe 49 is more than a seat can score in a set"),
    (lambda r: r.update(totals=[{**t, "total": t["total"] + 1} for t in r["totals"]]), "totals"),
    (lambda r: r.update(sheets="[]"), "sheets must hold the score sheets"),
])
def test_a_result_that_cannot_be_is_refused_saying_why(edit, message):
    rules = me.Ruleset(sets=1)
    result = copy.deepcopy(_played("python", 4, rules))
    edit(result)
    with pytest.raises(me.InvalidRecordError) as exc:
        me.check_result(result, rules)
    assert message in str(exc.value)


def test_more_than_the_cards_of_a_set_can_give_is_refused_even_when_the_line_adds_up():
    rules = me.Ruleset(sets=1)
    result = _played("python", 5, rules)
    for key, extra in (("mulle", 500), ("intake", 41)):
        forged = copy.deepcopy(result)
        sheet = forged["sheets"][0][0]
        sheet[key] += extra
        sheet["bonus"] = me.intake_bonus(sheet["intake"])
        sheet["total"] = sheet["mulle"] + sheet["tabbe"] + sheet["bonus"]
        forged["scores"][0] = sheet["total"]
        forged["winner"] = 0 if forged["scores"][0] > forged["scores"][1] else 1
        forged.pop("totals")
        with pytest.raises(me.InvalidRecordError, match=f"the seats' {key} points add up to .* a set's cards can give"):
            me.check_result(forged, rules)


def test_the_ruleset_decides_how_many_sets_and_how_much_a_mulle_is_worth():
    result = _played("python", 6, me.Ruleset(sets=2))
    me.check_result(result, {"sets": 2})
    me.check_result(result, me.Ruleset(sets=2))
    with pytest.raises(me.InvalidRecordError, match=r"one score sheet per set \(1 under these rules\)"):
        me.check_result(result, {"sets": 1})
    with pytest.raises(me.InvalidRecordError, match="unknown ruleset flag"):
        me.check_result(result, {"jokers": 1})
    with pytest.raises(me.InvalidRecordError, match="a result is a GameResult or a JSON object"):
        me.check_result([1, 2], None)


def _zero_sheets(sets: int) -> dict:
    zero = {"mulle": 0, "tabbe": 0, "intake": 0, "bonus": 0, "total": 0}
    return {"scores": [0, 0], "winner": None, "sheets": [[dict(zero) for _ in range(sets)] for _ in (0, 1)]}


def test_every_set_hands_out_its_intake_points_the_lower_bound():
    # A hand-edited line whose sheets were all zero passed as a draw (issue 31): only the upper bound was checked.
    with pytest.raises(me.InvalidRecordError, match="set 1: the seats' intake points add up to 0, not the 40 a set"):
        me.check_result(_zero_sheets(1), me.Ruleset(sets=1))
    result = copy.deepcopy(_played("python", 5, me.Ruleset(sets=1)))
    for p in (0, 1):  # one intake point less for each seat, everything else consistent
        sheet = result["sheets"][p][0]
        sheet["intake"] -= 1
        sheet["bonus"] = me.intake_bonus(sheet["intake"])
        sheet["total"] = sheet["mulle"] + sheet["tabbe"] + sheet["bonus"]
    result["scores"] = [result["sheets"][p][0]["total"] for p in (0, 1)]
    s = result["scores"]
    result["winner"] = 0 if s[0] > s[1] else 1 if s[1] > s[0] else None
    result.pop("totals")
    with pytest.raises(me.InvalidRecordError, match="intake points add up to 38, not the 40"):
        me.check_result(result, me.Ruleset(sets=1))


def test_a_set_without_a_capture_is_possible_only_where_any_card_may_be_discarded():
    loose = me.Ruleset(sets=1, discard_only_if_no_capture=False)
    st = me.new_game(seed=8, ruleset=loose)
    while not st.is_over():  # discard whatever can be discarded: nobody ever captures
        moves = st.legal_moves()
        st = st.play(next((m for m in moves if str(m).startswith("discard")), moves[0]))
    result = st.result().to_dict()
    assert result["sheets"] == _zero_sheets(1)["sheets"]  # a real game: the exception is needed
    me.check_result(result, loose)
    with pytest.raises(me.InvalidRecordError, match="intake points add up to 0"):
        me.check_result(_zero_sheets(1), me.Ruleset(sets=1))


def test_the_engine_s_own_result_object_is_checked_as_its_json_form():
    st = me.new_game(seed=3, ruleset=me.Ruleset(sets=1))
    while not st.is_over():
        st = st.play(st.legal_moves()[0])
    me.check_result(st.result(), st.ruleset)  # was refused: "a result is a JSON object ..., not GameResult"
    with pytest.raises(me.MulleError, match="a GameResult or a JSON object"):
        me.check_result(3)
