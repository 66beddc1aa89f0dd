"""Every code block in docs/ runs (Python) or parses (shell commands of the project's CLIs).

Python blocks of one page run in order in one namespace, from a scratch directory, as a
reader would paste them. Shell blocks are checked line by line: every ``mulle-arena``,
``mulle-train``, ``mulle-play``, ``mulle-expert`` and ``mulle-serve`` command must parse with that
command's own parser (flags and types), and every agent spec it names must build; playing the tournaments and
training runs they describe is left to the slow suites and the benchmarks.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)


def blocks(page: Path, kinds: tuple[str, ...]) -> list[str]:
    return [body for kind, body in FENCE.findall(page.read_text()) if kind in kinds]


def commands(page: Path) -> list[list[str]]:
    out = []
    for body in blocks(page, ("sh", "bash", "")):
        text = body.replace("\\\n", " ")
        for line in text.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words and Path(words[0]).name in ("mulle-arena", "mulle-train", "mulle-play", "mulle-expert",
                                                     "mulle-serve"):
                    out.append(words)
    return out


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "README.md" and blocks(p, ("python",))],
                         ids=lambda p: p.name)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    code = blocks(page, ("python",))
    if any("sb3_contrib" in c for c in code):
        pytest.importorskip("sb3_contrib")
    if any("pettingzoo" in c for c in code):
        pytest.importorskip("pettingzoo")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for i, block in enumerate(code):
        exec(compile(block, f"{page.name} python block {i + 1}", "exec"), namespace)


def _parser(tool: str):
    if tool == "mulle-arena":
        from arena.cli import build_parser
    elif tool in ("mulle-train", "mulle-expert"):  # one command tree under both names
        from training.cli import build_parser
    elif tool == "mulle-serve":
        from live.cli import build_parser
    else:
        from terminal.cli import build_parser
    return build_parser()


@pytest.mark.parametrize("page", [p for p in PAGES if commands(p)], ids=lambda p: p.name)
def test_shell_commands_parse(page):
    import agents

    for words in commands(page):
        tool = Path(words[0]).name
        if words[1:] == ["--help"]:
            continue
        argv = words[1:]
        if tool == "mulle-train" and (not argv or argv[0].startswith("-")):
            argv = ["ppo", *argv]  # mulle-train with flags alone runs ppo (training.cli.train_main)
        try:
            args = _parser(tool).parse_args(argv)
        except SystemExit as exc:
            raise AssertionError(f"{page.name}: {' '.join(words)} does not parse") from exc
        specs = getattr(args, "specs", []) if tool == "mulle-arena" else []
        if tool == "mulle-serve":
            specs = [args.opponent]
        for spec in specs:
            if not spec.startswith("learned:path="):  # a file the page's own commands create
                agents.make(spec)


def test_every_page_with_code_is_covered():
    covered = {p.name for p in PAGES if blocks(p, ("python",)) or commands(p)}
    # A ```text block is a picture (a diagram, sample output), not code a reader runs.
    with_code = {p.name for p in PAGES if any(kind != "text" for kind, _ in FENCE.findall(p.read_text()))}
    assert with_code <= covered | {"README.md"}
