"""The diagnostic table: gapscope's five built-in :class:`DiagnosticSpec` and those other
packages declare through the ``gapscope.diagnostics`` entry point.

Every command that needs to know which diagnostics exist (``profile``, ``report``,
``compare``, the log readers, the figures, gapscope's Inspect entry point) reads
:func:`specs`; nothing else names a diagnostic. Task modules are imported inside the plans,
so reading the table does not load every diagnostic's task code.

A third-party entry point that fails to load (an import error, an object that is not a
spec, a name already taken) is left out with one line in :func:`load_problems`, naming the
entry point; the built-ins and the other entry points still load.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from gapscope.analysis import ladder, ladder_code, ladder_review, onng, prove, s2b, t2
from gapscope.analysis.figures import (
    ladder_gaps,
    ladder_tau,
    onng_curve,
    passk_curves,
    receptivity_constructivity,
    zsct_per_preset,
)
from gapscope.analysis.profile import GapRow
from gapscope.analysis.report_sections import ladder_section, s2b_axes_section, t2_section
from gapscope.analysis.spec import (
    Builder,
    DiagnosticSpec,
    Inputs,
    LoadedLog,
    LogReader,
    SpecError,
    SteeringTarget,
    Summary,
    outcome_verdict,
    summaries_of,
)
from gapscope.analysis.steering import SOLVE_RATE, prove_condition, s2b_condition, s2b_held_out
from gapscope.analysis.view import ladder_view, onng_view, prove_view, s2b_view, t2_view
from gapscope.ladder import contract as ladder_log
from gapscope.onng import contract as onng_log
from gapscope.prove import contract as prove_log
from gapscope.s2b import contract as s2b_log
from gapscope.steer import PROVE_ALPHAS, PROVE_CONTROLS
from gapscope.t2 import contract as t2_log

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog

ENTRY_POINT_GROUP = "gapscope.diagnostics"

MODEL_SEATS = (("listener", "lm"), ("speaker", "lm"))
"""A model plays S2B-LM in both seats: receptivity (listener) and constructivity (speaker)."""
REFERENCE_SEATS = (
    ("listener", "rule"),
    ("listener", "random"),
    ("speaker", "rule"),
    ("speaker", "holistic"),
    ("speaker", "random"),
)
"""S2B-LM's reference players, run once per study (no model): the scale the models sit on."""


def _s2b_plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    from gapscope.s2b import s2b_lm

    out: list[Builder] = []
    for preset, seeds in budget["presets"]:
        for role, name in MODEL_SEATS if model != "none" else REFERENCE_SEATS:
            tokens = budget["max_tokens"] if role == "listener" else budget["message_tokens"]

            def build(
                preset: str = preset,
                seeds: int = seeds,
                role: str = role,
                name: str = name,
                tokens: int = tokens,
            ) -> Task:
                common: dict[str, Any] = {"preset": preset, "seeds": seeds, "max_tokens": tokens}
                common |= budget.get("episode", {})
                if role == "listener":
                    return s2b_lm(**common, listener=name)
                return s2b_lm(**common, role=role, speaker=name)

            out.append((f"{preset} ({name} {role})", build))
    return out


def _ladder_plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    from gapscope.ladder import oracle_ladder

    families = inputs.data["families"]
    args = {**budget, "families": families}
    return [(f"{families} families", lambda: oracle_ladder(**args))]


def _lean_args(inputs: Inputs) -> dict[str, Any]:
    return {"lean": inputs.lean, "allow_unsandboxed": inputs.allow_unsandboxed}


def _onng_plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    from gapscope.onng import onng as onng_task

    args = {**budget, **_lean_args(inputs)}
    return [("O-NNG", lambda: onng_task(**args))]


def _prove_plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    from gapscope.prove import prove as prove_task

    args = {**budget, **_lean_args(inputs), "dataset": inputs.data["minif2f"]}
    return [("miniF2F", lambda: prove_task(**args))]


def _t2_plan(budget: Mapping[str, Any], inputs: Inputs, model: str) -> list[Builder]:
    from gapscope.t2 import t2 as t2_task

    args = {**budget, **_lean_args(inputs), "data": inputs.data["t2_data"]}
    return [("T2", lambda: t2_task(**args))]


