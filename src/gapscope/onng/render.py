"""Rendering the (obfuscated) library and the per-problem check files.

The Lean file has three parts: tactic macros (aliases of renamed core tactics and the
library's own ``use``), the renamed library preamble, and the renamed problems with their
reference proofs. A check file for problem k holds problems 0..k-1 with their reference
proofs, the candidate, and a guard ``example : <statement> := @<name>`` that fails unless the
candidate proved exactly the target statement under the target name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gapscope.onng.lexicon import identifiers, rename
from gapscope.onng.obfuscate import build_renaming
from gapscope.onng.problemset import NAMESPACE, Problem, ProblemSet, load_problem_set
from gapscope.onng.tactics import macros

# A word in tactic position: first on its line (after an optional `| alt args =>`), after
# `by`, or after `;`.
_TACTIC_POSITION = re.compile(
    r"(?m)(^[ \t]*(?:\|[^\n]*?=>[ \t]*)?|\bby[ \t]+|;[ \t]*)([^\W\d][\w']*)"
)


@dataclass(frozen=True)
class Obfuscation:
    """One consistent renaming of the whole problem set at (lam, seed)."""

    lam: float
    seed: int
    renaming: dict[str, str]
    tactics: frozenset[str]

    def apply(self, text: str) -> str:
        """``text`` with declared names renamed wherever they occur as tokens, and tactic
        names renamed only in tactic position (``intro`` is also ``Exists.intro``'s case)."""

        def tactic(match: re.Match[str]) -> str:
            word = match.group(2)
            return match.group(1) + (self.renaming[word] if word in self.tactics else word)

        declared = {k: v for k, v in self.renaming.items() if k not in self.tactics}
        return rename(_TACTIC_POSITION.sub(tactic, text), declared.get)

    def name(self, original: str) -> str:
        return self.renaming.get(original, original)


def obfuscation(problem_set: ProblemSet, lam: float, seed: int) -> Obfuscation:
    """The renaming of the set's names and tactics at noise ``lam``, seeded by ``seed``."""
    renaming = build_renaming(
        problem_set.vocabulary(), lam, seed, reserved=problem_set.all_identifiers()
    )
    return Obfuscation(lam, seed, renaming, frozenset(problem_set.tactics))


def library_prefix(problem_set: ProblemSet, obf: Obfuscation, upto: int) -> str:
    """Macros, library and the first ``upto`` problems with reference proofs (namespace open)."""
    parts = [
        *macros(problem_set.tactics, obf.renaming),
        obf.apply(problem_set.library),
        *(obf.apply(p.declaration()) for p in problem_set.problems[:upto]),
    ]
    return "\n\n".join(parts)


def library_file(problem_set: ProblemSet, obf: Obfuscation) -> str:
    """The whole library as one Lean file."""
    body = library_prefix(problem_set, obf, len(problem_set.problems))
    return f"{body}\n\nend {obf.name(NAMESPACE)}\n"


LEAN_LIBRARY = "GapscopeNNG"
"""The name O-NNG's library gets in a Lean workspace (``import GapscopeNNG``)."""


def workspace_libraries() -> dict[str, str]:
    """What O-NNG installs into a Lean workspace: its library with the original names.

    Checks do not need it (each check file carries the renamed library); it is there to read
    and to try proofs in by hand.
    """
    problem_set = load_problem_set()
    return {LEAN_LIBRARY: library_file(problem_set, obfuscation(problem_set, 0.0, 0))}


def candidate_declaration(problem: Problem, obf: Obfuscation, code: str) -> str:
    """The model's code as a declaration of the target.

    Code that mentions the target's (renamed) name is taken as the full theorem; otherwise it
    is a proof body and gets the target's header (``by`` added unless the code starts with it).
    """
    name = obf.name(problem.name)
    code = code.strip("\n")
    if name in set(identifiers(code)):
        return code
    header = obf.apply(problem.header())
    if code.lstrip().startswith("by"):
        return f"{header} :=\n{code}"
    return f"{header} := by\n{_indent(code)}"


def check_file(problem_set: ProblemSet, obf: Obfuscation, problem: Problem, code: str) -> str:
    """The Lean file that decides the candidate ``code`` for ``problem``."""
    guard = f"example : {obf.apply(problem.closed_statement())} := @{obf.name(problem.name)}"
    return (
        f"{library_prefix(problem_set, obf, problem.index)}\n\n"
        f"{candidate_declaration(problem, obf, code)}\n\n{guard}\n\n"
        f"end {obf.name(NAMESPACE)}\n"
    )


def _indent(code: str) -> str:
    return "\n".join(f"  {line}" if line.strip() else "" for line in code.splitlines())
