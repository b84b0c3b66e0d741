"""What is read of a bounded run's output: the tail for the log, and every line a verdict
needs wherever it came (``gapscope.lean.output``)."""

from __future__ import annotations

import tempfile

from gapscope.lean.output import MAX_KEPT_LINES, MAX_OUTPUT_BYTES, selected_lines, tail


def _is_error(line: str) -> bool:
    return line.startswith("error:")


def test_an_error_line_before_and_after_a_10_mb_line_is_kept_and_only_its_head_read() -> None:
    with tempfile.TemporaryFile() as sink:
        sink.write(b"error: first\n" + b"x" * (10 * 2**20) + b"\nerror: last\n")
        assert selected_lines(sink, _is_error) == ("error: first", "error: last")
        assert len(tail(sink)) == MAX_OUTPUT_BYTES and "error: first" not in tail(sink)


def test_the_rest_of_a_cut_line_is_never_offered_as_a_line_of_its_own() -> None:
    """A line that starts 'x' but carries 'error:' past the head read is not an error line."""
    with tempfile.TemporaryFile() as sink:
        sink.write(b"x" * 2048 + b"error: hidden in a long line\nerror: real\n")
        assert selected_lines(sink, _is_error) == ("error: real",)


def test_more_selected_lines_than_are_kept_is_no_selection() -> None:
    with tempfile.TemporaryFile() as sink:
        sink.write(b"error: e\n" * MAX_KEPT_LINES)
        assert selected_lines(sink, _is_error) == ("error: e",) * MAX_KEPT_LINES
        sink.write(b"error: one too many\n")
        assert selected_lines(sink, _is_error) is None
