"""The ``gapscope`` command line: a thin layer over the Inspect tasks and the analysis code.

Every sub-command module imports Inspect, scipy and torch only inside its commands, so
``gapscope --help`` does not pay for them.
"""

from __future__ import annotations

import gc
from typing import Annotated

import typer

from gapscope.app.doctor import doctor
from gapscope.app.kit import EMBEDDED_MODEL, GENERATION, TABLE_WIDTH
from gapscope.app.ladder import ladder_app, run_ladder, run_ladder_code
from gapscope.app.lean import lean_app
from gapscope.app.onng import onng_app, run_onng
from gapscope.app.options import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    AttemptTimeoutOption,
    MaxRetriesOption,
    TimeoutOption,
    generation_limits,
    with_request_bounds,
)
from gapscope.app.profile import profile
from gapscope.app.prove import prove_app, run_prove
from gapscope.app.report import compare_command, report_command
from gapscope.app.s2b import episodes, run_s2b
from gapscope.app.spec_run import SpecRunGroup
from gapscope.app.stats import stats_app
from gapscope.app.steer import run_steer, steer_app
from gapscope.app.t2 import run_t2, t2_app
from gapscope.app.verify import verify_command

__all__ = ["EMBEDDED_MODEL", "app", "main"]

app = typer.Typer(
    help="gapscope: diagnose where a language model's mathematical reasoning breaks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
run_app = typer.Typer(
    cls=SpecRunGroup,  # and one generated command per diagnostic without its own
    help="Run a diagnostic as an Inspect evaluation (logs open with `inspect view`).",
    no_args_is_help=True,
)


@app.callback()
def _settings(
    width: Annotated[
        int | None,
        typer.Option(
            "--width",
            min=40,
            help="Width of printed tables (default: $GAPSCOPE_WIDTH, else the terminal's; "
            "the cells' own when piped).",
        ),
    ] = None,
) -> None:
    """gapscope: diagnose where a language model's mathematical reasoning breaks.

    ``--width`` is read where tables are printed (:func:`gapscope.app.kit.table_console`).
    """
    TABLE_WIDTH.set(width)


@run_app.callback()
def _run_settings(
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    attempt_timeout: AttemptTimeoutOption = None,
    max_retries: MaxRetriesOption = DEFAULT_MAX_RETRIES,
) -> None:
    """Run a diagnostic as an Inspect evaluation (logs open with `inspect view`).

    The bounds on a served model's requests go before the diagnostic:
    ``gapscope run --attempt-timeout 60 s2b ...`` (read by :func:`gapscope.app.kit.run_diagnostic`).
    """
    GENERATION.set(generation_limits(timeout, attempt_timeout, max_retries))


app.add_typer(run_app, name="run")
app.add_typer(stats_app, name="stats")
app.add_typer(ladder_app, name="ladder")
app.add_typer(lean_app, name="lean")
app.add_typer(prove_app, name="prove")
app.add_typer(onng_app, name="onng")
app.add_typer(t2_app, name="t2")
app.add_typer(steer_app, name="steer")
app.command("verify")(verify_command)
app.command("doctor")(doctor)
app.command("episodes")(episodes)
app.command("report")(report_command)
app.command("compare")(compare_command)
app.command("profile")(profile)
run_app.command("s2b")(with_request_bounds(run_s2b))
run_app.command("ladder")(with_request_bounds(run_ladder))
run_app.command("ladder-code")(with_request_bounds(run_ladder_code))
run_app.command("prove")(with_request_bounds(run_prove))
run_app.command("onng")(with_request_bounds(run_onng))
run_app.command("t2")(with_request_bounds(run_t2))
run_app.command("steer")(with_request_bounds(run_steer))


def main() -> None:
    """Console-script entry point.

    Whatever way the command ends, the heap is frozen before the interpreter shuts down: the
    shutdown's cyclic garbage collection walks every object torch, transformers and Inspect
    created (1.3 s of the 1.9 s a Ctrl-C took, measured with py-spy, several times that on a
    loaded machine), only to free memory the operating system reclaims anyway. Frozen objects
    are skipped by that collection; atexit handlers and file flushing still run.
    """
    try:
        app()
    finally:
        gc.freeze()


if __name__ == "__main__":
    main()
