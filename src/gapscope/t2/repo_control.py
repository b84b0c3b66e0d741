"""Who a ``lake`` call stopped by a limit belongs to, in the repository track.

Every diagnostic leaves a ``server_error`` out of its fractions, so a model that cannot write
a target whose successors build would gain by making the build cross a limit instead (memory,
processes): its n shrinks. The file track settles this with a control check in the same
header (``gapscope.lean.base.CachedBackend``); here the control is the project's own build of
the same modules, the original file put back, under the same bounds. When it gets a verdict
(it ends, whatever its exit code, and no limit stopped it), the machine could build those
modules and the limit was the answer's doing: ``broke_check``, a failure in every
denominator. When the control crosses a limit, times out or cannot run, the ``server_error``
stands.

One control per project and modules, for the run: the original's build does not change
between answers. The original is built with a comment appended (:data:`CONTROL_MARK`) so that
``lake`` elaborates the modules again rather than finding them up to date from the copy's
earlier builds: a control that rebuilt nothing would prove nothing about the bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from gapscope.lean import Run, RunBounds

CONTROL_MARK = "\n-- gapscope: the control build of the original file\n"
"""Appended to the original file for its control build: the same declarations on the same
lines, a source ``lake`` has not built before."""


class Controls:
    """The controls' answers, each built once (:meth:`failure`) and kept for the run."""

    def __init__(self) -> None:
        self._answers: dict[Hashable, str | None] = {}
        self._lock = threading.Lock()

    def failure(self, key: Hashable, build: Callable[[], Run], held: RunBounds) -> str | None:
        """Why the control ``key`` got no verdict, or None where it got one. ``build`` runs
        it (the first time ``key`` is asked); ``held``: the bounds it ran under."""
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        try:
            answer = _failure(build(), held)
        except OSError as exc:
            answer = f"the control could not run lake: {exc}"
        with self._lock:
            return self._answers.setdefault(key, answer)


def _failure(control: Run, held: RunBounds) -> str | None:
    limit = held.exceeded(control)
    if limit is not None:
        return f"the control (the original's build) was stopped too: {limit}"
    if control.code is None:
        return "the control (the original's build) timed out"
    return None
