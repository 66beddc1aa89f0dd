"""The property fuzz of every command (issue 31, item 8).

Hypothesis builds argv for ``mulle-play``, ``mulle-arena``, ``mulle-train``, ``mulle-expert``
and ``mulle-serve`` from each command's own argparse parser (its flags, values of the types the
flags take, their choices, and junk), runs the command in this process and checks that every
run ends with exit 0 or 2, with no traceback, within a bounded time.

Bounded time: the long work behind a command (a tournament, a training run, a server) is
replaced by a stub that stops the run as "accepted" once every check of the arguments has
passed; what is fuzzed is everything in front of it. ``mulle-play`` runs for real and quits at
its first prompt. Every run is also under a SIGALRM limit, so a command that would hang fails
the test instead. Runs happen in a temporary directory (paths in argv land there), with
``XDG_DATA_HOME`` pointed there too (``mulle-serve``'s default store).

The default suite tries a few examples per command; ``-m slow`` runs many.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.worker import time_limit

#: Seconds one run may take before the test calls it hung (generous: the machine may be loaded).
RUN_LIMIT = 60
FAST = settings(max_examples=6, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
LONG = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class Accepted(BaseException):
    """Raised by the stub that stands for a command's long work: the arguments passed every check."""


def _accepted(*args: Any, **kwargs: Any) -> Any:
    raise Accepted


# ----- argv from a parser ------------------------------------------------------------------------

# Junk without letters: random text must never spell a module or function name (--game, --worker-init
# import and call what they are given).
JUNK = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Cs")), max_size=6),
    st.sampled_from(["", " ", "-", "--", "---x", "-1", "0", "1e309", "nan", "inf", "-inf", "2.5", "9" * 30,
                     str(2**64), str(-(2**63)), "\x00", "é", "[", "{", "=", "=1", ",", ";"]),
)
#: Plausible words: agent specs, rules, paths, numbers, in every way they can be wrong.
WORDS = st.sampled_from([
    "random", "heuristic", "greedy", "pimc:samples=2", "pimc:samples=0", "pimc:nope=1", "learned:path=nope.npz",
    "netsearch:samples=1,depth=1", "self", "nobody", "random:x=1", "sets=1", "sets=0", "sets=2", "forced_capture=no",
    "colour=1", "nope", ".", "/", "/dev/null", "/dev/zero", "/nonexistent/x", "out.jsonl", "out.json", "r.npz",
    "dir/", "mulle_env", "mulle_env:Nope", "json", "agents.learned:nope", "0", "1", "2", "3", "-1", "10",
    "127.0.0.1", "localhost", "auto", "capture-v3", "none", "afterstate", "logits", "512,256", "0,1", "a,b",
])


def _value(action: argparse.Action) -> st.SearchStrategy[str]:
    options: list[st.SearchStrategy[str]] = [WORDS, WORDS, JUNK]  # more often plausible than junk
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        options.insert(0, st.sampled_from([str(c) for c in action.choices]))
    kind = getattr(action.type, "__name__", "")
    if action.type is int or "positive" in kind or "nonnegative" in kind:
        options.insert(0, st.integers(-3, 6).map(str))
    elif action.type is float or "float" in kind:
        options.insert(0, st.sampled_from(["0", "0.01", "0.5", "-1", "1e9", "nan", "inf"]))
    return st.one_of(*options)


def _values(action: argparse.Action) -> st.SearchStrategy[list[str]]:
    nargs = action.nargs
    if nargs == 0:
        return st.just([])
    if isinstance(nargs, int):
        return st.lists(_value(action), min_size=nargs, max_size=nargs)
    if nargs == "?":
        return st.lists(_value(action), max_size=1)
    if nargs in ("*", "+"):
        return st.lists(_value(action), min_size=1 if nargs == "+" else 0, max_size=4)
    return st.lists(_value(action), min_size=1, max_size=1)


