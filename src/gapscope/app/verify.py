"""``gapscope verify``: grade one answer, or a JSONL file of answers, from the command line.

The command is a plain function so the main CLI registers it with
``app.command("verify")(verify_command)``. Verdicts of a JSONL file are written (and flushed)
in input order as they are decided, so an interrupted run keeps every graded line. A bad line
(invalid JSON or UTF-8, a missing field) becomes an error verdict naming the line; the rest of
the file is still graded. This module imports nothing heavy: the worker pool and its libraries
start only when a pair needs them.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from gapscope.analysis import View
from gapscope.app.kit import EXIT_INTERRUPTED, Output, command_output, refuse_overwriting
from gapscope.verify import AnswerSchema, Item, Verdict, Verifier, check_timeout, default_cache_path

_SCHEMAS = ", ".join(s.value for s in AnswerSchema)


def _schema(name: str | None) -> AnswerSchema | None:
    if name is None:
        return None
    try:
        return AnswerSchema(name.upper())
    except ValueError:
        raise typer.BadParameter(f"unknown schema {name!r}; valid names: {_SCHEMAS}") from None


def _timeout(value: float) -> float:
    try:
        return check_timeout(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _read_item(lineno: int, raw: bytes) -> Item | str:
    """The (response, gold, schema) of one JSONL line, or an error message naming the line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"line {lineno}: not valid UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start})"
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"line {lineno}: invalid JSON ({exc.msg})"
    if not isinstance(record, dict):
        return f"line {lineno}: expected a JSON object"
    missing = [k for k in ("answer", "gold") if not isinstance(record.get(k), str)]
    if missing:
        return f"line {lineno}: missing or non-string field(s): {', '.join(missing)}"
    schema = record.get("schema")
    if schema is not None and str(schema).upper() not in AnswerSchema.__members__:
        return f"line {lineno}: unknown schema {schema!r}; valid names: {_SCHEMAS}"
    return (record["answer"], record["gold"], schema)


def _row(verdict: Verdict) -> dict[str, Any]:
    return {
        "label": verdict.label,
        "reason": verdict.reason,
        "stage": verdict.stage,
        "extraction": verdict.extraction,
        "strict": verdict.strict,
    }


def _open_input(path: Path) -> IO[bytes]:
    if not path.exists():
        raise typer.BadParameter(f"{path}: no such file", param_hint="--jsonl")
    if not path.is_file():
        raise typer.BadParameter(f"{path}: not a regular file", param_hint="--jsonl")
    try:
        return path.open("rb")
    except OSError as exc:
        raise typer.BadParameter(f"{path}: {exc.strerror}", param_hint="--jsonl") from None


def _open_output(out: Path | None) -> IO[str]:
    if out is None:
        return sys.stdout
    if out.is_dir():
        raise typer.BadParameter(f"{out}: is a directory", param_hint="--out")
    try:
        return out.open("w", encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"{out}: {exc.strerror}", param_hint="--out") from None


class _OrderedWriter:
    """Emits error rows and verdict rows in input order, each as soon as it is due."""

    def __init__(self, emit: Callable[[dict[str, Any]], None]) -> None:
        self._emit = emit
        self._queue: deque[dict[str, Any] | None] = deque()  # None: a verdict still to come
        self.written = self.accepted = self.errors = 0

    def expect_verdict(self) -> None:
        self._queue.append(None)

    def error(self, message: str) -> None:
        self._queue.append({"label": "NOT_ACCEPT", "reason": "input_error", "error": message})
        self._flush()

    def verdict(self, verdict: Verdict) -> None:
        slot = self._queue.index(None)
        self._queue[slot] = _row(verdict)
        self._flush()

    def _flush(self) -> None:
        while self._queue and (row := self._queue[0]) is not None:
            self._queue.popleft()
            self._emit(row)
            self.written += 1
            self.accepted += row["label"] == "ACCEPT"
            self.errors += "error" in row

    def counts(self) -> dict[str, int]:
        return {
            "graded": self.written,
            "accept": self.accepted,
            "not_accept": self.written - self.accepted,
            "input_errors": self.errors,
        }


def _items(source: IO[bytes], writer: _OrderedWriter) -> Iterator[Item]:
    for lineno, raw in enumerate(source, 1):
        raw = raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw
        if not raw.strip():
            continue
        item = _read_item(lineno, raw.rstrip(b"\r\n"))
        if isinstance(item, str):
            writer.error(item)
        else:
            writer.expect_verdict()
            yield item


