"""O-NNG: the obfuscated natural number game.

Our own Peano-arithmetic problem set in plain Lean 4 (``problems/``), character-level name
obfuscation at noise level lambda, prompts, an Inspect task checked by a Lean backend, and the
statistics of correct rate and latency across noise levels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.onng import contract
    from gapscope.onng.checking import lean_check, static_check
    from gapscope.onng.contract import TASK, AttemptRecord, ProblemMetadata
    from gapscope.onng.export import write_obfuscation
    from gapscope.onng.problemset import load_problem_set
    from gapscope.onng.render import obfuscation, workspace_libraries
    from gapscope.onng.task import onng

__all__ = [
    "TASK",
    "AttemptRecord",
    "ProblemMetadata",
    "contract",
    "lean_check",
    "load_problem_set",
    "obfuscation",
    "onng",
    "static_check",
    "workspace_libraries",
    "write_obfuscation",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "contract": ".contract",
        "AttemptRecord": ".contract",
        "ProblemMetadata": ".contract",
        "TASK": ".contract",
        "lean_check": ".checking",
        "load_problem_set": ".problemset",
        "obfuscation": ".render",
        "onng": ".task",
        "static_check": ".checking",
        "workspace_libraries": ".render",
        "write_obfuscation": ".export",
    },
)
