"""Paths the project's commands read and write, checked before any work starts.

Every command (``mulle-arena``, ``mulle-play``, ``mulle-serve``, ``mulle-train``,
``mulle-expert``) and every loader of a user's file (policy files, game records, results
files) goes through these checks, so that a path that is not a regular file (a
directory, a device such as ``/dev/full`` or ``/dev/zero``, a FIFO, a socket) is refused
up front with a message that says what was given and what is wanted, instead of hanging
on a FIFO, filling memory from ``/dev/zero``, or losing a finished run at its last write.
Reads are bounded in size, and JSON from outside is read by one bounded reader
(:func:`parse_json`, from :mod:`mulle_env.engine.jsontext`, and :func:`read_json`): a size
and a nesting-depth limit, and an error that names the file and line.

Standard library only: the engine, the arena and the front ends all use it.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> check_output_path(os.path.join(d, "out.jsonl"), "--out").name
'out.jsonl'
>>> check_output_path(d, "--out")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
mulle_env.util.files.PathError: --out ... is a directory; give a file name
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..engine.jsontext import MAX_JSON_DEPTH, JSONInputError, parse_json

__all__ = ["DEFAULT_READ_LIMIT", "MAX_JSON_DEPTH", "JSONInputError", "PathError", "as_path", "check_input_path",
           "check_output_dir", "check_output_path", "make_output_dir", "parse_json", "read_bytes", "read_json",
           "read_text", "replacing"]

#: The largest file :func:`read_text` reads unless told otherwise (game records, JSON positions, configs).
DEFAULT_READ_LIMIT = 64 * 1024 * 1024


class PathError(ValueError):
    """A path a command cannot use: missing, not a regular file, not writable, or too large to read."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def as_path(path: str | bytes | os.PathLike[str], what: str, wanted: str = "a file name") -> Path:
    """``path`` as a :class:`Path`; a :class:`PathError` for what no system call takes, naming ``what``.

    An empty string would become ``Path(".")`` (the current directory, which the user never named), and a
    NUL byte makes ``os.stat`` and ``realpath`` raise a bare ``ValueError``: both are refused here, saying
    so (``wanted`` is what to give instead). Every path check below starts with it.
    """
    raw = os.fsdecode(os.fspath(path))  # a bytes path as the str the system calls see
    if raw == "":
        raise PathError(f"{what} is an empty path; give {wanted}")
    if "\0" in raw:
        raise PathError(f"{what} {raw!r} contains a NUL byte, which no file name can hold")
    return Path(raw)


