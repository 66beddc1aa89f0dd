"""Every code block of the guide (docs/, the records in benchmarks/records/) and of the README runs or parses.

Python blocks are executed. A guide page's blocks run in order in one namespace, as a reader working down the
page would paste them; each README block runs alone, in a namespace of its own (a reader copies one block from
the front page). They run from a scratch directory, as a script would (``__name__ == "__main__"``). A block that
cannot run in the suite (it needs an hour of training, say) is marked on the line just above its fence,
``<!-- not run: REASON -->``; the marker must give its reason and stay rare.

Shell blocks are checked command by command: every ``mulle-arena``, ``mulle-train``, ``mulle-play``,
``mulle-expert`` and ``mulle-serve`` command must parse with that command's own parser (flags and types), every
agent spec it names must build, and no two different documented commands may write the same file (one example's
results must not land in another's). Playing the tournaments and training runs they describe is left to the slow
suites and the benchmarks.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# docs/records is a link to benchmarks/records (the records live beside benchmarks/results/ and appear in the
# site): its pages are read once, from where they live.
GUIDE = sorted(p for p in (ROOT / "docs").rglob("*.md") if "records" not in p.relative_to(ROOT / "docs").parts)
RECORDS = sorted((ROOT / "benchmarks" / "records").glob("*.md"))
PAGES = GUIDE + RECORDS + [README]
FENCE = re.compile(r"^```([a-z]*)[^\n]*\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
NOT_RUN = re.compile(r"<!-- not run: (.*?) -->\n$")
TOOLS = ("mulle-arena", "mulle-train", "mulle-play", "mulle-expert", "mulle-serve")
# Arguments of the commands that name a file or directory the command writes.
OUTPUTS = ("out", "out_dir", "export", "json")


def fenced(page: Path) -> list[tuple[str, str, str | None]]:
    """(kind, body, reason it is not run or None) for every fenced block of ``page``."""
    text = page.read_text()
    out = []
    for match in FENCE.finditer(text):
        marker = NOT_RUN.search(text, 0, match.start())
        reason = marker.group(1).strip() if marker and marker.end() == match.start() else None
        out.append((match.group(1), match.group(2), reason))
    return out


def blocks(page: Path, kinds: tuple[str, ...]) -> list[str]:
    return [body for kind, body, _ in fenced(page) if kind in kinds]


def python_blocks(page: Path) -> list[str]:
    """The Python blocks of ``page`` that run (those not marked as not run)."""
    return [body for kind, body, reason in fenced(page) if kind == "python" and reason is None]


def shell_lines(page: Path) -> list[list[str]]:
    """Every command of the page's shell blocks, as words (continuation lines joined, ``&&`` chains split)."""
    out = []
    for body in blocks(page, ("sh", "bash", "")):
        text = body.replace("\\\n", " ")
        for line in text.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words:
                    out.append(words)
    return out


def commands(page: Path) -> list[list[str]]:
    """The project's own commands among them."""
    return [words for words in shell_lines(page) if Path(words[0]).name in TOOLS]


