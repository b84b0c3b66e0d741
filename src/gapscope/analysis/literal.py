"""Printing strings from users and logs as they are.

A model name, a log directory, a record id or an error message is data: ``[/bold]x[/]`` in
one must not be read as rich markup (it raised ``MarkupError`` mid-table), and an escape
sequence in one must not reach the terminal (``\\x1b[2J`` cleared it). Every console gapscope
prints on is a :class:`LiteralConsole`; styling comes only from ``rich.text.Text`` objects
that the printers build themselves.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def printable(text: str) -> str:
    """``text`` with each control character but tab and newline written as its escape
    (``\\x1b`` for ESC), so that what is printed is what the string holds."""
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


class LiteralConsole(Console):
    """A console on which every string is literal: no markup, no ``:emoji:`` codes, control
    characters shown escaped."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        kwargs.update(markup=False, emoji=False)
        return super().render_str(printable(text), **kwargs)
