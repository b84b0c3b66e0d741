"""The OracleLadder authors' strict verifier cascade, as a grading mode for re-grading.

gapscope's own verifier (``gapscope.verify``) is deliberately more lenient than the cascade
the paper graded with (it reads answers outside ``\\boxed{}``, compares sets, intervals and
relations by meaning); on the cases checked it is right where they disagree. Re-grading the
authors' rollouts to reproduce *their* solved counts needs their grader instead. This module
is that cascade, written from the release's ``decomposer/verifier`` (``verifier.py``,
``math_reward.py``, ``symbolic.py``), stage by stage:

1. keep only what follows the last ``</think>``;
2. the last ``\\boxed{...}`` (or ``\\boxed `` up to a ``$``, or ``\\fbox{...}``), else
   NOT_ACCEPT "no \\boxed found in response";
3. MATH's ``strip_string`` equality of answer and gold (raw equality where the
   normalisation fails), reason "boxed match (math_reward)";
4. sympy: the last line of each side, the part after its last ``=``, ``a:b`` as a ratio,
   parsed with implicit multiplication and ``^`` as power; ``simplify(a - g) == 0``;
5. math-verify on ``\\boxed{...}`` of both sides after dropping thousands commas, turning
   ``;`` into ``,`` and a leading ``name =``; reason "math-verify equivalence";
6. otherwise NOT_ACCEPT with stage 4's reason. No answer schema, no LLM.

Differences from gapscope's verifier that decide verdicts (docs/verify.md lists them): no
answer outside a box; only the last box (an answer split over boxes fails); no set, interval
or relation semantics beyond what math-verify does; stage 4 compares the parts after ``=``
(``x=2`` equals ``y=2``). Stages 4 and 5 run in a killable worker with a wall-clock deadline
(``simplify`` can run for minutes); a check past it is NOT_ACCEPT "timeout", where the
authors' process would have waited.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from gapscope.ladder.strip_string import MalformedAnswer, strip_string
from gapscope.verify import TaskPool

NO_BOX = "no \\boxed found in response"
STRING_MATCH = "boxed match (math_reward)"
SYMBOLIC_MATCH = "symbolic equivalence"
MATH_VERIFY_MATCH = "math-verify equivalence"
PARSE_ERROR = "PARSE_ERROR: could not parse one side"
NOT_EQUIVALENT = "NOT_EQUIVALENT: expressions differ"
TIMEOUT = "timeout"

_RATIO = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*:\s*([+-]?\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class CascadeVerdict:
    """ACCEPT or NOT_ACCEPT, and the stage's reason in the authors' words."""

    accepted: bool
    reason: str

    @property
    def label(self) -> str:
        return "ACCEPT" if self.accepted else "NOT_ACCEPT"


def after_think(response: str) -> str:
    """What follows the last ``</think>`` (the whole response when there is none)."""
    return response.split("</think>")[-1].strip() if "</think>" in response else response


def last_box(text: str) -> str | None:
    """The content of the last box, by the release's rules; None when there is none.

    ``\\boxed x`` (a space, no braces) anywhere wins and runs to the next ``$``; otherwise
    the last ``\\boxed`` (or, without one, ``\\fbox``) up to its balancing brace.
    """
    if "\\boxed " in text:
        return text.split("\\boxed ")[-1].split("$")[0]
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
        if start < 0:
            return None
    depth = 0
    for end in range(start, len(text)):
        if text[end] == "{":
            depth += 1
        elif text[end] == "}":
            depth -= 1
            if depth == 0:
                box = text[start : end + 1]
                return box[len("\\boxed{") : -1] if box.startswith("\\boxed{") else box
    return None


def string_equal(answer: str, gold: str) -> bool:
    """Stage 3: equal after MATH's normalisation, or raw where it is undefined."""
    try:
        return strip_string(answer) == strip_string(gold)
    except MalformedAnswer:
        return answer == gold


def _candidate(text: str) -> str:
    lines = [line.strip() for line in text.strip().replace("$", "").splitlines() if line.strip()]
    if not lines:
        return ""
    candidate = lines[-1]
    if "=" in candidate:
        candidate = candidate.split("=")[-1].strip()
    if ":" in candidate and candidate.lower().startswith(("answer", "final")):
        candidate = candidate.split(":")[-1].strip()
    ratio = _RATIO.match(candidate)
    if ratio:
        candidate = f"({ratio.group(1)})/({ratio.group(2)})"
    return candidate


def _parse(text: str) -> object | None:
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    candidate = _candidate(text)
    if not candidate:
        return None
    transforms = (*standard_transformations, implicit_multiplication_application, convert_xor)
    try:
        parsed: object = parse_expr(candidate, transformations=transforms, evaluate=True)
        return parsed
    except Exception:  # the release catches every parse failure alike
        return None


def symbolic_reason(answer: str, gold: str) -> str:
    """Stage 4's reason: SYMBOLIC_MATCH, PARSE_ERROR or NOT_EQUIVALENT."""
    from sympy import simplify

    a, g = _parse(answer), _parse(gold)
    if a is None or g is None:
        return PARSE_ERROR
    try:
        if simplify(a - g) == 0:  # type: ignore[operator]
            return SYMBOLIC_MATCH
    except Exception:  # as released: a failed simplify is "expressions differ"
        pass
    return NOT_EQUIVALENT


def _for_math_verify(text: str) -> str:
    text = re.sub(r"(\d),(\d{3})", r"\1\2", text.strip())
    return re.sub(r"^[a-zA-Z_]\w*\s*=\s*", "", text.replace(";", ","))


def math_verify_equal(answer: str, gold: str) -> bool:
    """Stage 5: math-verify's default parse and verify (its own timeouts, as released)."""
    try:
        from math_verify import parse, verify

        gold_parsed = parse("\\boxed{" + _for_math_verify(gold) + "}")
        answer_parsed = parse("\\boxed{" + _for_math_verify(answer) + "}")
        return bool(gold_parsed and answer_parsed and verify(gold_parsed, answer_parsed))
    except Exception:  # the release abstains on any failure
        return False


def slow_stages(answer: str, gold: str) -> tuple[bool, str]:
    """Stages 4-6, the ones that may hang: run in a worker (module-level, sent by name)."""
    reason = symbolic_reason(answer, gold)
    if reason == SYMBOLIC_MATCH:
        return True, reason
    if math_verify_equal(answer, gold):
        return True, MATH_VERIFY_MATCH
    return False, reason


class StrictCascade:
    """The authors' cascade with stages 4-5 in a killable worker pool."""

    def __init__(self, timeout_s: float = 5.0, workers: int = 1, memory_mb: int = 2048) -> None:
        self.timeout_s = timeout_s
        self._pool: TaskPool[tuple[bool, str]] = TaskPool(slow_stages, workers, memory_mb)
        self._lock = threading.Lock()  # one caller at a time: scorers call from threads

    def check(self, response: str, gold: str) -> CascadeVerdict:
        """Grade one raw response against its gold."""
        answer = last_box(after_think(response))
        if answer is None:
            return CascadeVerdict(False, NO_BOX)
        if string_equal(answer, gold):
            return CascadeVerdict(True, STRING_MATCH)
        with self._lock:
            (result,) = self._pool.run([(answer, gold)], self.timeout_s, (False, TIMEOUT))
        return CascadeVerdict(*result)

    def close(self) -> None:
        self._pool.close()