@st.composite
def argv_of(draw: Callable[..., Any], parser: argparse.ArgumentParser, depth: int = 0) -> list[str]:
    """Argv for ``parser``: some of its flags with values, its positionals, a subcommand, junk anywhere."""
    out: list[str] = []
    flags = [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
    for action in draw(st.lists(st.sampled_from(flags), max_size=5)) if flags else []:
        out += [draw(st.sampled_from(action.option_strings)), *draw(_values(action))]
    for action in (a for a in parser._actions if not a.option_strings):
        if isinstance(action, argparse._SubParsersAction):
            # Mostly a real subcommand (its own flags are what there is to fuzz), now and then junk.
            name = draw(JUNK) if draw(st.integers(0, 9)) == 0 else draw(st.sampled_from(sorted(action.choices)))
            sub = action.choices.get(name)
            out += [name, *(draw(argv_of(sub, depth + 1)) if sub is not None and depth < 2 else [])]
        elif draw(st.integers(0, 9)):  # now and then a positional left out
            out += draw(_values(action))
    if draw(st.integers(0, 4)) == 0:
        out.insert(draw(st.integers(0, len(out))), draw(st.one_of(JUNK, st.just("--no-such-flag"), st.just("-h"))))
    return out


# ----- the commands --------------------------------------------------------------------------------


def _run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code: Any
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(RUN_LIMIT):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except Accepted:
        code = 0
    code = 0 if code is None else code
    text = out.getvalue() + err.getvalue()
    assert code in (0, 2), f"argv {argv!r} exited {code!r}:\n{text[-3000:]}"
    assert "Traceback (most recent call last)" not in text, f"argv {argv!r} printed a traceback:\n{text[-3000:]}"
    if code == 2:  # a refusal says what was wrong, in one message
        assert text.strip(), f"argv {argv!r} exited 2 without a word"
    return code, text


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A temporary working directory and data home; the long work behind each command stubbed out."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "dir").mkdir()
    # Work that takes minutes to hours, after every check of the arguments. Every module is imported before the
    # first stub goes in: a module imported while one is in (training.expert imports training.evaluate, which
    # binds arena.run, a lazy export cached on first use) would keep the stub for every later test.
    targets = ("arena.tournament.run", "live.cli._serve", "training.ppo.train", "training.pipeline.run_expert",
               "training.expert.run", "training.expert.data", "training.expert.fit", "training.expert.records",
               "training.cli._dmc_main", "training.cli._regret_main", "training.cli._speed_main",
               "training.exploit.run", "training.plots.plot_generations")
    import arena

    arena.run  # noqa: B018  (resolves the lazy export: the real function, cached)
    for target in targets:
        importlib.import_module(target.rpartition(".")[0])
    for target in targets:
        module, _, name = target.rpartition(".")
        monkeypatch.setattr(f"{module}.{name}", _accepted, raising=False)
    return tmp_path


def _play_main(argv: list[str]) -> int:
    import sys

    from terminal.cli import main

    return main(argv, input_fn=lambda prompt: "q", out=sys.stdout)  # the redirected stdout: _run reads it


def _arena_main(argv: list[str]) -> int:
    from arena.cli import main

    return main(argv)


def _serve_main(argv: list[str]) -> int:
    import sys

    from live.cli import main

    return main(argv, out=sys.stdout)


def _train_main(argv: list[str]) -> int:
    from training.cli import train_main

    return train_main(argv, out=lambda *a, **k: None)


def _expert_main(argv: list[str]) -> int:
    from training.cli import expert_main

    return expert_main(argv, out=lambda *a, **k: None)


def _parsers() -> dict[str, tuple[Callable[[list[str]], int], st.SearchStrategy[list[str]]]]:
    """Each command's entry point and its argv strategy, from the parser its module exposes."""
    import arena.cli
    import live.cli
    import terminal.cli
    import training.cli
    import training.ppo

    expert = training.cli.build_parser("mulle-expert")
    train = training.cli.build_parser("mulle-train")
    # mulle-train is PPO's flags alone or an expert command word; its parsers are both (whichever the module
    # exposes: a single subcommand tree that names ppo covers both).
    train_argv = argv_of(train)
    commands = next((a.choices for a in train._actions if isinstance(a, argparse._SubParsersAction)), {})
    if "ppo" not in commands:
        train_argv = st.one_of(train_argv, argv_of(training.ppo.build_parser()))
    return {
        "mulle-play": (_play_main, argv_of(terminal.cli.build_parser())),
        "mulle-arena": (_arena_main, argv_of(arena.cli.build_parser())),
        "mulle-train": (_train_main, train_argv),
        "mulle-expert": (_expert_main, argv_of(expert)),
        "mulle-serve": (_serve_main, argv_of(live.cli.build_parser())),
    }


COMMANDS = ("mulle-play", "mulle-arena", "mulle-train", "mulle-expert", "mulle-serve")


def _fuzz(command: str, how: settings) -> None:
    main, strategy = _parsers()[command]

    @how
    @given(argv=strategy)
    def check(argv: list[str]) -> None:
        _run(main, argv)

    check()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_ends_with_0_or_2_and_no_traceback(command, sandbox):
    _fuzz(command, FAST)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_ends_with_0_or_2_and_no_traceback_long(command, sandbox):
    _fuzz(command, LONG)


def test_the_harness_sees_a_traceback_and_a_bad_exit(sandbox):
    # The property can fail: a command that crashes, or exits 1, is caught.
    def crashes(argv: list[str]) -> int:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _run(crashes, [])
    with pytest.raises(AssertionError, match="exited 1"):
        _run(lambda argv: 1, [])
    with pytest.raises(AssertionError, match="printed a traceback"):
        _run(lambda argv: print("Traceback (most recent call last):") or 0, [])
    assert _run(lambda argv: _accepted(), [])[0] == 0
    assert os.getcwd() == str(sandbox)


#: What the long fuzz found (each exited 1 or raised before the fix), kept as fixed examples of the default run.
FOUND = [
    ("mulle-expert", ["finetune", "", "random"], "policy is an empty path"),
    ("mulle-train", ["finetune", "", "random"], "policy is an empty path"),
    ("mulle-train", ["average", "", "--out", "a.npz"], "policy is an empty path"),
    ("mulle-train", ["data", ""], "out is an empty path"),
    ("mulle-train", ["fit", "", "--out", "a.npz"], "a data directory is an empty path"),
    ("mulle-serve", ["--db", "\x00"], "--db '\\x00' contains a NUL byte"),
    ("mulle-arena", ["random", "heuristic", "--out", "a\x00b"], "--out 'a\\x00b' contains a NUL byte"),
    # A newcomer's walk through the guide (session 49): these wrote into the current directory, made a file
    # named ".png", or ended with exit 1 and "PosixPath('.') has an empty name".
    ("mulle-train", ["expert", "--recipe", "quick", "--out-dir", ""], "--out-dir is an empty path"),
    ("mulle-train", ["exploit", "learned", "--out-dir", ""], "--out-dir is an empty path"),
    ("mulle-train", ["dmc", "x.npz", "--out", ""], "--out is an empty path"),
    ("mulle-train", ["average", "x.npz", "--out", ""], "--out is an empty path"),
    ("mulle-train", ["plot", "x", "--out", ""], "--out is an empty path"),
    ("mulle-play", ["--replay", ""], "argument --replay: an empty path"),
    ("mulle-play", ["--save", ""], "argument --save: an empty path"),
]


@pytest.mark.parametrize(("command", "argv", "message"), FOUND)
def test_what_the_long_fuzz_found_is_refused_by_name(command, argv, message, sandbox):
    code, text = _run(_parsers()[command][0], argv)
    assert code == 2 and message in text


def test_empty_and_nul_paths_are_refused_saying_so(tmp_path):
    from mulle_env.util.files import PathError, check_input_path, check_output_path

    for check in (check_input_path, check_output_path):
        with pytest.raises(PathError, match="--x is an empty path"):
            check("", "--x")
        with pytest.raises(PathError, match="contains a NUL byte"):
            check(str(tmp_path / "a\x00b"), "--x")
        with pytest.raises(PathError, match="contains a NUL byte"):
            check(os.fsencode(tmp_path) + b"/a\x00b", "--x")
    assert check_output_path(os.fsencode(tmp_path / "new.json"), "--x") == tmp_path / "new.json"


def test_output_directories_are_checked_by_one_helper(tmp_path):
    """Both directory checks (mulle-train's run homes and ``ppo --out-dir``) are :func:`check_output_dir`."""
    from mulle_env.util.files import PathError, check_output_dir

    (tmp_path / "f").write_text("")
    assert check_output_dir(tmp_path, "--d") == tmp_path  # an existing, writable directory
    assert check_output_dir(tmp_path / "new", "--d") == tmp_path / "new"  # a new one in an existing parent
    assert check_output_dir(tmp_path / "a" / "b", "--d", parents=True) == tmp_path / "a" / "b"
    assert not (tmp_path / "new").exists() and not (tmp_path / "a").exists()  # nothing is created
    refused = [
        ("", {}, "--d is an empty path; give a directory name"),
        ("a\x00b", {}, "contains a NUL byte"),
        (tmp_path / "f", {}, "is a file, not a directory"),
        (tmp_path / "f" / "sub", {"parents": True}, f"{str(tmp_path / 'f')!r} is a file, not a directory"),
        (tmp_path / "a" / "b", {}, "does not exist (it is not created for you)"),
        ("/dev/null", {}, "is a character device, not a directory"),
        ("/proc/nope", {"parents": True}, "cannot be written"),
    ]
    for path, kw, message in refused:
        with pytest.raises(PathError, match=re.escape(message)):
            check_output_dir(path, "--d", **kw)
    # make_output_dir: that check, then mkdir -p (mulle-train expert's and exploit's run homes).
    from mulle_env.util.files import make_output_dir

    assert make_output_dir(tmp_path / "x" / "y", "--d").is_dir()
    with pytest.raises(PathError, match=re.escape(f"{str(tmp_path / 'f')!r} is a file, not a directory")):
        make_output_dir(tmp_path / "f" / "y", "--d")
