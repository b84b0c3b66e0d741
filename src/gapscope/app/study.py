"""A study: several diagnostics on several models, planned before it spends, run as one
Inspect ``eval_set`` (one log directory, retries, resumable), with one progress line.

:func:`plan_of` reads what a built task will do (samples, model calls, the token budget,
Lean checks) from the task itself, so ``--dry-run`` and the run count the same things.
:func:`run_study` hands every task, each bound to its model, to ``eval_set``: a rerun of the
same study finds the finished logs and skips them, and continues a log that was cut off.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from gapscope.app.context import plan_context
from gapscope.app.endings import Ending, study_ending

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.model import ChatMessage, Model


@dataclass(frozen=True)
class PlanRow:
    """What one task of a study will do, before anything is spent."""

    model: str
    diagnostic: str
    label: str
    samples: int
    generations: int
    max_tokens: int
    lean_checks: int
    prompt_tokens: int = 0
    """About how many prompt tokens all its generations read (characters / 4): the server's
    reading time in the plan's estimate (``preflight.estimated_seconds``)."""
    reply_tokens: int = 0
    """The output tokens the plan's "about" expects one generation to cost: the task's own
    ``expected_reply_tokens`` where it declares one, else :data:`TYPICAL_REPLY_TOKENS` or the
    cap when that is lower."""
    longest_prompt_tokens: int = 0
    """About how many tokens its longest single prompt holds (characters /
    :data:`WINDOW_CHARS_PER_TOKEN`): what the plan compares with the model's context window
    (:mod:`gapscope.app.context`). The task's ``longest_prompt_chars`` where it declares one (an
    S2B-LM episode's last game reads the whole transcript), else its longest sample input."""

    @property
    def token_budget(self) -> int:
        """The most output tokens the task may cost: max tokens x generations."""
        return self.max_tokens * self.generations

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"token_budget": self.token_budget}


@dataclass(frozen=True)
class Skipped:
    """A diagnostic a study cannot run for a model, and what would make it run."""

    model: str
    diagnostic: str
    reason: str


@dataclass(frozen=True)
class StudyTask:
    """A task of the study: its plan row and the built task (bound to its model when run)."""

    row: PlanRow
    task: Task
    model: str


@dataclass
class Study:
    """Every task of a study and every diagnostic it leaves out."""

    tasks: list[StudyTask] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def plan(self) -> dict[str, Any]:
        rows = [t.row for t in self.tasks]
        return {
            "tasks": [r.to_dict() for r in rows],
            "skipped": [asdict(s) for s in self.skipped],
            "context": plan_context(rows),
            "totals": {
                "tasks": len(rows),
                "samples": sum(r.samples for r in rows),
                "generations": sum(r.generations for r in rows),
                "token_budget": sum(r.token_budget for r in rows),
                "lean_checks": sum(r.lean_checks for r in rows),
            },
        }


