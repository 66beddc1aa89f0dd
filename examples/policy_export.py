"""Shared by the examples: a torch MLP to the project's policy file, and its arena strength.

A ``logits`` policy file (:mod:`agents.learned.policy`) is an MLP from the 524-float
observation to one logit per action id; ``learned:path=<file>`` plays it (the argmax over
the legal moves). Any trainer whose actor is a stack of ``torch.nn.Linear`` layers with one
hidden activation exports to it here, so its strength is measured by the arena like every
other agent's.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agents.learned.policy import MLPPolicy, save_policy


def linear_layers_to_policy(linears, activation: str, metadata: dict) -> MLPPolicy:
    """An :class:`MLPPolicy` from ``torch.nn.Linear`` layers in order (torch's ``(out, in)`` weights transposed)."""
    weights = [lin.weight.detach().cpu().numpy().T for lin in linears]
    biases = [lin.bias.detach().cpu().numpy() for lin in linears]
    return MLPPolicy(weights, biases, activation=activation, metadata=metadata)


def export(linears, activation: str, metadata: dict, path: str | Path) -> Path:
    """Write the layers as a policy file at ``path``; ``learned:path=<path>`` then plays it."""
    return save_policy(linear_layers_to_policy(linears, activation, metadata), path)


def arena_score(policy_path: str | Path, opponent: str, games: int, seed: int, ruleset: dict | None = None,
                workers: int = 1) -> dict:
    """Duplicate arena games of the policy file against ``opponent``: its score share and points a game.

    Runs :func:`arena.run` (the tool ``mulle-arena`` runs) into a temporary results file.
    """
    from arena import Plan, ProcessBackend, run
    from arena.tournament import game_points

    spec = f"learned:path={policy_path}"
    plan = Plan((spec, opponent), games=games, seed=seed, ruleset=ruleset)
    with tempfile.TemporaryDirectory() as tmp:
        outcome = run(plan, str(Path(tmp) / "results.jsonl"), backend=ProcessBackend(workers), progress=False)
    lines = [line for line in outcome.lines if line.get("status") == "ok"]
    score = sum(game_points(line, spec) for line in lines)
    diff = 0.0
    for line in lines:
        seat = line["specs"].index(spec)
        diff += line["scores"][seat] - line["scores"][1 - seat]
    return {"opponent": opponent, "games": len(lines), "score": score / max(len(lines), 1),
            "points_per_game": diff / max(len(lines), 1)}
