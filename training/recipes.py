"""Named presets of ``mulle-train expert``'s flags: ``--recipe quick|standard|long``.

A recipe is nothing but defaults: ``mulle-train expert --recipe quick --first-games 400``
runs the quick recipe with 400 first games (flags given on the command line always
win). What each gave on this project's 2 cores is in docs/learning.md ("What the recipes
took") and ``benchmarks/results/`` (``recipe_quick.json``, ``time_to_strength_standard.json``,
``time_to_strength.json``):

* ``quick``: one generation from ``pimc:samples=40`` labels of 200 games, screened against
  ``greedy``: 57.8% against ``greedy`` over 200 duplicate games, in 6.4 minutes on 2 cores
  shared with other work (load 5).
* ``standard``: the long recipe's generations within one hour. Measured: its first
  generation in 50 minutes (44.1% against ``pimc``); it does not beat ``pimc`` in an hour here.
  On a faster 2-core machine (``time_to_strength_standard_epyc.json``) the same first generation
  took 17.6 minutes and the second was labelled and fitted, not screened, within the hour.
* ``long``: 3,000 first games, then 1,500 ``netsearch`` games a generation, screened
  against ``heuristic``, ``greedy`` and ``pimc`` (400 duplicate games each) for 2.5 hours.
  Measured from nothing in one sitting (``time_to_strength.json``): two generations,
  the second 62.1% against ``greedy`` and 46.6% against ``pimc``; it does not beat ``pimc``
  in 2.5 hours here. On the faster machine (``time_to_strength_long_epyc.json``) the third
  generation came at 2 h 04 min: 53.1% [48.9, 57.4] against ``pimc``, level with it.

The defaults without a recipe (8,000 and 4,000 games a generation, 1,000-game screens,
8 generations) are the shipped net's recipe, sized for runs of many hours.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CASINO_RECIPES", "GAME_RECIPES", "PPO_RECIPES", "RECIPES", "ppo_recipe_defaults", "recipe_defaults"]

_LONG: dict[str, Any] = {
    "first_games": 3000, "games": 1500, "generations": 30, "hours": 2.5,
    "screen_opponents": ["heuristic", "greedy", "pimc"], "screen_games": 400,
}

#: Recipe name -> the ``expert`` flags it sets (argparse destinations and values).
RECIPES: dict[str, dict[str, Any]] = {
    "quick": {"first_games": 200, "generations": 1, "screen_opponents": ["greedy"], "screen_games": 200,
              "hours": 0.25},
    "standard": {**_LONG, "hours": 1.0},
    "long": _LONG,
}


#: Casino's recipes (``mulle-train expert --game casino --recipe NAME``), measured on 2 cores (docs/casino.md,
#: "The learned agent"; ``benchmarks/results/casino_learned.json``). ``quick``: one generation from
#: ``pimc:samples=8`` labels of 290 whole games (38,022 decisions), an afterstate net (the pipeline's default
#: at Casino) fitted for 10 epochs in batches of 256 afterstates, screened against ``greedy`` over 400 games:
#: 65.5% [61.7, 69.3] against ``greedy`` as ``learned:path=`` plays it (the round's last deal solved), 6 min 44 s
#: end to end with 2 workers at load 2.3-3.0 (labelling 357 s, fit 26 s, screen 18 s). The net alone is level
#: with ``greedy`` (50.0%); the shipped net, fitted to 1,930 such games, is what more labels give.
CASINO_RECIPES: dict[str, dict[str, Any]] = {
    "quick": {"first_teacher": "pimc:samples=8", "first_games": 290, "generations": 1, "first_epochs": 10,
              "batch_size": 256, "screen_opponents": ["greedy"], "screen_games": 400},
}

#: Each game's recipes, by ``--game`` name.
GAME_RECIPES: dict[str, dict[str, dict[str, Any]]] = {"mulle": RECIPES, "casino": CASINO_RECIPES}


def recipe_defaults(name: str, game: str = "mulle") -> dict[str, Any]:
    """The flags recipe ``name`` of ``game`` sets; a ``ValueError`` naming that game's recipes for an unknown one."""
    recipes = GAME_RECIPES.get(game)
    if recipes is None:
        raise ValueError(f"unknown game {game!r}; recipes exist for {', '.join(GAME_RECIPES)}")
    try:
        return dict(recipes[name])
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}" + ("" if game == "mulle" else f" for {game}")
                         + f"; the recipes are {', '.join(recipes)}") from None


#: ``mulle-train ppo --recipe NAME``: the ``ppo`` flags each sets (flags given explicitly win). Chosen by
#: measurement on this project's 2 cores (docs/learning.md, "Training with standard RL";
#: ``benchmarks/results/ppo_recipe_quick.json``, ``ppo_recipe_long.json``, ``ppo_standard_rl.json``): the batched
#: env, the dense ``score_delta`` reward, an *afterstate actor* (``--actor afterstate``: each legal move scored by
#: the position it leaves with the ``capture-v4`` block, through one shared 128-128 net), a warm start cloning
#: ``greedy``'s moves in 300 games (81% of its moves on held-out decisions, where a logits net cloned 65%), then
#: MaskablePPO against ``heuristic`` itself, evaluated against it over 400 duplicate games. The logits actor's
#: recipe (a 256-256 net over the 2,812 ids, 600 cloned games, PPO at 3e-5) stayed at 27-31% against
#: ``heuristic``. ``quick`` is bounded to 10 minutes of wall time, warm start, last update and final evaluation
#: included (``--max-minutes`` keeps the last two in hand); ``long`` trains an hour against a pool of
#: ``heuristic``, ``greedy`` and its own snapshots.
_PPO_COMMON: dict[str, Any] = {
    "vec": "batched", "envs": 64, "n_steps": 64, "batch_size": 1024, "reward": "score_delta", "gamma": 0.99,
    "actor": "afterstate", "extras": "capture-v4", "net": "128,128", "bc_games": 300, "bc_epochs": 6,
    "bc_workers": 2, "lr": 1e-4, "lr_final": 1e-4, "clip": 0.15, "ent_coef": 0.001, "target_kl": 0.03,
    "eval_opponent": "heuristic", "eval_games": 400,
}
PPO_RECIPES: dict[str, dict[str, Any]] = {
    "quick": {**_PPO_COMMON, "opponents": "heuristic=1", "steps": 1_000_000, "max_minutes": 10.0,
              "eval_every": 4096 * 24, "checkpoint_every": 4096 * 24},
    "long": {**_PPO_COMMON, "opponents": "heuristic=0.5,greedy=0.3,self=0.2", "steps": 5_000_000,
             "max_minutes": 60.0, "eval_every": 4096 * 96, "checkpoint_every": 4096 * 96},
}


def ppo_recipe_defaults(name: str) -> dict[str, Any]:
    """The ``ppo`` flags recipe ``name`` sets; a ``ValueError`` naming the recipes for an unknown one."""
    try:
        return dict(PPO_RECIPES[name])
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}; the ppo recipes are {', '.join(PPO_RECIPES)}") from None
