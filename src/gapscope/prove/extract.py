"""From a model's reply to the Lean code that gets checked.

Whatever the model wrote, the theorem that is checked is always the problem's own statement,
byte for byte: a proof of a quietly weakened statement must never count. The reply's proof is
grafted onto that statement:

- ``block``: the LAST ```lean / ```lean4 block (an unclosed final block, as a reply cut by
  ``max_tokens`` leaves it, counts). If it restates the theorem (whitespace may differ), the
  restatement is replaced by the official one and everything around it (helper lemmas before,
  the proof after) is kept; if it holds no declaration at all, it is a bare proof body and is
  indented under the statement's ``:= by``.
- ``completion``: no lean block; the reply continues the statement (completion-style
  provers), so it is appended to the statement, unless it restates the theorem itself.
- ``empty``: nothing but whitespace to check.
- ``changed``: the code declares theorems but none is the official statement (renamed,
  weakened, or reformulated); it is not checked, since nothing it proves is the problem.

All matching is done on the code with comments and string literals blanked
(``gapscope.lean.source.code_only``): the statement written inside ``/- -/`` or a string is not
a restatement, so such a reply is never grafted into a file where the official theorem is never
compiled. The checker is also told the official name (``Extraction.required``), so that a
file that compiles without declaring it can never be VALID.

``import`` lines are dropped from the code: the problem's header carries the imports and Lean
accepts them only at the top of a file.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from gapscope.lean import code_only, declared_names
from gapscope.prove.problems import Problem

_OPEN_FENCE = re.compile(r"```[ \t]*lean4?[ \t]*\r?\n", re.IGNORECASE)
_CLOSE_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_IMPORT_LINE = re.compile(r"[ \t]*import[ \t]+\S")
_DECLARATION = re.compile(r"^[ \t]*(?:@\[[^\]]*\][ \t]*)?(?:theorem|lemma|example)\b", re.MULTILINE)


class ExtractionStatus(StrEnum):
    """Where the checked proof came from (see the module docstring)."""

    BLOCK = "block"
    COMPLETION = "completion"
    EMPTY = "empty"
    CHANGED = "changed"


@dataclass(frozen=True)
class Extraction:
    """The code to check (without the header), or None when there is nothing to check."""

    status: ExtractionStatus
    code: str | None

    def file(self, problem: Problem) -> str | None:
        """The whole Lean file: header + code."""
        return None if self.code is None else problem.header + self.code


def official_names(problem: Problem) -> tuple[str, ...]:
    """The name(s) the official statement declares: what a VALID check must have declared."""
    return declared_names(problem.signature)


def last_lean_block(reply: str) -> str | None:
    """The body of the last lean code block; an unclosed last block runs to the end."""
    opens = list(_OPEN_FENCE.finditer(reply))
    if not opens:
        return None
    start = opens[-1].end()
    close = _CLOSE_FENCE.search(reply, start)
    return reply[start : close.start() if close else len(reply)]


@cache
def _restatement(signature: str) -> re.Pattern[str]:
    """Matches ``signature`` followed by ``:=``, whatever whitespace the model put between
    its characters (models reflow long statements and respace binders); ``lemma`` may stand
    for ``theorem``, as Mathlib allows."""
    keyword, _, rest = signature.partition(" ")
    if keyword != "theorem":
        keyword, rest = "", signature
    chars = r"\s*".join(re.escape(ch) for ch in rest if not ch.isspace())
    lead = r"(?:theorem|lemma)\s+" if keyword else ""
    return re.compile(lead + chars + r"\s*:=")


def _drop_imports(code: str) -> str:
    """``code`` without its ``import`` lines (those in comments and strings stay)."""
    lines, masked = code.split("\n"), code_only(code).split("\n")
    kept = [line for line, bare in zip(lines, masked, strict=True) if not _IMPORT_LINE.match(bare)]
    return "\n".join(kept)


def _graft(problem: Problem, code: str) -> tuple[str, bool] | None:
    """(code with the official statement, whether the code restated it), or None if the code
    declares other theorems but not this one. Only code counts, not comments or strings."""
    code = _drop_imports(code)
    masked = code_only(code)
    found = _restatement(problem.signature).search(masked)
    if found:
        before, proof = code[: found.start()], code[found.end() :].lstrip(" \t")
        return f"{before}{problem.signature} := {proof}", True
    if _DECLARATION.search(masked):
        return None
    return code, False


def extract_proof(reply: str, problem: Problem) -> Extraction:
    """The code to check for ``problem`` from the model's ``reply``."""
    block = last_lean_block(reply)
    text = block if block is not None else reply
    status = ExtractionStatus.BLOCK if block is not None else ExtractionStatus.COMPLETION
    if not text.strip():
        return Extraction(ExtractionStatus.EMPTY, None)
    grafted = _graft(problem, text)
    if grafted is None:
        return Extraction(ExtractionStatus.CHANGED, None)
    code, restated = grafted
    if restated:
        return Extraction(status, code)
    if not code.strip():
        return Extraction(ExtractionStatus.EMPTY, None)
    if block is not None:
        body = textwrap.indent(textwrap.dedent(code).strip("\n"), "  ")
        return Extraction(status, f"{problem.formal_statement}\n{body}\n")
    return Extraction(status, problem.formal_statement + code)
