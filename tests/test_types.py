"""The typed library: ``mypy --strict`` passes on ``mulle_env``, ``agents``, ``arena`` and ``training``, the stubs
of the compiled modules match what is built, every package ships ``py.typed``, and every public function is
annotated.

Part of the default test run, like ``ruff`` (tests/test_lint.py), so CI checks types too. ``mypy`` is in the
``test`` extra; without it the mypy tests skip, saying so. The configuration (which packages, strict, the
third-party packages treated as untyped) is ``[tool.mypy]`` in pyproject.toml; docs/install.md's "Types" paragraph
says what counts as public.

Run as a script, this file prints how much of the public API is annotated::

    python tests/test_types.py [checkout]      # per package: fully annotated public functions / all of them
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose public modules mypy checks with --strict (pyproject.toml [tool.mypy] files).
TYPED = ("mulle_env", "agents", "arena", "training")
#: Every package the wheel ships; each carries a py.typed marker (PEP 561).
SHIPPED = ("mulle_env", "agents", "arena", "training", "live", "terminal")
#: The compiled modules and their stubs.
STUBS = {"mulle_env.engine._core": "mulle_env/engine/_core.pyi", "mulle_env._native": "mulle_env/_native.pyi",
         "mulle_env.casino._core": "mulle_env/casino/_core.pyi",
         "agents._native": "agents/_native.pyi"}


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True)


def test_mypy_strict_passes_on_the_typed_packages():
    pytest.importorskip("mypy", reason="mypy comes with the test extra: pip install -e '.[test]'")
    done = _mypy()  # files, strict and the overrides come from pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout


def test_the_api_type_checks_as_a_user_writes_it(tmp_path):
    """A user's typed code over the public API passes --strict, and a wrong use is caught.

    ``GameState`` is the engine's one API (``GameStateBase``) to the checker whichever backend runs; both
    steppers keep the stepper contract; the compiled modules are known through their stubs.
    """
    pytest.importorskip("mypy", reason="mypy comes with the test extra: pip install -e '.[test]'")
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import random

        import numpy as np
        from numpy.typing import NDArray

        import agents
        import mulle_env as me
        from agents.native import NativeModule
        from arena.runner import Backend, ProcessBackend
        from mulle_env import _native
        from mulle_env.engine import cstate
        from mulle_env.stepper import PyStepper, Stepper

        def first_capture(state: me.GameState) -> me.Move | None:
            return next((m for m in state.legal_moves() if m.kind == "capture"), None)

        st: me.GameState = me.new_game(seed=7, ruleset=me.Ruleset(sets=1))
        st = st.play(st.legal_moves()[0]).copy()
        copied: me.GameState = cstate.new_game(3).copy()
        scores: tuple[int, int] = st.scores()
        bot: agents.Agent = agents.make("heuristic")
        move: me.Move = bot.act(st.view(st.to_move), st.legal_moves(), random.Random(0))
        obs: NDArray[np.float32] = me.MulleEnv(opponent="random").reset(seed=0)[0]
        steppers: list[Stepper] = [PyStepper(2, me.Ruleset(), True), _native.Stepper(2, me.Ruleset(), True)]
        backend: Backend = ProcessBackend(1)

        def native(module: NativeModule) -> None: ...

        import agents._native
        native(agents._native)
    """))
    done = _mypy("--strict", "--config-file", str(ROOT / "pyproject.toml"), str(good))
    assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""
        import mulle_env as me

        st = me.new_game(seed="7")
        st.hands = [[], []]
        n: str = st.to_move
        me.no_such_name
    """))
    done = _mypy("--strict", "--config-file", str(ROOT / "pyproject.toml"), str(bad))
    assert done.returncode == 1
    for line in (4, 5, 6, 7):
        assert f"bad.py:{line}: error" in done.stdout, done.stdout


def test_stubs_match_the_compiled_modules():
    """mypy's stubtest: every name of the built modules is in its stub and nothing else is."""
    pytest.importorskip("mypy", reason="mypy comes with the test extra: pip install -e '.[test]'")
    from mulle_env.engine import backends

    if "c" not in backends():
        pytest.skip("the compiled modules are not built here (no C compiler at install time)")
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", "pyproject.toml",
                           *STUBS], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_shipped_package_has_py_typed_and_the_stubs_exist():
    missing = [p for p in SHIPPED if not (ROOT / p / "py.typed").is_file()]
    missing += [path for path in STUBS.values() if not (ROOT / path).is_file()]
    assert not missing