def _s2b_steered(args: Mapping[str, Any], steer: str | None, alpha: float) -> Task:
    from gapscope.s2b import s2b_lm

    return s2b_lm(**args, steer=steer, alpha=alpha)


PROVE_TRANSFER = {"subset": "aime", "n": 32, "k": "1,8,32"}
"""The seed's transfer test (Figures 6-7): the AIME problems, 32 attempts, pass@1/8/32; a
sweep's task arguments override each."""


def _prove_steered(args: Mapping[str, Any], steer: str | None, alpha: float) -> Task:
    from gapscope.prove import prove as prove_task

    return prove_task(**{**PROVE_TRANSFER, **args}, steer=steer, alpha=alpha)


def _onng_summary(log: EvalLog) -> Summary:
    return onng.summarize(onng.records_from_log(log))


def _prove_summary(log: EvalLog) -> Summary:
    return prove.summarize(prove.read_run(log))


def _ladder_transitions(
    a: Sequence[LoadedLog], b: Sequence[LoadedLog]
) -> dict[str, dict[str, dict[str, int]]]:
    """OracleLadder's outcome transitions (tau = 1) when each side has exactly one run."""
    runs_a: list[ladder.ModelRun] = summaries_of(a, ladder_log.TASK)
    runs_b: list[ladder.ModelRun] = summaries_of(b, ladder_log.TASK)
    if len(runs_a) != 1 or len(runs_b) != 1:
        return {}
    matrix = ladder.transition_matrix(runs_a[0].families(), runs_b[0].families())
    return {"tau=1": {r.value: {c.value: n for c, n in row.items()} for r, row in matrix.items()}}


ONNG_QUICK = {"lams": "0,1.0", "limit": 3, "max_tokens": 1024}
PROVE_QUICK = {"n": 4, "k": "1,4", "limit": 3, "max_tokens": 1024}
T2_QUICK = {"k": 1, "limit": 3, "max_tokens": 2048}
"""The Lean-backed diagnostics' first look (``quick``), which the demo's budget shares: the
demo runs them only where a Lean backend is given."""

