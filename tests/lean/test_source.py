"""The Lean lexer: what the scans of model-written Lean see, and what it refuses to decide."""

# ruff: noqa: RUF001  (Lean's Greek letters and subscripts are meant, not look-alike letters)

from __future__ import annotations

import pytest

from gapscope.lean.source import Kind, code_only, lex


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("a -- b\nc /- d\ne -/ f", "a     \nc     \n     f"),
        ("/- a /- b -/ c -/ d", "                  d"),
        ("/-- doc /- nested -/ -/ d /-! mod -/", "                        d           "),
        ('x "a\\"b" y', "x        y"),
        ('x "/-" y', "x      y"),
        ('x "a\\\\" -- c', "x           "),
        ('x "\\x41\\u00e9\\t" y', "x                y"),
        ('x "gap \\\n    on" y', "x       \n        y"),
        ("h' x 'a' '\\n' '\\'' x", "h' x               x"),
        ('r#"a"b"# t', "         t"),
        ('r"a\\" t', "      t"),
        ("f x.r y", "f x.r y"),
        ('s!"n = {n}" x', "s!          x"),
        # Lean skips the character after `/-` before counting nesting: one closed comment
        ("/-/- -/ #eval x", "        #eval x"),
        # after a numeral a new token starts: `'a'` is a char literal, not part of `2`
        ("2'a' x", "2    x"),
        ("2e'a' x", "2e    x"),
        # «…» names stay one identifier; their inside is no code (newlines kept)
        ("def «x.y z» := 1 #eval", "def «_____» := 1 #eval"),
        ("def «a\nb» := 1", "def «_\n_» := 1"),
        ("theorem «theorem t : P :=» : Q", "theorem «________________» : Q"),
        ("x.«a b».c y", "x.«___».c y"),
    ],
)
def test_comments_and_literals_are_blanked_keeping_offsets(code: str, expected: str) -> None:
    lexed = lex(code)
    assert lexed.undecided is None
    assert code_only(code) == expected
    assert len(expected) == len(code)


def test_identifiers_are_read_with_leans_character_classes() -> None:
    code = "h₁' α.β ℕ λx Π é"
    words = [(t.kind, code[t.start : t.end]) for t in lex(code).tokens]
    # λ and Π are not letters in Lean (they are binders); Latin-1 letters are
    assert words == [
        (Kind.IDENT, "h₁'"),
        (Kind.IDENT, "α.β"),
        (Kind.IDENT, "ℕ"),
        (Kind.SYMBOL, "λ"),
        (Kind.IDENT, "x"),
        (Kind.SYMBOL, "Π"),
        (Kind.IDENT, "é"),
    ]


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("/- open", "unterminated comment"),
        ("/-", "unterminated comment"),
        ("/-/- -/ -/ x /-", "unterminated comment"),
        ('"open', "unterminated string"),
        ('r#"open"', "unterminated string"),
        ("def «open", "unterminated «name»"),
        ("'ab'", "malformed character literal"),
        ('"\\q"', "invalid escape `\\q`"),
        ('"\\u{41}"', "invalid escape `\\u`"),
        ('"gap \\\n\n x"', "string gap with two newlines"),
        ('"{"', "string whose `{…}` part Lean may read as code"),
        ('throwError "{"}" -- " #eval x', "string whose `{…}` part Lean may read as code"),
        ("x <-- #eval evil", "comment mark glued to `<`"),
        ("a \\/- b -/ #eval evil", "comment mark glued to `\\`"),
        ("f ⁻¹'\"' #eval evil", "`'` glued to a symbol: a char literal or part of the symbol"),
    ],
)
def test_what_lean_rejects_or_may_read_otherwise_is_undecided(code: str, what: str) -> None:
    undecided = lex(code).undecided
    assert undecided is not None and undecided.what == what


@pytest.mark.parametrize(
    "code",
    [
        # Lean's tactic parser reports an unknown identifier one character in and resumes
        # there: `'"'` is then a char literal and `#eval` code, not string text
        "h'\"' #eval evil -- \"",
        "x₁'\"' #eval evil -- \"",
        'hr"\\" #eval evil -- "',
        '«"» -- " #eval evil',
        '«--» "\n#eval evil\n"',
    ],
)
def test_identifiers_read_again_from_their_second_character_must_agree(code: str) -> None:
    undecided = lex(code).undecided
    assert undecided is not None and undecided.position == 0


def test_the_second_reading_of_a_name_is_kept_for_the_screen() -> None:
    code = "exact «x #eval y» «z» 1"
    again = lex(code).second_reading()
    assert [code[t.start : t.end] for t in again.tokens] == ["x", "#", "eval", "y", "z"]


def test_after_an_undecided_token_nothing_is_code() -> None:
    assert code_only("theorem t := 1\n'ab' theorem u") == "theorem t := 1\n              "
