"""scripts/release-check: what it refuses (a dirty tree, an undated or missing changelog heading, notes left
under Unreleased, a version with a suffix), and that this checkout's version has its dated heading.

The build-and-play half is .ci/wheel-smoke, which .ci/run runs on every CI run; here only the checks that
decide whether a checkout is a release, on throwaway git repositories.
"""

from __future__ import annotations

import subprocess
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    loader = SourceFileLoader("release_check", str(ROOT / "scripts" / "release-check"))
    spec = spec_from_loader("release_check", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


rc = _load()

CHANGELOG = """# Changelog

## [Unreleased]

## [{version}] - {date}

### Added

- Something.
"""


def _repo(tmp_path: Path, version: str = "1.2.3", date: str = "2026-12-05", changelog: str | None = None) -> Path:
    (tmp_path / "mulle_env").mkdir()
    (tmp_path / "mulle_env" / "__init__.py").write_text(f'__version__ = "{version}"  # the one place\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog or CHANGELOG.format(version=version, date=date))
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "release"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def test_a_clean_release_checkout_passes_the_checks(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    rc.check_clean(root)
    assert rc.read_version(root) == "1.2.3"
    assert str(rc.check_changelog("1.2.3", root)) == "2026-12-05"


@pytest.mark.parametrize("dirt", ["untracked", "modified", "staged"])
def test_a_dirty_tree_is_refused_naming_the_paths(tmp_path: Path, dirt: str) -> None:
    root = _repo(tmp_path)
    if dirt == "untracked":
        (root / "notes.txt").write_text("x")
    else:
        (root / "CHANGELOG.md").write_text("changed")
        if dirt == "staged":
            subprocess.run(["git", "add", "CHANGELOG.md"], cwd=root, check=True)
    with pytest.raises(rc.Refused, match=r"(?s)not clean \(1 path.*(notes.txt|CHANGELOG.md).*commit or stash"):
        rc.check_clean(root)


def test_ignored_build_outputs_do_not_make_a_tree_dirty(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("dist/\n")
    subprocess.run(["git", "add", ".gitignore"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore"], cwd=root,
                   check=True)
    (root / "dist").mkdir()
    (root / "dist" / "x.whl").write_text("x")
    rc.check_clean(root)


@pytest.mark.parametrize(("changelog", "match"), [
    ("## [1.2.3] - unreleased\n", "dated 'unreleased', not YYYY-MM-DD"),
    ("## [1.2.3] - 2026-13-40\n", "not YYYY-MM-DD"),
    ("## [1.2.2] - 2026-12-01\n", r"no heading '## \[1.2.3\] - YYYY-MM-DD'"),
    ("## [Unreleased]\n\n- a note\n\n## [1.2.3] - 2026-12-05\n", r"notes under \[Unreleased\]"),
])
def test_the_changelog_must_date_the_release_and_hold_nothing_unreleased(tmp_path: Path, changelog: str,
                                                                         match: str) -> None:
    root = _repo(tmp_path, changelog=changelog)
    with pytest.raises(rc.Refused, match=match):
        rc.check_changelog("1.2.3", root)


def test_a_version_with_a_suffix_is_not_a_release(tmp_path: Path) -> None:
    root = _repo(tmp_path, version="1.2.3.dev0")
    with pytest.raises(rc.Refused, match="not X.Y.Z"):
        rc.read_version(root)


def test_the_command_refuses_with_exit_1_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    (root / "stray.py").write_text("")
    monkeypatch.setattr(rc, "ROOT", root)
    monkeypatch.setattr(rc.check_clean, "__defaults__", (root,))
    assert rc.main(["--no-build"]) == 1
    assert "refused: the tree is not clean" in capsys.readouterr().err


def test_this_checkouts_version_has_its_dated_changelog_heading() -> None:
    version = rc.read_version(ROOT)
    rc.check_changelog(version, ROOT)