def plan_of(
    task: Task, model: str, diagnostic: str, label: str, limit: int | None = None
) -> PlanRow:
    """The plan row of a built task: samples x epochs generations (an S2B-LM sample is an
    episode of several model calls, counted by its own task), each up to ``max_tokens`` (its
    config's, where a :class:`FirstLook` lowered it below the task's own); a Lean-backed
    diagnostic (its spec's ``lean``) checks every generation. With ``limit`` (Inspect's: the
    first ``limit`` samples run), only those are counted."""
    from gapscope.analysis import lean_backed

    epochs = task.epochs or 1
    dataset = list(task.dataset)[:limit]
    samples = len(dataset)
    metadata = task.metadata or {}
    per_sample = metadata.get("model_calls")
    if per_sample is not None:  # per episode seed, in the dataset's order
        generations = int(sum(list(per_sample.values())[:limit]))
        max_tokens = int(metadata["max_tokens"])
        if task.config.max_tokens:
            max_tokens = min(max_tokens, task.config.max_tokens)
        prompt_chars = sum(list(metadata.get("prompt_chars", {}).values())[:limit])
    else:
        generations = samples * epochs
        max_tokens = int(task.config.max_tokens or 0)
        prompt_chars = epochs * sum(_chars(sample.input) for sample in dataset)
    longest_chars = metadata.get("longest_prompt_chars")
    if longest_chars is None:
        longest_chars = max((_chars(sample.input) for sample in dataset), default=0)
    if model == "none":
        generations = prompt_chars = longest_chars = 0
    reply_tokens = metadata.get("expected_reply_tokens", TYPICAL_REPLY_TOKENS)
    return PlanRow(
        model=model,
        diagnostic=diagnostic,
        label=label,
        samples=samples,
        generations=generations,
        max_tokens=max_tokens,
        lean_checks=samples * epochs if lean_backed(diagnostic) else 0,
        prompt_tokens=prompt_chars // CHARS_PER_TOKEN,
        reply_tokens=min(int(reply_tokens), max_tokens),
        longest_prompt_tokens=math.ceil(int(longest_chars) / WINDOW_CHARS_PER_TOKEN),
    )


@dataclass(frozen=True)
class FirstLook:
    """``gapscope profile --limit N --max-tokens N``: a smaller study than any budget, of
    every task's first ``limit`` samples with replies of at most ``max_tokens`` tokens.

    The limit is Inspect's own ``eval_set(limit=...)`` (each log records it in
    ``eval.config.limit``); the cap lowers each task's ``max_tokens`` (never raises it: a
    speaker's 32-token messages stay 32), which a solver passing its own per call honours
    too (``models.within_run_cap``). Both are in the plan (``first_look``) and in every
    log's ``eval.metadata``."""

    limit: int | None = None
    max_tokens: int | None = None

    def capped(self, task: Task) -> Task:
        """``task`` with its replies capped at :attr:`max_tokens` (if lower than its own)."""
        from inspect_ai import task_with
        from inspect_ai.model import GenerateConfig

        if self.max_tokens is None:
            return task
        own = task.config.max_tokens or (task.metadata or {}).get("max_tokens")
        cap = min(int(own), self.max_tokens) if own else self.max_tokens
        return task_with(task, config=task.config.merge(GenerateConfig(max_tokens=cap)))

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def eval_args(self) -> dict[str, Any]:
        """What ``eval_set`` is given: the limit, and both in every log's metadata."""
        if not self.to_dict():
            return {}
        limit = {"limit": self.limit} if self.limit else {}
        return limit | {"metadata": {"first_look": self.to_dict()}}


TYPICAL_REPLY_TOKENS = 64
"""The reply length a plan expects of a task that declares none (O-NNG, prove, T2, the code
and review pilots: not measured), where its cap is higher; "up to" assumes every reply runs
to its cap."""

CHARS_PER_TOKEN = 4
"""English text per token, roughly, in the tokenizers of the models gapscope meets."""

WINDOW_CHARS_PER_TOKEN = 2.5
"""Characters per token when a prompt is set against a context window: denser than
:data:`CHARS_PER_TOKEN`, so the check errs toward a warning. Measured: SmolLM2's tokenizer
read the last prompt of a cat-10shot listener episode (seed 0, rule traces as the replies,
its chat template applied) as 23,034 tokens for 63,690 characters, 2.77 a token; the plan
says 25,476."""


def _chars(prompt: str | list[ChatMessage]) -> int:
    """The characters of a sample's input (its text, or its messages' text)."""
    if isinstance(prompt, str):
        return len(prompt)
    return sum(len(message.text) for message in prompt)


