"""Casino's :class:`Ruleset`: every flag of CASINO.md as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mulle_env.engine.errors import InvalidRulesetError
from mulle_env.engine.ruleset import FlagSet

__all__ = ["COURT_CAPTURE_MODES", "Ruleset"]

#: ``court_capture`` values (CASINO.md 4.1.3): a court card takes one card of its rank, or all of them.
COURT_CAPTURE_MODES = ("one", "all")

#: The most rounds ``rounds=N`` may ask for, and the highest ``target_score``: bounds that keep
#: every game finite and every observation's score entries bounded.
MAX_ROUNDS = 50
MAX_TARGET = 200


@dataclass(frozen=True, slots=True)
class Ruleset(FlagSet):
    """The rules a Casino game is played by; the defaults are CASINO.md's (traditional two-player Casino).

    Attributes:
        gather_all: A capture or build takes everything of its value it can (4.1.2, 4.2.4): one move
            per card (capture), per card and value (new build) or per card and build (increase).
            ``False``: every valid choice of cards is its own move, and the move names what it takes.
        court_capture: ``"one"``: a J, Q or K captures one loose card of its rank, each a separate
            move; ``"all"``: all of them in one move (4.1.3).
        sweeps: A capture that empties the table scores a sweep (4.1.6, 5.3); ``False``: never.
        sum_build_max_card: In a new build whose group holds loose cards, the played card's value
            is at most this (the seed app's "only 1-5 can do sum builds": 5). Default 10 (no limit).
        increase_max_cards: An opponent's build can be increased only while it has at most this
            many cards (the seed app: 4). ``None`` (default): no limit.
        trail_with_build: A player who owns a build may trail (4.3). Default ``False``.
        target_score: Rounds are played until a player has at least this many points in total at the
            end of a round, and the totals differ (5.4).
        rounds: Play exactly this many rounds instead (equal totals are a draw); ``None``: play to
            ``target_score``. ``rounds=1`` is one round, the natural episode of many experiments.
    """

    #: How refusals name Casino's flags (``unknown Casino ruleset flag 'sets'``).
    flag_word: ClassVar[str] = "Casino ruleset flag"

    gather_all: bool = True
    court_capture: str = "one"
    sweeps: bool = True
    sum_build_max_card: int = 10
    increase_max_cards: int | None = None
    trail_with_build: bool = False
    target_score: int = 21
    rounds: int | None = None

    def __post_init__(self) -> None:
        for name in ("gather_all", "sweeps", "trail_with_build"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRulesetError(f"Ruleset.{name} must be True or False, not {getattr(self, name)!r}")
        if self.court_capture not in COURT_CAPTURE_MODES:
            raise InvalidRulesetError(
                f"Ruleset.court_capture must be one of {', '.join(map(repr, COURT_CAPTURE_MODES))}, "
                f"not {self.court_capture!r}")
        _check_int("sum_build_max_card", self.sum_build_max_card, 1, 10)
        if self.increase_max_cards is not None:
            _check_int("increase_max_cards", self.increase_max_cards, 2, 52, "or None (no limit)")
        _check_int("target_score", self.target_score, 1, MAX_TARGET)
        if self.rounds is not None:
            _check_int("rounds", self.rounds, 1, MAX_ROUNDS, "or None (play to target_score)")

    @classmethod
    def app(cls) -> Ruleset:
        """The house rules of the seed's Casino app: ``sum_build_max_card=5, increase_max_cards=4``."""
        return cls(sum_build_max_card=5, increase_max_cards=4)

    @property
    def max_rounds(self) -> int:
        """The most rounds a game under these rules can last (``rounds``, or the target's worst case).

        Under ``target_score`` a round hands out at least one point when a single card is
        captured (and 11 when all are), so a game can in principle run long only on equal
        totals; :data:`MAX_ROUNDS` bounds it, and a game still tied then is a draw.
        """
        return self.rounds if self.rounds is not None else MAX_ROUNDS


def _check_int(name: str, value: object, low: int, high: int, extra: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        tail = f" {extra}" if extra else ""
        raise InvalidRulesetError(f"Ruleset.{name} must be a whole number from {low} to {high}{tail}, not {value!r}")
