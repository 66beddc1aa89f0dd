"""``load_policy`` on files that are not policy files: a clear "not a policy file", never an unsafe load.

The path goes through ``mulle_env.util.files`` first (a regular file, bounded in size), so a
FIFO or ``/dev/zero`` is refused at once instead of hanging or filling memory.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from agents.learned import PolicyFileError, load_policy
from agents.learned import policy as policy_mod
from arena import cli
from arena.worker import time_limit

UNSAFE = ("allow_pickle", "pickle.load", "trust the file")


def _refused(path, *needles):
    with time_limit(30), pytest.raises(PolicyFileError) as exc:  # a FIFO or /dev/zero must not hang
        load_policy(path)
    text = str(exc.value)
    assert all(n in text for n in needles), text
    assert not any(u in text for u in UNSAFE), text
    return text


def test_a_text_file_is_not_a_policy_file_and_the_message_says_what_one_is():
    text = _refused("/etc/passwd", "policy file '/etc/passwd' is not a policy file",
                    "does not begin like a zip archive", "A policy file is a .npz archive")
    assert "mulle-learned-policy" in text


def test_an_npz_holding_python_objects_is_refused_without_suggesting_pickle(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, format=np.array(["mulle-learned-policy", {"x": 1}], dtype=object))
    _refused(path, "is not a policy file", "holds Python objects (pickled data)")


def test_an_npy_array_file_is_not_a_policy_file(tmp_path):
    path = tmp_path / "weights.npy"
    np.save(path, np.zeros(3))
    _refused(path, "is not a policy file", "does not begin like a zip archive")


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_a_path_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    path = {"fifo": tmp_path / "p.npz", "/dev/zero": "/dev/zero", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    what = {"fifo": "is a FIFO (named pipe), not a regular file", "/dev/zero": "is a character device",
            "directory": "is a directory"}[kind]
    _refused(path, f"policy file {str(path)!r} {what}", "pass learned:path=<file.npz>")


def test_a_policy_file_too_large_to_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(policy_mod, "MAX_POLICY_BYTES", 1000)
    path = tmp_path / "big.npz"
    np.savez(path, w=np.zeros(1000))
    _refused(path, "files of at most 1,000 bytes are read")


def test_a_zip_that_would_unpack_beyond_the_bound_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, w=np.zeros(100_000))  # 800 kB of zeros in a small file
    monkeypatch.setattr(policy_mod, "MAX_POLICY_BYTES", os.path.getsize(path) + 1000)
    _refused(path, "would unpack to", "is not a policy file")


def test_mulle_arena_says_not_a_policy_file(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.parse_args(["learned:path=/etc/passwd", "random", "--games", "2"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "is not a policy file" in err and "A policy file is" in err
    assert not any(u in err for u in UNSAFE) and "Traceback" not in err


def test_a_header_declaring_a_huge_array_is_refused_before_any_allocation(tmp_path):
    # Issue 53, item 10: numpy allocates by the header's shape before it reads the data, so a crafted .npz
    # ended load_policy in a raw MemoryError.
    import io
    import zipfile

    import numpy as np

    from agents.learned.policy import PolicyFileError, load_policy

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)})
    buf.write(b"\0" * 64)
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("format.npy", buf.getvalue())
    with pytest.raises(PolicyFileError, match=r"declares a \(1000000, 1000000\) float32 array"):
        load_policy(path)
