"""Registers the built-in agents (imported lazily by :func:`agents.make`)."""

from __future__ import annotations

from importlib.util import find_spec

from .casino import CasinoGreedyAgent, CasinoHeuristicAgent
from .casino.netsearch import CasinoNetSearchAgent
from .determinized import DeterminizedSearchAgent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .learned import DEFAULT_POLICY_PATH, LearnedAgent
from .learned.casino import CasinoLearnedAgent
from .netsearch import DEFAULT_NET_PATH, NetSearchAgent
from .pimc import PIMCAgent
from .random_agent import RandomAgent
from .registry import register, same_as_default

register("random", RandomAgent, "uniform over legal moves")
register("heuristic", HeuristicAgent,
         "the seeds' priority order: mulle captures, captures, mulles, matches, build, trotta, discard")
register("greedy", GreedyAgent, "one-ply look-ahead: points now + own build - opponent's best reply capture")
register("pimc", PIMCAgent, "determinized Monte Carlo search with fast rollouts (the strong baseline)")
register("netsearch", NetSearchAgent,
         "determinized search whose candidates, rollouts and leaf values come from a learned policy file")
# Casino's agents (agents/casino, agents/determinized.py) under the names Mulle's have: at Casino, "heuristic" is
# Casino's heuristic (mulle-arena --game casino random heuristic greedy pimc).
register("heuristic", CasinoHeuristicAgent,
         "Casino's common sense: points, spades and sweeps taken, builds it can capture, safe cheap trails",
         games=("casino",))
register("greedy", CasinoGreedyAgent,
         "one-move look-ahead: points taken now minus the opponent's expected best reply capture", games=("casino",))
register("pimc", DeterminizedSearchAgent,
         "determinized search: each move tried on sampled deals of the unseen cards, rolled out by the heuristic",
         games=("casino",))
# learned:path=<file.npz> (agents/learned). Registered here like every built-in: the learned package
# knows nothing of the registry (it reached into its private table once; issue 31).
register("learned", LearnedAgent,
         "a policy network played with numpy: the shipped afterstate net distilled from search, "
         "or any policy file (learned:path=<file.npz>)")
# learned at Casino (agents/learned/casino.py): the shipped Casino net, or a policy file (learned:path=<file.npz>).
register("learned", CasinoLearnedAgent,
         "a Casino policy network played with numpy, the round's last deal solved exactly (endgame=false: the net "
         "alone): the shipped net trained by expert iteration, or any Casino policy file (learned:path=<file.npz>; "
         "mulle-train ppo/expert --game casino make one)", games=("casino",))
# netsearch at Casino (agents/casino/netsearch.py): netsearch's search with a Casino logits net (the shipped one).
register("netsearch", CasinoNetSearchAgent,
         "determinized search whose candidates, rollouts and leaf values come from a Casino policy file "
         "(the shipped net without policy=), the round's last deal valued exactly", games=("casino",))
# path="" loads the shipped policy (policy="" netsearch's pinned net), so naming that file is the same agent.
same_as_default("learned", path=DEFAULT_POLICY_PATH)
same_as_default("netsearch", policy=DEFAULT_NET_PATH)

# OpenSpiel's ISMCTS joins the registry only when the openspiel extra is installed; an error
# inside agents.ismcts itself still surfaces (find_spec checks for OpenSpiel, not for the import).
if find_spec("pyspiel") is not None:
    from .ismcts import CasinoISMCTSAgent, ISMCTSAgent

    register("ismcts", ISMCTSAgent,
             "OpenSpiel's information-set MCTS on determinizations of the view (needs the openspiel extra)")
    register("ismcts", CasinoISMCTSAgent,
             "OpenSpiel's information-set MCTS on python_casino, leaves valued by heuristic playouts "
             "(needs the openspiel extra)", games=("casino",))
