"""Finding the final answer in a model response, in order of evidence.

Models do not always box. The answer is looked for, strongest evidence first:

1. ``boxed``: the last balanced ``\\boxed{}``/``\\fbox{}`` after the reasoning (after the last
   ``</think>``); models box intermediate results while thinking, so only the last box counts.
2. ``statement``: an explicit final-answer statement ("The answer is ...", "Final Answer: ...",
   "Therefore the area is ...").
3. ``trailing_math``: a math span (``$...$``, ``\\(...\\)``, ``\\[...\\]``) that ends the response.
4. ``bare``: the whole response when it is one line, short or free of prose (a terse model, a
   bare answer, a long list of tuples).

Stage 1 alone is the *strict* extraction (what a boxed-answer prompt asks for); all four are the
*flexible* one. Both are reported, as lm-evaluation-harness does. Every scan here is linear:
braces are matched with one stack pass, so 20,000 ``\\boxed{`` or 40,000 nested ``{`` cost
milliseconds, never a quadratic rescan.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

BOXED = "boxed"
BOXES = "boxes"
STATEMENT = "statement"
TRAILING_MATH = "trailing_math"
BARE = "bare"
NONE = "none"

_THINK_END = "</think>"
_BOX_START = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_TOKEN = re.compile(r"\\.|[{}]", re.DOTALL)
_STATEMENT = re.compile(
    r"(?:final\s+answer\s*(?:is)?|the\s+(?:final\s+)?answer\s+(?:is|should\s+be)|answer\s*[:\uff1a]"
    r"|\b(?:therefore|thus|hence|so)\b[^.\n$]{0,80}?\s(?:is|are|equals)\b)\s*[:\uff1a]?\s*",
    re.IGNORECASE,
)
# Only an explicit final answer may overrule an earlier box ("Final Answer: ... is $10,455$").
_FINAL = re.compile(
    r"(?:final\s+answer\s*(?:is)?|the\s+(?:final\s+)?answer\s+(?:is|should\s+be))\s*[:\uff1a]?\s*",
    re.IGNORECASE,
)
_VERB = re.compile(r"\s(?:is|are|equals|was)\s", re.IGNORECASE)
_LEADING_NUMBER = re.compile(r"^\$?(-?\d[\d,]*(?:\.\d+)?)\$?\s+[A-Za-z]")
_CHAT_TOKENS = re.compile(r"(?:\s*<\|[a-z_]+\|>\s*(?:user|assistant|system)?)+\s*$")
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_SENTENCE_END = re.compile(r"\.(?:\s|$)|\n")
_EMPHASIS = re.compile(r"^[*_\s]+|[*_\s]+$")
# What may follow the last math span for it to count as "trailing": punctuation, a closing word.
_TRAILER = re.compile(r"^[\s.,;:!*)\]}]*(?:[A-Za-z][A-Za-z ]*[.!]?)?[\s.*]*$")
_MAX_TRAILER_CHARS = 40
_MAX_STATEMENT_CHARS = 400
_MAX_BARE_CHARS = 80
# Two words in a row (not commands): prose. A longer line without any is one long answer
# (a list of tuples, an expanded expression) and is the answer as a whole.
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}\s+[A-Za-z]{2,}")
# Boxes joined by one of these ("\\boxed{1} and \\boxed{2}") may form one answer; boxes with
# only prose between them ("\\boxed{1} no no \\boxed{2}") are separate statements.
_BOX_TAIL = re.compile(r"\\(?:boxed|fbox)\s*\{$")
_CONNECTOR = re.compile(r"[,;]|\b(?:and|or)\b|\\q?quad")
# What may stand between boxes written as a list: punctuation, math delimiters, "and"/"or",
# ``\\quad``, dots, and labels (``$, $x_2 = ``).
_LIST_GAP = re.compile(
    r"^(?:[\s$,;:.!?()]|\\[()]|\\q?quad|\\[lc]?dots|\b(?:and|or)\b"
    r"|[A-Za-z](?:_\{?\w+\}?)?\s*=)*$"
)
# Boxes closer than this (no blank line between) form one group: one answer split over boxes.
_MAX_BOX_GAP_CHARS = 80
# What makes a gold more than a bare answer: a box, math delimiters, several lines.
_WRITTEN_OUT = re.compile(r"\\(?:boxed|fbox)|(?<!\\)(?:\$|\\\(|\\\[)|\n")
_DELIMITER = re.compile(r"(?<!\\)(?:\$\$?|\\\(|\\\)|\\\[|\\\])")


@dataclass(frozen=True, slots=True)
class Extracted:
    """The answer text, the stage that found it, every box of the final group of boxes, and
    how many of the group's last boxes are written as a bare list (``\\boxed{1} or \\boxed{2}``,
    ``x = \\boxed{1}, y = \\boxed{2}``: nothing but connectors and labels between them)."""

    answer: str
    stage: str
    group: tuple[str, ...] = ()
    listed: int = 1


def strip_reasoning(response: str) -> str:
    """The text after the last ``</think>``; the whole response when there is none."""
    cut = response.rfind(_THINK_END)
    return response if cut < 0 else response[cut + len(_THINK_END) :]


def closing_braces(text: str, start: int = 0) -> dict[int, int]:
    """For every ``{`` from ``start`` that is closed, the index of its ``}`` (``\\{``, ``\\}``
    skipped). One pass with a stack over the braces only (a regex jumps between them)."""
    partner: dict[int, int] = {}
    stack: list[int] = []
    for token in _BRACE_TOKEN.finditer(text, start):
        ch = token.group()
        if ch == "{":
            stack.append(token.start())
        elif ch == "}" and stack:
            partner[stack.pop()] = token.start()
    return partner


def _boxes(body: str) -> list[tuple[int, int]]:
    """(start, end) of every closed box's content, in order of its opening."""
    first = _BOX_START.search(body)
    if first is None:
        return []
    partner = closing_braces(body, first.start())
    spans = []
    for match in _BOX_START.finditer(body, first.start()):
        end = partner.get(match.end() - 1)
        if end is not None:
            spans.append((match.end(), end))
    return spans


