"""The whole-proof prompt (``prove/prompts/prove.txt``)."""

from __future__ import annotations

from pathlib import Path

from gapscope.prove.problems import Problem
from gapscope.templates import Templates

template = Templates(Path(__file__).parent / "prompts")


def proof_prompt(problem: Problem) -> str:
    """The user turn asking for a complete proof of ``problem``."""
    return template("prove").format(
        header=problem.header, formal_statement=problem.formal_statement
    )