def check_output_path(path: str | os.PathLike[str], what: str = "the output file", *, probe: bool = True) -> Path:
    """``path`` as a :class:`Path` if a command may write a file there; a :class:`PathError` saying why not.

    Allowed: an existing regular file (it will be appended to or replaced) or a new name
    in an existing directory. Refused: a directory, a device, a FIFO, a socket, a missing
    directory (nothing is created), an unwritable place. With ``probe`` the write is
    tried for real (a temporary file created and removed beside it), because
    ``os.access`` says yes to root where creating fails. ``what`` names the path in the
    message (``"--out"``, ``"the database"``).
    """
    p = as_path(path, what)
    shown = f"{what} {str(p)!r}"
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise PathError(f"{shown} cannot be used: {exc.strerror or exc}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise PathError(f"{shown} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise PathError(f"{shown} is {_kind(st.st_mode)}, not a regular file; give a file name")
    directory = p.absolute().parent
    if not directory.is_dir():
        raise PathError(f"{shown}: directory {str(directory)!r} does not exist (it is not created for you)")
    if probe:
        try:
            if st is not None:
                with open(p, "ab"):  # appends nothing
                    pass
            else:
                with tempfile.NamedTemporaryFile(dir=directory, prefix=".mulle-check-"):
                    pass
        except OSError as exc:
            raise PathError(f"{shown} is not writable: {exc.strerror or exc}") from None
    return p


def check_output_dir(path: str | os.PathLike[str], what: str = "the output directory", *,
                     parents: bool = False) -> Path:
    """``path`` as a :class:`Path` if a command may make or fill a directory there; a :class:`PathError` if not.

    Allowed: an existing directory that can be written, or a new one whose parent exists
    (with ``parents``, whose nearest existing ancestor exists: the command makes the
    folders between, as ``mkdir -p`` does). Refused: an empty path, a file, a device or
    other non-directory at ``path`` or in the way above it, a missing parent without
    ``parents`` (a typo is not a tree of folders), a place that cannot be written. Nothing
    is created; the write is tried for real (a temporary directory made and removed in the
    nearest existing one), because ``os.access`` says yes to root where creating fails.
    """
    p = as_path(path, what, "a directory name")
    shown = f"{what} {str(p)!r}"
    target = here = p.absolute()
    while True:
        try:
            st = os.stat(here)
            break
        except (FileNotFoundError, NotADirectoryError):  # the latter: a file in the way above
            if here.parent == here:  # only a vanished root gets here
                raise PathError(f"{shown}: no part of it exists") from None
            here = here.parent
        except OSError as exc:
            raise PathError(f"{shown} cannot be used: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):  # the path itself, or what stands in the way above it
        kind = "a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)
        raise PathError(f"{shown}{'' if here == target else f': {str(here)!r}'} is {kind}, not a directory")
    if not parents and here not in (target, target.parent):
        raise PathError(f"{shown}: directory {str(target.parent)!r} does not exist (it is not created for you)")
    try:
        os.rmdir(tempfile.mkdtemp(dir=here, prefix=".mulle-check-"))
    except OSError as exc:
        raise PathError(f"{shown} cannot be written: {exc.strerror or exc}") from None
    return p


def make_output_dir(path: str | os.PathLike[str], what: str = "the output directory") -> Path:
    """Make the directory ``path`` with its parents if :func:`check_output_dir` allows it, else a :class:`PathError`.

    A run's home named up front (``mulle-train expert --out-dir``, ``exploit --out-dir``).
    """
    p = check_output_dir(path, what, parents=True)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"{what} {str(p)!r} cannot be made: {exc.strerror or exc}") from None
    return p


def check_input_path(path: str | os.PathLike[str], what: str = "the input file", *,
                     limit: int | None = DEFAULT_READ_LIMIT) -> Path:
    """``path`` as a :class:`Path` if it is a regular file of at most ``limit`` bytes, else a :class:`PathError`."""
    p = as_path(path, what)
    shown = f"{what} {str(p)!r}"
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise PathError(f"{shown} does not exist") from None
    except OSError as exc:
        raise PathError(f"{shown} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise PathError(f"{shown} is {_kind(st.st_mode)}, not a regular file")
    if limit is not None and st.st_size > limit:
        raise PathError(f"{shown} holds {st.st_size:,} bytes; files of at most {limit:,} bytes are read")
    return p


def read_bytes(path: str | os.PathLike[str], what: str = "the input file", *, limit: int = DEFAULT_READ_LIMIT) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (checked before and while reading)."""
    p = check_input_path(path, what, limit=limit)
    try:
        with open(p, "rb") as f:
            data = f.read(limit + 1)  # a file that grew since the check is still bounded
    except OSError as exc:
        raise PathError(f"{what} {str(p)!r} cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise PathError(f"{what} {str(p)!r} holds more than {limit:,} bytes; files of at most {limit:,} are read")
    return data


def read_text(path: str | os.PathLike[str], what: str = "the input file", *, limit: int = DEFAULT_READ_LIMIT) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes; a :class:`PathError` for anything else."""
    data = read_bytes(path, what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PathError(f"{what} {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_json(path: str | os.PathLike[str], what: str = "the input file", *, limit: int = DEFAULT_READ_LIMIT,
              max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value of a regular file of at most ``limit`` bytes (:func:`read_bytes`, then :func:`parse_json`).

    A :class:`PathError` (the path, the size) or a :class:`JSONInputError` (the text) names the file, and
    the line, for anything else.
    """
    data = read_bytes(path, what, limit=limit)
    return parse_json(data, f"{what} {str(path)!r}", max_bytes=limit, max_depth=max_depth)


def _remove_stale_temporaries(path: Path) -> None:
    """Remove what a writer of ``path`` killed mid-write left (``.NAME.PID.tmp`` of a process that is gone).

    A ``kill -9`` between the temporary file's creation and its rename leaves it behind, and
    nothing else would ever remove it (the kill -9 harness found them after resumes). A
    temporary of a process that still runs is left alone: it may be writing.
    """
    prefix, suffix = f".{path.name}.", ".tmp"
    try:
        names = [e.name for e in os.scandir(path.parent) if e.name.startswith(prefix) and e.name.endswith(suffix)]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix):-len(suffix)]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running (or another user's): not ours to remove
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue
        try:
            os.unlink(path.parent / name)
        except OSError:
            pass


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file whole or not at all: yields a temporary name beside ``path``, renamed over it on success.

    The caller writes the temporary file; when the ``with`` block ends without an exception the
    file is flushed to disk and renamed to ``path`` in one step (``os.replace``), so a reader, or a
    resume after ``kill -9`` or a full disk, finds the old file or the new one, never half of one.
    On an exception the temporary file is removed and the exception goes on. Checkpoints, policy
    files and run states are written through here.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _remove_stale_temporaries(path)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
