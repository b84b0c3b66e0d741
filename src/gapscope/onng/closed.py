"""The closed theory, enforced: a proof may use only the tactics its module lists.

The paper allows the local definitions and the listed tactics and no automation. Lean itself
cannot enforce that: core ``simp``, ``omega``, ``decide`` exist in every file, and so do the
game's tactics under their real names (``rw``) even when the prompt calls them ``x9z``. So
before Lean, the candidate's tactics are read off the text and each one that is a tactic of
Lean 4 (core, or a well-known Mathlib/Batteries one a model may reach for) but not in the
allowed set, under the current renaming, rejects the proof.

Reading tactics without a Lean parser follows the layout rule tactic blocks obey: a block
starts after ``by`` (or an alternative's ``=>``, or a bullet ``·``) at the column of its first
tactic, each tactic of the block starts at that column, and a deeper line continues the
tactic above (it is a term, not a tactic). Tactics also follow ``by``, ``;``, ``<;>`` and
an alternative's ``=>`` on one line. Only words that name a known tactic are judged, so a
term that happens to start a line (``h.symm``) is never a false alarm. The code is read
through the Lean lexer (``gapscope.lean.source.code_only``): comments, string literals and
the inside of ``«…»`` names are blanked, so ``"--"`` in a string hides no tactic after it and
``simp`` in a comment or string is no tactic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gapscope.lean import code_only

KNOWN_TACTICS: frozenset[str] = frozenset(
    """
    abel absurd ac_nf ac_rfl aesop all_goals and_intros any_goals apply apply?
    apply_assumption apply_fun apply_rules assumption bv_decide bv_omega by_cases by_contra
    by_contra! calc case case' cases cases' casesm change classical clear congr constructor
    constructorm contradiction contrapose contrapose! conv decide delta dsimp done dsimp?
    eq_refl erw exact exact? exacts exact_mod_cast exfalso exists ext fail field_simp first
    focus fun_induction funext gcongr generalize grind guard_hyp guard_target have hint
    induction induction' infer_instance injection injections interval_cases intro intros
    iterate left let linarith match native_decide next nlinarith nofun nomatch norm_cast
    norm_num norm_num1 nth_rewrite nth_rw obtain omega polyrith positivity push_cast push_neg
    rcases refine refine' rename rename_i repeat repeat' replace revert rewrite rfl rfl' right
    ring ring_nf rintro rw rw? rwa set show simp simp? simp_all simp_all? simp_arith simp_wf
    simpa simpa? skip solve_by_elim specialize split split_ands stop subst subst_eqs
    subst_vars suffices symm tauto trans trivial try unfold unfold_let use use! xyzzy zify
    """.split()  # noqa: SIM905 (a word list reads better than 150 quoted strings)
)
"""Tactics a proof could use in a file with no imports, and common Mathlib ones (which fail
in Lean anyway, but are reported here as what they are). ``sorry`` and ``admit`` are left to
Lean, whose ``sorry`` verdict already says what they are."""

_WORD = re.compile(r"[^\W\d][\w']*[?!]?")
_HEADER = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:private\s+|protected\s+)?(?:theorem|lemma|example|def)\b"
)
_INLINE = re.compile(r"(?:\bby|;|<;>)[ \t]+(" + _WORD.pattern + ")")
_ALTERNATIVE = re.compile(r"^\|[^\n]*?=>[ \t]*")
_BY = re.compile(r"\bby\b")
_OPENS_BLOCK = re.compile(r"(?:\bby|=>|·)\s*$")
_LEAD = re.compile(r"^(?:[·.][ \t]+|[({][ \t]*)+")


def _first_word(text: str) -> str | None:
    match = _WORD.match(text)
    return match.group() if match else None


def tactic_words(code: str) -> list[str]:
    """The words in tactic position of ``code``, in order (with repeats)."""
    found: list[str] = []
    blocks: list[int] = []  # columns of the open tactic blocks, innermost last
    opens = False  # the previous line ended with `by`, `=>` or a bullet
    in_proof = False
    for raw in code_only(code).splitlines():
        text = raw.strip()
        if not text:
            continue
        column = len(raw) - len(raw.lstrip())
        if column == 0 and _HEADER.match(text):
            blocks, opens, in_proof = [], False, False
        elif opens or (in_proof and (not blocks or column <= blocks[-1])):
            while blocks and blocks[-1] > column:
                blocks.pop()
            if not blocks or blocks[-1] != column:
                blocks.append(column)
            found.extend(_line_tactics(text, blocks, column))
        elif in_proof and text.startswith("|"):  # an alternative indented under its tactic
            found.extend(_line_tactics(text, blocks, column))
        found.extend(m.group(1) for m in _INLINE.finditer(text))
        if _BY.search(text):
            in_proof = True
        opens = bool(_OPENS_BLOCK.search(text))
    return found


def _line_tactics(text: str, blocks: list[int], column: int) -> list[str]:
    """The tactic starting a line of a tactic block (after bullets, brackets, an
    alternative's ``| pattern =>``); a bullet opens a block at its tactic's column."""
    lead = _LEAD.match(text)
    rest = text[lead.end() :] if lead else text
    if lead is not None and re.search(r"[·.]", lead.group()):
        blocks.append(column + lead.end())
    alternative = _ALTERNATIVE.match(rest)
    if alternative is not None:
        rest = rest[alternative.end() :]
    word = _first_word(rest)
    return [word] if word is not None else []


def disallowed_tactics(code: str, allowed: Iterable[str]) -> list[str]:
    """Known tactics used in ``code`` that are not ``allowed``, each once, in order."""
    permitted = frozenset(allowed)
    bad = [w for w in tactic_words(code) if w in KNOWN_TACTICS and w not in permitted]
    return list(dict.fromkeys(bad))
