"""The soundness rule on hand-written REPL responses: names, axiom parsing, verdicts."""

from __future__ import annotations

import pytest

from gapscope.lean.base import split_imports
from gapscope.lean.protocol import ReplResponse, Sorry
from gapscope.lean.soundness import is_sorry_warning, judge, parse_axioms, prepare
from gapscope.lean.verdict import LeanMessage, Status

STD = "[propext, Classical.choice, Quot.sound]"


def info(data: str, line: int = 9) -> LeanMessage:
    return LeanMessage("info", data, line, 0)


def test_names_are_qualified_by_namespaces_and_modifiers_are_skipped() -> None:
    code = (
        "namespace A.B\n"
        "@[simp] protected theorem foo : True := trivial\n"
        "end A.B\n"
        "namespace C\n"
        "private lemma bar : True := trivial\n"
        "theorem _root_.baz : True := trivial\n"
        "noncomputable def «weird name» : Nat := 1\n"
        "end C\n"
        "axiom my_axiom : False\n"
        "structure S where\n  x : Nat\n"
    )
    assert prepare(code).names == ("A.B.foo", "C.bar", "baz", "C.«weird name»", "my_axiom")


def test_comments_do_not_declare_anything() -> None:
    code = (
        "-- theorem ghost : True\n/- theorem ghost2 /- nested -/ : True -/\n"
        "theorem real : True := trivial"
    )
    assert prepare(code).names == ("real",)
    assert prepare("/- note -/ example : True := trivial").code.startswith(
        "/- note -/ theorem gapscope_example_1 : True"
    )


def test_examples_are_renamed_to_numbered_theorems() -> None:
    prepared = prepare("example : True := trivial\n  example : 1 = 1 := rfl")
    assert prepared.names == ("gapscope_example_1", "gapscope_example_2")
    assert prepared.code.startswith("theorem gapscope_example_1 : True := trivial\n  theorem ")
    assert prepared.code.endswith(
        "#print axioms gapscope_example_1\n#print axioms gapscope_example_2"
    )
    assert prepared.code_lines == 2


def test_code_without_declarations_gets_no_query() -> None:
    prepared = prepare("#check Nat")
    assert prepared == prepare("#check Nat") and prepared.code == "#check Nat"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (f"'foo' depends on axioms: {STD}", ("foo", ("propext", "Classical.choice", "Quot.sound"))),
        ("'A.foo' does not depend on any axioms", ("A.foo", ())),
        ("'foo' depends on axioms: [propext,\n sorryAx]", ("foo", ("propext", "sorryAx"))),
        ("Nat : Type", None),
    ],
)
def test_parse_axioms(data: str, expected: object) -> None:
    assert parse_axioms(data) == expected


def run(
    messages: list[LeanMessage],
    sorries: tuple[Sorry, ...] = (),
    code: str = "theorem foo : True := trivial",
) -> tuple[Status, str]:
    verdict = judge(
        ReplResponse(env=1, messages=tuple(messages), sorries=sorries), prepare(code), 0.1
    )
    return verdict.status, verdict.detail


def test_valid_needs_standard_axioms_only() -> None:
    assert run([info(f"'foo' depends on axioms: {STD}")])[0] is Status.VALID
    assert run([info("'foo' does not depend on any axioms")])[0] is Status.VALID


@pytest.mark.parametrize("axiom", ["sorryAx", "my_axiom", "Lean.ofReduceBool"])
def test_non_standard_axiom_is_sorry_naming_it(axiom: str) -> None:
    status, detail = run([info(f"'foo' depends on axioms: [propext, {axiom}]")])
    assert status is Status.SORRY and axiom in detail


@pytest.mark.parametrize("warning", ["declaration uses `sorry`", "declaration uses 'sorry'"])
def test_sorry_warning_in_either_quoting(warning: str) -> None:
    status, _ = run(
        [LeanMessage("warning", warning, 1, 8), info(f"'foo' depends on axioms: {STD}")]
    )
    assert status is Status.SORRY


def test_sorries_list_alone_is_sorry() -> None:
    assert (
        run([info(f"'foo' depends on axioms: {STD}")], (Sorry("⊢ True", 1, 20),))[0] is Status.SORRY
    )


def test_error_beats_everything() -> None:
    status, _ = run(
        [LeanMessage("error", "unsolved goals", 1, 20), info("'foo' depends on axioms: [sorryAx]")]
    )
    assert status is Status.LEAN_ERROR


def test_missing_axiom_report_is_never_valid() -> None:
    status, detail = run([LeanMessage("error", "unknown constant 'foo'", 3, 0)])
    assert status is Status.LEAN_ERROR and "could not be queried" in detail  # counted
    assert run([])[0] is Status.SERVER_ERROR  # no reply at all: nothing established


CHEAT = "axiom cheat : False\ntheorem t : 1 = 2 := cheat.elim\ndef f := fun lemma bar => bar"


