"""Whole-proof generation pass@k on miniF2F-style problems, with coherence classes.

Domain logic (problems, extraction, coherence) is plain Python; ``task`` wires it to Inspect
and a Lean backend, ``analysis`` turns logs into pass@k and coherence tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.prove import contract
    from gapscope.prove.coherence import COHERENT, Coherence
    from gapscope.prove.contract import TASK, AttemptMetadata, ProblemMetadata, RunMetadata
    from gapscope.prove.task import prove

__all__ = [
    "COHERENT",
    "TASK",
    "AttemptMetadata",
    "Coherence",
    "ProblemMetadata",
    "RunMetadata",
    "contract",
    "prove",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "contract": ".contract",
        "AttemptMetadata": ".contract",
        "COHERENT": ".coherence",
        "Coherence": ".coherence",
        "ProblemMetadata": ".contract",
        "RunMetadata": ".contract",
        "TASK": ".contract",
        "prove": ".task",
    },
)