class StudyProgress:
    """One line on stderr for the whole study: tasks done / total, samples, tokens, time.

    Fed by Inspect's hooks (:class:`_ProgressHooks`), which see every sample of every task
    that ``eval_set`` runs, whatever its own display shows: output tokens are counted as each
    model call returns (not when its sample ends: an S2B-LM episode is a dozen calls), and
    while :func:`tracking` runs a ticker shows the line every ``every_s`` seconds (default:
    :data:`TERMINAL_EVERY_S` on a terminal, :data:`PIPED_EVERY_S` in a pipe or a file), so a
    run that is slow, or stuck, still shows that it is alive.

    Tasks and samples are the study's, not its attempts': ``eval_set`` retries a task whose
    samples failed (and the hooks see every attempt of it, and every sample it runs again), so
    a task counts once, when a log of it ends ``success`` (keyed by Inspect's task id, which
    a retry keeps), and a sample once, by (task id, sample id, epoch), as done when it ended
    without an error or as failed while its last attempt errored. Counting each attempt read
    ``tasks 12/8, samples 80/30``.
    """

    def __init__(
        self,
        study: Study,
        out: Callable[[str], None],
        every_s: float | None = None,
    ) -> None:
        self.total_tasks = len(study.tasks)
        self.total_samples = sum(t.row.samples * (t.task.epochs or 1) for t in study.tasks)
        self.finished_tasks: set[str] = set()
        self.samples: dict[tuple[str, str, int], bool] = {}
        """Every sample that ended, by (task id, sample id, epoch): whether its last attempt
        ended without an error."""
        self.tokens = 0
        self.calls = 0
        self.start = time.monotonic()
        self.out = out
        self.every_s = every_s if every_s is not None else default_every_s()
        self._lock = threading.Lock()

    @property
    def tasks(self) -> int:
        """The study's tasks that finished."""
        return len(self.finished_tasks)

    @property
    def done(self) -> int:
        """The study's samples that ended without an error."""
        return sum(self.samples.values())

    @property
    def failed(self) -> int:
        """The study's samples whose last attempt ended in an error."""
        return len(self.samples) - self.done

    def call_done(self, tokens: int) -> None:
        with self._lock:
            self.calls += 1
            self.tokens += tokens

    def sample_done(self, task_id: str, sample_id: str, epoch: int, ok: bool) -> None:
        with self._lock:
            self.samples[(task_id, sample_id, epoch)] = ok

    def task_done(self, task_id: str, finished: bool) -> None:
        with self._lock:
            if finished:
                self.finished_tasks.add(task_id)
            self.show()

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        failed = f" ({self.failed} failed)" if self.failed else ""
        return (
            f"study: tasks {self.tasks}/{self.total_tasks}, samples {self.done}/"
            f"{self.total_samples}{failed}, model calls {self.calls:,}, output tokens "
            f"{self.tokens:,}, {elapsed:.0f} s"
        )

    def show(self) -> None:
        self.out(self.line())


TERMINAL_EVERY_S = 5.0
PIPED_EVERY_S = 30.0
"""How often the progress line is shown: on a terminal, and as plain lines in a pipe or file."""


def default_every_s() -> float:
    return TERMINAL_EVERY_S if sys.stderr.isatty() else PIPED_EVERY_S


_ACTIVE: list[StudyProgress] = []


def _install_hooks() -> None:
    """Register the study's Inspect hooks once per process (Inspect keeps them for good)."""
    from inspect_ai.hooks import Hooks, ModelUsageData, SampleEnd, TaskEnd, TaskStart, hooks

    task_ids: dict[str, str] = {}  # an attempt's eval id -> its task's id (kept by retries)

    @hooks(name="gapscope_study", description="gapscope profile: one progress line")
    class _ProgressHooks(Hooks):
        def enabled(self) -> bool:
            return bool(_ACTIVE)

        async def on_task_start(self, data: TaskStart) -> None:
            task_ids[data.eval_id] = data.spec.task_id

        async def on_model_usage(self, data: ModelUsageData) -> None:
            for progress in _ACTIVE:
                progress.call_done(data.usage.output_tokens)

        async def on_sample_end(self, data: SampleEnd) -> None:
            sample = data.sample
            task_id = task_ids.get(data.eval_id, data.eval_id)
            for progress in _ACTIVE:
                progress.sample_done(task_id, str(sample.id), sample.epoch, sample.error is None)

        async def on_task_end(self, data: TaskEnd) -> None:
            for progress in _ACTIVE:
                progress.task_done(data.log.eval.task_id, data.log.status == "success")