def _run(code: list[str], name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if any("sb3_contrib" in c for c in code):
        pytest.importorskip("sb3_contrib")
    if any("pettingzoo" in c for c in code):
        pytest.importorskip("pettingzoo")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    for i, block in enumerate(code):
        exec(compile(block, f"{name} python block {i + 1}", "exec"), namespace)


@pytest.mark.parametrize("page", [p for p in GUIDE + RECORDS if python_blocks(p)], ids=lambda p: p.name)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    _run(python_blocks(page), page.name, tmp_path, monkeypatch)


@pytest.mark.parametrize("index", range(len(python_blocks(README))), ids=lambda i: f"block{i + 1}")
def test_each_readme_python_block_runs_alone(index, tmp_path, monkeypatch):
    _run([python_blocks(README)[index]], "README.md", tmp_path, monkeypatch)


def test_blocks_not_run_say_why_and_are_rare():
    marked = [(page.name, reason) for page in PAGES for kind, _, reason in fenced(page) if reason is not None]
    python = [1 for page in PAGES for kind, _, _ in fenced(page) if kind == "python"]
    for name, reason in marked:
        assert len(reason.split()) >= 3, f"{name}: a block marked not run must say why, not {reason!r}"
    assert len(marked) <= max(2, len(python) // 10), f"{len(marked)} of {len(python)} Python blocks are not run"
    # A marker stands right above the fence it excuses; one anywhere else excuses nothing and misleads.
    for page in PAGES:
        text = page.read_text()
        for marker in re.finditer(r"<!-- not run:.*?-->\n", text):
            assert text.startswith("```python", marker.end()), f"{page.name}: a not-run marker not above a ```python"


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


def _parse(page: Path, words: list[str]):
    tool = Path(words[0]).name
    argv = words[1:]
    if tool == "mulle-train" and (not argv or argv[0].startswith("-")):
        argv = ["ppo", *argv]  # mulle-train with flags alone runs ppo (training.cli.train_main)
    try:
        return _parser(tool).parse_args(argv)
    except SystemExit as exc:
        raise AssertionError(f"{page.name}: {' '.join(words)} does not parse") from exc


@pytest.mark.parametrize("page", [p for p in PAGES if commands(p)], ids=lambda p: p.name)
def test_shell_commands_parse(page):
    import agents

    for words in commands(page):
        tool = Path(words[0]).name
        if words[1:] == ["--help"]:
            continue
        args = _parse(page, words)
        specs = getattr(args, "specs", []) if tool == "mulle-arena" else []
        if tool == "mulle-serve":
            specs = [args.opponent]
        game = getattr(args, "game", None) if tool == "mulle-arena" else None
        for spec in specs:
            if not spec.startswith("learned:path="):  # a file the page's own commands create
                agents.make(spec, game=game) if game and game != "mulle" else agents.make(spec)


def test_the_tutorials_first_tournament_runs_as_written(tmp_path, monkeypatch):
    """Getting started's first command is the reader's first contact: it is played, not only parsed."""
    from arena.cli import main

    page = ROOT / "docs" / "getting-started.md"
    words = next(w for w in commands(page) if w[0] == "mulle-arena")
    monkeypatch.chdir(tmp_path)
    assert main(words[1:]) == 0
    out = tmp_path / written(page, words)[0]
    args = _parse(page, words)
    pairings = len(args.specs) * (len(args.specs) - 1) // 2
    assert len(out.read_text().splitlines()) == args.games * pairings
    assert list(tmp_path.glob("*.md")), "the Markdown report beside the results file"


def test_documented_installs_name_real_extras():
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for page in PAGES:
        for words in shell_lines(page):
            if "pip" in words and "install" in words:
                for word in words:
                    if (named := re.fullmatch(r"\.\[([\w,-]+)\]", word)):
                        unknown = set(named.group(1).split(",")) - extras
                        assert not unknown, f"{page.name}: {shlex.join(words)} names no such extra {unknown}"


def test_documented_scripts_exist_and_take_their_flags():
    """``python examples/x.py --flag`` and ``python benchmarks/y.py --flag``: the script is there and defines the
    flag (read from its source: running every script's parser would import torch, Ray and OpenSpiel)."""
    for page in PAGES:
        for words in shell_lines(page):
            if words[0] in ("python", "python3") and len(words) > 1 and words[1].endswith(".py"):
                script = ROOT / words[1]
                assert script.is_file(), f"{page.name}: {words[1]} does not exist"
                source = script.read_text()
                flags = [w.split("=")[0] for w in words[2:] if w.startswith("--")]
                missing = [f for f in flags if f'"{f}"' not in source]
                assert not missing, f"{page.name}: {shlex.join(words)}: {words[1]} defines no {missing}"


def written(page: Path, words: list[str]) -> list[str]:
    """The files and directories the documented command ``words`` writes (its defaults included)."""
    if words[1:] == ["--help"] or "--help" in words:
        return []
    args = _parse(page, words)
    if Path(words[0]).name == "mulle-arena" and (args.agents or args.verify):
        return []  # listing agents or checking a results file writes nothing
    return [str(Path(value)) for key in OUTPUTS if isinstance(value := getattr(args, key, None), str) and value]


def test_no_two_documented_commands_write_the_same_file():
    """Each example keeps its own results: a second example writing the first one's file would resume it, or
    overwrite its report, instead of measuring what its text says. The same command shown on two pages is one
    example. The records are a log of runs (a resumed run repeats its command with more games), so they are
    left out."""
    writers: dict[str, set[str]] = {}
    for page in GUIDE + [README]:
        for words in commands(page):
            for path in written(page, words):
                writers.setdefault(path, set()).add(f"{page.name}: {shlex.join(words)}")
    shared = {path: sorted(cmds) for path, cmds in writers.items()
              if len({c.split(': ', 1)[1] for c in cmds}) > 1}
    assert not shared, "documented commands that write the same file:\n" + "\n".join(
        f"{path}:\n    " + "\n    ".join(cmds) for path, cmds in shared.items())


def test_documented_results_files_land_in_directories_that_exist():
    """The arena does not make its results file's directory (a typo would scatter results): each documented
    ``mulle-arena --out DIR/FILE`` needs DIR made by a command before it on the page (an ``--out-dir``, a script's
    ``--out``, ``mkdir``) or DIR to be the current directory."""
    for page in GUIDE + [README]:
        made: set[Path] = set()
        for words in shell_lines(page):
            tool = Path(words[0]).name
            if tool == "mulle-arena" and "--help" not in words:
                args = _parse(page, words)
                parent = Path(args.out).parent
                if not (args.agents or args.verify) and parent != Path("."):
                    assert any(parent == d or parent in d.parents for d in made), (
                        f"{page.name}: {shlex.join(words)} writes into {parent}/, which no command before it makes")
            if tool in TOOLS and "--help" not in words:
                made.update(Path(w) for w in written(page, words))
            if words[0] == "mkdir":
                made.update(Path(w) for w in words[1:] if not w.startswith("-"))
            if words[0] in ("python", "python3"):  # a script's --out / --out-dir: a directory it makes
                made.update(Path(words[i + 1]) for i, w in enumerate(words[:-1]) if w in ("--out", "--out-dir"))


def test_every_block_is_of_a_kind_the_tests_know():
    """A block the tests do not recognise (```py, ```console) would silently escape them."""
    known = {"python", "sh", "bash", "", "text", "json", "pycon"}  # "" is read as shell; text and json are pictures
    odd = [(page.name, kind) for page in PAGES for kind, _, _ in fenced(page) if kind not in known]
    assert not odd, f"fenced blocks of a kind the docs tests do not check: {odd}"
    assert python_blocks(README) and any(python_blocks(p) for p in GUIDE) and commands(README)