def extract_boxed(text: str) -> str | None:
    """Content of the last balanced ``\\boxed{...}``/``\\fbox{...}`` after the reasoning.

    An unclosed last box is skipped in favour of the previous closed one: a response truncated
    mid-box did not commit to that answer.
    """
    body = strip_reasoning(text)
    spans = _boxes(body)
    if not spans:
        return None
    start, end = spans[-1]
    return text_of(body, start, end)


def text_of(body: str, start: int, end: int) -> str:
    """The stripped text between two indices."""
    return body[start:end].strip()


def _box_group(body: str, spans: list[tuple[int, int]]) -> tuple[tuple[str, ...], int]:
    """The last run of boxes written close together (``x_1=\\boxed{1}, x_2=\\boxed{2}``).

    Boxes nested in a later box, or separated by a blank line or a long stretch of prose, are
    not part of the run: those are intermediate results, not pieces of the answer. Neither are
    boxes with no connector (a comma, "and", "or", a ``\\quad``) between them. The second
    value counts the run's last boxes with only connectors and labels between them: boxes
    with words between (``\\boxed{3} for part one, and overall \\boxed{7}``) are not a list.
    """
    outer: list[tuple[int, int]] = []
    for span in spans:  # spans come in opening order, so a nested one starts before the last end
        if not outer or span[0] > outer[-1][1]:
            outer.append(span)
    group = [outer[-1]]
    listed = 1
    for prev in reversed(outer[:-1]):
        gap = _BOX_TAIL.sub("", body[prev[1] + 1 : group[0][0]])
        adjacent = not gap.strip(" $\\()")  # ``$\\boxed{1}\\boxed{2}$``
        if len(gap) > _MAX_BOX_GAP_CHARS or "\n\n" in gap:
            break
        if not (adjacent or _CONNECTOR.search(gap)):
            break
        if listed == len(group) and _LIST_GAP.match(gap):
            listed += 1
        group.insert(0, prev)
    return tuple(text_of(body, s, e) for s, e in group), listed


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    found = None
    for found in matches:  # noqa: B007 (keeping the last one is the point)
        pass
    return found


def _phrase_answer(phrase: str) -> str | None:
    """The answer inside a statement's phrase: ``The volume of $V$ is 120`` -> ``120``,
    ``12 distinct sequences`` -> ``12``, ``$x = 3$ is the solution`` -> ``x = 3``,
    ``$1$ or $2$`` -> ``1, 2``."""
    verbs = list(_VERB.finditer(phrase))
    if verbs and not _MATH_SPAN.fullmatch(phrase.strip()):
        phrase = phrase[verbs[-1].end() :]
    phrase = phrase.strip()
    if (span := _MATH_SPAN.match(phrase)) is not None:
        # ``The answer is $1$ or $2$``: every listed value, never just the first one.
        run = [span]
        while (later := _MATH_SPAN.search(phrase, run[-1].end())) is not None:
            gap = phrase[run[-1].end() : later.start()]
            if not (_LIST_GAP.match(gap) and _CONNECTOR.search(gap)):
                break
            run.append(later)
        return ", ".join(dict.fromkeys(_span_text(m) for m in run)) or None
    if (number := _LEADING_NUMBER.match(phrase)) is not None:
        return number.group(1)
    return _EMPHASIS.sub("", phrase).strip() or None


