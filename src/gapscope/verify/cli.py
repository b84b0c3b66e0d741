"""``gapscope verify``: grade one answer, or a JSONL file of answers, from the command line.

The command is a plain function so the main CLI registers it with
``app.command("verify")(verify_command)``. A bad line in a JSONL file becomes an error verdict
naming the line; the rest of the file is still graded (finished work is never discarded).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gapscope.ladder.schema import AnswerSchema
from gapscope.verify.verifier import Item, Verifier

_SCHEMAS = ", ".join(s.value for s in AnswerSchema)


def _schema(name: str | None) -> AnswerSchema | None:
    if name is None:
        return None
    try:
        return AnswerSchema(name.upper())
    except ValueError:
        typer.echo(f"error: unknown schema {name!r}; valid names: {_SCHEMAS}", err=True)
        raise typer.Exit(2) from None


def _as_response(answer: str) -> str:
    """A bare answer is graded as if the model had boxed it."""
    return answer if "\\boxed" in answer or "\\fbox" in answer else "\\boxed{" + answer + "}"


def _read_item(lineno: int, line: str) -> Item | str:
    """The (response, gold, schema) of one JSONL line, or an error message naming the line."""
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
    return (_as_response(record["answer"]), record["gold"], schema)


def _grade_file(path: Path, out: Path | None, timeout_s: float) -> None:
    lines = [
        ln for ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ln[1].strip()
    ]
    parsed = [_read_item(n, text) for n, text in lines]
    items = [p for p in parsed if not isinstance(p, str)]
    verifier = Verifier(timeout_s=timeout_s)
    try:
        verdicts = iter(verifier.check_many(items))
    finally:
        verifier.close()
    rows: list[dict[str, str]] = []
    for entry in parsed:
        if isinstance(entry, str):
            rows.append({"label": "NOT_ACCEPT", "reason": "input_error", "error": entry})
        else:
            v = next(verdicts)
            rows.append({"label": v.label, "reason": v.reason})
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    accepted = sum(r["label"] == "ACCEPT" for r in rows)
    errors = sum("error" in r for r in rows)
    typer.echo(
        f"{len(rows)} graded: {accepted} ACCEPT, {len(rows) - accepted} NOT_ACCEPT, "
        f"{errors} input errors",
        err=True,
    )


def verify_command(
    gold: Annotated[str | None, typer.Option(help="Gold answer (LaTeX).")] = None,
    answer: Annotated[
        str | None, typer.Option(help="Model response or bare answer (boxed if unboxed).")
    ] = None,
    schema: Annotated[str | None, typer.Option(help=f"Answer schema: {_SCHEMAS}.")] = None,
    jsonl: Annotated[
        Path | None, typer.Option(help='JSONL file of {"answer","gold","schema"?} lines.')
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write JSONL verdicts here (default stdout).")
    ] = None,
    timeout_s: Annotated[float, typer.Option(help="Wall-clock limit per slow check.")] = 5.0,
) -> None:
    """Grade an answer against a gold answer with the deterministic verifier cascade."""
    if jsonl is not None:
        _grade_file(jsonl, out, timeout_s)
        return
    if gold is None or answer is None:
        typer.echo("error: give --gold and --answer, or --jsonl FILE", err=True)
        raise typer.Exit(2)
    kind = _schema(schema)
    verifier = Verifier(timeout_s=timeout_s, workers=1)  # the pool starts only if needed
    try:
        verdict = verifier.check(_as_response(answer), gold, kind)
    finally:
        verifier.close()
    typer.echo(f"{verdict.label} {verdict.reason} (stage: {verdict.stage})")
