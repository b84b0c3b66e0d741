"""BEqL and BEq+: is the generated theorem *equivalent* to the original? (``beq``)

The paper argues that compile-based and equivalence-based metrics disagree with testing
accuracy; its release measures equivalence with ``src/evaluations/evaluate_beq.py`` (after
Poiroux et al.'s BEq): both statements are cut at their first top-level ``:=``, renamed
``beq_base_theorem`` / ``beq_target_theorem``, the base admitted with ``sorry`` and the target
proved from it, after the code before the target, in both directions (the original as base,
then the answer as base). BEqL: ``exact?`` proves both directions. BEq+: BEqL, or one of the
strategies ``apply`` and ``convert … using 0..4`` followed by a fixed cascade
(tauto / simp_all_arith! / noncomm_ring / exact?) proves both directions. A direction is
proved when Lean reports no error and either suggests a proof naming the base ("Try this")
or needs no suggestion (at most the base's one ``sorry`` warning).

gapscope runs the same programs through the file track's Lean backend, with these differences
from the release, each on purpose:

- the programs are checked with the record's own header; the release injects
  ``import Mathlib.Tactic.LibrarySearch``, a module only some Mathlib versions have
  (``exact?`` is part of ``Mathlib.Tactic`` in the others);
- the cascade's tactics are separate lines: the release writes them as one line joined by a
  literal backslash-n (``"all_goals intros\\\\nfirst | ..."`` in a Python f-string), which Lean
  cannot parse, so its ``apply``/``convert`` strategies never prove a direction;
- only theorem targets are compared (the release reports definitions as unsupported too); a
  definition's sample has no BEq verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gapscope.lean import CheckRequest, LeanVerdict, Status
from gapscope.t2.declarations import is_hard
from gapscope.t2.evaluate import Checker
from gapscope.t2.records import T2Record

BASE = "beq_base_theorem"
TARGET = "beq_target_theorem"
PLUS_STRATEGIES = ("apply", *(f"convert {n}" for n in range(5)))
"""BEq+'s strategies after ``exact?``, in the release's order."""

CASCADE = (
    "all_goals intros",
    "first | (all_goals try tauto) ; (all_goals try simp_all_arith!) ;"
    " (all_goals try noncomm_ring) ; (all_goals try exact?)"
    " | all_goals ((try tauto) ; (try simp_all_arith!) ; (try noncomm_ring) ; (try exact?))",
)
"""The release's closing tactics after ``apply``/``convert`` (one tactic per line here)."""

_MODIFIERS = ("noncomputable", "protected", "private")
_OPEN, _CLOSE = "([{", ")]}"


def _strip_decorations(code: str) -> str:
    """The declaration without its leading doc comments and attributes."""
    text = code.strip()
    while text.startswith(("/--", "@[")):
        if text.startswith("/--"):
            end = text.find("-/")
            if end < 0:
                return text
            text = text[end + 2 :].strip()
            continue
        depth = 0
        for i, ch in enumerate(text):
            depth += (ch == "[") - (ch == "]")
            if depth == 0 and ch == "]":
                text = text[i + 1 :].strip()
                break
        else:
            return text
    return text


def statement(code: str) -> str | None:
    """A theorem's statement: its text up to the first ``:=`` outside brackets and strings
    (the whole text when it has none); None when ``code`` does not declare a theorem."""
    text = _strip_decorations(code)
    words = text.split()
    while words and words[0] in _MODIFIERS:
        words = words[1:]
    if not words or words[0] not in ("theorem", "lemma"):
        return None
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = text.find('"', i + 1)
            if i < 0:
                break
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif text.startswith(":=", i) and depth == 0:
            return text[:i].rstrip()
        i += 1
    return text.rstrip()


_HEAD = re.compile(r"((?:(?:noncomputable|protected|private)\s+)*(?:theorem|lemma)\s+)(\S+)")


def renamed(theorem: str, name: str) -> str:
    """``theorem`` (a statement :func:`statement` returned) under ``name``."""
    return _HEAD.sub(lambda m: m[1] + name, theorem, count=1)


def direction_program(base: str, target: str, strategy: str) -> str:
    """The base admitted, the target proved from it with ``strategy`` (``exact?`` or one of
    :data:`PLUS_STRATEGIES`)."""
    steps = ["try intros", "try symm_saturate"]
    if strategy == "exact?":
        steps.append("exact?")
    elif strategy == "apply":
        steps += [f"apply {BASE}", *CASCADE]
    else:
        using = strategy.split()[1]
        steps += [f"convert (config := .unfoldSameFun) {BASE} using {using}", *CASCADE]
    proof = "\n".join(f"  {step}" for step in steps)
    return f"{renamed(base, BASE)} := sorry\n\n{renamed(target, TARGET)} := by\n{proof}"


def proved(verdict: LeanVerdict) -> bool:
    """The release's rule: no error, and a suggestion naming the base or none needed (at most
    the base's own ``sorry`` warning)."""
    if verdict.status not in (Status.VALID, Status.SORRY, Status.LEAN_ERROR):
        return False
    if any(m.severity == "error" for m in verdict.messages):
        return False
    if any("Try this:" in m.data and BASE in m.data for m in verdict.messages):
        return True
    return sum("declaration uses 'sorry'" in m.data for m in verdict.messages) <= 1


@dataclass(frozen=True)
class Equivalence:
    """A theorem answer's BEq verdicts; ``strategy``: what proved both directions."""

    beql: bool
    beq_plus: bool
    strategy: str | None = None


def equivalence(
    record: T2Record, generated: str, check: Checker, timeout_s: float
) -> Equivalence | None:
    """BEqL and BEq+ of ``generated`` against ``record``'s target; None for a target that is
    not a theorem or an answer with no theorem statement (no verdict, as in the release)."""
    if not is_hard(record.target_code):
        return None
    truth, answer = statement(record.target_code), statement(generated)
    if truth is None or answer is None:
        return None
    before = record.before_target_code.strip("\n")

    def both(strategy: str) -> list[CheckRequest]:
        programs = (
            direction_program(truth, answer, strategy),
            direction_program(answer, truth, strategy),
        )
        return [
            CheckRequest("\n\n".join(p for p in (before, program) if p), record.header, timeout_s)
            for program in programs
        ]

    if all(proved(v) for v in check(both("exact?"))):
        return Equivalence(beql=True, beq_plus=True, strategy="exact?")
    requests = [r for strategy in PLUS_STRATEGIES for r in both(strategy)]
    verdicts = check(requests)
    for n, strategy in enumerate(PLUS_STRATEGIES):
        if all(proved(v) for v in verdicts[2 * n : 2 * n + 2]):
            return Equivalence(beql=False, beq_plus=True, strategy=strategy)
    return Equivalence(beql=False, beq_plus=False)
