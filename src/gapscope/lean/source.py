"""Lean 4 source read token by token, the way Lean's own tokenizer reads it.

Statement matching (``prove``), declaration discovery (``soundness``, T2) and the command
screens (``screen``, O-NNG's closed theory) all search model-written Lean for keywords and
statements. Text inside a comment or a literal is not code: a reply that writes the official
statement inside ``/- -/``, a string or a ``«…»`` name must not count as stating it, and
``"#eval"`` inside a string runs nothing. Every such scan reads the code through :func:`lex`,
one left-to-right pass in linear time (no recursion, no backtracking regex).

What it follows, from Lean 4's ``Lean.Parser.Basic`` (``whitespace``, ``tokenFnAux``):

- ``--`` comments run to the end of the line. ``/-`` comments nest (``finishCommentBlock``:
  each ``/-`` opens, each ``-/`` closes) and, as in ``whitespace``, the character right after
  ``/-`` is skipped before nesting is counted, so ``/-/- -/`` is one closed comment. Doc
  comments ``/--`` and ``/-!`` are tokens whose body is read the same way.
- ``"..."`` strings (``strLitFnAux``/``quotedCharCoreFn``) with the escapes ``\\\\ \\" \\'
  \\n \\t \\r``, ``\\x`` + 2 hex digits, ``\\u`` + exactly 4 hex digits, and string gaps
  (``\\`` + a newline + indentation, one newline only). Raw strings ``r"..."``, ``r#"..."#``
  (any number of ``#``; ``rawStrLitFnAux``), only where ``r`` starts a token.
- Char literals (``charLitFnAux``): a ``'`` where a token starts, not followed by another
  ``'``, one character or one escape, then ``'``. Inside an identifier ``'`` is a letter
  (``h'``), and after a digit a new token starts (``2'a'`` is a numeral and a char).
- Identifiers (``identFnAux``): ``isIdFirst``/``isIdRest`` as Lean defines them (ASCII
  letters, Greek but λ Π Σ, Coptic, Latin-1 and Latin Extended-A letters, letter-like
  symbols, subscripts; not Python's ``isalpha``), dotted parts, and ``«…»`` parts read up to
  the next ``»`` (newlines included, no escapes, ``isIdBeginEscape``). Keywords are
  identifiers here. Numerals as ``numberFnAux`` reads them (``0x``/``0b``/``0o``, ``2.5e-3``).
- Interpolated strings (``interpolatedStrFn``): their ``{…}`` parts are code. Lean decides by
  the keyword before the string (``s!``, ``m!``, ``throwError``, ``println!``, anything a
  library declares), which a lexer cannot know, so every string is read both ways: a string
  whose plain and interpolated readings could end in different places is undecided.

Symbols are read one character a token: Lean's multi-character tokens come from a table that
the imports extend (Mathlib's ``⁻¹'``, ``''``), which a lexer cannot know. That matters only
where a token could swallow the first character of a comment mark or a char literal.

Anything the lexer cannot decide, or that Lean rejects while reading a token, is reported as
:class:`Undecided`; the reading stops there and the screen refuses the code (fail closed):

- an unterminated comment, string, char literal or ``«…»`` name, a malformed char literal;
- an invalid escape (``\\q``, and ``\\u{41}``: Lean reads exactly 4 hex digits after ``\\u``),
  a string gap with two newlines. Lean reports these inside the token and resumes parsing
  right there, so the rest of the string would be read as code;
- a comment mark glued to a symbol (``<--``, ``\\/-``: a longer token may swallow its first
  character, and then no comment starts), and a valid char literal glued to a symbol;
- a string whose interpolated reading could end elsewhere: a ``{…}`` part unbalanced or holding
  a quote, ``'``, ``«``, a backquote, a backslash or a comment mark;
- an identifier whose second reading does not end where it ends. Lean resumes after a parse
  error where the error was reported, and its tactic parser reports an unknown identifier one
  character in (``errorAtSavedPos``), so an identifier may be read again from its second
  character: ``h'"' …`` then starts a char literal and what followed it is code, ``hr"…`` a
  raw string, and the inside of ``«x #eval …»`` is code. The second readings of ``«…»``
  names are handed to the screen (:meth:`Lexed.second_reading`); one whose inside opens a
  comment or literal that runs past the ``»`` (``«--»``, ``«"»``, ``«/-»``) is undecided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple


class Kind(StrEnum):
    """What a token is; keywords are identifiers, punctuation comes one character a token."""

    IDENT = "ident"
    NUMBER = "number"
    SYMBOL = "symbol"
    COMMENT = "comment"
    STRING = "string"
    CHAR = "char"


HIDDEN: frozenset[Kind] = frozenset({Kind.COMMENT, Kind.STRING, Kind.CHAR})
"""Tokens whose text is not code: blanked by :attr:`Lexed.masked`."""


class Token(NamedTuple):
    """``text[start:end]`` is one token of kind ``kind`` (a tuple: lexing makes many)."""

    kind: Kind
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Undecided:
    """Where the lexer stopped trusting its reading, and what it found there."""

    position: int
    what: str


@dataclass(frozen=True)
class Lexed:
    """The tokens of ``text``, in order. ``undecided`` is the first place where Lean could
    read otherwise (None when the reading is certain); the tokens stop before it. ``reread``:
    the second reading of every ``«…»`` name's inside (see the module docstring)."""

    text: str
    tokens: tuple[Token, ...]
    undecided: Undecided | None = None
    reread: tuple[Token, ...] = field(default=())

    @cached_property
    def masked(self) -> str:
        """``text`` with only its code visible: comments and literals blanked to spaces, the
        inside of ``«…»`` names to ``_``, and whatever no token covers (after an undecided
        token nothing is known to be code) blanked too; newlines are kept. Offsets are kept,
        so a match in the masked text indexes ``text``; a ``«theorem …»`` name stays one
        identifier, and no keyword or statement can be found inside it."""
        parts: list[str] = []
        at = 0
        for token in self.tokens:
            parts.append(_gap(self.text[at : token.start]))
            piece = self.text[token.start : token.end]
            if token.kind in HIDDEN:
                piece = _blank(piece, " ")
            elif token.kind is Kind.IDENT and "«" in piece:
                piece = _NAME_PART.sub(lambda m: "«" + _blank(m[1], "_") + "»", piece)
            parts.append(piece)
            at = token.end
        parts.append(_gap(self.text[at:]))
        return "".join(parts)

    def word(self, token: Token) -> str:
        return self.text[token.start : token.end]

    def second_reading(self) -> Lexed:
        """The tokens of every ``«…»`` name's inside, read as code, as one token stream
        over the same text."""
        return Lexed(self.text, self.reread)


