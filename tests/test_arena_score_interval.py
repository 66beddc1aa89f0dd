"""The arena prints the score interval the guides quote: a pairing's score with its 95% t interval over duplicate
pairs, the figure ``mulle-train expert``'s screens and ``training.evaluate.head_to_head`` give."""

from __future__ import annotations

import pytest

from arena import report


def _line(pair: int, first: str, scores: tuple[int, int]) -> dict:
    specs = ["a", "b"] if first == "a" else ["b", "a"]
    return {"specs": specs, "scores": list(scores), "winner": 0 if scores[0] > scores[1] else 1, "pair": pair,
            "game_id": f"{pair}{first}", "status": "ok", "forfeit": None}


def test_a_pairing_reports_its_score_with_the_pairs_t_interval():
    # Pair 0: a wins both games; pairs 1 and 2: one game each; pair 3: b wins both. Pair scores 1, .5, .5, 0.
    lines = [_line(0, "a", (60, 40)), _line(0, "b", (40, 60)), _line(1, "a", (60, 40)), _line(1, "b", (60, 40)),
             _line(2, "a", (40, 60)), _line(2, "b", (40, 60)), _line(3, "a", (40, 60)), _line(3, "b", (60, 40))]
    st = report.pairing_stats("a", "b", lines)
    iv = st["score_interval"]
    assert iv["value"] == st["score"] == 0.5 and st["pentanomial"] == [1, 0, 2, 0, 1]
    # mean .5 of (1, .5, .5, 0): sd .408, se .204, t(3) 3.182: half-width .650, clipped to [0, 1]
    assert iv["low"] == 0.0 and iv["high"] == 1.0
    from training.evaluate import pair_score_interval

    assert (iv["value"], iv["low"], iv["high"]) == pytest.approx(pair_score_interval(st["pentanomial"]))
    # Every pair won twice: 100% with no width; a pairing without games: n/a.
    won = report.pairing_stats("a", "b", [_line(k, s, (60, 40) if s == "a" else (40, 60)) for k in range(5)
                                          for s in "ab"])
    assert report._score_text(won["score_interval"]) == "100.0% [100.0%, 100.0%]"
    assert report._score_text(report.pairing_stats("a", "c", lines)["score_interval"]) == "n/a"
    rows = report.pairing_rows({"pairings": [st]})
    assert rows[0][2] == "score [95%]" and rows[1][2] == "50.0% [0.0%, 100.0%]"
