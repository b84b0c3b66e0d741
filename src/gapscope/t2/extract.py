"""From a model's reply to the declaration that replaces the target.

- The code is the LAST fenced block tagged ``lean``/``lean4`` (any case); when no block has
  such a tag, the last fenced block of any tag. An unclosed final block (a reply cut by
  ``max_tokens``) runs to the end. ``import`` lines are dropped: the record's header carries
  the imports, and Lean accepts them only at the top of a file.
- The answer must declare the target's name with a compatible kind (``lemma`` for
  ``theorem``, ``abbrev`` for ``def``); otherwise it is ``renamed`` and is not checked: the
  successors would fail on the missing name, which says nothing about meaning. Renamed
  answers are counted separately in the report.

Under ``--rules t2`` the released pipeline's extraction is used instead
(``released_answer``): see :mod:`gapscope.t2.rules`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from gapscope.t2.declarations import same_kind, split_declarations
from gapscope.t2.successors import TargetIdentity

_FENCE = re.compile(r"^[ \t]*```[ \t]*(?P<tag>[^\s`]*)[^\n]*$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+\S.*(?:\n|$)", re.MULTILINE)
_RELEASED_CLOSED = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)
_RELEASED_OPEN = re.compile(r"```[a-z]*\n(.*?)$", re.DOTALL)


MAX_CODE_CHARS = 128 * 1024
"""The most code T2 reads from one reply: 4x what the released budget (8,192 tokens) can
write. A longer block is refused unread (as no answer, naming its size): reading Lean is linear
but slow in Python (~10 s per MB), and a hostile 32 MB reply must not hold a scorer for minutes."""


class AnswerStatus(StrEnum):
    OK = "ok"
    NO_ANSWER = "no_answer"
    RENAMED = "renamed"


@dataclass(frozen=True)
class Answer:
    """The extracted code (None when there is none) and why it is or is not checked."""

    status: AnswerStatus
    code: str | None
    detail: str = ""


def fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order; an unclosed last one runs to the end."""
    text = reply.replace("\r\n", "\n")
    fences = list(_FENCE.finditer(text))
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(fences):
        opening = fences[i]
        closing = fences[i + 1] if i + 1 < len(fences) else None
        end = closing.start() if closing else len(text)
        out.append((opening["tag"].lower(), text[opening.end() + 1 : end]))
        i += 2
    return out


def last_lean_block(reply: str) -> str | None:
    """The body of the last ``lean``-tagged block, else of the last block of any tag."""
    blocks = fenced_blocks(reply)
    lean = [body for tag, body in blocks if tag.startswith("lean")]
    if lean:
        return lean[-1]
    return blocks[-1][1] if blocks else None


def extract_answer(reply: str, target: TargetIdentity) -> Answer:
    """The declaration to put in the target's place, or why there is none."""
    block = last_lean_block(reply)
    if block is None:
        return Answer(AnswerStatus.NO_ANSWER, None, "no fenced code block in the reply")
    if (too_long := _over_cap(block)) is not None:
        return too_long
    code = _IMPORT_LINE.sub("", block).strip("\n")
    if not code.strip():
        return Answer(AnswerStatus.NO_ANSWER, None, "the last code block is empty")
    declared = [d for d in split_declarations(code) if d.is_declaration]
    wanted = unquoted_name(target.name)
    named = [d for d in declared if d.name is not None and unquoted_name(d.name) == wanted]
    if not named:
        names = ", ".join(f"{d.kind} {d.name}" for d in declared) or "nothing"
        return Answer(AnswerStatus.RENAMED, code, f"declares {names}; target is {target.name}")
    if target.kind is not None and not any(same_kind(d.kind, target.kind) for d in named):
        return Answer(
            AnswerStatus.RENAMED,
            code,
            f"declares {target.name} as {named[0].kind}; target is a {target.kind}",
        )
    return Answer(AnswerStatus.OK, code)


def _over_cap(code: str) -> Answer | None:
    """The refusal of a code block over :data:`MAX_CODE_CHARS`, or None."""
    if len(code) <= MAX_CODE_CHARS:
        return None
    return Answer(
        AnswerStatus.NO_ANSWER,
        None,
        f"the code block has {len(code):,} characters, over the {MAX_CODE_CHARS:,} T2 reads "
        "(lower max_tokens, or ask for one declaration)",
    )


def unquoted_name(name: str) -> str:
    """A Lean name without its guillemets (``«my thm»`` and ``my thm`` name one constant)."""
    return name.replace("«", "").replace("»", "")


def released_answer(reply: str) -> Answer:
    """The declaration T2's released pipeline would have checked for ``reply``.

    Its generation harness's ``code_block`` parser: the fenced blocks whose opening fence is
    three backticks, a tag of lowercase letters only and a newline; the last non-empty one
    (when every one is empty, the first). Without a closed block, the last unclosed one runs
    to the end; without any fence, the whole reply. A ``lean4`` tag is not lowercase letters,
    so such a block is not found as one. The evaluator then strips the text, and when it
    starts with a fence removes every fence marker (``prepare_entry``). Imports stay in; the
    declared name is never checked, and an empty result is checked as it is (T2 puts the
    empty string in the target's slot: compile then checks the code before alone). A
    ``lean4`` block followed by a newline comes out empty that way: the closed-block pattern
    misses it, and the unclosed one matches at its closing fence.
    """
    closed = _RELEASED_CLOSED.findall(reply)
    if closed:
        filled = [body for body in closed if body.strip()]
        code = filled[-1] if filled else closed[0]
    else:
        unclosed = _RELEASED_OPEN.findall(reply)
        code = unclosed[-1] if unclosed else reply
    if (too_long := _over_cap(code)) is not None:
        return too_long
    code = code.strip()
    if code.startswith("```lean"):
        code = code.replace("```lean", "").replace("```", "")
    elif code.startswith("```"):
        code = code.replace("```", "")
    return Answer(AnswerStatus.OK, code.strip(), "" if code.strip() else "empty generation")
