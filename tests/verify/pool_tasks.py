"""Module-level tasks for pool tests (spawned workers import them by name)."""

from __future__ import annotations

import os
import time


def pid_after(seconds: float) -> int:
    """The worker's process id, after sleeping ``seconds``."""
    time.sleep(seconds)
    return os.getpid()
