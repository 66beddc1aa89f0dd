"""Ratings that follow results: Glicko-2, per game (Mulle, Casino), for claimed names and the built-in agents.

Written from Mark Glickman's "Example of the Glicko-2 system" (2013, http://www.glicko.net/glicko/glicko2.pdf);
its worked example is a test (``tests/test_live_ratings.py``). No package on the index this project uses
offers it (``pip index versions glicko2`` finds nothing), and the whole system is the forty lines below.

How the live server uses it (issue 52, item 3):

* **Who is rated.** A person under a claimed name (an account, :mod:`live.accounts`) who sat with that
  account's session, and every built-in agent by its spec (``agent:pimc:samples=20``). A guest's game is
  rated for nobody, and so is a game in which a seat changed hands (an agent took over a person's seat, a
  person took an agent's), or a game of a player against itself.
* **When.** After each rated game, in the same transaction that stores the game
  (:meth:`live.store.GameStore.add`): each game is a rating period of one game for both players, each
  updated from the other's rating *before* the game (Glicko-2's simultaneous update). A forfeit counts as
  the loss it is.
* **Time away.** Before a game, a player's deviation grows by one period's volatility for every
  :data:`PERIOD_SECONDS` since their last game (Glickman's step for a player who did not compete), never
  beyond :data:`START_RD`.
* **Provisional** until :data:`PROVISIONAL_GAMES` rated games and while the deviation is above
  :data:`PROVISIONAL_RD` (110, lichess's bound): such a rating is shown with a "?".

A single game always moves a rating with its result: in step 7 of the paper the new rating is
``mu + phi'^2 g(phi_j) (s - E)``, and ``phi'^2 g > 0`` while ``0 < E < 1``, so a win (``s = 1``) raises it and a
loss (``s = 0``) lowers it, whatever the ratings were (a property test drives this with hypothesis).

>>> a, b = Rating(), Rating()
>>> a2, b2 = rate_game(a, b, 1.0)
>>> a2.rating > 1500 > b2.rating, round(a2.rating + b2.rating, 6) == 3000
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["GAMES", "PERIOD_SECONDS", "PROVISIONAL_GAMES", "PROVISIONAL_RD", "Rating", "START_RATING", "START_RD",
           "START_VOLATILITY", "TAU", "agent_key", "glicko2_update", "inflate", "person_key", "player_key", "rate_game"]

#: The games rated separately (a Mulle rating says nothing about one's Casino).
GAMES = ("mulle", "casino")
#: A new player's rating, deviation and volatility (Glickman's suggested start).
START_RATING = 1500.0
START_RD = 350.0
START_VOLATILITY = 0.06
#: The system constant: how much volatility may change (0.3 to 1.2 in the paper; 0.5 is its example's).
TAU = 0.5
#: Idle time that counts as one rating period without games (the deviation grows by one step).
PERIOD_SECONDS = 86400.0
#: A rating stays provisional for fewer games than this, or while its deviation is above PROVISIONAL_RD.
PROVISIONAL_GAMES = 10
PROVISIONAL_RD = 110.0
#: Glicko-2's scale factor between the Glicko scale and its own (173.7178 = 400 / ln 10).
SCALE = 173.7178
#: The convergence tolerance of the volatility iteration (step 5).
EPSILON = 1e-6


@dataclass(frozen=True)
class Rating:
    """One player's Glicko-2 rating on the Glicko scale.

    Attributes:
        rating: The rating (1500 at the start).
        rd: The rating deviation (350 at the start): about 95 % of the strength lies within two of it.
        volatility: How erratic the player's results are (Glicko-2's sigma).
        games: Rated games played.
    """

    rating: float = START_RATING
    rd: float = START_RD
    volatility: float = START_VOLATILITY
    games: int = 0

    @property
    def provisional(self) -> bool:
        """Whether the rating is still provisional (see the module docstring)."""
        return self.games < PROVISIONAL_GAMES or self.rd > PROVISIONAL_RD


def person_key(name: str) -> str:
    """The key a claimed name is rated under: ``person:`` and its case-folded name."""
    return f"person:{name.casefold()}"


def agent_key(spec: str) -> str:
    """The key an agent is rated under: ``agent:`` and its canonical spec."""
    return f"agent:{spec}"


def player_key(name: str, kind: str) -> str:
    """The key of a person (``kind`` ``"person"``) or an agent by name: :func:`person_key` or :func:`agent_key` (the
    name issue 33's ratings gave it)."""
    return person_key(name) if kind == "person" else agent_key(name)


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def glicko2_update(player: Rating, results: list[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The player's rating after one rating period with ``results`` (opponent's rating, score 1/0.5/0): steps 2 to 8
    of Glickman's paper. No results: only the deviation grows (step 6 with phi' = phi*)."""
    mu = (player.rating - START_RATING) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not results:
        return replace(player, rd=min(START_RD, math.sqrt(phi * phi + sigma * sigma) * SCALE))
    v_inv = 0.0
    delta_sum = 0.0
    for opp, score in results:
        mu_j, phi_j = (opp.rating - START_RATING) / SCALE, opp.rd / SCALE
        g, e = _g(phi_j), _e(mu, mu_j, phi_j)
        v_inv += g * g * e * (1.0 - e)
        delta_sum += g * (score - e)
    v = 1.0 / v_inv
    delta = v * delta_sum
    # Step 5: the new volatility by the Illinois algorithm on f(x) = 0, x = ln(sigma'^2).
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    new_sigma = math.exp(big_a / 2.0)
    # Steps 6 to 8.
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * delta_sum
    # A game against a far stronger or weaker player tells little, and phi* adds the volatility first: the deviation
    # can end a hair above the start. It is capped there (a new player's uncertainty is the most there is).
    return Rating(rating=new_mu * SCALE + START_RATING, rd=min(new_phi * SCALE, START_RD), volatility=new_sigma,
                  games=player.games + len(results))


def inflate(player: Rating, idle_seconds: float) -> Rating:
    """The rating after ``idle_seconds`` without games: the deviation grows by one period's volatility per
    :data:`PERIOD_SECONDS` (never beyond :data:`START_RD`)."""
    periods = max(0.0, idle_seconds) / PERIOD_SECONDS
    if periods <= 0 or player.rd >= START_RD:
        return player
    phi, sigma = player.rd / SCALE, player.volatility
    # max(): for a tiny idle time the round trip through Glicko-2's scale could come back one ulp below rd.
    widened = max(player.rd, math.sqrt(phi * phi + periods * sigma * sigma) * SCALE)
    return replace(player, rd=min(START_RD, widened))


def rate_game(a: Rating, b: Rating, score_a: float) -> tuple[Rating, Rating]:
    """Both players' ratings after one game (``score_a``: 1 a win of ``a``, 0.5 a draw, 0 a loss), each from the
    other's rating before it."""
    if score_a not in (0.0, 0.5, 1.0):
        raise ValueError(f"a game's score is 1 (a win), 0.5 (a draw) or 0 (a loss), not {score_a!r}")
    return glicko2_update(a, [(b, score_a)]), glicko2_update(b, [(a, 1.0 - score_a)])
