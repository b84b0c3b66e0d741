"""The vocabularies OracleLadder records are written in: answer schemas (the verifier's, re-exported
from ``gapscope.verify.schema``) and milestone types."""

from __future__ import annotations

from enum import StrEnum

from gapscope.verify import AnswerSchema

__all__ = ["AnswerSchema", "MilestoneType"]


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
