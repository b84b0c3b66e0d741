"""Trace a Lean project once: its declarations and the project constants each one uses, from Lean.

The paper builds T2 from the global dependency graph that LeanDojo reads out of a project. The
graph has to be Lean's own - a name that merely looks like the target's is not a use - so it
is read from the compiled environment: gapscope's metaprogram ``GapscopeMine.lean`` (its header
says what it prints; it is untested against a real Lean, see docs/t2.md) is run with
``lake env lean --run`` in the project after ``lake build``, one Lean process per batch of
modules (each process pays one import of the batch and its dependencies). Batches run in
parallel here (threads that wait on Lean processes) or as Ray tasks (``executor="ray"``).

A batch that fails is split and its modules traced one by one, so one module that does not
build costs only itself; the modules that still fail are reported, not fatal. Every finished
batch is written to the trace cache at once, keyed by the project's sources (a hash of every
``.lean`` file, ``lake-manifest.json``, ``lean-toolchain`` and the metaprogram): a rerun on
unchanged sources reuses it and traces only the modules that are missing, so neither a rerun
nor a crash repeats finished work.

Every ``lake`` call runs in the Lean layer's sandbox (``gapscope.lean.sandbox``): a project's
code runs while it is built and imported, and the project is the user's, but not necessarily
trusted. ``lake build`` may write only the project; the tracer only its scratch folder and the
project's ``.lake``. The sandbox has no network: dependencies must be fetched before. With
``bounds`` (the self-test's tracer probe) each call is also held to them as a check's ``lake``
call is (``gapscope.lean.bounded``).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gapscope.lean import (
    LAKE_CALL,
    RAY_INSTALL,
    Bounds,
    LeanUnavailable,
    run_bounds,
    tail_of,
)
from gapscope.t2.declarations import name_components
from gapscope.t2.mining.trace_cache import read_cache, source_key, tracer_source, write_cache
from gapscope.t2.mining.traced import TracedDeclaration, TraceError, parse_batch, parse_declaration
from gapscope.t2.project import project_modules


@dataclass(frozen=True)
class TraceConfig:
    """How to run Lean in the project: ``lake`` may be any command line; ``sandboxed`` wraps
    every call in bubblewrap; timeouts are per ``lake build`` and per batch; ``bounds``, what
    each sandboxed call may use with all it starts (:mod:`gapscope.lean.bounded`; None, the
    default for mining a user's own project, bounds nothing but time: the self-test's probe
    passes a check's)."""

    project: Path
    lake: tuple[str, ...] = ("lake",)
    sandboxed: bool = True
    build_timeout_s: float = 3600.0
    batch_timeout_s: float = 1800.0
    batch_size: int = 16
    workers: int = 2
    bounds: Bounds | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.workers < 1:
            raise ValueError(
                f"batch_size and workers must be >= 1, got {self.batch_size}, {self.workers}"
            )


OLEAN_DIRS = (".lake/build/lib/lean", ".lake/build/lib", "build/lib")
"""Where ``lake build`` leaves a module's ``.olean`` (the layouts of Lake's versions)."""
NOT_BUILT = "no .olean after lake build (the module is in no default target of the lakefile)"


def unbuilt(project: Path, modules: dict[str, str]) -> list[str]:
    """The modules ``lake build`` left without an ``.olean`` (Lean cannot import them), sorted;
    none when no module has one where Lake puts them (an unknown layout: Lean decides)."""
    built = {
        m: any((project / d / path).with_suffix(".olean").is_file() for d in OLEAN_DIRS)
        for m, path in modules.items()
    }
    return sorted(m for m, ok in built.items() if not ok) if any(built.values()) else []


def require_lake(lake: Sequence[str]) -> None:
    """LeanUnavailable, saying what to install, when the ``lake`` command is not there."""
    if not lake or shutil.which(lake[0]) is None:
        raise LeanUnavailable(
            f"{lake[0] if lake else 'lake'} not found: mining traces the project with Lean; "
            "install Lean 4 with elan (https://github.com/leanprover/elan), which provides lake"
        )


def build_project(config: TraceConfig) -> str | None:
    """``lake build`` in the project, so every module's ``.olean`` exists. A failed build is
    not the end (one broken module fails the whole build): lake's last words are returned, and
    the modules it left without an ``.olean`` are reported as not built. LeanUnavailable when
    the build times out."""
    command = [*config.lake, "build"]
    held = run_bounds(LAKE_CALL, config.bounds, config.sandboxed, command, config.project)
    done = held.run(command, config.project, config.build_timeout_s, (config.project,))
    limit = held.exceeded(done)
    if limit is not None:
        raise LeanUnavailable(f"lake build was stopped: {limit}")
    if done.code is None:
        raise LeanUnavailable(f"lake build timed out after {config.build_timeout_s:.0f} s")
    if done.code != 0:
        return f"lake build failed (exit {done.code}): {tail_of(done.output)}"
    return None


@dataclass(frozen=True)
class BatchResult:
    """What one batch gave: declarations per traced module, and why each other module failed."""

    traced: dict[str, list[dict[str, Any]]]
    failed: dict[str, str]


_TRACER_ERROR = re.compile(rf"{re.escape(tracer_source().name)}:\d+:\d+: error\b")
"""Lean's ``FILE:LINE:COL: error: ...`` in the tracer's own source: it did not compile. Only
errors: a warning there (a deprecation on a newer Lean) names the file too, and the batch may
then fail for a reason of its own (a module that does not import), which is no reason to stop
the whole run."""


class TracerBroken(TraceError):
    """The tracer itself failed to compile: every batch would fail the same way."""


def _run_tracer(config: TraceConfig, modules: Sequence[str], all_modules: Iterable[str]) -> Any:
    """One Lean process over ``modules``: its JSON, or TraceError with what went wrong."""
    scratch = Path(tempfile.mkdtemp(prefix="gapscope-mine-"))
    try:
        listing, report = scratch / "modules.txt", scratch / "trace.json"
        listing.write_text("\n".join(all_modules) + "\n", encoding="utf-8")
        command = [
            *config.lake,
            *("env", "lean", "--run", str(tracer_source())),
            *(str(report), str(listing), *modules),
        ]
        # lake keeps its own bookkeeping in .lake (the lakefile's cache): writable too
        lake_dir = config.project / ".lake"
        writable = (scratch, lake_dir) if lake_dir.is_dir() else (scratch,)
        program = command[: command.index(str(tracer_source())) + 1]  # what the probe reads
        held = run_bounds(LAKE_CALL, config.bounds, config.sandboxed, program, config.project)
        done = held.run(command, config.project, config.batch_timeout_s, writable)
        where = f"modules {', '.join(modules)}"
        limit = held.exceeded(done)
        if limit is not None:
            raise TraceError(f"{where}: {limit}")
        if done.code is None:
            raise TraceError(f"{where}: timed out after {config.batch_timeout_s:.0f} s")
        if not report.is_file():
            if _TRACER_ERROR.search(done.output):
                raise TracerBroken(
                    f"gapscope's tracer does not compile with this project's Lean (it needs a"
                    f" recent Lean 4 with importModules (loadExts := ...); it is untested"
                    f" against a real Lean, docs/t2.md): {tail_of(done.output)}; --tracer"
                    f" leandojo traces where LeanDojo is installed"
                )
            raise TraceError(f"{where}: no trace (exit {done.code}): {tail_of(done.output)}")
        try:
            payload = json.loads(report.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise TraceError(f"{where}: the trace is not JSON: {exc}") from None
        parse_batch(payload, where)  # malformed output fails the batch here, not later
        return payload
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def trace_batch(
    config: TraceConfig, modules: Sequence[str], all_modules: Sequence[str]
) -> BatchResult:
    """Trace ``modules`` in one process; if that fails, each module alone (one module that
    does not import costs only itself)."""
    try:
        payload = _run_tracer(config, modules, all_modules)
    except TracerBroken:
        raise  # no module would trace: retrying them one by one only repeats it
    except TraceError as exc:
        if len(modules) == 1:
            return BatchResult({}, {modules[0]: str(exc)})
        traced: dict[str, list[dict[str, Any]]] = {}
        failed: dict[str, str] = {}
        for module in modules:
            one = trace_batch(config, [module], all_modules)
            traced.update(one.traced)
            failed.update(one.failed)
        return BatchResult(traced, failed)
    found: dict[str, list[dict[str, Any]]] = {m: [] for m in modules}
    for entry in payload["declarations"]:
        module = plain_module(entry["module"])
        found.setdefault(module, []).append(entry | {"module": module})
    return BatchResult(found, {})


def plain_module(name: str) -> str:
    """A module name as gapscope spells it (its file's path, dotted; ``project_modules``):
    Lean's ``Name.toString`` writes ``Proj.«my file»`` for the module of ``Proj/my file.lean``.
    GapscopeMine.lean echoes the name it was given; other tracers may not."""
    return ".".join(name_components(name))


def batches(modules: Sequence[str], size: int) -> list[list[str]]:
    return [list(modules[i : i + size]) for i in range(0, len(modules), size)]


Runner = Callable[[TraceConfig, list[list[str]], list[str]], Iterator[BatchResult]]
"""Runs every batch and yields each result as it finishes."""


def run_local(
    config: TraceConfig, work: list[list[str]], all_modules: list[str]
) -> Iterator[BatchResult]:
    """Batches on ``config.workers`` threads, each waiting on its Lean process."""
    pool = ThreadPoolExecutor(config.workers, thread_name_prefix="gapscope-mine")
    try:
        futures = [pool.submit(trace_batch, config, batch, all_modules) for batch in work]
        for future in as_completed(futures):
            yield future.result()
    finally:  # stopped early (an error, Ctrl-C): batches not yet started never start
        pool.shutdown(wait=True, cancel_futures=True)


def run_ray(address: str | None) -> Runner:
    """Batches as Ray tasks (one CPU each; Ray schedules them), on the cluster at ``address``
    (None: a local Ray). Every node must see the project at the same path."""

    def run(
        config: TraceConfig, work: list[list[str]], all_modules: list[str]
    ) -> Iterator[BatchResult]:
        try:
            import ray
        except ImportError:
            raise LeanUnavailable(RAY_INSTALL) from None
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        task = ray.remote(num_cpus=1)(trace_batch)
        pending = [task.remote(config, batch, all_modules) for batch in work]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                yield ray.get(done[0])
        finally:  # stopped early (an error, Ctrl-C): the batches still queued never run
            for ref in pending:
                ray.cancel(ref, force=True)

    return run


@dataclass
class Trace:
    """A project's trace: declarations per module, modules that failed (with why), how many
    batches this run traced (0: all from the cache), and which tracer made it."""

    key: str
    modules: dict[str, list[TracedDeclaration]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    traced_now: int = 0
    tracer: str = "gapscope"
    build_error: str | None = None
    """What ``lake build`` said when it failed (this run)."""

    @property
    def declarations(self) -> list[TracedDeclaration]:
        return [d for module in sorted(self.modules) for d in self.modules[module]]


Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]
"""``progress(total)`` -> a context giving ``advance(n)`` (``gapscope.lean.progress``)."""


def _no_progress(total: int) -> AbstractContextManager[Callable[[int], None]]:
    return nullcontext(lambda n: None)


def trace_project(
    config: TraceConfig,
    cache: Path,
    runner: Runner = run_local,
    progress: Progress = _no_progress,
    say: Callable[[str], None] = lambda message: None,
) -> Trace:
    """The project's trace, from ``cache`` where its key matches, the rest traced now (after
    ``lake build``; nothing is built when the cache has every module). ``say`` hears what
    each long step is about to do."""
    key = source_key(config.project)
    modules = project_modules(config.project)
    done = {m: v for m, v in read_cache(cache, key).items() if m in modules}
    todo = [m for m in sorted(modules) if m not in done]
    work: list[list[str]] = []
    build_error: str | None = None
    failed: dict[str, str] = {}
    if done:
        say(f"{len(done)} of {len(modules)} modules traced before ({cache})")
    if todo:
        say(f"lake build in {config.project}, then tracing {len(todo)} modules")
        build_error = build_project(config)
        if build_error is not None:
            say(f"{build_error}; tracing the modules it built")
        skipped = set(unbuilt(config.project, modules)) & set(todo)
        failed.update({m: NOT_BUILT for m in sorted(skipped)})
        work = batches([m for m in todo if m not in skipped], config.batch_size)
    if work:
        with progress(len(work)) as advance:
            for result in runner(config, work, sorted(modules)):
                done.update(result.traced)
                failed.update(result.failed)
                write_cache(cache, key, done, failed)
                advance(1)
    trace = Trace(key, failed=failed, traced_now=len(work), build_error=build_error)
    for module, entries in done.items():
        trace.modules[module] = [
            parse_declaration(e, f"{cache}: {module}[{i}]") for i, e in enumerate(entries)
        ]
    return trace
