"""``gapscope run s2b`` and ``gapscope episodes``: thin layers over the task and the analysis.

The main CLI mounts ``run_s2b`` as ``gapscope run s2b`` and ``episodes`` as ``gapscope episodes``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gapscope.analysis import View
from gapscope.app.endings import EXIT_RUN_FAILED
from gapscope.app.kit import (
    EMBEDDED_MODEL,
    Interrupted,
    JsonOut,
    command_output,
    interrupted,
    open_model,
    require_directory,
    run_diagnostic,
    run_tasks,
)
from gapscope.app.options import parse_overrides
from gapscope.s2b import ConfigError, resolve

if TYPE_CHECKING:
    from inspect_ai import Task


def run_s2b(
    preset: Annotated[
        str, typer.Option(help="scs-0shot | cat-0shot | cat-10shot (seed, Table 1) | demo")
    ] = "cat-10shot",
    seeds: Annotated[int, typer.Option(min=1, help="Number of episodes (the paper uses 4).")] = 4,
    role: Annotated[
        str,
        typer.Option(
            help="listener (receptivity: the model decodes the posdis speaker) | speaker "
            "(constructivity: the model writes the messages, a rule listener decodes them)"
        ),
    ] = "listener",
    listener: Annotated[
        str,
        typer.Option(help="lm (the model) | rule (verbalizer reference) | corrupted | random"),
    ] = "lm",
    speaker: Annotated[
        str,
        typer.Option(
            help="With --role speaker: lm (the model) | rule (posdis) | holistic | random"
        ),
    ] = "lm",
    model: Annotated[
        str,
        typer.Option(help="Any Inspect model string; ignored for reference listeners/speakers."),
    ] = EMBEDDED_MODEL,
    first_seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Generation budget per game.")] = 256,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", "-S", help="Override an episode parameter, e.g. -S k_shot=5."),
    ] = None,
    steer: Annotated[
        str | None, typer.Option(help="Direction directory (gapscope steer extract) to steer with.")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Steering strength (0 = unsteered).")] = 0.0,
    table1: Annotated[
        bool,
        typer.Option(
            "--table1",
            help="The seed's Table 1: run scs-0shot, cat-0shot and cat-10shot (not --preset) in"
            " one eval and print its layout, the published DeepSeek-Prover-V2-7B values beside.",
        ),
    ] = False,
    log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path("logs"),
    json_out: JsonOut = False,
) -> None:
    """Play S2B-LM episodes and report ZSCT and adj-ZSCT per seed and mean ± sd; with
    --role speaker, constructivity ZSCT and the language measures of the model's messages;
    with --table1, the seed's Table 1 (three presets, listener role)."""
    overrides = parse_overrides(set_)

    def build_preset(chosen: str) -> Task:
        from gapscope.s2b import LISTENERS, ROLES, SPEAKERS, s2b_lm

        for option, value, choices in (
            ("--role", role, ROLES),
            ("--listener", listener, LISTENERS),
            ("--speaker", speaker, SPEAKERS),
        ):
            if value not in choices:
                raise typer.BadParameter(f"choose one of {', '.join(choices)}", param_hint=option)
        resolve(chosen, **overrides)
        return s2b_lm(
            preset=chosen,
            seeds=seeds,
            first_seed=first_seed,
            listener=listener,
            max_tokens=max_tokens,
            steer=steer,
            alpha=alpha,
            role=role,
            speaker=speaker,
            **overrides,
        )

    tested = speaker if role == "speaker" else listener
    played_by = model if tested == "lm" else "none"
    if table1:
        _run_table1(json_out, build_preset, role, played_by, log_dir)
        return
    run_diagnostic(
        "run s2b",
        json_out,
        lambda: build_preset(preset),
        model=played_by,
        log_dir=log_dir,
        bad_input=(ConfigError, ValueError),
    )


def _run_table1(
    json_out: bool, build: Callable[[str], Task], role: str, model: str, log_dir: Path
) -> None:
    """Table 1's three presets as tasks of one eval (one model, batched together), then its
    table; exit 1 when a run did not finish (the finished ones are shown, their logs kept)."""
    from gapscope.analysis import TABLE1_PRESETS, table1_view

    with command_output("run s2b", json_out) as out:
        require_directory(log_dir, "--log-dir")
        if role != "listener":
            out.fail("--table1 is the listener's table (receptivity): drop --role speaker")
        try:
            tasks = [build(preset) for preset in TABLE1_PRESETS]
            opened = open_model(model)
        except typer.BadParameter as exc:
            out.fail(exc.format_message())
        except (ConfigError, ValueError) as exc:
            out.fail(exc)
        try:
            logs = run_tasks(tasks, opened, log_dir)
        except Interrupted as stop:
            interrupted(out, stop)
        out.logs.extend(log.location for log in logs)
        view = table1_view(logs)
        failed = [f"{log.location} ({log.status})" for log in logs if log.status != "success"]
        if failed:
            out.finish(view, EXIT_RUN_FAILED, f"run not finished: {', '.join(failed)}")
        out.finish(view)


def episodes(
    out: Annotated[Path, typer.Option(help="Output JSONL file.")],
    preset: Annotated[str, typer.Option(help="Episode preset.")] = "cat-10shot",
    seed: Annotated[int, typer.Option(help="Episode seed.")] = 0,
    set_: Annotated[
        list[str] | None, typer.Option("--set", "-S", help="Override an episode parameter.")
    ] = None,
    json_out: JsonOut = False,
) -> None:
    """Export one S2B-LM episode as JSONL for audit (schema: docs/s2b.md)."""
    from gapscope.s2b import build_episode, write_jsonl

    with command_output("episodes", json_out) as output:
        if out.is_dir():
            output.fail(f"--out {out} is a directory; give a .jsonl file name")
        try:
            config = resolve(preset, **parse_overrides(set_))
            n = write_jsonl(build_episode(config, seed), out)
        except ConfigError as exc:
            output.fail(exc)
        except OSError as exc:
            output.fail(f"--out {out}: {exc.strerror or exc}")
        message = f"wrote {n} games (+1 header) to {out}"
        details = {"out": str(out), "games": n, "preset": preset, "seed": seed}
        output.finish(
            View(details=details, show=lambda c: c.print(message, markup=False, soft_wrap=True))
        )
