"""The house rules of docs/architecture.md, read off every module's imports (ast, no import run).

* The engine (``mulle_env/engine``) imports the standard library and itself, nothing else.
* The environments (``mulle_env``) know the engine; never agents, the arena, training or a front end.
* Agents know the engine's public view and the environments' encoders; never the arena, training,
  a front end, or a training framework (torch, stable-baselines3).
* The arena knows agents only through the ``agents`` package's registry (``agents.make`` and
  friends, never an agent module) and a game only through its protocol; of ``mulle_env`` it
  uses only the game loop, its errors, the seed domain, the file checks and the worker threads setting
  (``mulle_env.util``, or its old homes ``mulle_env.files`` and ``mulle_env.threads``).
* The front ends (``live``, ``terminal``) never import training.
* Nothing imports ``training`` but training itself (and tests, benchmarks and scripts).
* No import cycle between the top-level packages.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mulle_env", "agents", "arena", "training", "live", "terminal")
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports (relative imports resolved), at any depth of the file."""
    tree = ast.parse(path.read_text(), str(path))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package.replace(".", "/")).rglob("*.py") if "csrc" not in p.parts)


def top(name: str) -> str:
    return name.split(".")[0]


def offenders(package: str, allowed) -> list[str]:
    return [f"{module_name(p)} imports {name}" for p in files(package) for name in sorted(imports(p))
            if not allowed(name)]


def test_the_engine_imports_only_the_standard_library_and_itself():
    def ok(name: str) -> bool:
        return top(name) in STDLIB or name.startswith("mulle_env.engine")

    assert not offenders("mulle_env/engine", ok)


def test_the_casino_engine_imports_the_standard_library_the_shared_engine_pieces_and_itself():
    # Casino's engine (issue 50) is an engine like Mulle's: standard library only, plus the conventions the two games
    # share (card notation, errors, seeds, the bounded JSON reader) from mulle_env.engine. Its package's only way
    # up is the lazy PettingZoo face env()/raw_env() in __init__.py, imported when called.
    shared = ("mulle_env.engine.cards", "mulle_env.engine.errors", "mulle_env.engine.rng", "mulle_env.engine.jsontext",
              "mulle_env.engine.ruleset", "mulle_env.engine.canonical", "mulle_env.engine.backend")

    def ok(name: str) -> bool:
        return top(name) in STDLIB or name.startswith("mulle_env.casino") or name.startswith(shared)

    found = [f for f in offenders("mulle_env/casino", ok) if f != "mulle_env.casino imports mulle_env.pettingzoo"
             and f != "mulle_env.casino imports mulle_env"]
    assert not found, found


def test_the_environments_know_the_engine_and_nothing_above_it():
    def ok(name: str) -> bool:
        return top(name) not in PACKAGES[1:]

    assert not offenders("mulle_env", ok)


def test_agents_never_import_the_arena_training_a_front_end_or_a_training_framework():
    banned = {"arena", "training", "live", "terminal", "torch", "stable_baselines3", "sb3_contrib"}
    assert not offenders("agents", lambda name: top(name) not in banned)


def test_the_arena_knows_agents_by_spec_and_mulle_env_only_by_its_loop_errors_files_and_threads():
    mulle_ok = ("mulle_env.engine.loop", "mulle_env.engine.errors", "mulle_env.engine.rng", "mulle_env.util.files",
                "mulle_env.util.threads", "mulle_env.util", "mulle_env.files", "mulle_env.threads")

    def ok(name: str) -> bool:
        if top(name) == "agents":
            return name == "agents" or name in {f"agents.{n}" for n in ("make", "canonical", "available",
                                                                          "parse_spec", "AgentSpecError", "Agent")}
        if top(name) == "mulle_env":
            return name == "mulle_env" or name.startswith(mulle_ok)
        return top(name) not in {"training", "live", "terminal"}

    assert not offenders("arena", ok)


@pytest.mark.parametrize("package", ["live", "terminal"])
def test_front_ends_never_import_training(package):
    assert not offenders(package, lambda name: top(name) != "training")


def test_nothing_imports_training():
    found = [line for package in PACKAGES if package != "training"
             for line in offenders(package, lambda name: top(name) != "training")]
    assert not found