_NAME_PART = re.compile(r"«([^»]*)»")
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str, fill: str) -> str:
    return _NOT_NEWLINE.sub(fill, text)


def _gap(text: str) -> str:
    """Text between tokens: whitespace in a full reading, anything in a second one."""
    return text if not text or text.isspace() else _blank(text, " ")


def code_only(code: str) -> str:
    """``code`` as the scans should see it: :attr:`Lexed.masked` of the whole text."""
    return lex(code).masked


def _letter_like(o: int) -> bool:
    return (
        (0x3B1 <= o <= 0x3C9 and o != 0x3BB)
        or (0x391 <= o <= 0x3A9 and o not in (0x3A0, 0x3A3))
        or 0x3CA <= o <= 0x3FB
        or 0x1F00 <= o <= 0x1FFE
        or 0x2100 <= o <= 0x214F
        or 0x1D49C <= o <= 0x1D59F
        or (0xC0 <= o <= 0xFF and o not in (0xD7, 0xF7))
        or 0x100 <= o <= 0x17F
    )


def _subscript(o: int) -> bool:
    return 0x2080 <= o <= 0x2089 or 0x2090 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A or o == 0x2C7C


def is_id_first(ch: str) -> bool:
    """Lean's ``isIdFirst``: ``Char.isAlpha`` is ASCII-only in Lean."""
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ch == "_" or _letter_like(ord(ch))


def is_id_rest(ch: str) -> bool:
    """Lean's ``isIdRest``."""
    if ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9") or ch in "_'!?":
        return True
    o = ord(ch)
    return o >= 0x80 and (_letter_like(o) or _subscript(o))


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


_HEX = frozenset("0123456789abcdefABCDEF")
_QUOTABLE = frozenset("\\\"'rnt")
_ASCII_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*")
_ASCII_ID_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_!?]*")
"""A ``«…»`` name's inside that reads again as one identifier and nothing else."""
_COMMENT_MARK = re.compile(r"-/|/-")
_PLAIN_SYMBOLS = frozenset("()[]{},:;=<>+*@#$%&|^~!?.`\\⟨⟩")
"""Characters that are a symbol token wherever they stand (no literal or comment starts)."""
_GLUE_SAFE = frozenset("()[]{}⟨⟩⦃⦄,")
"""Symbols after which ``--``/``/-`` surely start a comment (no token continues them)."""


class _Stop(Exception):
    """The reading cannot go on: Lean rejects the token or the lexer cannot decide."""

    def __init__(self, position: int, what: str) -> None:
        super().__init__(what)
        self.undecided = Undecided(position, what)


