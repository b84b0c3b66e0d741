"""Writing a Lean workspace and saying what finishes its setup: ``gapscope lean setup`` and each
diagnostic's own setup command (``gapscope onng setup-lean``) share it. Where the workspace is
already built (a REPL binary and ``lake``), the known-answer self-test runs at once; otherwise
it is the last step printed."""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from gapscope.analysis import View
from gapscope.app.kit import command_output
from gapscope.lean import (
    DEFAULT_REPL_REV,
    DEFAULT_TOOLCHAIN,
    Probe,
    SelfTestResult,
    next_steps,
    selftest_workspace,
    write_workspace,
)


def program_probes() -> tuple[Probe, ...]:
    """The probes of the Lean programs the diagnostics ship whose output matters (T2's
    tracer): the Lean floor's self-test runs what it is handed, knowing no diagnostic."""
    from gapscope.t2 import TRACER_PROBE

    return (TRACER_PROBE,)


def selftest_if_built(directory: Path) -> SelfTestResult | None:
    """Run ``gapscope lean selftest`` on ``directory`` when it is built; None when it is not
    (or cannot be opened: the printed steps then end with the self-test)."""
    from gapscope.lean import LeanUnavailable, find_repl_binary

    if shutil.which("lake") is None or find_repl_binary(directory) is None:
        return None
    try:
        return selftest_workspace(directory, probes=program_probes())
    except LeanUnavailable:
        return None


def write_and_explain(
    command: str,
    json_out: bool,
    directory: Path,
    libraries: dict[str, str],
    *,
    force: bool = False,
    toolchain: str = DEFAULT_TOOLCHAIN,
    repl_rev: str = DEFAULT_REPL_REV,
    checker: str = "comparator",
    mathlib: bool = False,
) -> None:
    """Write the workspace, list the files and print the commands that finish the setup
    (shared by ``gapscope lean setup`` and each diagnostic's own setup command)."""
    with command_output(command, json_out) as out:
        try:
            written = write_workspace(
                directory,
                force=force,
                toolchain=toolchain,
                repl_rev=repl_rev,
                libraries=libraries,
                checker=checker,
                mathlib=mathlib,
            )
        except (FileExistsError, ValueError) as exc:
            out.fail(exc)
        steps = next_steps(directory, shutil.which("elan") is not None, checker)
        selftest = selftest_if_built(directory)

        def show(console: Console) -> None:
            lines = [f"wrote {path}" for path in written]
            if selftest is not None:
                failed = ", ".join(f"{r.case}@{r.path}" for r in selftest.failures)
                lines.append(f"self-test: {'passed' if selftest.passed else 'FAILED ' + failed}")
            lines += ["", "Next, run:"]
            for line in lines + [f"  {step}" for step in steps]:
                console.print(line, markup=False, highlight=False, soft_wrap=True)

        details = {
            "directory": str(directory),
            "written": [str(path) for path in written],
            "next_steps": steps,
            "selftest": None
            if selftest is None
            else {"passed": selftest.passed, "record": str(selftest.record)},
        }
        out.finish(View(details=details, show=show))
