"""Arena statistics against known values: fishtest's LLR and Elo, t-intervals, Bradley-Terry, SPRT error rates."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from arena import stats

# Reference values computed with fishtest's LLRcalc.LLR_logistic and stat_util.get_elo
# (official-stockfish/fishtest, server/fishtest/stats) for these counts.
FISHTEST = [
    # counts, elo0, elo1, LLR, elo, elo95 half-width, LOS
    ([10789, 19328, 33806, 19402, 10543], -3, 1,
     2.1310678117940807, -0.7735773359165423, 1.2775798957280218, 0.1176588580327751),
    ([39, 2226, 31451, 2412, 40], 0.2, 0.9,
     2.1625425800483593, 0.902981048809024, 0.6625314859816553, 0.9962220973354207),
    ([591, 2163, 716], 0, 6, 4.361801249289283, 12.52110904602384, 7.092605276897359, 0.9997334525565953),
    ([3, 10, 20, 15, 2], 0, 20, 0.014047113509769223, 10.426196175570936, 45.89571381040169, 0.6729633522900831),
]


@pytest.mark.parametrize("counts,elo0,elo1,llr,elo,half,los", FISHTEST)
def test_llr_and_elo_match_fishtest(counts, elo0, elo1, llr, elo, half, los):
    assert stats.llr(counts, elo0, elo1) == pytest.approx(llr, rel=1e-9, abs=1e-9)
    est = stats.elo_estimate(counts)
    assert est.elo.value == pytest.approx(elo, rel=1e-9)
    assert (est.elo.high - est.elo.low) / 2 == pytest.approx(half, rel=1e-9)
    assert est.los == pytest.approx(los, rel=1e-9)


def test_elo_score_round_trip():
    assert stats.elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    assert stats.score_from_elo(stats.elo_from_score(0.3)) == pytest.approx(0.3)
    assert stats.elo_from_score(1.0) == math.inf and stats.elo_from_score(0.0) == -math.inf


def test_mean_interval_is_students_t():
    x = [3.0, -1.0, 4.0, 1.0, 5.0, -9.0, 2.0, 6.0]
    iv = stats.mean_interval(x)
    lo, hi = sps.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=sps.sem(x))
    assert (iv.value, iv.low, iv.high) == pytest.approx((np.mean(x), lo, hi))
    assert stats.mean_interval([]) is None


def test_bradley_terry_two_players_known_value():
    # 75 % for A over 400 games: 400 log10(3) = 190.85 Elo; se of the logit 1/sqrt(n p (1-p)).
    games = [(1, 0, 1.0)] * 300 + [(1, 0, 0.0)] * 100
    r = stats.bradley_terry(["anchor", "a"], games, anchor=0)
    assert r.elo[0] == 0 and r.se[0] == 0
    assert r.elo[1] == pytest.approx(400 * math.log10(3), abs=0.2)  # the weak prior costs < 0.2 Elo
    se = stats.ELO_PER_NAT / math.sqrt(400 * 0.75 * 0.25)
    assert r.se[1] == pytest.approx(se, rel=0.01)


def test_bradley_terry_draws_and_field():
    # Draws are half wins; a transitive field keeps its order; everything stays finite when one side wins all.
    games = [(0, 1, 0.5)] * 10 + [(1, 2, 1.0)] * 20 + [(0, 2, 1.0)] * 20
    r = stats.bradley_terry(["x", "y", "z"], games, anchor=2)
    assert r.elo[2] == 0
    assert r.elo[0] == pytest.approx(r.elo[1], abs=1e-6)
    assert r.elo[0] > 300 and np.all(np.isfinite(r.elo)) and np.all(np.isfinite(r.se))


def test_sprt_bounds_and_validation():
    t = stats.SPRT(0, 10, 0.05, 0.1)
    assert t.lower == pytest.approx(math.log(0.1 / 0.95))
    assert t.upper == pytest.approx(math.log(0.9 / 0.05))
    with pytest.raises(ValueError, match="elo0 < elo1"):
        stats.SPRT(10, 0)
    with pytest.raises(ValueError, match="alpha"):
        stats.SPRT(0, 10, 0.7, 0.05)


def _simulate(true_elo, runs, seed, elo0=0.0, elo1=40.0, alpha=0.05, beta=0.05, cap=3000):
    """Run SPRTs on pentanomial pairs drawn from a fixed distribution with mean score L(true_elo)."""
    rng = np.random.default_rng(seed)
    # A symmetric pentanomial shape, tilted to the wanted mean score with the same MLE machinery.
    base = np.array([0.08, 0.22, 0.40, 0.22, 0.08])
    probs = stats._mle_with_mean(np.linspace(0, 1, 5), base, stats.score_from_elo(true_elo))
    outcomes = {"H0": 0, "H1": 0, None: 0}
    for _ in range(runs):
        t = stats.SPRT(elo0, elo1, alpha, beta)
        counts = np.zeros(5, dtype=int)
        draws = rng.choice(5, size=cap, p=probs / probs.sum())
        for k in range(cap):
            counts[draws[k]] += 1
            if t.update(counts):  # checked after every pair, as the arena's tracker does
                break
        outcomes[t.state] += 1
    return outcomes


def test_sprt_false_positive_rate_within_alpha():
    # Equal agents (elo = elo0): accepting H1 must be rare, about alpha at most.
    runs, alpha, beta = 200, 0.05, 0.05
    out = _simulate(0.0, runs=runs, seed=1, alpha=alpha, beta=beta)
    # Checking after every pair is the most often a test can look. Wald's bound still holds
    # for it: P(accept H1 | H0) <= alpha / (1 - beta) = 0.0526 (overshoot makes it smaller).
    # Allow the count a run at that rate stays under with 99 % probability (seeded, so stable).
    limit = int(sps.binom.ppf(0.99, runs, alpha / (1 - beta)))
    assert limit <= 20
    assert out["H1"] <= limit, out
    assert out["H0"] >= runs - limit - 5, out  # at most a few undecided at the cap


def test_sprt_power_at_elo1():
    out = _simulate(40.0, runs=100, seed=2)
    assert out["H1"] >= 85, out


def test_sprt_describe_says_which_bound_was_crossed():
    s = stats.SPRT(0, 10)
    assert "undecided" in s.describe() and f"in [{s.lower:.3f}, {s.upper:.3f}]" in s.describe()
    s.update([300, 0, 100, 0, 50])  # far more losing pairs than winning ones: H0
    assert s.state == "H0" and f"LLR {s.llr:.3f} <= {s.lower:.3f}" in s.describe(), s.describe()
    s.update([50, 0, 100, 0, 300])
    assert s.state == "H1" and f"LLR {s.llr:.3f} >= {s.upper:.3f}" in s.describe(), s.describe()
