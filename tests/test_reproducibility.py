"""What is the same on every machine and what is one machine's own (docs/learning.md, "What is the same on every
machine").

The same everywhere, on both engines, in any number of processes: games from seeds, engine
states, arena results. None of them does floating-point arithmetic whose result depends on a
kernel (the rules are integers; greedy's and pimc's figures are plain Python or C doubles in a
fixed order), so their digests below are fixed constants: a change of one of them is a change of
behaviour, to be made on purpose (as a playthrough's is, tests/playthroughs/).

One machine's own: trained weights. A fit is a long chain of matrix products and sums whose
last bits depend on the BLAS and torch kernels the processor selects; the same machine and
settings give byte-identical weights, another kernel gives weights that differ in the last bits
and then a little more at every step. So tests compare trained values within a tolerance that
says why, and CI runs the numeric tests a second time under other kernels (.ci/numeric-kernels)
so that a test holding for one processor's rounding only fails before it lands.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.match import play_agents
from mulle_env.engine import new_game

ROOT = Path(__file__).resolve().parents[1]


def _digest(rows: list[object]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def seeded_games_digest() -> str:
    """Four seeded games of agents that decide without nets: every move in order, and the scores."""
    rows: list[object] = []
    for k, (a, b) in enumerate([("random", "heuristic"), ("heuristic", "greedy"), ("greedy", "random"),
                                ("pimc:samples=2,horizon=2", "greedy")]):
        bots = [agents.make(a), agents.make(b)]
        moves: list[str] = []
        rngs = [random.Random(1000 + 10 * k + p) for p in (0, 1)]
        match = play_agents(bots, 77 + k, rngs, on_move=lambda st, p, legal, m: moves.append(str(m)))
        rows.append([a, b, moves, list(match.state.scores())])
    return _digest(rows)


def engine_states_digest() -> str:
    """The canonical keys of the states of seeded random playouts, every tenth move."""
    keys = []
    for seed in range(3):
        st, rng = new_game(seed), random.Random(seed)
        n = 0
        while not st.over:
            if n % 10 == 0:
                keys.append(st.key())
            st.play(rng.choice(st.legal_moves()))
            n += 1
        keys.append(st.key())
    return _digest(keys)


def arena_results_digest(workers: int) -> str:
    """An arena tournament's results, less what a run may differ in (timing, worker, engine backend)."""
    from arena import Plan, ProcessBackend, run

    plan = Plan(("heuristic", "greedy", "random"), games=2, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        outcome = run(plan, str(Path(tmp) / "results.jsonl"), backend=ProcessBackend(workers), progress=False)
    keep = ("game_id", "specs", "seed", "pairing", "ruleset", "scores", "sheets", "winner", "moves", "status")
    return _digest(sorted(([line[k] for k in keep] for line in outcome.lines), key=json.dumps))


# The fixed digests: computed once, the same on every processor and on both engines (CI checks both).
SEEDED_GAMES = "150641eb531c0f3d"
ENGINE_STATES = "43ec537bf4178a01"
ARENA_RESULTS = "7a1cb79138eed36d"


def test_games_from_seeds_are_the_same_on_every_machine():
    assert seeded_games_digest() == SEEDED_GAMES


def test_engine_states_are_the_same_on_every_machine():
    assert engine_states_digest() == ENGINE_STATES


def test_arena_results_are_the_same_on_every_machine_and_in_any_number_of_processes():
    assert arena_results_digest(1) == ARENA_RESULTS
    assert arena_results_digest(2) == ARENA_RESULTS


_FIT = """
import hashlib, sys
import numpy as np, torch
sys.path.insert(0, {root!r})
torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.from_numpy(np.random.default_rng(0).random((512, 300), dtype=np.float32))
y = x[:, :7].sum(1, keepdim=True)
net = torch.nn.Sequential(torch.nn.Linear(300, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
opt = torch.optim.Adam(net.parameters(), 1e-2)
for _ in range(50):
    loss = ((net(x) - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
w = net[0].weight.detach().numpy()
np.save(sys.argv[1], w)
"""


def _fit(tmp_path: Path, name: str, env: dict[str, str]) -> np.ndarray:
    pytest.importorskip("torch")
    out = tmp_path / f"{name}.npy"
    subprocess.run([sys.executable, "-c", _FIT.format(root=str(ROOT)), str(out)], check=True, timeout=120,
                   env={**os.environ, **env})
    return np.load(out)


def test_trained_weights_are_the_same_run_to_run_and_only_close_across_kernels(tmp_path):
    """One machine, one kernel: byte-identical weights. Torch's plain kernels instead of its vectorised ones:
    the same fit within float32 rounding grown over 50 steps (not asserted to differ: on a processor
    without AVX the two are the same kernels)."""
    a, b = _fit(tmp_path, "a", {}), _fit(tmp_path, "b", {})
    assert np.array_equal(a, b)
    plain = _fit(tmp_path, "plain", {"ATEN_CPU_CAPABILITY": "default"})
    assert np.allclose(plain, a, rtol=1e-3, atol=1e-5)


def test_ci_runs_every_numeric_test_file_under_other_kernels():
    """.ci/numeric-kernels names every test file that fits, trains or plays nets, and .ci/run calls it."""
    listed = set(subprocess.run(["bash", str(ROOT / ".ci" / "numeric-kernels"), "--list"], capture_output=True,
                                text=True, check=True).stdout.split())
    numeric = re.compile(r"^\s*(import torch|from torch|from training|import training|from sb3_contrib|"
                         r".*\bfit_afterstate\b|.*\blearned:path=)", re.M)
    need = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py")
            if numeric.search(p.read_text()) and p.name not in _NOT_NUMERIC}
    assert need - listed == set(), f"add these to .ci/numeric-kernels: {sorted(need - listed)}"
    assert all((ROOT / f).is_file() for f in listed), sorted(f for f in listed if not (ROOT / f).is_file())
    assert ".ci/numeric-kernels" in (ROOT / ".ci" / "run").read_text().splitlines()


#: Test files that import training code or play nets for what they say, not for numbers (flags, files, layering,
#: the live server's protocol).
_NOT_NUMERIC = {"test_architecture.py", "test_cli_fuzz.py", "test_docs.py", "test_interrupts.py",
                "test_json_input.py", "test_types.py", "test_training_ray.py", "test_expert_plots.py",
                "test_rllib.py", "test_openspiel_nfsp.py", "test_gym_env.py", "test_pimc.py", "test_release_check.py",
                "test_readme.py", "test_lint.py", "test_live_protocol.py", "test_arena_score_interval.py"}


def test_git_ignores_the_wheel_examples_env_and_the_examples_outputs():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["env/bin/python", "runs/cleanrl/curve.json", "runs/nfsp/curve.json", "runs/rllib/policy.npz"]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.split() == paths
