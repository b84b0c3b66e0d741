"""The command screen: model-written Lean holds only what a proof needs, or is not checked.

Lean elaborates whatever a file says, and some commands run code or change the rules: ``#eval
IO.Process.run ...`` runs programs on the checking host; ``set_option debug.skipKernelTC true``
turns the kernel off; ``variable (h : False)`` + ``include h`` smuggles a hypothesis into the
theorem; ``macro_rules``/``notation``/``syntax``/``elab`` (``local`` or not) change what the
statement's symbols mean; an ``instance`` declared before the statement can change what its
``≤`` or ``2`` mean; ``#exit`` stops before the axiom queries; ``run_cmd``/``by_elab`` run
meta code. None of this belongs in a proof, so model output is screened before Lean sees it.

Allowed (the whitelist): declarations (``theorem``, ``lemma``, ``def``, ``abbrev``,
``example``, ``structure``, ``class``, ``inductive``, ``axiom``, ``opaque``, ``mutual``; with
``private``/``protected``/``noncomputable``/``partial``/``nonrec`` and the attributes in
:data:`ALLOWED_ATTRIBUTES`), ``open`` (also ``open ... in``), ``namespace``/``section``/
``end`` (an ``end`` must close a scope the code itself opened), and ``set_option`` for the
options in :data:`ALLOWED_OPTIONS` only (with a numeral value). ``axiom`` and ``sorry`` are
let through: the axiom rule of ``gapscope.lean.soundness`` turns them into a ``sorry`` verdict.

How: the code is read by the Lean lexer (``gapscope.lean.source``) and scanned token by
token, so keywords anywhere count (Lean starts a new command wherever a command keyword
appears, not only at the start of a line; ``set_option ... in`` also works inside terms and
tactics), and none in a comment, a string or a ``«…»`` name does. Every Lean command keyword
that is not on the whitelist is refused (:data:`FORBIDDEN_KEYWORDS`, and every ``#command``).
Interpolated strings (``s!"..."``, ``throwError``) are refused too: a proof never needs them.
The inside of a ``«…»`` name is screened as code as well (Lean may read it again after a
parse error in a tactic block), and code the lexer cannot read for certain (an unterminated
comment, an invalid escape, a comment mark glued to a symbol, ...) is refused whole: what
Lean would read there is unknown. One pass, linear in the code (runs of unclosed ``@[`` too).
A filter is never complete (an imported library can add commands), which is why local REPLs
also run sandboxed (``gapscope.lean.sandbox``); see docs/lean.md for the threat model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gapscope.lean.source import Kind, Lexed, Token, lex
from gapscope.lean.verdict import LeanVerdict, Status

ALLOWED_OPTIONS: frozenset[str] = frozenset(
    {"maxHeartbeats", "synthInstance.maxHeartbeats", "maxRecDepth"}
)
"""``set_option`` names a proof may set: resource limits, which change no meaning."""

ALLOWED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "simp",
        "reducible",
        "irreducible",
        "inline",
        "noinline",
        "specialize",
        "ext",
        "norm_cast",
        "push_cast",
        "elab_as_elim",
        "refl",
        "symm",
        "trans",
    }
)
"""Attributes a helper lemma may carry: they steer tactics, never what a statement means."""

SYNTAX_COMMANDS = (
    "macro",
    "macro_rules",
    "syntax",
    "elab",
    "elab_rules",
    "notation",
    "notation3",
    "infix",
    "infixl",
    "infixr",
    "prefix",
    "postfix",
    "declare_syntax_cat",
    "binder_predicate",
    "unif_hint",
)
"""The commands that extend Lean's syntax (a model may not send them; T2's command splitter
knows them as commands)."""

_RUNS_CODE = "runs code on the checking host"
_SYNTAX = "redefines syntax, which can change what the statement means"
_CONTEXT = "adds hidden parameters or hypotheses to later declarations"
_NOT_A_PROOF = "is not a command a proof needs"
FORBIDDEN_KEYWORDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "run_cmd",
            "run_elab",
            "run_meta",
            "run_tac",
            "by_elab",
            "initialize",
            "builtin_initialize",
        ),
        _RUNS_CODE,
    ),
    **dict.fromkeys(SYNTAX_COMMANDS, _SYNTAX),
    **dict.fromkeys(("variable", "include", "omit", "universe"), _CONTEXT),
    "instance": "declares an instance, which can change what the statement's symbols mean",
    "attribute": "changes attributes of existing declarations",
    "export": "adds aliases that can change how the statement's names resolve",
    "unsafe": "unsafe code escapes the kernel's checks",
    "include_str": "reads a file on the checking host into the proof (an API key, say)",
    "import": "imports belong to the header",
    **dict.fromkeys(("throwError", "throwErrorAt", "dbg_trace"), _NOT_A_PROOF),
    **dict.fromkeys(
        (
            "add_decl_doc",
            "register_simp_attr",
            "register_option",
            "register_builtin_option",
            "simproc",
            "dsimproc",
            "builtin_simproc",
            "declare_simp_like_tactic",
            "seal",
            "unseal",
        ),
        _NOT_A_PROOF,
    ),
}
"""Lean (core, Batteries, Mathlib) command keywords outside the whitelist, with the reason."""

_OPTION = re.compile(r"\s+([^\W\d][\w.]*)\s+(\S+)")
_SCOPE_OPENERS = frozenset({"namespace", "section", "mutual"})
_BRACKETS = {"[": 1, "]": -1}
_NOTABLE = frozenset({"#", "@", "set_option", "end", *_SCOPE_OPENERS, *FORBIDDEN_KEYWORDS})
"""The only words :func:`_refusal` has anything to say about (others it lets pass)."""
_UNDECIDED = "Lean may read it otherwise than the screen does, so the screen cannot vouch for it"
"""Why code the lexer cannot read for certain (``gapscope.lean.source.Undecided``) is refused."""


@dataclass(frozen=True)
class Forbidden:
    """The first command of the code that the screen refuses, where it is, and why."""

    command: str
    line: int
    reason: str

    def verdict(self) -> LeanVerdict:
        """The ``forbidden_command`` verdict that stands for the unchecked code."""
        return LeanVerdict(
            Status.FORBIDDEN,
            detail=f"forbidden command `{self.command}` (line {self.line}): {self.reason}",
        )


def _attributes(code: list[Token], words: list[str], at: int) -> list[str]:
    """The attribute names of the ``@[`` whose ``[`` is ``code[at]``: the first word of each
    comma-separated entry (``local``/``scoped`` aside), up to the matching ``]``. An unclosed
    list ends at the next ``@[``, so each token is read for one list at most (linear time);
    the scan goes on inside the list either way, so an unclosed ``@[`` hides nothing (Lean
    recovers from the parse error and elaborates the next command)."""
    names: list[str | None] = [None]
    depth = 0
    for n in range(at, len(code)):
        word = words[n]
        if n > at and word == "@" and _glued(code, words, n, "["):
            break
        depth += _BRACKETS.get(word, 0)
        if depth == 0:
            break
        if depth == 1 and word == ",":
            names.append(None)
        elif names[-1] is None and code[n].kind is Kind.IDENT and word not in ("local", "scoped"):
            names[-1] = word
    return [name or "" for name in names]


def _glued(code: list[Token], words: list[str], n: int, word: str | None = None) -> bool:
    """Whether ``code[n + 1]`` follows ``code[n]`` with no space between (and is ``word``)."""
    if n + 1 >= len(code) or code[n + 1].start != code[n].end:
        return False
    return word is None or words[n + 1] == word


def _check_option(masked: str, end: int) -> str | None:
    """None when the ``set_option`` ending at ``end`` is allowed, else what it sets."""
    option = _OPTION.match(masked, end)
    if option is None:
        return "set_option"
    name, value = option.groups()
    if name in ALLOWED_OPTIONS and value.isdigit():
        return None
    return f"set_option {name} {value}"


def _refusal(
    lexed: Lexed,
    code: list[Token],
    words: list[str],
    n: int,
    scopes: list[int],
    allowed: frozenset[str],
) -> tuple[str, str] | None:
    """(command, reason) when the command at ``code[n]`` is refused; counts the scopes the
    code opens in ``scopes[0]``."""
    token, word = code[n], words[n]
    if token.kind is not Kind.IDENT:
        if word == "#" and _glued(code, words, n) and code[n + 1].kind is Kind.IDENT:
            return f"#{words[n + 1]}", "`#` commands evaluate or print at check time"
        if word == "@" and _glued(code, words, n, "["):
            bad = [a for a in _attributes(code, words, n + 1) if a not in allowed]
            why = "only attributes that steer tactics are allowed"
            return (f"@[{bad[0]}]", why) if bad else None
        return None
    if word in FORBIDDEN_KEYWORDS:
        return word, FORBIDDEN_KEYWORDS[word]
    if word.endswith("!") and n + 1 < len(code) and words[n + 1].startswith('"'):
        return f'{word}"..."', "interpolated strings are not needed in a proof"
    if word == "set_option":
        option = _check_option(lexed.masked, token.end)
        only = f"only {', '.join(sorted(ALLOWED_OPTIONS))} may be set"
        return (option, only) if option is not None else None
    if word in _SCOPE_OPENERS:
        scopes[0] += 1
    elif word == "end":
        if scopes[0] == 0:
            return "end", "closes a namespace or section the code did not open"
        scopes[0] -= 1
    return None


def _first_forbidden(lexed: Lexed, allowed: frozenset[str]) -> tuple[int, str, str] | None:
    """(position, command, reason) of the first refused command among ``lexed``'s tokens."""
    comment, text = Kind.COMMENT, lexed.text
    code = [t for t in lexed.tokens if t.kind is not comment]
    words = [text[t.start : t.end] for t in code]
    scopes = [0]
    for n, word in enumerate(words):
        if word in _NOTABLE or word.endswith("!"):
            found = _refusal(lexed, code, words, n, scopes, allowed)
            if found is not None:
                return code[n].start, *found
    return None


def attributes_in(code: str) -> frozenset[str]:
    """The attribute names in ``code``'s ``@[...]`` lists (comments and strings are not code)."""
    lexed = lex(code)
    tokens = [t for t in lexed.tokens if t.kind is not Kind.COMMENT]
    words = [lexed.text[t.start : t.end] for t in tokens]
    return frozenset(
        name
        for n, word in enumerate(words)
        if word == "@" and _glued(tokens, words, n, "[")
        for name in _attributes(tokens, words, n + 1)
        if name
    )


def screen_code(code: str, also_allowed: frozenset[str] = frozenset()) -> Forbidden | None:
    """The first forbidden command in model-written ``code``, or None if it may be checked.

    ``also_allowed``: attributes allowed here beyond :data:`ALLOWED_ATTRIBUTES` (T2 allows
    those its record's own target carries: the ground truth must pass its own screen).

    Apply it to what the model wrote (a reply's proof, a generated statement), not to
    trusted text around it (library preambles may use macros). Lines are 1-based in ``code``.
    """
    lexed = lex(code)

    def line_of(index: int) -> int:
        return code.count("\n", 0, index) + 1

    if lexed.undecided is not None:
        at = lexed.undecided.position
        shown = code[at : at + 24].split("\n")[0]
        shown += "…" if len(shown) < len(code) - at else ""
        return Forbidden(shown, line_of(at), f"{lexed.undecided.what}: {_UNDECIDED}")
    allowed = ALLOWED_ATTRIBUTES | also_allowed
    readings = (lexed, lexed.second_reading())
    found = [f for f in (_first_forbidden(r, allowed) for r in readings) if f]
    if not found:
        return None
    at, command, reason = min(found)
    return Forbidden(command, line_of(at), reason)
