""".ci/asan_leaks.py, the sanitizer run's judge: it fails on a leak through the project's compiled modules and on any
sanitizer error, and lets other libraries' leaks at exit pass (they are not ours to fix)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("asan_leaks", ROOT / ".ci" / "asan_leaks.py")
assert _spec is not None and _spec.loader is not None
asan_leaks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(asan_leaks)


def leak(*frames: str) -> str:
    lines = [f"    #{i} 0x7f0000000000 {frame}" for i, frame in enumerate(frames)]
    return "Direct leak of 80 byte(s) in 1 object(s) allocated from:\n" + "\n".join(lines) + "\n\n"


PYDANTIC = "(/w/.venv/lib/python3.11/site-packages/pydantic_core/_pydantic_core.cpython-311-x86_64-linux-gnu.so+0x1)"
OURS = [
    "(/tmp/mulle-sanitize.X/mulle_env/engine/_core.cpython-311-x86_64-linux-gnu.so+0x10)",
    "(/tmp/mulle-sanitize.X/mulle_env/_native.cpython-311-x86_64-linux-gnu.so+0x10)",
    "(/tmp/mulle-sanitize.X/agents/_native.cpython-311-x86_64-linux-gnu.so+0x10)",
    "in pool_new /tmp/mulle-sanitize.X/mulle_env/csrc/pool.c:200",
    "in rules_thread_new /tmp/mulle-sanitize.X/mulle_env/engine/csrc/rules.c:156",
]


def judge(tmp_path: Path, text: str, capsys) -> tuple[int, str]:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "report.1").write_text(text)
    rc = asan_leaks.main(str(tmp_path), str(logs))
    return rc, capsys.readouterr().out


def test_other_libraries_leaks_pass_pydantic_cores_among_them(tmp_path, capsys):
    """A run failed on pydantic_core's leaks at exit: '_core.cpython' matched '_pydantic_core.cpython'."""
    rc, out = judge(tmp_path, leak("in realloc", PYDANTIC, "(/usr/lib/libpython3.11.so.1.0+0x1)"), capsys)
    assert rc == 0 and "1 leak record(s) at exit, 0 in the project's compiled code" in out


def test_a_leak_through_any_of_our_modules_fails(tmp_path, capsys):
    for frame in OURS:
        rc, out = judge(tmp_path, leak("in malloc", frame, PYDANTIC), capsys)
        assert rc == 1 and "1 in the project's compiled code" in out, frame


def test_a_sanitizer_error_fails_even_without_a_leak(tmp_path, capsys):
    rc, out = judge(tmp_path, "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n", capsys)
    assert rc == 1 and "1 sanitizer error report(s)" in out
