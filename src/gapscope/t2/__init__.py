"""T2 (testing accuracy): does a generated Lean declaration mean the right thing?

The generated declaration replaces the original under the same name; the declarations after
it that use it are its tests. Records, defect audit, prompts, programs, attribution and
metrics are plain Python; ``task.py`` wires them to Inspect. See docs/t2.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.t2 import contract
    from gapscope.t2.audit import Audit, audit_records
    from gapscope.t2.bleu import BUCKETS
    from gapscope.t2.contract import TASK, RunMetadata, ScoredSample
    from gapscope.t2.evaluate import SampleOutcome
    from gapscope.t2.metrics import summarize, with_missing
    from gapscope.t2.mining.informalize import Journal, informalize, read_prompt
    from gapscope.t2.mining.leandojo import leandojo_available, trace_with_leandojo
    from gapscope.t2.mining.output import OutputPaths, write_nl, write_records
    from gapscope.t2.mining.probe import TRACER_PROBE
    from gapscope.t2.mining.targets import Filters, Mined, mine_targets
    from gapscope.t2.mining.trace import (
        Trace,
        TraceConfig,
        require_lake,
        run_local,
        run_ray,
        trace_project,
    )
    from gapscope.t2.mining.traced import TraceError
    from gapscope.t2.project import project_modules
    from gapscope.t2.records import load_records
    from gapscope.t2.refine import COMPILES
    from gapscope.t2.repo import RepoSuccessors, file_text_of
    from gapscope.t2.rules import Rules, parse_rules
    from gapscope.t2.successors import record_successors, successor_profile
    from gapscope.t2.task import t2
    from gapscope.t2.untested import UNTESTED_PATHS

__all__ = [
    "BUCKETS",
    "COMPILES",
    "TASK",
    "TRACER_PROBE",
    "UNTESTED_PATHS",
    "Audit",
    "Filters",
    "Journal",
    "Mined",
    "OutputPaths",
    "RepoSuccessors",
    "Rules",
    "RunMetadata",
    "SampleOutcome",
    "ScoredSample",
    "Trace",
    "TraceConfig",
    "TraceError",
    "audit_records",
    "contract",
    "file_text_of",
    "informalize",
    "leandojo_available",
    "load_records",
    "mine_targets",
    "parse_rules",
    "project_modules",
    "read_prompt",
    "record_successors",
    "require_lake",
    "run_local",
    "run_ray",
    "successor_profile",
    "summarize",
    "t2",
    "trace_project",
    "trace_with_leandojo",
    "with_missing",
    "write_nl",
    "write_records",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "contract": ".contract",
        "Audit": ".audit",
        "BUCKETS": ".bleu",
        "COMPILES": ".refine",
        "Filters": ".mining.targets",
        "Journal": ".mining.informalize",
        "Mined": ".mining.targets",
        "OutputPaths": ".mining.output",
        "RepoSuccessors": ".repo",
        "Rules": ".rules",
        "RunMetadata": ".contract",
        "SampleOutcome": ".evaluate",
        "ScoredSample": ".contract",
        "TASK": ".contract",
        "TRACER_PROBE": ".mining.probe",
        "Trace": ".mining.trace",
        "TraceConfig": ".mining.trace",
        "TraceError": ".mining.traced",
        "UNTESTED_PATHS": ".untested",
        "audit_records": ".audit",
        "file_text_of": ".repo",
        "informalize": ".mining.informalize",
        "leandojo_available": ".mining.leandojo",
        "load_records": ".records",
        "mine_targets": ".mining.targets",
        "parse_rules": ".rules",
        "project_modules": ".project",
        "read_prompt": ".mining.informalize",
        "record_successors": ".successors",
        "require_lake": ".mining.trace",
        "run_local": ".mining.trace",
        "run_ray": ".mining.trace",
        "successor_profile": ".successors",
        "summarize": ".metrics",
        "t2": ".task",
        "trace_project": ".mining.trace",
        "trace_with_leandojo": ".mining.leandojo",
        "with_missing": ".metrics",
        "write_nl": ".mining.output",
        "write_records": ".mining.output",
    },
)
