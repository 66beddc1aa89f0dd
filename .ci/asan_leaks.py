"""Read LeakSanitizer's reports and fail on leaks whose stack passes through the project's compiled modules.

Usage: python .ci/asan_leaks.py WORKDIR LOGDIR. Any ASan or UBSan error report (not a leak), and any
failure of the sanitizer runtime itself, fails too: those end the test run already, but a report must
never pass unseen.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# A frame in the project's compiled code: its sources, or its modules by their path (a bare "_core.cpython" also
# matched pydantic_core's "_pydantic_core.cpython", whose leaks at exit are not ours).
OURS = re.compile(r"(?<![\w.-])(?:mulle_env/engine|mulle_env|agents)/(?:csrc/|_core\.cpython|_native\.cpython)")


def main(workdir: str, logdir: str) -> int:
    reports = sorted(Path(logdir).glob("report*"))
    ours, errors, leaks = [], [], 0
    for path in reports:
        text = path.read_text(errors="replace")
        for block in re.split(r"\n(?=Direct leak|Indirect leak)", text):
            if block.startswith(("Direct leak", "Indirect leak")):
                leaks += 1
                if OURS.search(block):
                    ours.append(block.strip())
        # "CHECK failed" is the sanitizer runtime itself giving up (e.g. an interceptor without its real
        # function): the process is gone, and with LSAN_OPTIONS=exitcode=0 it even exits 0.
        # "has encountered a fatal error": LeakSanitizer could not check a process (and ended it, exit 0).
        fatal = ("ERROR: AddressSanitizer", "runtime error:", "CHECK failed", "has encountered a fatal error")
        if any(f in text for f in fatal):
            errors.append(f"{path.name}:\n{text[:4000]}")
    for block in ours:
        print("leak in the project's compiled code:\n" + block + "\n", file=sys.stderr)
    for report in errors:
        print("sanitizer error:\n" + report, file=sys.stderr)
    print(f"asan_leaks: {len(reports)} report file(s), {leaks} leak record(s) at exit, {len(ours)} in the project's "
          f"compiled code, {len(errors)} sanitizer error report(s)")
    return 1 if ours or errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
