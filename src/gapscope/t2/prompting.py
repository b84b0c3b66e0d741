"""The four context settings of T2 and the prompts built from template files.

The paper ablates two parts of the context (NL description on/off x successor code on/off);
the imports and the code before the target are always shown. Which parts a prompt shows is
decided here, the sentences live in ``t2/prompts/*.txt``. The NL comes from the record or from
an informalization file (T2 keeps its NL outside the data files, see docs/t2.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gapscope.t2.declarations import THEOREM_LIKE_KINDS
from gapscope.t2.records import T2Record
from gapscope.t2.successors import TargetIdentity
from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")


@dataclass(frozen=True)
class Context:
    """One context setting: whether the NL description and the successor code are shown."""

    name: str
    nl: bool
    successors: bool


CONTEXTS: dict[str, Context] = {
    c.name: c
    for c in (
        Context("nl+st", nl=True, successors=True),
        Context("nl", nl=True, successors=False),
        Context("st", nl=False, successors=True),
        Context("none", nl=False, successors=False),
    )
}
"""The paper's four settings: NL✓ST✓ (its headline), NL✓ST✗, NL✗ST✓, NL✗ST✗."""


def parse_contexts(spec: str) -> tuple[Context, ...]:
    """``all`` or a comma list of ``nl+st``, ``nl``, ``st``, ``none``."""
    names = list(CONTEXTS) if spec.strip() == "all" else [s.strip() for s in spec.split(",")]
    unknown = [n for n in names if n not in CONTEXTS]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"context must be 'all' or distinct names from {', '.join(CONTEXTS)}; got {spec!r}"
        )
    return tuple(CONTEXTS[n] for n in names)


def system_prompt() -> str:
    return template("system")


def user_prompt(record: T2Record, target: TargetIdentity, context: Context, nl: str) -> str:
    """The user turn for ``record`` under ``context``; ``nl`` is used only when it is shown."""
    parts = ["the imports and the code before it are given"]
    sections = [
        template("section_header").format(text=record.header.strip("\n")),
        template("section_before").format(text=record.before_target_code.strip("\n")),
    ]
    if context.nl:
        parts.append("a description in natural language is given")
        sections.append(template("section_nl").format(name=target.name, text=nl.strip()))
    if context.successors:
        parts.append("the code after it, which uses it, is given")
        sections.append(template("section_after").format(text=record.after_target_code.strip("\n")))
    theorem = target.kind in THEOREM_LIKE_KINDS or (
        target.kind is None and record.target_code.lstrip().startswith(("theorem", "lemma"))
    )
    instructions = "instructions_theorem" if theorem else "instructions_definition"
    return "\n\n".join(
        [
            template("request").format(name=target.name, parts="; ".join(parts)),
            *sections,
            template(instructions).format(name=target.name),
        ]
    )


NL_KEYS = ("target_natural_language", "nl", "natural_language")
"""The fields an informalization row may hold its text in, in order of preference: T2's
informalize output has both ``target_natural_language`` (the description of the target,
what its prompts show) and ``natural_language`` (the source problem's text)."""


def load_nl_file(path: Path) -> dict[str, str]:
    """An informalization file -> {record id: NL}.

    Accepted: T2's informalize output (``results_merged.json``: a JSON array of objects with
    ``id`` and ``target_natural_language``, a one-element list of texts), a JSON object
    mapping ids to text (or to a list of texts; the first is used), or JSON lines each an
    object with ``id`` and a field of ``NL_KEYS``. ValueError names the row and what is wrong.
    """
    text = path.read_text(encoding="utf-8")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return {str(k): _nl_text(v, f"{path}: id {k!r}") for k, v in whole.items()}
    if isinstance(whole, list):
        rows = [(f"{path}, element {n}", row) for n, row in enumerate(whole)]
    else:
        rows = []
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            where = f"{path}, line {number}"
            try:
                rows.append((where, json.loads(raw)))
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{where}: not valid JSON ({err.msg}); expected a JSON array, a JSON object"
                    " or JSON lines"
                ) from None
    return dict(_nl_row(where, row) for where, row in rows)


def load_nl_files(paths: Sequence[Path]) -> dict[str, str]:
    """Several informalization files merged (T2 ships one per track and prop type). An id
    described differently by two files is a ValueError naming both."""
    merged: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for path in paths:
        for key, text in load_nl_file(path).items():
            if key in merged and merged[key] != text:
                raise ValueError(f"{key}: described differently in {origin[key]} and {path}")
            merged[key], origin[key] = text, path
    return merged


def _nl_row(where: str, row: object) -> tuple[str, str]:
    if not isinstance(row, dict) or not isinstance(row.get("id"), str):
        raise ValueError(f"{where}: expected an object with a string 'id'")
    key = next((k for k in NL_KEYS if k in row), None)
    if key is None:
        raise ValueError(f"{where} ({row['id']}): none of the fields {', '.join(NL_KEYS)}")
    return row["id"], _nl_text(row[key], f"{where} ({row['id']}), field {key}")


def _nl_text(value: object, where: str) -> str:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    if isinstance(value, str):
        return value
    raise ValueError(f"{where}: NL must be a string or a list of strings")
