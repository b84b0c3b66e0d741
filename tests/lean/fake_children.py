"""What the bounds tests' fakes do to take resources as a model's code may: children that
hold memory, and a fork loop. Shared by the fake REPL (``fake_hog_repl.py``) and the fake
``lake`` (``tests/t2/fake_lake.py``). Standard library only: the fakes run under any
interpreter the sandbox's uid can reach.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

HOLD = "import sys, time; x = bytearray(b'1') * (int(sys.argv[1]) << 20); time.sleep(600)"


def hog(count: int, megabytes: int) -> None:
    """Start ``count`` children that each hold ``megabytes`` (their sum, not any one of them,
    passes a limit), then sleep until killed."""
    for _ in range(count):
        subprocess.Popen([sys.executable, "-c", HOLD, str(megabytes)])
    time.sleep(600)


def forks(count: int) -> str:
    """Fork up to ``count`` sleeping children; say how many the kernel let start."""
    started = 0
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError as exc:
            return f"forked {started} of {count}: {exc.strerror}"
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        started += 1
    return f"forked {started} of {count}"
