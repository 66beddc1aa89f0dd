"""The README's promises: its test command is CI's, its main command names real agents,
and its Python snippets run as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def test_ci_runs_exactly_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    lines = [line for line in ci_lines if line and not line.startswith(("#", "set ", "cd "))]
    # Besides the test command, CI may only export CI and the crash report's switch and run its own setup
    # scripts (e.g. .ci/setup-browser).
    ci_command = [line for line in lines if not line.startswith(("export CI=", "export PYTHONFAULTHANDLER=", ".ci/"))]
    assert all((ROOT / line.split()[0]).is_file() for line in lines if line.startswith(".ci/"))
    assert len(ci_command) == 1
    assert ci_command[0] in shell_blocks()[1].splitlines()


def test_main_command_names_registered_agents_and_valid_flags():
    import agents
    from arena.cli import build_parser

    line = shell_blocks()[0].strip().split("&&")[-1]
    words = shlex.split(line)
    assert words[0] == "mulle-arena"
    args = build_parser().parse_args(words[1:])
    for spec in args.specs:
        agents.make(spec)


def test_python_snippets_run(tmp_path, monkeypatch):
    pytest.importorskip("pettingzoo")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", README, flags=re.S):
        exec(compile(block, "README.md", "exec"), namespace)
