"""Run code attempts in an Inspect sandbox environment (``docker``, ``k8s``, ...) for scale-out.

A large study already runs Inspect's sandboxes; ``ladder_code(sandbox="docker")`` sends each
attempt there through Inspect's public API (:func:`inspect_ai.util.sandbox`: ``write_file``,
then ``exec`` with the job on stdin and a timeout) instead of bubblewrap here. The division of
labour is the local one: the same child (:mod:`gapscope.ladder.sandbox_child`) gets the inputs
only and writes its frames to its stdout, which ``exec`` hands back to this process, where
:class:`gapscope.ladder.judge.Judge` compares them. The container is the isolation; Inspect
makes one per sample and removes it afterwards. The image needs ``python3`` (3.10 or later)
on its PATH.

Inspect's ``local`` sandbox runs commands on this host with this process's environment (API
keys included), so it counts as unsandboxed and needs ``allow_unsandboxed``.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.util import ExecResult, OutputLimitExceededError, sandbox
from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

from gapscope.ladder.judge import CodeTest, Judge, Status, Verdict, child_job
from gapscope.ladder.sandbox import (
    CHILD,
    OVER_LIMIT,
    Limits,
    RunResult,
    exit_verdict,
    wall_clock_detail,
)
from gapscope.lean import SandboxStatus, require_sandbox

CHILD_NAME = "gapscope_child.py"
UNISOLATED = frozenset({"local"})
"""Inspect sandbox types that run on this host without isolation."""


@dataclass(frozen=True)
class InspectSandbox:
    """An Inspect sandbox spec as ``--sandbox`` gives it: ``TYPE`` or ``TYPE:CONFIG``."""

    type: str
    config: str | None = None

    @classmethod
    def parse(cls, spec: str) -> InspectSandbox:
        """The spec, checked before any model call: a type Inspect knows (its sandbox
        registry, entry points included) and a config file that exists. ValueError naming the
        fix otherwise (Inspect itself finds out only when the first sample starts)."""
        kind, _, config = spec.partition(":")
        usage = "expected bwrap, or an Inspect sandbox type as TYPE or TYPE:CONFIG (docker, "
        usage += "docker:compose.yaml, k8s, local), lowercase and without spaces"
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", kind):
            raise ValueError(f"--sandbox {spec!r}: {usage}")
        try:
            registry_find_sandboxenv(kind)
        except ValueError as exc:  # Inspect's words name the package that provides a type
            raise ValueError(f"--sandbox {spec!r}: {exc} ({usage})") from None
        if config and not Path(config).is_file():
            raise ValueError(f"--sandbox {spec!r}: no configuration file {config!r} here")
        return cls(kind, config or None)

    @property
    def isolation(self) -> str:
        return f"inspect-{self.type}"

    @property
    def sandboxed(self) -> bool:
        return self.type not in UNISOLATED

    def task_sandbox(self) -> str | tuple[str, str]:
        """What ``Task(sandbox=...)`` takes."""
        return (self.type, self.config) if self.config else self.type

    def require(self, allow_unsandboxed: bool) -> None:
        """Refuse an unisolated type unless allowed (the same decision and message as a
        missing bubblewrap), logging the opt-out."""
        if not self.sandboxed:
            status = SandboxStatus(False, f"Inspect's {self.type!r} sandbox runs on this host")
            require_sandbox(allow_unsandboxed, "the model's Python code (code pilot)", status)


async def run_in_sandbox(
    program: str,
    tests: Sequence[CodeTest],
    entry: str | None,
    limits: Limits,
    where: InspectSandbox,
) -> RunResult:
    """One attempt in the current sample's Inspect sandbox; the verdict is judged here."""
    started = time.monotonic()
    environment = sandbox()
    await environment.write_file(CHILD_NAME, CHILD.read_bytes())
    job = child_job(program, tests, entry, limits.rlimits(), channel=1, root=None)
    judge = Judge(tests, entry)
    try:
        done = await environment.exec(
            ["python3", "-I", "-S", CHILD_NAME],
            input=json.dumps(job),
            timeout=max(1, math.ceil(limits.time_s)),
            timeout_retry=False,
        )
    except TimeoutError:
        verdict = Verdict(Status.TIMEOUT, 0, wall_clock_detail(limits))
    except OutputLimitExceededError:
        verdict = Verdict(Status.ERROR, 0, OVER_LIMIT)
    else:
        verdict = _judged(done, judge, limits)
    return RunResult(
        verdict.status,
        verdict.passed,
        len(tests),
        verdict.detail,
        where.isolation,
        where.sandboxed,
        time.monotonic() - started,
        f"the Inspect sandbox's own (its configuration); per process: {limits.memory_mb} MB "
        f"address space, {limits.cpu_s} s CPU; {limits.time_s:g} s wall clock",
    )


def _judged(done: ExecResult[str], judge: Judge, limits: Limits) -> Verdict:
    """The judge's verdict on what the child wrote, or why it ended without one."""
    if len(done.stdout) > limits.output_mb * 1024 * 1024:
        return Verdict(Status.ERROR, 0, OVER_LIMIT)
    for line in done.stdout.split("\n")[:-1]:
        verdict = judge.feed(line.encode())
        if verdict is not None:
            return verdict
    return exit_verdict(done.returncode, done.stderr.encode(), judge.passed, limits)
