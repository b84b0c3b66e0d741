"""What is read of a bounded run's output: its tail, and the lines a verdict is graded from.

A tool running model-written code prints as much as that code makes it print (a theorem
whose elaboration logs without end), so only the last :data:`MAX_OUTPUT_BYTES` are kept for
the log. A verdict graded from lines of that tail would depend on what was cut: a flood
printed after an error line pushes it out, and the declaration it names would pass. So the
whole output is also read once, line by line, and every line the caller's ``keep`` selects is
kept, however early it came: at most :data:`MAX_KEPT_LINES`, each read up to
:data:`MAX_LINE_BYTES` (a diagnostic names its file, line and severity at its head). Where
more lines than that are selected, the selection is None and the caller grades without it,
failing what it cannot vouch for.

The whole output is a file on this host's disk, so it is capped too (:data:`MAX_RUN_OUTPUT_MB`,
``Bounds.output_mb``): the run's writer is stopped there (``RLIMIT_FSIZE``) and the run is
killed, naming the limit (``gapscope.lean.bounded``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

MAX_OUTPUT_BYTES = 4 * 2**20
"""Output past this is cut; only its tail is kept (where a tool's own last lines are)."""
MAX_KEPT_LINES = 20_000
"""Selected lines kept at most: far more than the errors and ``sorry`` warnings of an honest
build, few enough that a flood of forged ones costs little memory."""
MAX_LINE_BYTES = 2048
"""The head of a line that is read and offered to ``keep``; the rest of a longer line is
skipped (a line of 10 MB is read in pieces, never whole)."""

MAX_RUN_OUTPUT_MB = 1024
"""The default cap on one run's whole output on this host's disk, in MB. An honest build is
far below it: ``lake build`` of all of Mathlib (about 7,000 modules, one progress line of
under 200 bytes each, some linter warnings) prints a few MB, and a T2 build rebuilds only the
project's own modules. ``RLIMIT_FSIZE`` caps every other file the run writes at the same size;
an ``.olean`` or ``.c`` file of a module is tens of MB at most."""

Keep = Callable[[str], bool]
"""Whether a line of the output decides a verdict (and so must be kept wherever it came)."""


def tail(sink: BinaryIO) -> str:
    """The last :data:`MAX_OUTPUT_BYTES` of ``sink`` (read from its current end)."""
    size = sink.seek(0, 2)
    sink.seek(max(0, size - MAX_OUTPUT_BYTES))
    return sink.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")


def selected_lines(sink: BinaryIO, keep: Keep) -> tuple[str, ...] | None:
    """Every line of ``sink`` (its head, :data:`MAX_LINE_BYTES`) that ``keep`` selects, in
    order; None where more than :data:`MAX_KEPT_LINES` are (the selection is incomplete)."""
    sink.seek(0)
    kept: list[str] = []
    at_start = True
    while piece := sink.readline(MAX_LINE_BYTES):
        if at_start:
            line = piece.decode("utf-8", "replace").rstrip("\r\n")
            if keep(line):
                if len(kept) == MAX_KEPT_LINES:
                    return None
                kept.append(line)
        at_start = piece.endswith(b"\n")
    return tuple(kept)