S2B = DiagnosticSpec(
    name="s2b",
    title=s2b.DIAGNOSTIC,
    readers=(LogReader(s2b_log.TASK, s2b.DIAGNOSTIC, s2b.summarize, s2b_view),),
    plan=_s2b_plan,
    # Table 1's three presets with 4 seeds; a first look: the small preset, 2 seeds. The
    # speaker seat's budget is per message (a message is a few vocabulary tokens).
    budgets={
        "paper": {
            "presets": (("scs-0shot", 4), ("cat-0shot", 4), ("cat-10shot", 4)),
            "max_tokens": 256,
            "message_tokens": 64,
        },
        "quick": {"presets": (("demo", 2),), "max_tokens": 160, "message_tokens": 32},
        # what `make demo` runs: the quick preset's four query games after one supporting game
        # per attribute value (``episode``: S2BConfig fields). An episode's calls run one after
        # another, so its length bounds the time; 160 tokens a game stay, as the verbalizer's
        # traces the listener imitates run 130-166 tokens and end with the answer line.
        "demo": {
            "presets": (("demo", 2),),
            "max_tokens": 160,
            "message_tokens": 32,
            "episode": {"coverage": 1},
        },
    },
    task_modules=("gapscope.s2b.task",),
    references=True,
    figures=(zsct_per_preset, receptivity_constructivity),
    sections=(s2b_axes_section,),
    # the dosage curve (Figure 5): ZSCT per episode, alpha -4..+1, both controls
    steering=SteeringTarget(
        metric="zsct",
        label="ZSCT",
        unit="%",
        condition=s2b_condition,
        build=_s2b_steered,
        plays_episodes=True,
        held_out=s2b_held_out,
    ),
    docs="docs/s2b.md",
    headline="adj-ZSCT",
    verdict=s2b.verdict,
)
LADDER = DiagnosticSpec(
    name="ladder",
    title=ladder.DIAGNOSTIC,
    readers=(
        LogReader(
            ladder_log.TASK,
            ladder.DIAGNOSTIC,
            ladder.model_run,
            lambda s, o: ladder_view([s], o),
            unit="rollouts",
        ),
        LogReader(
            ladder_log.REVIEW_TASK,
            ladder_review.DIAGNOSTIC,
            ladder_review.summarize,
            lambda s, o: ladder_review.review_view([s], o),
        ),
        LogReader(
            ladder_log.CODE_TASK,
            ladder_code.DIAGNOSTIC,
            ladder_code.summarize,
            ladder_code.code_view,
        ),
    ),
    plan=_ladder_plan,
    # the paper's 8 rollouts of up to 16,384 tokens; a first look: two families, one rollout
    budgets={
        "paper": {"k": 8, "max_tokens": 16384},
        "quick": {"k": 1, "limit": 2, "max_tokens": 384},
        "demo": {"k": 1, "limit": 2, "max_tokens": 256},
    },
    task_modules=(
        "gapscope.ladder.task",
        "gapscope.ladder.review_task",
        "gapscope.ladder.code_task",
        "gapscope.ladder.compile_task",
        "gapscope.ladder.hard100_task",
    ),
    data={"families": "needs --families (JSONL path, hub id, or bundled)"},
    figures=(ladder_gaps, ladder_tau),
    sections=(ladder_section,),
    transitions=_ladder_transitions,
    docs="docs/ladder.md",
    headline="gap composition",
    verdict=ladder.verdict,
)
ONNG = DiagnosticSpec(
    name="onng",
    title=onng.DIAGNOSTIC,
    readers=(LogReader(onng_log.TASK, onng.DIAGNOSTIC, _onng_summary, onng_view),),
    plan=_onng_plan,
    # the paper's lambda grid; a first look: two lambdas, three problems
    budgets={"paper": {}, "quick": ONNG_QUICK, "demo": ONNG_QUICK},
    task_modules=("gapscope.onng.task",),
    lean=True,
    figures=(onng_curve,),
    docs="docs/onng.md",
    verdict=onng.verdict,
)
PROVE = DiagnosticSpec(
    name="prove",
    title=prove.DIAGNOSTIC,
    readers=(
        LogReader(
            prove_log.TASK, prove.DIAGNOSTIC, _prove_summary, lambda s, o: prove_view([s], o)
        ),
    ),
    plan=_prove_plan,
    # pass@32 on miniF2F; a first look: pass@4 on three problems
    budgets={
        "paper": {"n": 32, "k": "1,8,32"},
        "quick": PROVE_QUICK,
        "demo": PROVE_QUICK,
    },
    task_modules=("gapscope.prove.task",),
    lean=True,
    data={"minif2f": "needs --minif2f FILE (miniF2F Lean 4 statements, JSONL)"},
    figures=(passk_curves,),
    # the transfer test (Figures 6-7): the per-attempt solve rate at -3, 0, +1, random control
    steering=SteeringTarget(
        metric=SOLVE_RATE,
        label="solve rate",
        condition=prove_condition,
        build=_prove_steered,
        alphas=PROVE_ALPHAS,
        controls=PROVE_CONTROLS,
        needs={"dataset": "miniF2F JSONL or hub id"},
    ),
    docs="docs/prove.md",
    verdict=prove.verdict,
)
T2 = DiagnosticSpec(
    name="t2",
    title=t2.DIAGNOSTIC,
    readers=(LogReader(t2_log.TASK, t2.DIAGNOSTIC, t2.summarize_log, t2_view),),
    plan=_t2_plan,
    # T2's defaults; a first look: one attempt at three records
    budgets={"paper": {}, "quick": T2_QUICK, "demo": T2_QUICK},
    task_modules=("gapscope.t2.task",),
    lean=True,
    data={"t2_data": "needs --t2-data FILE (T2 records, JSONL)"},
    sections=(t2_section,),
    docs="docs/t2.md",
    verdict=t2.verdict,
)

