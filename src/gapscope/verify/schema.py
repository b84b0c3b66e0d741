"""The answer schemas the verifier compares by (a vocabulary any math evaluation can use).

It lives on the verifier's floor, not in a diagnostic: OracleLadder records name these schemas
(``gapscope.ladder.schema`` re-exports the enum), and so can any other caller.
"""

from __future__ import annotations

from enum import StrEnum


class AnswerSchema(StrEnum):
    """The shape of a gold answer; the verifier compares answers according to it."""

    NUMBER = "NUMBER"
    EXPR = "EXPR"
    EQUATION = "EQUATION"
    INEQUALITY = "INEQUALITY"
    SET = "SET"
    INTERVAL = "INTERVAL"
    TUPLE_LIST = "TUPLE_LIST"
    MATRIX_VECTOR = "MATRIX_VECTOR"
    MCQ_STRING = "MCQ_STRING"