_hooks_installed = threading.Event()


@contextlib.contextmanager
def tracking(progress: StudyProgress) -> Iterator[StudyProgress]:
    """Feed ``progress`` from Inspect's hooks, and show it every ``every_s``, while the body
    runs."""
    if not _hooks_installed.is_set():
        _install_hooks()
        _hooks_installed.set()
    _ACTIVE.append(progress)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(progress.every_s):
            progress.show()

    ticker = threading.Thread(target=tick, name="gapscope-progress", daemon=True)
    ticker.start()
    try:
        yield progress
    finally:
        stop.set()
        ticker.join()
        _ACTIVE.remove(progress)


def run_study(
    study: Study,
    log_dir: Path,
    progress: StudyProgress,
    models: Mapping[str, str | Model] | None = None,
    generation: Callable[[PlanRow], Mapping[str, int]] | None = None,
    **eval_args: Any,
) -> Ending:
    """Run every task of ``study`` through one ``eval_set`` over ``log_dir``; how it ended is
    read back from the logs there (:func:`gapscope.app.endings.study_ending`).

    Finished tasks found there are not run again; a log that was cut off is continued (its
    finished samples are kept). Failed samples are retried (Inspect's ``retry_attempts``)
    and, past that, recorded as failed: no sample is lost. A Ctrl-C ends the run, not the
    command: the ending says it was interrupted. ``models`` are the opened models by name (a
    name not in it is opened by Inspect); ``generation`` gives each task's bounds on its
    requests (``timeout``, ``attempt_timeout``, ``max_retries``: Inspect leaves them out of a
    task's identity, so a rerun with other bounds still resumes).
    """
    from inspect_ai import eval_set, task_with
    from inspect_ai.model import GenerateConfig

    opened = models or {}
    tasks = [
        task_with(
            t.task,
            model=opened.get(t.model, t.model),
            config=t.task.config.merge(
                GenerateConfig.model_validate(dict(generation(t.row)) if generation else {})
            ),
        )
        for t in study.tasks
    ]
    interrupted = False
    held = HeldSuccess(sys.stderr)
    with tracking(progress), contextlib.redirect_stdout(held):  # type: ignore[type-var]
        try:
            # continue_on_fail: a sample that errors (a server that failed it) does not cancel
            # the samples still running; its task ends marked failed, so eval_set retries just
            # those samples now (retry_attempts) or when the same study is run again.
            eval_set(tasks, log_dir=str(log_dir), continue_on_fail=True, **eval_args)
        except KeyboardInterrupt:  # eval_set raises it when a task was cancelled
            interrupted = True
    ending = study_ending(log_dir, len(study.tasks), interrupted=interrupted)
    held.release(ending.complete)
    return ending


class HeldSuccess(io.TextIOBase):
    """Inspect's display, passed on to ``target``, less its "Completed all tasks ...
    successfully" until the logs confirm it: after a Ctrl-C ``eval_set`` printed it over
    cancelled logs."""

    def __init__(self, target: IO[str]) -> None:
        self.target = target
        self.held: list[str] = []

    def write(self, text: str) -> int:
        if "Completed all tasks in" in text:
            self.held.append(text)
        else:
            self.target.write(text)
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:  # a terminal's size is read through it
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", "utf-8")

    def release(self, confirmed: bool) -> None:
        """Print what was held when the logs say every task finished; drop it otherwise."""
        if confirmed:
            self.target.write("".join(self.held))
        self.held.clear()
