"""Statistics for arena results: W/D/L, score differences, pentanomial Elo, SPRT, ratings.

Conventions (fishtest's, so numbers can be compared with the chess world's tools):

* A game scores 1, 1/2 or 0 for an agent. A duplicate *pair* (one deal played twice with
  the seats swapped) scores 0, 1/2, 1, 3/2 or 2; the five counts of those values are the
  *pentanomial* frequencies ``[LL, LD+DL, LW+DD+WL, DW+WD, WW]``.
* Elo is logistic Elo: a mean score ``s`` is ``-400 log10(1/s - 1)`` Elo.
* Intervals are 95 % (two-sided); LOS is the likelihood of superiority
  ``Phi((s - 1/2) / se)``.
* Pairs are the independent units of a duplicate match, so standard errors are taken
  over pairs, never over the (correlated) games within a pair.

The SPRT is the generalised SPRT fishtest uses (Van den Bergh): the log-likelihood
ratio of the maximum-likelihood multinomials whose mean score is ``s0`` resp. ``s1``
(:func:`llr`), tested against the Wald bounds ``log(beta/(1-alpha))`` and
``log((1-beta)/alpha)``. Ratings for a whole field are a Bradley-Terry maximum
likelihood fit (:func:`bradley_terry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy import stats as sps

#: Two-sided confidence level of every interval in reports.
CONFIDENCE = 0.95
_Z = float(sps.norm.ppf(0.5 + CONFIDENCE / 2))
#: Counts of zero are replaced by this when a likelihood needs every outcome (as fishtest).
_REGULARIZE = 1e-3
#: Natural-log rating units to Elo.
ELO_PER_NAT = 400 / math.log(10)


def elo_from_score(s: float) -> float:
    """Logistic Elo difference for a mean score ``s`` in (0, 1); +-inf at the ends."""
    if s <= 0:
        return -math.inf
    if s >= 1:
        return math.inf
    return -400 * math.log10(1 / s - 1)


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` logistic Elo stronger (inverse of :func:`elo_from_score`)."""
    return 1 / (1 + 10 ** (-elo / 400))


def _finite(x: float) -> float | None:
    # JSON has no infinities or NaN: reports write them as null.
    return x if x is not None and math.isfinite(x) else None


@dataclass
class Interval:
    """A point estimate with its 95 % confidence interval."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (non-finite numbers as ``None``)."""
        return {"value": _finite(self.value), "low": _finite(self.low), "high": _finite(self.high)}

    def __str__(self) -> str:
        if not all(math.isfinite(x) for x in (self.value, self.low, self.high)):
            return f"{self.value:.1f} [{self.low:.1f}, {self.high:.1f}]"
        return f"{self.value:+.1f} ± {(self.high - self.low) / 2:.1f}"


