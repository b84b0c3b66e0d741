"""Lean 4 source, read just well enough for T2: top-level declarations and their heads.

T2 needs to know, in a piece of Lean text, where each top-level declaration starts and ends
(to attribute Lean's messages by line), its kind and name (to tell a renamed answer from the
target), which identifiers it uses (to find the target's dependents), whether it uses
``sorry``, and whether a target was cut off.

Commands are found the way Lean's command parser would meet them, on the Lean lexer's tokens
(``gapscope.lean.source.lex``: comments and strings are never code): a command starts only at
a command keyword (``theorem``, ``def``, ``open``, ``namespace``, ``#eval``, ``@[``, ``/--``,
``private`` ...) in column 0, outside every open bracket (a declaration keyword, which no
term can contain, even inside one: Lean resumes there after a statement left unclosed). Any
other line in column 0 continues the command before it - a statement continued at column 0,
``by sorry`` at column 0, a line starting with ``:``, ``:=``, ``|``, ``(`` or an operator -
since Lean itself does not care about columns there; cutting such a line off misplaces its
errors in another declaration. A doc comment, attributes, modifiers and ``open … in`` start
the declaration they precede.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

from gapscope.lean import (
    DECLARATION_KINDS,
    SYNTAX_COMMANDS,
    Kind,
    Lexed,
    code_only,
    lex,
    read_heads,
)

_MODIFIER_WORDS = frozenset(
    {"private", "protected", "noncomputable", "partial", "unsafe", "nonrec", "scoped", "local"}
)
"""Words that open a command whose keyword comes after them (``private theorem``)."""
_COMMAND_WORDS = frozenset(
    {
        *DECLARATION_KINDS,
        *("namespace", "section", "end", "mutual", "open", "export", "variable", "universe"),
        *("set_option", "attribute", "import", *SYNTAX_COMMANDS),
        *("initialize", "builtin_initialize", "omit", "include"),
        *("irreducible_def", "alias", "add_decl_doc", "unseal", "seal", "library_note"),
        *("suppress_compilation", "assert_not_exists", "compile_inductive", "deriving"),
    }
)
"""Words that start a top-level command in column 0 (``deriving`` only as ``deriving
instance``: alone it is a clause of the structure above)."""
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
        return self._has_sorry

    @cached_property
    def _has_sorry(self) -> bool:
        return bool(_SORRY.search(code_only(self.text)))

    def identifiers(self) -> list[str]:
        """The identifier tokens of the code, in order, its own name left out.

        Read with the Lean lexer, so nothing inside a comment, a string or a ``«…»`` name is an
        identifier, and ``foo_bar`` or ``foo₂`` is one token (never a use of ``foo``)."""
        lexed = lex(self.text)
        words = [lexed.word(t) for t in lexed.tokens if t.kind is Kind.IDENT]
        if self.name is not None and self.name in words:
            words.remove(self.name)  # the first occurrence is the head's
        return words

    def uses(self, short_names: Collection[str]) -> bool:
        """Whether an identifier has one of ``short_names`` as a dotted component.

        ``double_eq``, ``Nat.double_eq`` and ``double_eq.symm`` all use ``double_eq``; T2 built
        its graph from short names too (a namespace can hide the rest of the name)."""
        return not self.name_parts.isdisjoint(short_names)

    @cached_property
    def name_parts(self) -> frozenset[str]:
        """Every dotted component of every identifier (lexed once per declaration: a record's
        successor search asks each declaration many times)."""
        return frozenset(c for word in self.identifiers() for c in name_components(word))


_COMPONENT = re.compile(r"«([^»]*)»|([^.«]+)")


def name_components(word: str) -> list[str]:
    """``A.«b c».d`` -> ``["A", "b c", "d"]``."""
    return [m[1] if m[1] is not None else m[2] for m in _COMPONENT.finditer(word)]


def head(text: str) -> tuple[str, str | None] | None:
    """(kind, name) of the first declaration in a declaration text, None when it makes none.

    Read by :func:`gapscope.lean.heads.read_heads`, the reader the soundness rule's axiom queries
    use: whatever this calls the target is a declaration those queries ask about. The name
    is as written (``«…»`` kept, explicit universes ``.{u}`` left out)."""
    found = read_heads(text)
    return (found[0].kind, found[0].name) if found else None


def split_declarations(text: str) -> list[Declaration]:
    """The top-level commands of ``text`` in order, each with its line range."""
    lines = text.split("\n")
    stripped = code_only(text).split("\n")
    starts = _command_lines(text)
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


def _command_lines(text: str) -> list[int]:
    """The 0-based lines where a command starts (module docstring): a command keyword in
    column 0 outside brackets, or the doc comment, attribute or modifier right before one.

    Code before the first such line (a fragment that starts mid-command) is one command. What
    follows a place the lexer cannot decide belongs to the command before it."""
    lexed = lex(text)
    tokens = lexed.tokens
    starts: list[int] = []
    depth = 0
    prefix = False  # the current command is, so far, only a doc comment/attributes/modifiers
    previous = ""
    lines = _LineCounter(text)
    for i, token in enumerate(tokens):
        word = lexed.word(token)
        if token.kind is Kind.SYMBOL and word in _OPENING:
            depth += 1
        elif token.kind is Kind.SYMBOL and word in _PAIRS:
            depth = max(depth - 1, 0)
        opener = _opener(lexed, i)
        at_start = token.start == 0 or text[token.start - 1] == "\n"
        reserved = opener == "prefix" or word in DECLARATION_KINDS
        if at_start and opener and not prefix and (depth == 0 or reserved):
            # A declaration keyword cannot sit inside a term: where a bracket was left open (a
            # truncated statement), Lean gives up on it and resumes at that keyword.
            depth = 0
            if previous != "in":  # ``open Foo in`` / ``set_option … in`` scope the next one
                starts.append(lines.at(token.start))
            prefix = opener == "prefix"
        elif prefix and depth == 0 and opener != "prefix" and word not in _PAIRS:
            prefix = False  # the keyword (or a command this reader does not know) came
        if token.kind is not Kind.COMMENT:
            previous = word
    code = [t for i, t in enumerate(tokens) if t.kind is not Kind.COMMENT or _opener(lexed, i)]
    if code:
        line = text.count("\n", 0, code[0].start)
        if not starts or starts[0] > line:
            starts.insert(0, line)
    return starts


class _LineCounter:
    """The 0-based line of each offset asked, for offsets asked in increasing order: counts
    only the newlines since the last one (counting from the start each time is quadratic in
    a reply of many commands)."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 0

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _opener(lexed: Lexed, i: int) -> str | None:
    """``keyword`` if token ``i`` is a command keyword, ``prefix`` if it is a doc comment,
    attribute or modifier (the keyword follows), else None."""
    token = lexed.tokens[i]
    word = lexed.word(token)
    after = lexed.tokens[i + 1] if i + 1 < len(lexed.tokens) else None
    next_word = lexed.word(after) if after is not None else ""
    glued = after is not None and after.start == token.end
    if token.kind is Kind.COMMENT:  # a module doc ``/-!`` is a comment here: no code in it
        return "prefix" if word.startswith("/--") else None
    if token.kind is Kind.SYMBOL:
        if word == "@" and glued and next_word == "[":
            return "prefix"
        if word == "#" and glued and after is not None and after.kind is Kind.IDENT:
            return "keyword"
        return None
    if token.kind is not Kind.IDENT:
        return None
    if word in _MODIFIER_WORDS:
        return "prefix"
    if word == "deriving":
        return "keyword" if next_word == "instance" else None
    return "keyword" if word in _COMMAND_WORDS else None


def is_hard(code: str) -> bool:
    """Whether ``code`` declares a theorem (``theorem``/``lemma``): T2's Hard target.

    The paper's Hard subset is the Prop-typed targets, whose answer must state the
    proposition *and* prove it; T2's released ``prop`` files hold exactly the
    ``theorem``/``lemma`` targets (2 of ``existing_datasets.all``'s 122). A definition of type
    ``Prop`` (``def IsGood (n : Nat) : Prop := ...``) states a proposition but proves
    nothing: not Hard. (A ``def`` whose type is itself a proposition is Hard to Lean's
    ``Meta.isProp``, which ``gapscope t2 mine`` uses; from text it is a definition.)"""
    found = head(code)
    return found is not None and found[0] in THEOREM_LIKE_KINDS


_PAIRS = {")": "(", "]": "[", "}": "{", "⟩": "⟨", "⦄": "⦃", "»": "«"}
_OPENING = frozenset(_PAIRS.values())


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
