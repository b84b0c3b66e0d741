"""Checking one O-NNG answer: the static checks before Lean, then Lean.

The static checks decide what needs no Lean, at every noise level alike: the reply must hold
the JSON answer with a
``code`` string; code that declares the target must keep its statement (whitespace aside) as the
prompt demands; and it may use only its module's tactics under their current names (the closed
theory, :mod:`gapscope.onng.closed`). Each failure has its own verdict, so a report can tell a
format failure from a forbidden ``simp`` from a wrong proof. First of all, the model-written
code passes the Lean layer's command screen (:mod:`gapscope.lean.screen`): ``#eval``, ``macro``
and the like are ``forbidden_command`` (the library around the answer legitimately uses macros;
only the answer is screened). Only an answer that passes them all is sent to Lean, inside the
check file that also guards the statement there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gapscope.lean import CheckRequest, LeanBackend, LeanVerdict, Status, code_only, screen_code
from gapscope.onng.closed import disallowed_tactics
from gapscope.onng.lexicon import identifiers
from gapscope.onng.problemset import NAMESPACE, Problem, ProblemSet
from gapscope.onng.prompting import Answer, extract_answer
from gapscope.onng.render import Obfuscation, candidate_declaration, check_file, library_prefix

DISALLOWED_TACTIC = "disallowed_tactic"
STATEMENT_CHANGED = "statement_changed"
CODE_TOO_LONG = "code_too_long"
MAX_CODE_CHARS = 20_000
"""The longest answer code the static checks read. A level's proof is a few lines (the
longest reference proof is under 600 characters); code past this is not screened, it is
``code_too_long``, so no reply can make the checks slow (the screen is linear, but a run
checks thousands of replies)."""


@dataclass(frozen=True)
class StaticCheck:
    """The answer as extracted and what the checks before Lean found.

    ``status`` is a verdict reached without Lean (``code_too_long``, ``forbidden_command``,
    ``statement_changed``, ``disallowed_tactic``) or None; ``disallowed`` lists the
    forbidden tactics used.
    """

    answer: Answer
    status: str | None = None
    detail: str = ""
    disallowed: tuple[str, ...] = field(default=())

    @property
    def needs_lean(self) -> bool:
        """The answer passed every static check: only Lean can decide it now."""
        return self.answer.usable and self.status is None


def allowed_tactics(problem_set: ProblemSet, obf: Obfuscation, problem: Problem) -> set[str]:
    """The tactics ``problem`` may use, as the prompt names them under ``obf``."""
    return {obf.name(t) for t in problem_set.allowed_tactics(problem.module)}


def _normalized(text: str) -> str:
    return " ".join(text.split())


def changed_statement(obf: Obfuscation, problem: Problem, code: str) -> str | None:
    """The declared statement when code that declares the target states something else."""
    name = obf.name(problem.name)
    visible = code_only(code)  # a statement inside a comment, string or «name» states nothing
    if name not in set(identifiers(visible)):
        return None  # a proof body: the target's header is supplied
    match = re.search(rf"(?:theorem|lemma)\s+({re.escape(name)}\b.*?):=", visible, re.S)
    expected = _normalized(obf.apply(problem.header()).removeprefix("theorem "))
    stated = _normalized(code[match.start(1) : match.end(1)]) if match else None
    if stated != expected:
        return stated if stated is not None else f"no declaration of {name}"
    return None


def static_check(
    problem_set: ProblemSet, obf: Obfuscation, problem: Problem, reply: str
) -> StaticCheck:
    """Extraction, statement and closed-theory checks of ``reply`` (no Lean)."""
    answer = extract_answer(reply)
    if not answer.usable:
        return StaticCheck(answer, detail=f"no usable answer ({answer.status.value})")
    if len(answer.code) > MAX_CODE_CHARS:
        detail = f"the code has {len(answer.code)} characters, more than {MAX_CODE_CHARS}"
        return StaticCheck(answer, CODE_TOO_LONG, f"{detail}: not screened, not checked")
    forbidden = screen_code(answer.code)
    if forbidden is not None:
        return StaticCheck(answer, Status.FORBIDDEN.value, forbidden.verdict().detail)
    changed = changed_statement(obf, problem, answer.code)
    if changed is not None:
        detail = f"the target's statement was changed to: {changed}"
        return StaticCheck(answer, STATEMENT_CHANGED, detail)
    declaration = candidate_declaration(problem, obf, answer.code)
    bad = disallowed_tactics(declaration, allowed_tactics(problem_set, obf, problem))
    if bad:
        detail = f"tactics outside the closed theory: {', '.join(bad)}"
        return StaticCheck(answer, DISALLOWED_TACTIC, detail, tuple(bad))
    return StaticCheck(answer)


def lean_check(
    backend: LeanBackend,
    problem_set: ProblemSet,
    obf: Obfuscation,
    problem: Problem,
    code: str,
    timeout_s: float,
) -> LeanVerdict:
    """Lean's verdict on ``code`` in its check file; a backend failure is ``server_error``
    for this answer alone (nothing is known about the proof), never an exception."""
    request = CheckRequest(
        code=check_file(problem_set, obf, problem, code),
        timeout_s=timeout_s,
        # The check file must declare the target itself: a file that compiles without it
        # proves nothing about the problem (``missing_declaration``).
        required=(f"{obf.name(NAMESPACE)}.{obf.name(problem.name)}",),
        # The target as the problem set states it, after the same library: the solution's
        # theorem must have its type, on agreeing constants (gapscope.lean.replay / .kernel).
        challenge=(
            f"{library_prefix(problem_set, obf, problem.index)}\n\n"
            f"{obf.apply(problem.header())} := sorry\n\nend {obf.name(NAMESPACE)}\n"
        ),
    )
    try:
        return backend.check_many([request])[0]
    except Exception as err:  # a backend bug must cost one sample, not the run
        return LeanVerdict(Status.SERVER_ERROR, detail=f"{type(err).__name__}: {err}")
