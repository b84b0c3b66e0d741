"""Prompts of O-NNG and the extraction of the model's ``{"draft": ..., "code": ...}`` answer.

The prompt gives what the paper lists: the alien axioms (type, definition of ``≤``, the
library's theorems), the earlier theorems available, the target, and the allowed tactics with
their syntax, all under the same renaming. Extraction is tolerant (fenced or bare JSON,
trailing prose, raw newlines inside strings) but records how it got the code, so strict and
flexible parsing can be reported side by side.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from string import Template
from typing import Any

from gapscope.onng.problemset import NAMESPACE, Problem, ProblemSet
from gapscope.onng.render import Obfuscation
from gapscope.onng.tactics import usage
from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")


def system_prompt() -> str:
    return template("system")


def build_prompt(problem_set: ProblemSet, obf: Obfuscation, problem: Problem) -> str:
    """The user prompt for ``problem`` under the renaming ``obf``."""
    library = problem_set.library.splitlines()
    start = next(i for i, line in enumerate(library) if line.startswith("inductive "))
    type_decl = "\n".join(library[start : start + 3])
    le_decl = next(line for line in library if " def le " in f" {line}")
    earlier = [obf.apply(p.header()) for p in problem_set.problems[: problem.index]]
    tactics = problem_set.allowed_tactics(problem.module)
    fields = {
        "namespace": obf.name(NAMESPACE),
        "type": obf.name(NAMESPACE),
        "type_decl": obf.apply(type_decl),
        "le": obf.name("le"),
        "le_decl": obf.apply(le_decl.removeprefix("@[reducible] ")),
        "given": "\n".join(obf.apply(t) for t in problem_set.given_theorems()),
        "earlier": "\n".join(earlier) if earlier else "-- (none yet)",
        "target": obf.apply(problem.header()) + " := by\n  sorry",
        "tactics": "\n".join(f"- `{usage(t, obf.renaming)}`" for t in tactics),
        "name": obf.name(problem.name),
    }
    return Template(template("problem")).substitute(fields)


class ParseStatus(StrEnum):
    """How the answer's code was obtained."""

    OK = "ok"
    REPAIRED = "repaired"
    NO_JSON = "no_json"
    MISSING_CODE = "missing_code"


@dataclass(frozen=True)
class Answer:
    draft: str
    code: str
    status: ParseStatus

    @property
    def usable(self) -> bool:
        return self.status in (ParseStatus.OK, ParseStatus.REPAIRED)


_FENCE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)```", re.S)
_CODE_FIELD = re.compile(r'"code"\s*:\s*"(.*)"\s*}', re.S | re.I)
_DRAFT_FIELD = re.compile(r'"draft"\s*:\s*"(.*?)"\s*,', re.S | re.I)


def _field(obj: dict[str, Any], name: str) -> object:
    """``obj[name]`` with the key in any case (the paper writes ``Draft`` and ``Code``)."""
    if name in obj:
        return obj[name]
    return next((v for k, v in obj.items() if k.lower() == name), None)


def _objects(text: str, strict: bool) -> list[dict[str, Any]]:
    """Every JSON object that starts somewhere in ``text`` (first ones first)."""
    decoder = json.JSONDecoder(strict=strict)
    found: list[dict[str, Any]] = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _answer(obj: dict[str, Any], status: ParseStatus) -> Answer:
    draft = _field(obj, "draft")
    code = _field(obj, "code")
    draft_text = draft if isinstance(draft, str) else ""
    if not isinstance(code, str) or not code.strip():
        return Answer(draft_text, "", ParseStatus.MISSING_CODE)
    return Answer(draft_text, clean_code(code), status)


def clean_code(code: str) -> str:
    """The Lean code without a surrounding Markdown fence."""
    fenced = _FENCE.search(code)
    return (fenced.group(2) if fenced else code).strip("\n")


def extract_answer(text: str) -> Answer:
    """The draft and code of a reply, with how they were found.

    ``ok``: a well-formed JSON object (fenced, bare, or followed by prose) with a ``code``
    string. ``repaired``: only lenient parsing (raw control characters in strings, or the
    ``code`` field read up to the object's last quote) found it. ``missing_code``: JSON
    without a non-empty ``code``. ``no_json``: nothing object-like.
    """
    fenced = [body for lang, body in _FENCE.findall(text) if lang in ("json", "")]
    for strict, status in ((True, ParseStatus.OK), (False, ParseStatus.REPAIRED)):
        objects = [o for body in fenced for o in _objects(body, strict)] + _objects(text, strict)
        with_code = [o for o in objects if _field(o, "code") is not None]
        if with_code:
            return _answer(with_code[0], status)
    field = _CODE_FIELD.search(text)
    if field:
        draft = _DRAFT_FIELD.search(text)
        code = _unescape(field.group(1))
        return _answer(
            {"draft": _unescape(draft.group(1)) if draft else "", "code": code},
            ParseStatus.REPAIRED,
        )
    if objects:
        return Answer("", "", ParseStatus.MISSING_CODE)
    return Answer("", "", ParseStatus.NO_JSON)


def _unescape(raw: str) -> str:
    try:
        value = json.loads(f'"{raw}"', strict=False)
    except json.JSONDecodeError:
        return raw.replace("\\n", "\n").replace('\\"', '"')
    return value if isinstance(value, str) else raw