def mean_interval(values: Sequence[float]) -> Interval | None:
    """Mean of ``values`` with a Student-t 95 % interval (``None`` for no data)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return None
    m = float(x.mean())
    if n == 1:
        return Interval(m, -math.inf, math.inf)
    se = float(x.std(ddof=1)) / math.sqrt(n)
    half = float(sps.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * se
    return Interval(m, m - half, m + half)


def score_stats(values: ArrayLike, counts: ArrayLike) -> tuple[float, float, float]:
    """``(n, mean, variance)`` of per-unit scores ``values`` seen ``counts`` times.

    ``values`` are per-game scores of the unit (a game: 0, .5, 1; a pair: 0, .25, ..., 1).
    """
    c = np.asarray(counts, dtype=float)
    v = np.asarray(values, dtype=float)
    n = float(c.sum())
    if n == 0:
        return 0.0, math.nan, math.nan
    mu = float((c * v).sum() / n)
    var = float((c * (v - mu) ** 2).sum() / n)
    return n, mu, var


@dataclass
class EloEstimate:
    """Elo difference from a trinomial or pentanomial count, with interval and LOS."""

    score: float
    elo: Interval
    los: float
    units: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {"score": self.score, "elo": self.elo.to_dict(), "los": self.los, "units": self.units}


def elo_estimate(counts: Sequence[int]) -> EloEstimate | None:
    """Elo, its 95 % interval and LOS from trinomial ``[L, D, W]`` or pentanomial counts.

    The interval maps the normal interval of the mean score through the Elo curve
    (the fishtest method); the standard error uses the empirical variance per unit
    (per pair for pentanomial counts, which is what makes duplicate matches precise).
    """
    counts = list(counts)
    if len(counts) not in (3, 5):
        raise ValueError(f"counts must be trinomial (3) or pentanomial (5), not {len(counts)} long")
    if sum(counts) == 0:
        return None
    units = int(sum(counts))
    # Zero counts get a tiny weight (as fishtest does) so that a one-sided record gives
    # a finite estimate and a non-degenerate interval.
    reg = [c if c else _REGULARIZE for c in counts]
    values = np.linspace(0, 1, len(counts))
    n, mu, var = score_stats(values, reg)
    se = math.sqrt(var / n)
    lo, hi = mu - _Z * se, mu + _Z * se
    los = float(sps.norm.cdf((mu - 0.5) / se))
    return EloEstimate(mu, Interval(elo_from_score(mu), elo_from_score(lo), elo_from_score(hi)), los, units)


# ----- SPRT -------------------------------------------------------------------------------


def _mle_with_mean(values: NDArray[np.float64], probs: NDArray[np.float64], s: float) -> NDArray[np.float64]:
    """The multinomial closest (max likelihood) to ``probs`` on ``values`` whose mean is ``s``.

    Solves the secular equation ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0`` for ``x``
    (Van den Bergh, "Maximum likelihood for a multinomial with a mean constraint").
    """
    a = values - s
    lo, hi = -1 / a.max(), -1 / a.min()
    eps = 1e-9

    def f(x: float) -> float:
        return float((probs * a / (1 + x * a)).sum())

    x = optimize.brentq(f, lo + eps, hi - eps, xtol=1e-14)
    mle: NDArray[np.float64] = probs / (1 + x * a)
    return mle


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """Generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    ``counts`` are trinomial ``[L, D, W]`` or pentanomial; zero counts are replaced by
    ``1e-3`` as fishtest does, so that both hypotheses have a solution.
    """
    c = np.asarray(counts, dtype=float)
    if len(c) not in (3, 5):
        raise ValueError(f"counts must be trinomial (3) or pentanomial (5), not {len(c)} long")
    n = float(c.sum())
    if n == 0:
        return 0.0
    c = np.where(c == 0, _REGULARIZE, c)
    n = float(c.sum())
    p = c / n
    values = np.linspace(0, 1, len(c))
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    p0 = _mle_with_mean(values, p, s0)
    p1 = _mle_with_mean(values, p, s1)
    return float(n * (p * (np.log(p1) - np.log(p0))).sum())


@dataclass
class SPRT:
    """A sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1.

    ``alpha`` is the false-positive rate (accepting H1 when elo = elo0), ``beta`` the
    false-negative rate (accepting H0 when elo = elo1). Feed it counts with
    :meth:`update`; :attr:`state` becomes ``"H1"`` (upper bound crossed: the first agent
    is stronger by at least about elo1), ``"H0"`` (lower bound crossed) or stays
    ``None`` while undecided.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    llr: float = 0.0
    state: str | None = None
    units: int = 0
    counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0 < v < 0.5:
                raise ValueError(f"SPRT {name} must be between 0 and 0.5 (exclusive), not {v!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT needs elo0 < elo1, not elo0={self.elo0!r}, elo1={self.elo1!r}")

    @property
    def lower(self) -> float:
        """Lower (H0) bound ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Upper (H1) bound ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def update(self, counts: Sequence[int]) -> str | None:
        """Recompute the LLR for the cumulative ``counts``; return the decision or ``None``."""
        self.counts = list(counts)
        self.units = int(sum(counts))
        self.llr = llr(counts, self.elo0, self.elo1) if self.units else 0.0
        if self.llr >= self.upper:
            self.state = "H1"
        elif self.llr <= self.lower:
            self.state = "H0"
        else:
            self.state = None
        return self.state

    def describe(self) -> str:
        """One line for humans: the decision, LLR and bounds."""
        what = {
            "H1": f"H1 accepted (upper bound crossed): elo >= {self.elo1:g} is supported",
            "H0": f"H0 accepted (lower bound crossed): elo <= {self.elo0:g} is supported",
            None: "undecided (no bound crossed)",
        }[self.state]
        # "in [a, b]" only while undecided: a crossed bound reads "LLR -2.989 <= -2.944", not inside the range.
        where = {"H1": f">= {self.upper:.3f} (bounds [{self.lower:.3f}, {self.upper:.3f}])",
                 "H0": f"<= {self.lower:.3f} (bounds [{self.lower:.3f}, {self.upper:.3f}])",
                 None: f"in [{self.lower:.3f}, {self.upper:.3f}]"}[self.state]
        return f"SPRT({self.elo0:g}, {self.elo1:g}): {what}; LLR {self.llr:.3f} {where}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "llr": self.llr, "lower_bound": self.lower, "upper_bound": self.upper,
            "state": self.state,
            "bound": {"H1": "upper", "H0": "lower", None: None}[self.state],
            "units": self.units, "counts": self.counts, "text": self.describe(),
        }


# ----- Bradley-Terry ----------------------------------------------------------------------


@dataclass
class Ratings:
    """Bradley-Terry ratings of a field, in Elo relative to an anchor, with intervals."""

    players: list[str]
    elo: NDArray[np.float64]
    se: NDArray[np.float64]
    anchor: str

    def interval(self, i: int) -> Interval:
        """Rating of player ``i`` with its 95 % interval (zero width for the anchor)."""
        return Interval(float(self.elo[i]), float(self.elo[i] - _Z * self.se[i]), float(self.elo[i] + _Z * self.se[i]))


def bradley_terry(
    players: Sequence[str],
    games: Iterable[tuple[int, int, float]],
    anchor: int = 0,
    prior_elo: float = 1000.0,
) -> Ratings:
    """Maximum-likelihood Bradley-Terry (logistic Elo) ratings from ``(i, j, score_i)`` games.

    A draw counts as half a win for each side. ``players[anchor]`` is fixed at 0. A weak
    Gaussian prior (standard deviation ``prior_elo``) keeps ratings finite when an agent
    wins or loses every game; with a few games of each result it changes nothing visible.
    Standard errors come from the inverse of the Hessian of the negative log-likelihood
    (the observed Fisher information) at the optimum.
    """
    k = len(players)
    if k < 2:
        raise ValueError(f"a rating needs at least 2 players, not {k}")
    n = np.zeros((k, k))
    w = np.zeros((k, k))
    for i, j, s in games:
        n[i, j] += 1
        n[j, i] += 1
        w[i, j] += s
        w[j, i] += 1 - s
    free = [p for p in range(k) if p != anchor]
    tau = prior_elo / ELO_PER_NAT

    def full(x: NDArray[np.float64]) -> NDArray[np.float64]:
        r = np.zeros(k)
        r[free] = x
        return r

    def nll(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        r = full(x)
        d = r[:, None] - r[None, :]
        # w[i, j] log sigma(r_i - r_j) over all ordered pairs counts each game once per side.
        logp = -np.logaddexp(0, -d)
        f = -(w * logp).sum() + (x**2).sum() / (2 * tau**2)
        p = 1 / (1 + np.exp(-d))
        g_full = -((w - n * p)).sum(axis=1)
        g = g_full[free] + x / tau**2
        return float(f), g

    res = optimize.minimize(nll, np.zeros(k - 1), jac=True, method="BFGS", options={"gtol": 1e-9})
    r = full(res.x)
    d = r[:, None] - r[None, :]
    p = 1 / (1 + np.exp(-d))
    h = n * p * (1 - p)
    hess = np.diag(h.sum(axis=1)) - h
    hess = hess[np.ix_(free, free)] + np.eye(k - 1) / tau**2
    cov = np.linalg.inv(hess)
    se = np.zeros(k)
    se[free] = np.sqrt(np.clip(np.diag(cov), 0, None))
    return Ratings(list(players), r * ELO_PER_NAT, se * ELO_PER_NAT, players[anchor])