def test_no_import_cycle_between_the_top_level_packages():
    edges = {package: {top(n) for p in files(package) for n in imports(p) if top(n) in PACKAGES} - {package}
             for package in PACKAGES}

    def reaches(a: str, b: str, seen: frozenset = frozenset()) -> bool:
        return b in edges[a] or any(reaches(c, b, seen | {a}) for c in edges[a] if c not in seen)

    cycles = [f"{a} <-> {b}" for a in PACKAGES for b in edges[a] if reaches(b, a)]
    assert not cycles, edges


def test_the_two_small_import_circles_stay_broken():
    # arena.game <-> arena.worker (make_ruleset belongs with the game protocol) and the agents registry <->
    # agents.learned (which reached into the registry's private table): issue 31.
    assert not {n for n in imports(ROOT / "arena/game.py") if n.startswith("arena.worker")}
    learned = [f"{module_name(p)} imports {n}" for p in files("agents/learned") for n in sorted(imports(p))
               if n.startswith(("agents.registry", "agents.builtin")) or n in ("agents", "agents.register")]
    assert not learned


def test_knowledge_written_once_has_one_home():
    import agents.greedy
    import mulle_env.extras
    from mulle_env.engine import knowledge
    from mulle_env.engine.loop import ruleset_refusal

    assert agents.greedy.hold_probability is knowledge.hold_probability
    assert mulle_env.extras._MISS[40, 2, 8] == pytest.approx(knowledge.miss_probability(2, 8, 40), rel=1e-6)
    assert knowledge.hold_probability(1, 1, 4) == pytest.approx(0.25)

    class Picky:
        def check_ruleset(self, ruleset):
            if ruleset != "default":
                raise ValueError(f"trained under the default rules, not {ruleset!r}")

    assert ruleset_refusal(Picky(), "default") is None and ruleset_refusal(object(), "x") is None
    assert ruleset_refusal(Picky(), "x") == "trained under the default rules, not 'x'"
    # Nobody asks an agent's check_ruleset by hand any more.
    asking = [str(p.relative_to(ROOT)) for pkg in PACKAGES for p in files(pkg)
              if 'getattr(agent, "check_ruleset"' in p.read_text() or "\"check_ruleset\", None)" in p.read_text()]
    assert asking == ["mulle_env/engine/loop.py"], asking


def test_the_utilities_old_homes_are_the_same_modules():
    # mulle_env.files and mulle_env.threads moved to mulle_env.util (issue 50); the arena, training, the front
    # ends and users import the old paths, which must stay the very same modules (a patch of one is a patch of
    # the other; the BLAS flag stays one).
    import mulle_env.files
    import mulle_env.threads
    import mulle_env.util.files
    import mulle_env.util.threads
    from mulle_env.files import PathError, check_output_path

    assert mulle_env.files is mulle_env.util.files and mulle_env.threads is mulle_env.util.threads
    assert PathError is mulle_env.util.files.PathError and check_output_path is mulle_env.util.files.check_output_path
    assert set(mulle_env.util.files.__all__) <= set(dir(mulle_env.files))


def test_the_env_core_and_its_faces_know_a_game_only_through_its_object():
    # Issue 50: everything game-specific reaches the env core, its opponent modes and its three faces through
    # the game object (mulle_env.games.EnvGame); Mulle's own modules are read by Mulle's object alone
    # (mulle_env/games/mulle.py). The faces may name the engine's shared pieces (errors, seeds, types).
    mulle_only = ("mulle_env.codec", "mulle_env.observation", "mulle_env.extras", "mulle_env.engine.moves",
                  "mulle_env.engine.rules", "mulle_env.engine.ruleset", "mulle_env.engine.render",
                  "mulle_env.engine.observation_layout", "mulle_env.engine.state", "mulle_env.engine.cstate",
                  "mulle_env.engine.GameState", "mulle_env.engine.Ruleset", "mulle_env.engine.MOVES",
                  "mulle_env.engine.Move", "mulle_env.engine.new_game", "mulle_env.games.mulle", "mulle_env.casino")
    # envcore's one exception: its old name EXTRAS_BOUND, looked up in Mulle's object only when asked for.
    allowed = {"mulle_env.games.mulle", "mulle_env.games.mulle.EXTRAS_BOUND"}
    found = [f"{name} imports {n}" for name in ("envcore", "opponents", "gym_env", "vector_env", "pettingzoo")
             for n in sorted(imports(ROOT / f"mulle_env/{name}.py"))
             if any(n == m or n.startswith(m + ".") for m in mulle_only) and not (name == "envcore" and n in allowed)]
    assert not found, found
