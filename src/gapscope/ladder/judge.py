"""The parent's side of a code attempt: what the child is told, and the comparison.

The judge never shares a process with the judged (DESIGN.md). :func:`child_job` is everything
the sandboxed child (:mod:`gapscope.ladder.sandbox_child`) receives: the program, the tests'
inputs, the entry point and the limits - never an expected output. :class:`Judge` reads the
child's channel line by line and compares each reported output with the expected one itself.
The attempt can write whatever it likes to that channel, so every line is data: a line that is
not the next test's frame is a broken attempt, an ending the child reports (error, memory,
blocked) can only fail the attempt, and PASSED comes from nowhere but the judge's own
comparison of every test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """How an attempt ended. Only PASSED is a solve."""

    PASSED = "passed"
    FAILED = "failed"  # ran, gave a wrong answer
    ERROR = "error"  # raised, the program does not compile, or it broke the channel
    MEMORY = "memory"  # hit the address-space limit
    BLOCKED = "blocked"  # tried something the sandbox refuses (socket, fork, ...)
    TIMEOUT = "timeout"  # killed at the wall-clock or CPU limit
    CRASHED = "crashed"  # died without a verdict (signal, interpreter failure)


CHILD_ENDINGS = frozenset({Status.ERROR, Status.MEMORY, Status.BLOCKED})
"""The endings the child may report; anything else it claims is a broken channel."""
DETAIL_CHARS = 500


@dataclass(frozen=True)
class CodeTest:
    """One test: ``input`` is stdin text (stdin tests) or the argument list (call tests)."""

    input: Any
    output: Any


@dataclass(frozen=True)
class Verdict:
    """The judge's decision: how the attempt ended, tests passed, why."""

    status: Status
    passed: int
    detail: str = ""


def child_job(
    program: str,
    tests: Sequence[CodeTest],
    entry: str | None,
    limits: dict[str, int],
    *,
    channel: int,
    root: str | None,
    allow_processes: bool = False,
) -> dict[str, Any]:
    """What the child receives (JSON on its stdin): the inputs only. ``root`` is the folder the
    audit hook lets it write (None: its working directory), ``channel`` the descriptor of the
    parent's pipe (1: its stdout)."""
    return {
        "program": program,
        "inputs": [t.input for t in tests],
        "entry": entry,
        "limits": limits,
        "allow_processes": allow_processes,
        "root": root,
        "channel": channel,
    }


def lines(text: str) -> list[str]:
    """Output compared line by line, each stripped, trailing blank lines ignored."""
    return [line.strip() for line in text.strip().splitlines()]


def plain(value: Any) -> Any:
    """An expected return value as JSON carries it (tuples become lists), as the child's
    frame does."""
    return json.loads(json.dumps(value))


class Judge:
    """Feed it the channel's lines as they arrive; ``verdict`` is set once decided.

    It decides FAILED at the first wrong answer (the parent then stops the child), PASSED
    when every test's answer matched, and the child's own ending or a broken channel
    otherwise. A channel that ends undecided (the child was killed, or exited early) leaves
    ``verdict`` None: the parent says why from how the process ended.
    """

    def __init__(self, tests: Sequence[CodeTest], entry: str | None) -> None:
        self.tests = list(tests)
        self.entry = entry
        self.passed = 0
        self.verdict: Verdict | None = None

    def _decide(self, status: Status, detail: str = "") -> Verdict:
        self.verdict = Verdict(status, self.passed, detail)
        return self.verdict

    def feed(self, line: bytes) -> Verdict | None:
        """One line of the channel; the verdict when this line decided it."""
        if self.verdict is not None:
            return self.verdict
        try:
            frame = json.loads(line)
        except (ValueError, RecursionError):
            return self._decide(Status.ERROR, "the attempt wrote an unreadable result line")
        index = frame.get("i") if isinstance(frame, dict) else None
        if type(index) is not int or index != self.passed:
            return self._decide(Status.ERROR, "the attempt wrote a result line out of order")
        if "end" in frame:
            return self._ending(frame)
        test = self.tests[self.passed]
        try:
            right = self._matches(frame, test)
        except RecursionError:
            right = False
        if not right:
            return self._decide(Status.FAILED, f"test {self.passed + 1} gave a wrong answer")
        self.passed += 1
        if self.passed == len(self.tests):
            return self._decide(Status.PASSED)
        return None

    def _ending(self, frame: dict[str, Any]) -> Verdict:
        try:
            status = Status(frame["end"])
        except ValueError:
            status = None
        if status not in CHILD_ENDINGS:
            return self._decide(Status.ERROR, "the attempt reported an ending it may not claim")
        return self._decide(status, str(frame.get("detail", ""))[:DETAIL_CHARS])

    def _matches(self, frame: dict[str, Any], test: CodeTest) -> bool:
        """Stdin tests: the output's stripped lines. Call tests: the returned value, as
        JSON carries it, ``==`` the expected one, which is LiveCodeBench's own comparison
        (``prediction == gt_out`` in its ``grade_call_based``, tuples as lists): so a bool
        equals the number it is in Python (``True == 1``) there and here, and pass rates on
        its problems stay comparable to its own. JSON keeps the live-object tricks ``==``
        would allow in-process (an ``__eq__`` that always says yes) out of the judge."""
        if self.entry is None:
            out = frame.get("out")
            return isinstance(out, str) and lines(out) == lines(str(test.output))
        return "ret" in frame and bool(frame["ret"] == plain(test.output))