def test_an_unqueryable_name_does_not_hide_a_non_standard_axiom() -> None:
    # Without Mathlib `lemma` is no keyword, but the heads read `lemma bar` as a declaration:
    # its query fails, and that must not turn a proof from `cheat` into an uncounted error.
    status, detail = run(
        [
            info("'cheat' depends on axioms: [cheat]", 5),
            info("'t' depends on axioms: [cheat]", 6),
            info("'f' does not depend on any axioms", 7),
            LeanMessage("error", "unknown constant 'bar'", 8, 0),
        ],
        code=CHEAT,
    )
    assert status is Status.SORRY and "cheat" in detail


def test_a_query_the_code_breaks_is_a_counted_failure() -> None:
    status, detail = run(
        [
            info("'f' does not depend on any axioms", 5),
            LeanMessage("error", "unknown constant 'bar'", 6, 0),
        ],
        code="def f := fun lemma bar => bar",
    )
    assert status is Status.LEAN_ERROR and "axioms of bar could not be queried" in detail


def test_repl_level_error_is_server_error() -> None:
    verdict = judge(
        ReplResponse(error="Unknown environment."), prepare("theorem foo : True := trivial"), 0.0
    )
    assert verdict.status is Status.SERVER_ERROR and "Unknown environment" in verdict.detail


def test_axiom_messages_are_not_kept_and_axioms_are_recorded() -> None:
    verdict = judge(
        ReplResponse(messages=(info(f"'foo' depends on axioms: {STD}"), info("note", 1))),
        prepare("theorem foo : True := trivial"),
        0.0,
    )
    assert verdict.axioms == ("Classical.choice", "Quot.sound", "propext")
    assert [m.data for m in verdict.messages] == ["note"]


def test_split_imports_moves_leading_imports_into_header() -> None:
    assert split_imports(
        "import Mathlib", "import Mathlib\nimport Foo\n\ntheorem x : True := trivial"
    ) == (
        "import Foo\nimport Mathlib",
        "theorem x : True := trivial",
    )
    assert split_imports("", "theorem x : True := trivial") == ("", "theorem x : True := trivial")


def test_required_name_must_be_declared() -> None:
    """Regression: a file that compiled only a helper was VALID for the problem."""
    helper = "theorem helper : True := trivial\n/- theorem official : 1 = 1 := rfl -/"
    prepared = prepare(helper, required=("official",))
    assert prepared.names == ("helper",)
    report = info(f"'helper' depends on axioms: {STD}", line=prepared.code_lines + 2)
    verdict = judge(ReplResponse(env=1, messages=(report,)), prepared, 0.1)
    assert verdict.status is Status.MISSING_DECLARATION and "official" in verdict.detail
    both = prepare(
        "theorem helper : True := trivial\ntheorem official : True := helper", ("official",)
    )
    reports = tuple(
        info(f"'{n}' depends on axioms: {STD}", line=both.code_lines + 2 + k)
        for k, n in enumerate(both.names)
    )
    assert judge(ReplResponse(env=1, messages=reports), both, 0.1).status is Status.VALID


def test_axiom_report_printed_by_the_code_itself_does_not_count() -> None:
    """Regression: an info message with the report's text from inside the code (``trace``)
    counted as the axiom report of the declaration."""
    prepared = prepare('theorem foo : True := by\n  trace "x"\n  exact trivial')
    forged = info(f"'foo' depends on axioms: {STD}", line=2)
    real = info("'foo' depends on axioms: [sorryAx]", line=prepared.code_lines + 2)
    assert judge(ReplResponse(env=1, messages=(forged,)), prepared, 0.1).status is (
        Status.SERVER_ERROR
    )
    verdict = judge(ReplResponse(env=1, messages=(forged, real)), prepared, 0.1)
    assert verdict.status is Status.SORRY and "sorryAx" in verdict.detail


def test_declarations_in_strings_are_not_names_and_open_in_prefix_is() -> None:
    code = (
        'def s : String := "\ntheorem ghost : True := trivial"\n'
        "open Nat in theorem real : True := trivial"
    )
    assert prepare(code).names == ("s", "real")


def test_long_chains_of_open_in_are_read_in_linear_time() -> None:
    """Regression: a lazy pattern for ``open ... in`` prefixes backtracked exponentially (24
    segments took 24 s; 40 would never finish)."""
    chain = "open A B in " * 40
    assert prepare(chain + "x\n" + chain + "theorem t : True := trivial").names == ("t",)


def test_only_a_warning_that_names_sorry_is_a_sorry_warning() -> None:
    assert is_sorry_warning(LeanMessage("warning", "declaration uses 'sorry'", 1, 0))
    assert not is_sorry_warning(LeanMessage("info", "declaration uses 'sorry'", 1, 0))
    assert not is_sorry_warning(LeanMessage("warning", "unused variable `h`", 1, 0))


def test_a_sorry_verdict_keeps_the_axioms_lean_reported() -> None:
    verdict = judge(
        ReplResponse(
            env=1,
            messages=(
                LeanMessage("warning", "declaration uses 'sorry'", 1, 8),
                info(f"'foo' depends on axioms: {STD}"),
            ),
        ),
        prepare("theorem foo : True := trivial"),
        0.1,
    )
    assert verdict.status is Status.SORRY
    assert verdict.axioms == ("Classical.choice", "Quot.sound", "propext")