class _Reader:
    """One left-to-right pass over ``text[start:end]``; ``nested`` for the inside of a
    ``«…»`` name, where a comment that reaches the end runs past the name's ``»``."""

    def __init__(self, text: str, start: int, end: int, nested: bool) -> None:
        self.text, self.start, self.end, self.nested = text, start, end, nested
        self.tokens: list[Token] = []
        self.reread: list[Token] = []

    def at(self, i: int) -> str:
        return self.text[i] if i < self.end else ""

    def run(self) -> Lexed:
        undecided = None
        try:
            self._tokens()
        except _Stop as stop:
            undecided = stop.undecided
        return Lexed(self.text, tuple(self.tokens), undecided, tuple(self.reread))

    def _tokens(self) -> None:
        text, stop = self.text, self.end
        append = self.tokens.append
        i, glued = self.start, -1  # glued: end of the last symbol token
        while i < stop:
            ch = text[i]
            if ch in " \t\r\n":
                i += 1
                continue
            if ch in _ASCII_ID_FIRST and not (ch == "r" and self._raw_start(i + 1)):
                plain = _ASCII_IDENT.match(text, i, stop)
                end = plain.end() if plain else i + 1
                if end < stop and (text[end] == "." or text[end] >= "\x80"):
                    end = self._ident(i)  # dotted, or non-ASCII letters after ASCII ones
                if end - i > 1 and (text[i + 1] not in _ASCII_ID_FIRST or text[i + 1] == "r"):
                    self._reread(i, end)
                append(Token(Kind.IDENT, i, end))
                glued, i = -1, end
                continue
            end, kind = self._token(i, glued == i)
            append(Token(kind, i, end))
            glued = end if kind is Kind.SYMBOL else -1
            i = end

    def _token(self, i: int, glued: bool) -> tuple[int, Kind]:
        """The end and kind of the token at ``i`` (not an ASCII identifier: ``_tokens`` reads
        those), ``glued`` when it follows a symbol token with no space between."""
        ch = self.text[i]
        if ch in _PLAIN_SYMBOLS:
            return i + 1, Kind.SYMBOL
        if ch == "«" or (ch >= "\x80" and is_id_first(ch)):
            end = self._ident(i)
            self._reread(i, end)
            return end, Kind.IDENT
        nxt = self.at(i + 1)
        after_symbol = glued and self.text[i - 1] not in _GLUE_SAFE
        if (ch == "-" and nxt == "-") or (ch == "/" and nxt == "-"):
            if after_symbol:
                raise _Stop(i, f"comment mark glued to `{self.text[i - 1]}`")
            return (self._line_comment(i) if ch == "-" else self._block_comment(i)), Kind.COMMENT
        if ch == '"':
            return self._string(i), Kind.STRING
        if ch == "'" and nxt != "'":
            end = self._char_end(i)
            if end >= 0 and after_symbol:
                raise _Stop(i, "`'` glued to a symbol: a char literal or part of the symbol")
            if end < 0 and not after_symbol:
                raise _Stop(i, "malformed character literal")
            # else the end of a symbol token such as Mathlib's `⁻¹'`
            return (end, Kind.CHAR) if end >= 0 else (i + 1, Kind.SYMBOL)
        if ch == "'":
            return i + 2, Kind.SYMBOL  # `''`: never a char literal
        if _is_digit(ch):
            return self._number(i), Kind.NUMBER
        if ch == "r" and self._raw_start(i + 1):
            return self._raw_string(i), Kind.STRING
        return i + 1, Kind.SYMBOL

    def _line_comment(self, i: int) -> int:
        newline = self.text.find("\n", i, self.end)
        if newline < 0:
            if self.nested:
                raise _Stop(i, "comment runs past the end of the name")
            return self.end
        return newline

    def _block_comment(self, i: int) -> int:
        depth, j = 1, i + 3  # `/-` and the character after it (Lean skips it unread)
        if i + 2 >= self.end:
            raise _Stop(i, "unterminated comment")
        while (mark := _COMMENT_MARK.search(self.text, j, self.end)) is not None:
            depth += 1 if mark[0] == "/-" else -1
            j = mark.end()
            if depth == 0:
                return j
        raise _Stop(i, "unterminated comment")

    def _escape(self, j: int, in_string: bool) -> int:
        """The end of the escape whose ``\\`` is at ``j - 1``."""
        ch = self.at(j)
        if ch and ch in _QUOTABLE:
            return j + 1
        if ch in ("x", "u"):
            digits = 2 if ch == "x" else 4
            if all(self.at(j + k) in _HEX for k in range(1, digits + 1)):
                return j + 1 + digits
        elif ch == "\n" and in_string:  # a string gap: one newline, then indentation
            j += 1
            while (ch := self.at(j)) and ch in " \t\r\n":
                if ch == "\n":
                    raise _Stop(j, "string gap with two newlines")
                j += 1
            return j
        shown = ch if ch and ch != "\n" else "end"
        raise _Stop(j - 1, f"invalid escape `\\{shown}`")

    def _string(self, i: int) -> int:
        j = i + 1
        braces = False
        while (ch := self.at(j)) != '"':
            if not ch:
                raise _Stop(i, "unterminated string")
            braces = braces or ch == "{"
            j = self._escape(j + 1, in_string=True) if ch == "\\" else j + 1
        if braces:
            self._interpolated_agrees(i, j)
        return j + 1

    def _interpolated_agrees(self, i: int, close: int) -> None:
        """Raise unless reading ``text[i:close+1]`` as an interpolated string ends at
        ``close`` too: its ``{…}`` parts balanced, holding no literal or comment (a
        ``"`` there would open a string where the plain reading closes one)."""
        depth, j = 0, i + 1
        while j < close:
            ch = self.text[j]
            if depth == 0:
                j = j + 2 if ch == "\\" else j + 1
                depth = 1 if ch == "{" else 0
                continue
            if ch in "\"'«`\\" or self.text.startswith(("--", "/-"), j):
                raise _Stop(i, "string whose `{…}` part Lean may read as code")
            depth += {"{": 1, "}": -1}.get(ch, 0)
            j += 1
        if depth:
            raise _Stop(i, "string whose `{…}` part Lean may read as code")

    def _char_end(self, i: int) -> int:
        """The end of the char literal opening at ``i``, or -1 if none can (Lean: an error)."""
        ch = self.at(i + 1)
        try:
            j = self._escape(i + 2, in_string=False) if ch == "\\" else i + 2
        except _Stop:
            return -1
        return j + 1 if ch and self.at(j) == "'" else -1

    def _number(self, i: int) -> int:
        """Where ``numberFnAux`` stops reading the numeral at ``i`` (or reports its error:
        after ``0x`` with no digit, after an exponent's ``e`` with none; Lean resumes there)."""
        at = self.at
        if at(i) == "0" and at(i + 1) in ("b", "B", "o", "O", "x", "X"):
            digits = {"b": "01", "o": "01234567"}.get(at(i + 1).lower(), "0123456789abcdefABCDEF")
            return self._digits(i + 2, digits + "_")
        j = self._digits(i + 1, "0123456789_")
        if at(j) == ".":
            j = self._digits(j + 1, "0123456789_")
        if at(j) in ("e", "E"):
            j += 2 if at(j + 1) in ("+", "-") else 1
            j = self._digits(j, "0123456789_")
        return j

    def _digits(self, j: int, digits: str) -> int:
        while (ch := self.at(j)) and ch in digits:
            j += 1
        return j

    def _raw_start(self, j: int) -> bool:
        while self.at(j) == "#":
            j += 1
        return self.at(j) == '"'

    def _raw_string(self, i: int) -> int:
        j = i + 1
        while self.at(j) == "#":
            j += 1
        closing = '"' + "#" * (j - i - 1)
        close = self.text.find(closing, j + 1, self.end)
        if close < 0:
            raise _Stop(i, "unterminated string")
        return close + len(closing)

    def _ident(self, i: int) -> int:
        while True:
            if self.text[i] == "«":
                close = self.text.find("»", i + 1, self.end)
                if close < 0:
                    raise _Stop(i, "unterminated «name»")
                i = close + 1
            else:
                plain = _ASCII_IDENT.match(self.text, i, self.end)
                i = plain.end() if plain else i + 1
                while i < self.end and is_id_rest(self.text[i]):
                    i += 1
            after = self.at(i + 1)
            if self.at(i) != "." or not after or not (after == "«" or is_id_first(after)):
                return i
            i += 1

    def _reread(self, start: int, end: int) -> None:
        """Lex the identifier ``text[start:end]`` again from its second character, as Lean
        does after reporting an unknown tactic there; raise if that reading does not end
        where the identifier ends."""
        p = start + 1
        if self.text[start] == "«":
            close = self.text.index("»", start)
            if _PLAIN_NAME.fullmatch(self.text, p, close):
                self.reread.append(Token(Kind.IDENT, p, close))
            else:
                inner = _Reader(self.text, p, close, nested=True).run()
                if inner.undecided is not None:
                    what = inner.undecided.what
                    raise _Stop(start, f"«name» whose text Lean may read as code: {what}")
                self.reread.extend(inner.tokens)
            p = close + 1
        while p < end:
            ch = self.text[p]
            if ch == "r" and self._raw_start(p + 1):
                raise _Stop(start, "identifier that Lean may read again as a raw string")
            if ch == "«" or is_id_first(ch):
                return  # an identifier from here ends where this one does
            if ch == "'" and self.at(p + 1) != "'" and (close := self._char_end(p)) >= 0:
                if close > end:
                    raise _Stop(start, "identifier that Lean may read again as a char literal")
                p = close
            else:
                p = self._number(p) if _is_digit(ch) else p + 1


def lex(text: str) -> Lexed:
    """The tokens of ``text``, read as Lean reads them."""
    return _Reader(text, 0, len(text), nested=False).run()
