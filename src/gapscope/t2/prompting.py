"""The four context settings of T2 and the prompts built from template files.

The paper ablates two parts of the context (NL description on/off x successor code on/off);
the imports and the code before the target are always shown. Which parts a prompt shows is
decided here, the sentences live in ``t2/prompts/*.txt``. The NL comes from the record or from
an informalization file (T2 keeps its NL outside the data files, see docs/t2.md).
"""

from __future__ import annotations

import json
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


def load_nl_file(path: Path) -> dict[str, str]:
    """An informalization file -> {record id: NL}.

    Accepted: a JSON object mapping ids to text (or to a list of texts, the first is used, as
    T2's informalize outputs store one-element lists), or JSON lines each with ``id`` and one
    of ``natural_language``, ``target_natural_language``, ``nl``. ValueError names the line.
    """
    text = path.read_text(encoding="utf-8")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return {str(k): _nl_text(v, f"{path}: id {k!r}") for k, v in whole.items()}
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: not valid JSON ({err.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise ValueError(f"{where}: expected an object with a string 'id'")
        key = next(
            (k for k in ("natural_language", "target_natural_language", "nl") if k in row), None
        )
        if key is None:
            raise ValueError(f"{where} ({row['id']}): no natural_language / nl field")
        out[row["id"]] = _nl_text(row[key], f"{where} ({row['id']})")
    return out


def _nl_text(value: object, where: str) -> str:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    if isinstance(value, str):
        return value
    raise ValueError(f"{where}: NL must be a string or a list of strings")
