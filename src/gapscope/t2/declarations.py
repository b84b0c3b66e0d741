"""Lean 4 source, read just well enough for T2: top-level declarations and their heads.

T2 needs to know, in a piece of Lean text, where each top-level declaration starts and ends
(to attribute Lean's messages by line), its kind and name (to tell a renamed answer from the
target), whether it mentions the target, whether it uses ``sorry``, and whether a target was
cut off. A top-level command starts at column 0; everything up to the next such line belongs
to it. Comments are blanked first (``gapscope.lean.source.code_only`` keeps lines and
columns), so a keyword inside a comment or doc string starts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gapscope.lean.source import code_only

_MODIFIERS = r"(?:(?:private|protected|noncomputable|partial|unsafe|nonrec|scoped|local)\s+)*"
_ATTRIBUTES = r"(?:@\[[^\]]*\]\s*)*"
DECLARATION_KINDS = (
    "theorem",
    "lemma",
    "def",
    "abbrev",
    "instance",
    "structure",
    "class",
    "inductive",
    "axiom",
    "opaque",
    "example",
)
_HEAD = re.compile(
    rf"^{_ATTRIBUTES}{_MODIFIERS}(?P<kind>{'|'.join(DECLARATION_KINDS)})\b"
    r"(?:\s+(?P<name>«[^»]+»|[^\s:({\[⦃⟨]+))?"
)
_COMMAND_START = re.compile(
    r"^(?![\s)\]}⟩|,]|:=|(?:termination_by|decreasing_by|where|deriving|with|then|else)\b)."
)
"""A line that starts a new top-level command: column 0, and not a continuation of the last."""
_ONLY_ATTRIBUTES = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)+$")
_SORRY = re.compile(r"(?<![\w'.])(?:sorry|admit)(?![\w'!?])")

THEOREM_LIKE_KINDS = frozenset({"theorem", "lemma"})
"""Kinds that are interchangeable for T2's renamed check (Mathlib's ``lemma`` is ``theorem``)."""
DEFINITION_LIKE_KINDS = frozenset({"def", "abbrev"})


def same_kind(a: str, b: str) -> bool:
    """Whether an answer of kind ``a`` can stand in for a target of kind ``b``."""
    return a == b or {a, b} <= THEOREM_LIKE_KINDS or {a, b} <= DEFINITION_LIKE_KINDS


@dataclass(frozen=True)
class Declaration:
    """One top-level command of a Lean text.

    ``kind`` is a declaration keyword, or ``command`` for anything else (``open``,
    ``namespace``, ``variable``, ``#eval`` ...). Lines are 0-based and relative to the text the
    declaration was split from; ``end_line`` is exclusive.
    """

    kind: str
    name: str | None
    text: str
    start_line: int
    end_line: int

    @property
    def is_declaration(self) -> bool:
        return self.kind != "command"

    @property
    def short_name(self) -> str | None:
        """The last component of the name (``Odd.pow`` -> ``pow``), guillemets removed."""
        if self.name is None:
            return None
        return self.name.replace("«", "").replace("»", "").rsplit(".", 1)[-1]

    def uses_sorry(self) -> bool:
        """``sorry`` or ``admit`` outside comments."""
        return bool(_SORRY.search(code_only(self.text)))

    def mentions(self, short_name: str) -> bool:
        """Whether the body names ``short_name`` as a whole identifier (its own name aside)."""
        body = code_only(self.text)
        if self.name is not None:
            body = body.replace(self.name, " ", 1)
        pattern = rf"(?<![\w'!?]){re.escape(short_name)}(?![\w'!?₀-₉])"
        return re.search(pattern, body) is not None


def head(text: str) -> tuple[str, str | None] | None:
    """(kind, name) of a declaration text, or None when it does not start with one.

    The name is read from ``text`` itself: the masked text keeps a ``«…»`` name one
    identifier but blanks its inside (so ``«theorem …»`` is not a theorem)."""
    masked = code_only(text)
    lead = len(masked) - len(masked.lstrip())
    match = _HEAD.match(masked[lead:])
    if not match:
        return None
    name = text[lead + match.start("name") : lead + match.end("name")] if match["name"] else None
    return match["kind"], name


def split_declarations(text: str) -> list[Declaration]:
    """The top-level commands of ``text`` in order, each with its line range."""
    lines = text.split("\n")
    stripped = code_only(text).split("\n")
    starts: list[int] = []
    for i, line in enumerate(stripped):
        if not _COMMAND_START.match(line):
            continue
        if starts and _ONLY_ATTRIBUTES.match("\n".join(stripped[starts[-1] : i])):
            continue  # ``@[simp]`` on its own line belongs to the declaration below it
        starts.append(i)
    out: list[Declaration] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while end > start + 1 and not stripped[end - 1].strip():
            end -= 1
        chunk = "\n".join(lines[start:end])
        found = head(chunk)
        kind, name = found if found else ("command", None)
        out.append(Declaration(kind, name, chunk, start, end))
    return out


_PAIRS = {")": "(", "]": "[", "}": "{", "⟩": "⟨", "⦄": "⦃", "»": "«"}


def unbalanced_bracket(code: str) -> str | None:
    """The first bracket that does not match, or the first left open; None when balanced.

    Comments and string literals are skipped, so brackets inside them do not count.
    """
    stack: list[str] = []
    for ch in code_only(code):
        if ch in _PAIRS.values():
            stack.append(ch)
        elif ch in _PAIRS:
            if not stack or stack[-1] != _PAIRS[ch]:
                return f"unmatched {ch!r}"
            stack.pop()
    return f"unclosed {stack[-1]!r}" if stack else None


def has_body(code: str) -> bool:
    """Whether a declaration text reaches its body: ``:=``, ``where`` or ``|`` alternatives
    (``| pat => value`` of a definition, or any ``|`` constructor of an ``inductive``).

    A target cut before its body (T2's research records, see docs/t2.md) has none of these.
    """
    text = code_only(code)
    return (
        ":=" in text
        or re.search(r"\bwhere\b", text) is not None
        or re.search(r"^\s*\|.*=>", text, re.MULTILINE) is not None
        or (_kind(code) == "inductive" and re.search(r"^\s*\|", text, re.MULTILINE) is not None)
    )


def _kind(code: str) -> str | None:
    found = head(code)
    return found[0] if found else None
