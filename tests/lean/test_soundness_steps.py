"""The soundness rule's steps one at a time: sorting the messages, Lean's own rejection, the
non-standard axioms, what leaves validity unknown (``judge`` composes them in that order)."""

from __future__ import annotations

import dataclasses

from gapscope.lean.protocol import ReplResponse, Sorry
from gapscope.lean.soundness import (
    Reports,
    lean_rejection,
    non_standard_axioms,
    prepare,
    read_reports,
    unestablished,
)
from gapscope.lean.verdict import LeanMessage, Status

CODE = "theorem foo : True := trivial\ntheorem bar : True := trivial"
PREPARED = prepare(CODE)  # two code lines, then the two queries on lines 4 and 5
STD = "[propext, Classical.choice, Quot.sound]"


def message(severity: str, data: str, line: int | None) -> LeanMessage:
    return LeanMessage(severity, data, line, 0)


def test_reports_after_the_code_are_read_and_the_rest_is_the_codes() -> None:
    forged = message("info", f"'bar' depends on axioms: {STD}", 1)  # a trace inside the code
    report = message("info", "'foo' does not depend on any axioms", 4)
    query_error = message("error", "unknown constant 'bar'", 5)
    warning = message("warning", "unused variable", 2)
    read = read_reports(ReplResponse(messages=(forged, report, query_error, warning)), PREPARED)
    assert read.reported == {"foo": ()}
    assert read.query_errors == (query_error,)
    assert read.messages == (forged, warning)
    assert read.axioms == ()


def test_a_report_of_a_name_the_code_does_not_declare_stays_a_message() -> None:
    stranger = message("info", f"'other' depends on axioms: {STD}", 4)
    read = read_reports(ReplResponse(messages=(stranger,)), PREPARED)
    assert (read.reported, read.messages) == ({}, (stranger,))


def test_every_reported_axiom_once_sorted() -> None:
    read = Reports({"foo": ("propext", "Quot.sound"), "bar": ("propext",)}, (), ())
    assert read.axioms == ("Quot.sound", "propext")


def test_lean_rejects_an_error_before_a_sorry() -> None:
    error = message("error", "type mismatch", 1)
    sorry_warning = message("warning", "declaration uses 'sorry'", 1)
    assert lean_rejection((sorry_warning, error), ()) == (
        Status.LEAN_ERROR,
        "Lean reported an error",
    )
    assert lean_rejection((sorry_warning,), ()) == (Status.SORRY, "the code uses sorry")
    assert lean_rejection((), (Sorry("⊢ True", 1, 2),)) == (Status.SORRY, "the code uses sorry")
    assert lean_rejection((message("warning", "unused variable", 1),), ()) is None


def test_a_non_standard_axiom_names_its_declaration() -> None:
    standard = {"foo": ("propext", "Classical.choice", "Quot.sound")}
    assert non_standard_axioms(standard) is None
    bad = non_standard_axioms({**standard, "bar": ("sorryAx", "propext", "Lean.ofReduceBool")})
    assert bad == (
        Status.SORRY,
        "'bar' depends on non-standard axioms: Lean.ofReduceBool, sorryAx",
    )


def test_validity_is_unknown_past_unread_code_or_without_a_required_theorem() -> None:
    every = Reports({"foo": (), "bar": ()}, (), ())
    assert unestablished(PREPARED, every) is None
    unread = dataclasses.replace(PREPARED, unread="line 2 (an unclosed comment)")
    status, detail = unestablished(unread, every) or (None, "")
    assert status is Status.SERVER_ERROR and "read past line 2 (an unclosed comment)" in detail
    asked = dataclasses.replace(PREPARED, required=("foo", "official"))
    assert unestablished(asked, every) == (
        Status.MISSING_DECLARATION,
        "the code does not declare official: the theorem asked for was not checked",
    )


def test_a_missing_report_is_lean_error_when_the_query_failed_else_the_servers() -> None:
    only_foo = Reports({"foo": ()}, (), ())
    assert unestablished(PREPARED, only_foo) == (
        Status.SERVER_ERROR,
        "axioms of bar not reported (no reply); validity not established",
    )
    refused = dataclasses.replace(only_foo, query_errors=(message("error", "bad 'bar'", 5),))
    assert unestablished(PREPARED, refused) == (
        Status.LEAN_ERROR,
        "axioms of bar could not be queried (bad 'bar'); validity not established",
    )
