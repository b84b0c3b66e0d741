"""The vocabularies OracleLadder records are written in: answer schemas and milestone types."""

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


class MilestoneType(StrEnum):
    """The teacher's label for what a milestone does in the solution.

    INTEGRATE combines the others into the parent answer: it is withheld from every probe and
    from Stage 0 because its answer is essentially the parent answer.
    """

    KEY_MOVE = "KEY_MOVE"
    MODEL = "MODEL"
    LEMMA = "LEMMA"
    COMPUTE = "COMPUTE"
    NORMALIZE = "NORMALIZE"
    SANITY = "SANITY"
    WARMUP = "WARMUP"
    INTEGRATE = "INTEGRATE"
