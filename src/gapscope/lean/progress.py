"""Progress for long check batches, on stderr so that stdout stays machine-readable."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

AUTO_MIN_TOTAL = 20
"""With ``enabled=None`` a bar appears only for batches this large on an interactive stderr."""


@contextmanager
def progress_bar(
    total: int, enabled: bool | None, description: str = "Lean checks"
) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; draws a rich bar when enabled (None: auto), else does nothing."""
    show = enabled if enabled is not None else total >= AUTO_MIN_TOTAL and sys.stderr.isatty()
    if not show or total == 0:
        yield lambda n: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