@contextlib.contextmanager
def _writing(sink: IO[str]) -> Iterator[None]:
    """A failed write (a full disk) names the file: the error from the OS does not."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write verdicts: {exc.strerror}", sink.name) from None


def _close(sink: IO[str]) -> None:
    with _writing(sink):  # closing retries what a failed flush left in the buffer
        sink.close()


def _line_writer(sink: IO[str]) -> Callable[[dict[str, Any]], None]:
    def emit(row: dict[str, Any]) -> None:
        with _writing(sink):
            sink.write(json.dumps(row) + "\n")
            sink.flush()  # a line on disk is a verdict kept, whatever happens next

    return emit


def _grade_file(
    output: Output, path: Path, out: Path | None, verifier: Verifier, json_mode: bool
) -> View:
    """Grade every line; verdicts stream to ``out`` (or stdout). With ``--json`` and no
    ``--out`` stdout is the envelope's, so the verdicts go into it instead."""
    collected: list[dict[str, Any]] | None = [] if json_mode and out is None else None
    refuse_overwriting(out, "--out", [("--jsonl", path)])
    with contextlib.ExitStack() as files:
        source = files.enter_context(_open_input(path))
        if collected is not None:
            writer = _OrderedWriter(collected.append)
        else:
            sink = _open_output(out)
            if sink is not sys.stdout:
                files.callback(_close, sink)
            writer = _OrderedWriter(_line_writer(sink))

        def details() -> dict[str, Any]:
            return {**writer.counts(), "out": str(out) if out else None, "verdicts": collected}

        try:
            verifier.check_each(_items(source, writer), writer.verdict)
        except KeyboardInterrupt:
            output.fail(
                f"interrupted: {writer.written} verdicts written, in input order; "
                "rerun to finish (settled verdicts come from the cache)",
                EXIT_INTERRUPTED,
                details=details(),
            )
    counts = writer.counts()
    typer.echo(
        f"{counts['graded']} graded: {counts['accept']} ACCEPT, {counts['not_accept']} "
        f"NOT_ACCEPT, {counts['input_errors']} input errors",
        err=True,
    )
    return View(details=details())


def _grade_one(
    gold: str | None, answer: str | None, schema: str | None, verifier: Verifier
) -> View:
    if gold is None or answer is None:
        raise typer.BadParameter("give --gold and --answer, or --jsonl FILE")
    kind = _schema(schema)
    verdict = verifier.check(answer, gold, kind)
    strict = "strict ACCEPT" if verdict.strict else "strict NOT_ACCEPT"
    line = (
        f"{verdict.label} {verdict.reason} (stage: {verdict.stage}, "
        f"answer found: {verdict.extraction}; {strict})"
    )
    details = {**_row(verdict), "gold": gold, "answer": answer, "schema": kind and kind.value}
    return View(details=details, show=lambda console: console.print(line, markup=False))


def verify_command(
    gold: Annotated[str | None, typer.Option(help="Gold answer (LaTeX).")] = None,
    answer: Annotated[
        str | None,
        typer.Option(help="Model response (boxed, stated or trailing answer) or bare answer."),
    ] = None,
    schema: Annotated[str | None, typer.Option(help=f"Answer schema: {_SCHEMAS}.")] = None,
    jsonl: Annotated[
        Path | None, typer.Option(help='JSONL file of {"answer","gold","schema"?} lines.')
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write JSONL verdicts here (default stdout).")
    ] = None,
    timeout_s: Annotated[
        float, typer.Option(help="Wall-clock limit per slow check, seconds, in (0, 3600].")
    ] = 5.0,
    cache_file: Annotated[
        Path | None,
        typer.Option(help=f"Verdict cache across runs [default: {default_cache_path()}]."),
    ] = None,
    no_cache: Annotated[bool, typer.Option(help="Do not read or write the verdict cache.")] = False,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Envelope as JSON on stdout; with --jsonl and no --out the verdicts are in it.",
        ),
    ] = False,
) -> None:
    """Grade an answer against a gold answer with the deterministic verifier cascade."""
    with command_output("verify", json_out) as output:
        timeout = _timeout(timeout_s)
        cache = None if no_cache else (cache_file or default_cache_path())
        # one answer needs one worker; a file gets the default pool
        verifier = Verifier(timeout_s=timeout, cache_path=cache, workers=None if jsonl else 1)
        try:
            if jsonl is not None:
                result = _grade_file(output, jsonl, out, verifier, json_out)
            else:
                result = _grade_one(gold, answer, schema, verifier)
        finally:
            verifier.close()
        output.finish(result)
