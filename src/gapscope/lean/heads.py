"""Which declarations a piece of Lean source makes: one reader for every part that asks.

The soundness rule (``gapscope.lean.soundness``) appends ``#print axioms`` for each declaration
the code makes, and T2's splitter (``gapscope.t2.declarations``) finds the declaration that
replaces a target. If the two disagreed about what a declaration is or how it is named, a
reply could declare the target where the splitter sees it and the axiom query does not (a
target proved from a user ``axiom`` whose axioms nobody prints). So both read heads here.

The reader walks the tokens of :func:`gapscope.lean.source.lex` once, left to right, with no
regular expression over the text (linear time on any input; comments, strings and ``«…»``
insides are never code). A declaration starts at a declaration keyword token wherever it
stands: these words are reserved, no term contains one, and Lean's command parser starts the
next command at one even in the middle of a line. That covers every prefix at once:
doc comments, ``@[…]`` attributes, modifiers (``private``, ``noncomputable``, ``unsafe`` ...),
``open … in`` / ``set_option … in`` chains, and ``open Foo.in``, which is no prefix at all:
``Foo.in`` is one identifier (Lean's ``identFn`` reads the dotted part ``in``), so
``open Foo.in`` is a whole command and the keyword after it starts a declaration of its own.

Not heads: ``instance`` and ``class`` inside square brackets (the attribute names of
``@[instance]``, ``attribute [local instance]``), ``instance`` after ``deriving`` (``deriving
instance BEq for S`` names nothing). ``class inductive``/``class abbrev`` is one head of kind
``class``.

The name is the identifier token right after the keyword (after ``instance``, an optional
``(priority := …)`` first): dotted parts and ``«…»`` parts are one token, and explicit
universes (``target.{u}``) are separate tokens, so ``theorem target.{u}`` declares ``target``.
``lemma`` is a keyword only with Mathlib; without it a variable named ``lemma`` reads as a head,
whose axiom query then fails: the verdict is ``server_error``, never a wrong VALID.

Namespaces: ``namespace N`` opens ``N``, ``section`` and ``mutual`` open an anonymous scope,
``end`` closes the innermost scope; a head's :attr:`Head.qualified` name is its name under the
open namespaces (``_root_.x`` is ``x``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gapscope.lean.source import Kind, Lexed, Token, lex

DECLARATION_KINDS = (
    "theorem",
    "lemma",
    "def",
    "abbrev",
    "instance",
    "structure",
    "class",
    "inductive",
    "axiom",
    "opaque",
    "example",
)
_KEYWORDS = frozenset(DECLARATION_KINDS)
_ATTRIBUTE_NAMES = frozenset({"instance", "class"})
"""Declaration keywords that are also attribute names (inside ``[…]`` they declare nothing)."""
_CLASS_OF = frozenset({"inductive", "abbrev"})
_RESERVED = _KEYWORDS | {"where", "extends", "deriving", "namespace", "section", "end", "mutual"}
"""Words that are never a declaration's name (after ``instance``, ``where`` may follow)."""


@dataclass(frozen=True, slots=True)
class Head:
    """One declaration of a text.

    ``name``: as written (guillemets kept), None for ``example`` and unnamed instances.
    ``keyword``: the keyword's token (``class`` for ``class inductive``). ``namespace``: the
    namespaces open at the head, joined by dots (``""`` at the top).
    """

    kind: str
    name: str | None
    keyword: Token
    namespace: str = ""

    @property
    def qualified(self) -> str | None:
        """The name Lean gives the constant: under the open namespaces, ``_root_.`` removed."""
        if self.name is None:
            return None
        return qualify(self.namespace, self.name)


def qualify(namespace: str, name: str) -> str:
    """``name`` declared inside ``namespace`` (``_root_.x`` escapes it)."""
    if name.startswith("_root_."):
        return name.removeprefix("_root_.")
    return f"{namespace}.{name}" if namespace else name


def read_heads(source: str | Lexed) -> list[Head]:
    """Every declaration head of ``source``, in order (see the module docstring)."""
    lexed = source if isinstance(source, Lexed) else lex(source)
    code = [t for t in lexed.tokens if t.kind is not Kind.COMMENT]
    words = [lexed.word(t) for t in code]
    closing = _closing_parens(code, words)
    scopes = [""]  # the namespace inside each open scope (a section or mutual keeps its own)
    found: list[Head] = []
    square = 0
    i = 0
    while i < len(code):
        token, word = code[i], words[i]
        ident = token.kind is Kind.IDENT
        if token.kind is Kind.SYMBOL and word in ("[", "]"):
            square = square + 1 if word == "[" else max(square - 1, 0)
        elif ident and word == "namespace" and _ident_at(code, words, i + 1):
            scopes.append(qualify(scopes[-1], words[i + 1]))
            i += 1
        elif ident and word in ("section", "mutual"):
            scopes.append(scopes[-1])
        elif ident and word == "end":
            if len(scopes) > 1:
                scopes.pop()
        elif ident and word in _KEYWORDS and not _attribute_word(words, i, square):
            keyword, kind = token, word
            if word == "class" and i + 1 < len(words) and words[i + 1] in _CLASS_OF:
                i += 1
            name_at = _skip_priority(words, closing, i + 1) if word == "instance" else i + 1
            named = kind != "example" and _ident_at(code, words, name_at)
            found.append(Head(kind, words[name_at] if named else None, keyword, scopes[-1]))
            if named:
                i = name_at
        i += 1
    return found


def _ident_at(code: list[Token], words: list[str], i: int) -> bool:
    return i < len(code) and code[i].kind is Kind.IDENT and words[i] not in _RESERVED


def _attribute_word(words: list[str], i: int, square: int) -> bool:
    """``instance``/``class`` naming an attribute, or the ``instance`` of ``deriving instance``."""
    word = words[i]
    return (word in _ATTRIBUTE_NAMES and square > 0) or (
        word == "instance" and i > 0 and words[i - 1] == "deriving"
    )


def _closing_parens(code: list[Token], words: list[str]) -> dict[int, int]:
    """Token index of each ``(`` -> that of its ``)``, matched in one pass (none when open)."""
    closing: dict[int, int] = {}
    stack: list[int] = []
    for j, token in enumerate(code):
        if token.kind is Kind.SYMBOL and words[j] == "(":
            stack.append(j)
        elif token.kind is Kind.SYMBOL and words[j] == ")" and stack:
            closing[stack.pop()] = j
    return closing


def _skip_priority(words: list[str], closing: dict[int, int], i: int) -> int:
    """The index after ``(priority := …)`` at ``i`` (``i`` itself when there is none; the end
    when it is never closed)."""
    if not (i + 1 < len(words) and words[i] == "(" and words[i + 1] == "priority"):
        return i
    return closing.get(i, len(words) - 1) + 1
