"""``gapscope run NAME`` for every diagnostic that has no command of its own, built from its spec.

The built-ins have bespoke ``run`` commands (options named after their papers' parameters);
any other diagnostic in the table (an installed ``gapscope.diagnostics`` entry point, or a new
built-in) gets one generated here: its reader's ``@task`` with the user's task arguments
(``-T key=value``, read as Inspect's own ``inspect eval -T`` reads them), the shared run
options (``--model``, ``--log-dir``, ``--limit``, ``--json``; the request bounds of
``gapscope run --timeout ...``) and the spec's view as the printer.

The commands are made when ``run`` looks one up (:class:`SpecRunGroup`), so ``gapscope --help``
reads no entry point and imports no diagnostic.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import _click as click  # typer's own copy of click: its groups' types
from typer.core import TyperGroup

from gapscope.app.kit import EMBEDDED_MODEL, JsonOut, run_diagnostic

if TYPE_CHECKING:
    from inspect_ai import Task

    from gapscope.analysis import DiagnosticSpec

TaskArgsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--task-arg",
        "-T",
        help="A task argument, key=value (the value read as YAML, as `inspect eval -T` reads "
        "it); repeatable.",
    ),
]


def parse_task_args(pairs: list[str] | None, task: Callable[..., Task]) -> dict[str, Any]:
    """``key=value`` pairs -> keyword arguments of ``task``, each value read as YAML.

    A pair without ``=`` or naming no parameter of the task (one without ``**kwargs``) is
    refused with the parameters it has, before anything runs.
    """
    import yaml

    accepted = inspect.signature(task).parameters
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="-T")
        if key not in accepted and not open_ended:
            raise typer.BadParameter(
                f"unknown task argument {key!r}; the task takes: {', '.join(accepted) or 'none'}",
                param_hint="-T",
            )
        out[key] = yaml.safe_load(value)
    return out


def spec_command(spec: DiagnosticSpec) -> click.Command:
    """The ``run`` command of one diagnostic: its first reader's task, run and shown."""
    command = f"run {spec.name}"

    def run(
        task_args: TaskArgsOption = None,
        model: Annotated[str, typer.Option(help="Any Inspect model string.")] = EMBEDDED_MODEL,
        limit: Annotated[int | None, typer.Option(min=1, help="Only the first N samples.")] = None,
        log_dir: Annotated[Path, typer.Option(help="Where the Inspect .eval logs go.")] = Path(
            "logs"
        ),
        json_out: JsonOut = False,
    ) -> None:
        def build() -> Task:
            task = spec.task_function()
            return task(**parse_task_args(task_args, task))

        eval_args: Mapping[str, Any] = {"limit": limit} if limit else {}
        run_diagnostic(command, json_out, build, model=model, log_dir=log_dir, **eval_args)

    single = typer.Typer(add_completion=False)
    single.command(
        spec.name,
        help=f"Run {spec.title} (task {spec.readers[0].task}) as an Inspect evaluation and "
        f"show its result{f' (docs: {spec.docs})' if spec.docs else ''}.",
    )(run)
    return typer.main.get_command(single)


class SpecRunGroup(TyperGroup):
    """``gapscope run``: its own commands, then one per diagnostic without one (in table
    order). Looking up a command name no bespoke command has reads the table."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        own = super().list_commands(ctx)
        return [*own, *(spec.name for spec in _generated(own))]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        spec = next((s for s in _generated(self.commands) if s.name == cmd_name), None)
        return None if spec is None else spec_command(spec)


def _generated(own: Iterable[str]) -> list[DiagnosticSpec]:
    """The diagnostics whose ``run`` command is generated: those no bespoke command names."""
    from gapscope.analysis import specs

    taken = set(own)
    return [spec for spec in specs() if spec.name not in taken]