def _statement_match(body: str, pattern: re.Pattern[str]) -> tuple[int, str] | None:
    """(where it starts, the answer) of the last statement matching ``pattern``."""
    last = _last(pattern.finditer(body))
    if last is None:
        return None
    rest = body[last.end() : last.end() + _MAX_STATEMENT_CHARS]
    span = _MATH_SPAN.match(rest)
    if span is not None:
        phrase = rest[: span.end()]
        tail = rest[span.end() :]
        stop = _SENTENCE_END.search(tail)
        phrase += tail[: stop.start()] if stop else tail
    else:
        stop = _SENTENCE_END.search(rest)
        phrase = rest[: stop.start()] if stop else rest
    answer = _phrase_answer(_EMPHASIS.sub("", phrase))
    return None if answer is None else (last.start(), answer)


def _span_text(span: re.Match[str]) -> str:
    return next(g for g in span.groups() if g is not None).strip()


def _trailing_math(body: str) -> tuple[str, tuple[str, ...]] | None:
    """The last math span when only punctuation follows it, and the run of spans it ends.

    Spans listed before it with only a connector between (``$x=1$ or $x=2$``) are the run, as
    boxes are in ``_box_group``: one answer of several values, or several candidates.
    """
    tail_start = max(0, len(body) - 4 * _MAX_STATEMENT_CHARS)
    spans = list(_MATH_SPAN.finditer(body, tail_start))
    if not spans or len(body[spans[-1].end() :].strip()) > _MAX_TRAILER_CHARS:
        return None
    if not _TRAILER.match(body[spans[-1].end() :]):
        return None
    run = [spans[-1]]
    for prev in reversed(spans[:-1]):
        gap = body[prev.end() : run[0].start()]
        if not (_LIST_GAP.match(gap) and _CONNECTOR.search(gap)) or "\n\n" in gap:
            break
        run.insert(0, prev)
    answer = _span_text(spans[-1])
    return (answer, tuple(_span_text(m) for m in run)) if answer else None


def find_answer(response: str) -> Extracted | None:
    """The answer and the stage that found it (boxed, statement, trailing math, bare)."""
    body = _CHAT_TOKENS.sub("", strip_reasoning(response))
    spans = _boxes(body)
    if spans:
        final = _statement_match(body, _FINAL)
        if final is not None and final[0] > spans[-1][1]:
            return Extracted(final[1], STATEMENT)  # the model's last word came after its box
        group, listed = _box_group(body, spans)
        start, end = spans[-1]
        return Extracted(text_of(body, start, end), BOXED, group, listed)
    if _BOX_START.search(body):
        return None  # the response was cut off inside its box: it committed to no answer
    if (statement := _statement_match(body, _STATEMENT)) is not None:
        return Extracted(statement[1], STATEMENT)
    if (trailing := _trailing_math(body)) is not None:
        return Extracted(trailing[0], TRAILING_MATH, trailing[1], len(trailing[1]))
    stripped = body.strip()
    one_line = bool(stripped) and "\n" not in stripped
    if one_line and (len(stripped) <= _MAX_BARE_CHARS or _PROSE.search(stripped) is None):
        return Extracted(stripped, BARE)
    return None


def read_gold(gold: str) -> Extracted:
    """The answer a gold states, when the gold is written like a response.

    Golds copied from solutions carry their answer in a box (``So the answer is
    \\[\\boxed{32349}\\]``), in several boxes (``\\boxed{1} papers and \\boxed{2} bins``: one
    answer of two values, in ``group``), in a final statement, or between math delimiters with
    a word around it (``$125$ miles``). A gold with none of that is returned unchanged, and so
    is the text of one that states no answer: a gold is never "not found".
    """
    if _WRITTEN_OUT.search(gold) is None:
        return Extracted(gold, BARE)
    body = _CHAT_TOKENS.sub("", strip_reasoning(gold))
    if spans := _boxes(body):
        group = tuple(dict.fromkeys(_box_group(body, spans)[0]))
        if len(group) > 1:
            return Extracted(", ".join(group), BOXES, group)
        return Extracted(text_of(body, *spans[-1]), BOXED)
    stripped = body.strip()
    if len(stripped) > _MAX_BARE_CHARS or "\n" in stripped:  # a solution, not an answer
        # Only an explicit "the answer is": a looser "so ... is" could cut a prose gold short.
        if (statement := _statement_match(body, _FINAL)) is not None:
            return Extracted(statement[1], STATEMENT)
        if (trailing := _trailing_math(body)) is not None:
            return Extracted(trailing[0], TRAILING_MATH)
    return Extracted(" ".join(_DELIMITER.sub(" ", stripped).split()), BARE)
