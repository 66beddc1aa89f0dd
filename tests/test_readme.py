"""The README's promises: its test command is CI's, its main command names real agents, it stays a front page,
and its links lead somewhere. (Its code blocks run in tests/test_docs.py, each block alone.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

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


def test_readme_is_a_front_page():
    """What it is, the two commands, a short tour, links: the rest belongs in the guide (docs/)."""
    assert len(README.splitlines()) <= 150, f"README.md has {len(README.splitlines())} lines; move detail to docs/"


def test_readme_links_lead_to_files():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to the guide"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
