"""Reading a speaker's message: strict and flexible, and what makes one malformed."""

from __future__ import annotations

import pytest

from gapscope.s2b.messages import check, message_line, read_message


@pytest.mark.parametrize(
    ("reply", "strict", "flexible"),
    [
        ("Message: [3, 7]", (3, 7), (3, 7)),
        ("I keep my code.\nmessage: [3,7].", (3, 7), (3, 7)),
        ("Message: 3 7", None, (3, 7)),  # brackets missing: flexible only
        ("**Message:** [3, 7]\nGood luck!", None, (3, 7)),  # not the last line
        ("For [carrot, blue] I send [3, 7] this time.", None, (3, 7)),
        ("First [1, 2], on second thought [3, 7]", None, (3, 7)),  # the last list wins
        ("3, 7", None, (3, 7)),  # nothing but integers
        ("Message: [3, 7]\nMessage: [4, 4]", (4, 4), (4, 4)),
        ("I would rather not say.", None, None),
    ],
)
def test_strict_and_flexible_readings(
    reply: str, strict: tuple[int, ...] | None, flexible: tuple[int, ...] | None
) -> None:
    read = read_message(reply, length=2, vocab_size=10)
    assert read.strict.message == strict
    assert read.flexible.message == flexible


def test_malformed_messages_name_their_problem_and_carry_no_message() -> None:
    assert check(None, 2, 10).problem == "unparsed"
    wrong_length = read_message("Message: [3, 7, 1]", 2, 10).flexible
    assert wrong_length.problem == "wrong_length" and wrong_length.message is None
    assert wrong_length.tokens == (3, 7, 1)  # what was read is kept for the record
    for tokens in ("[0, 7]", "[3, 11]", "[-3, 7]"):
        reading = read_message(f"Message: {tokens}", 2, 10)
        assert reading.strict.problem == reading.flexible.problem == "out_of_vocab"
    assert check((10, 1), 2, 10).problem is None


def test_the_line_rule_speakers_write_is_read_by_both_rules() -> None:
    read = read_message(message_line((5, 1, 9)), 3, 10)
    assert read.strict.message == read.flexible.message == (5, 1, 9)