BUILTINS: tuple[DiagnosticSpec, ...] = (S2B, LADDER, ONNG, PROVE, T2)
"""gapscope's own diagnostics, in the order plans, reports and figures list them."""


@dataclass(frozen=True)
class Table:
    """Every diagnostic known in this environment, and the entry points that failed."""

    specs: tuple[DiagnosticSpec, ...]
    problems: tuple[str, ...]


def _entry_point_specs(ep: metadata.EntryPoint) -> list[DiagnosticSpec]:
    """The specs one entry point declares: a spec, a sequence of specs, or a function
    returning either. Raises TypeError for anything else."""
    loaded = ep.load()
    if callable(loaded) and not isinstance(loaded, DiagnosticSpec):
        loaded = loaded()
    found = [loaded] if isinstance(loaded, DiagnosticSpec) else loaded
    if not isinstance(found, list | tuple) or not all(isinstance(s, DiagnosticSpec) for s in found):
        raise TypeError(f"it gives {type(loaded).__name__}, not a DiagnosticSpec")
    return list(found)


def _loaded(builtins: Sequence[DiagnosticSpec]) -> Table:
    """``builtins`` and every entry point of :data:`ENTRY_POINT_GROUP`, each checked."""
    specs = list(builtins)
    problems: list[str] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP})"
        try:
            declared = _entry_point_specs(ep)
        except Exception as exc:  # a third party's import error must not end gapscope
            problems.append(f"{where} did not load: {type(exc).__name__}: {exc}")
            continue
        for spec in declared:
            taken = {s.name for s in specs}
            tasks = {r.task for s in specs for r in s.readers}
            clash = [r.task for r in spec.readers if r.task in tasks]
            if spec.name in taken or clash:
                what = f"name {spec.name!r}" if spec.name in taken else f"task {clash[0]!r}"
                problems.append(f"{where} is left out: its {what} is already taken")
                continue
            specs.append(spec)
    return Table(tuple(specs), tuple(problems))


@functools.cache
def table() -> Table:
    """The diagnostic table of this process (entry points are read once)."""
    return _loaded(BUILTINS)


def specs() -> tuple[DiagnosticSpec, ...]:
    """Every diagnostic: the built-ins, then the installed ones."""
    return table().specs


def load_problems() -> tuple[str, ...]:
    """One line per third-party entry point that was left out, naming it."""
    return table().problems


def _known() -> str:
    names = ", ".join(s.name for s in specs())
    problems = load_problems()
    return names + (f" ({'; '.join(problems)})" if problems else "")


def spec_named(name: str) -> DiagnosticSpec:
    """The diagnostic called ``name``; raises SpecError naming the known ones."""
    for found in specs():
        if found.name == name:
            return found
    raise SpecError(f"unknown diagnostic {name!r}; choose from {_known()}")


def lean_backed(name: str) -> bool:
    """Whether the diagnostic called ``name`` checks every generation with Lean (False for a
    name no spec has: ``run ladder-code`` is a command, not a profile diagnostic)."""
    return any(s.lean for s in specs() if s.name == name)


def reader(task: str) -> LogReader | None:
    """The reader of an Inspect task's logs, or None for a task no diagnostic reads."""
    return next((r for s in specs() for r in s.readers if r.task == task), None)


def verdict_of(loaded: LoadedLog, row: GapRow) -> str:
    """The one-line verdict on ``row``, a headline of ``loaded``, by the spec that reads it
    (a log no spec reads gets :func:`~gapscope.analysis.spec.outcome_verdict`)."""
    spec = next((s for s in specs() if loaded.diagnostic in s.readers), None)
    if spec is None:
        return outcome_verdict(loaded.summary, row)
    return spec.verdict_on(loaded.diagnostic, loaded.summary, row)


def steering_target(task: str) -> SteeringTarget | None:
    """The steering target whose runs are of ``task`` (None: that task is not steered)."""
    return next((s.steering for s in specs() if s.steering and s.readers[0].task == task), None)


def known_tasks() -> list[str]:
    """Every task name a reader answers to (for a message about a log nobody reads)."""
    return sorted(r.task for s in specs() for r in s.readers)