# ----- coverage of the public API ------------------------------------------------------------


def public_modules(root: Path, package: str) -> list[Path]:
    """The package's public modules: no part of the dotted path starts with ``_`` (``__init__`` aside)."""
    out = []
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if "csrc" in parts or any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        out.append(path)
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def public_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Public functions and methods (of public classes), with ``__init__``; declarations only a type checker
    sees (``if TYPE_CHECKING:``) are not counted: they are annotations already."""
    found = []

    def walk(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not node.name.startswith("_") or (in_class and node.name == "__init__"):
                    found.append((prefix + node.name, node))
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                walk(node.body, f"{prefix}{node.name}.", True)
            elif isinstance(node, ast.If) and not _type_checking_only(node):
                walk(node.body, prefix, in_class)
                walk(node.orelse, prefix, in_class)
            elif isinstance(node, ast.Try):
                walk(node.body, prefix, in_class)

    walk(tree.body, "", False)
    return found


def fully_annotated(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> bool:
    """Every parameter (but a method's ``self``/``cls``) and the return annotated (``__init__`` may omit it)."""
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    if method and not static and params:
        params = params[1:]
    params += [p for p in (a.vararg, a.kwarg) if p is not None]
    if any(p.annotation is None for p in params):
        return False
    return fn.returns is not None or fn.name == "__init__"


def coverage(root: Path = ROOT, packages: tuple[str, ...] = TYPED) -> dict[str, tuple[int, int, list[str]]]:
    """Per package: (fully annotated public functions, all public functions, the names of those that are not)."""
    out = {}
    for package in packages:
        done = total = 0
        missing: list[str] = []
        for path in public_modules(root, package):
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            for name, fn in public_functions(ast.parse(path.read_text(), str(path))):
                total += 1
                if fully_annotated(fn, "." in name):
                    done += 1
                else:
                    missing.append(f"{module}.{name}")
        out[package] = (done, total, missing)
    return out


def test_every_public_function_of_the_typed_packages_is_annotated():
    """Holds without mypy too (mypy --strict asks the same of every function, private ones included)."""
    missing = [name for _, _, names in coverage().values() for name in names]
    assert not missing


def test_the_coverage_count_sees_a_missing_annotation(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("def f(x: int) -> int:\n    return x\n")
    (pkg / "mod.py").write_text(textwrap.dedent("""
        from typing import TYPE_CHECKING
        class A:
            def __init__(self, x: int): ...
            def m(self, y) -> None: ...
            @staticmethod
            def s(z: int) -> int: ...
            def _private(self, w): ...
        def g(*args: int, **kw) -> None: ...
        if TYPE_CHECKING:
            def declared(a): ...
    """))
    (pkg / "_private.py").write_text("def h(x): ...\n")
    done, total, missing = coverage(tmp_path, ("pkg",))["pkg"]
    assert (done, total) == (3, 5)
    assert missing == ["pkg.mod.A.m", "pkg.mod.g"]


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    for package, (done, total, names) in coverage(root).items():
        print(f"{package:10} {done:4} of {total:4} public functions fully annotated ({100 * done / total:.1f} %)")
    all_done = sum(v[0] for v in coverage(root).values())
    all_total = sum(v[1] for v in coverage(root).values())
    print(f"{'all':10} {all_done:4} of {all_total:4} ({100 * all_done / all_total:.1f} %)")
