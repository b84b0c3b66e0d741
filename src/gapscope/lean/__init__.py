"""Lean 4 checking layer: backends behind one interface, typed verdicts.

Backends: a pool of local Lean REPL processes in a user's Lean project, or a
kimina-lean-server over HTTP. A proof is valid only with no errors, no sorries and only the
standard axioms, and an official theorem only if its type is the challenge's, compared outside
the model's environment (``gapscope.lean.replay``, ``gapscope.lean.kernel``); every verdict
names the checker that settled it. ``open_checker(spec, executor=...)`` is the one entry point a
diagnostic calls (``gapscope.lean.executor``: this machine or Ray actors); it opens backends
through ``open_backend(spec)`` (``gapscope.lean.factory``), never the other way round; see
docs/lean.md.

Model-written code goes through ``gapscope.lean.screen.screen_code`` before any backend (commands a
proof never needs get a ``forbidden_command`` verdict), and local checks run only sandboxed
(``gapscope.lean.sandbox``; fail closed unless ``allow_unsandboxed``): see the threat model in
docs/lean.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.lean.backend import CheckRequest, LeanBackend, LeanUnavailable
    from gapscope.lean.base import CachedBackend, check
    from gapscope.lean.bounded import LAKE_CALL, Run, RunBounds, run_bounded, run_bounds
    from gapscope.lean.bounding import CGROUP_FIX, ENV_ATTEMPT_CGROUP, Containment, containment
    from gapscope.lean.cache import VerdictCache, default_cache_path
    from gapscope.lean.cgroup import AttemptCgroup, Bounds, CgroupSupport, cgroup_support
    from gapscope.lean.doctor import (
        Finding,
        build_limits_finding,
        kimina_finding,
        project_findings,
        repl_limits_finding,
        sandbox_finding,
        tool_findings,
    )
    from gapscope.lean.executor import EXECUTORS, RAY_INSTALL, RayOptions, open_checker
    from gapscope.lean.factory import ENV_SPEC, open_backend, parse_spec
    from gapscope.lean.heads import DECLARATION_KINDS, read_heads
    from gapscope.lean.kernel import tail_of
    from gapscope.lean.kimina import KiminaBackend
    from gapscope.lean.local import LocalBackend, find_repl_binary, repl_bounds
    from gapscope.lean.output import Keep
    from gapscope.lean.progress import progress_bar
    from gapscope.lean.sandbox import (
        ALLOW_HINT,
        INSTALL_HINT,
        READ_ONLY_DEV,
        SandboxStatus,
        SandboxUnavailable,
        decide_sandbox,
        require_sandbox,
        sandbox_argv,
        sandbox_choice,
        sized_tmpfs,
        unsandboxed_allowed,
    )
    from gapscope.lean.screen import SYNTAX_COMMANDS, attributes_in, screen_code
    from gapscope.lean.selftest.programs import PROBE_PATH, Probe, ProgramRun
    from gapscope.lean.selftest.record import (
        ENV_ALLOW_UNTESTED,
        SelfTestRequired,
        untested_allowed,
    )
    from gapscope.lean.selftest.runner import SelfTestResult, selftest_workspace
    from gapscope.lean.soundness import declared_names, is_sorry_warning
    from gapscope.lean.source import Kind, Lexed, code_only, lex
    from gapscope.lean.verdict import (
        STANDARD_AXIOMS,
        Checker,
        LeanMessage,
        LeanVerdict,
        Status,
        broken_by_code,
    )
    from gapscope.lean.workspace import (
        DEFAULT_REPL_REV,
        DEFAULT_TOOLCHAIN,
        next_steps,
        write_workspace,
    )

__all__ = [
    "ALLOW_HINT",
    "CGROUP_FIX",
    "DECLARATION_KINDS",
    "DEFAULT_REPL_REV",
    "DEFAULT_TOOLCHAIN",
    "ENV_ALLOW_UNTESTED",
    "ENV_ATTEMPT_CGROUP",
    "ENV_SPEC",
    "EXECUTORS",
    "INSTALL_HINT",
    "LAKE_CALL",
    "PROBE_PATH",
    "RAY_INSTALL",
    "READ_ONLY_DEV",
    "STANDARD_AXIOMS",
    "SYNTAX_COMMANDS",
    "AttemptCgroup",
    "Bounds",
    "CachedBackend",
    "CgroupSupport",
    "CheckRequest",
    "Checker",
    "Containment",
    "Finding",
    "Keep",
    "KiminaBackend",
    "Kind",
    "LeanBackend",
    "LeanMessage",
    "LeanUnavailable",
    "LeanVerdict",
    "Lexed",
    "LocalBackend",
    "Probe",
    "ProgramRun",
    "RayOptions",
    "Run",
    "RunBounds",
    "SandboxStatus",
    "SandboxUnavailable",
    "SelfTestRequired",
    "SelfTestResult",
    "Status",
    "VerdictCache",
    "attributes_in",
    "broken_by_code",
    "build_limits_finding",
    "cgroup_support",
    "check",
    "code_only",
    "containment",
    "decide_sandbox",
    "declared_names",
    "default_cache_path",
    "find_repl_binary",
    "is_sorry_warning",
    "kimina_finding",
    "lex",
    "next_steps",
    "open_backend",
    "open_checker",
    "parse_spec",
    "progress_bar",
    "project_findings",
    "read_heads",
    "repl_bounds",
    "repl_limits_finding",
    "require_sandbox",
    "run_bounded",
    "run_bounds",
    "sandbox_argv",
    "sandbox_choice",
    "sandbox_finding",
    "screen_code",
    "selftest_workspace",
    "sized_tmpfs",
    "tail_of",
    "tool_findings",
    "unsandboxed_allowed",
    "untested_allowed",
    "write_workspace",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ALLOW_HINT": ".sandbox",
        "CGROUP_FIX": ".bounding",
        "AttemptCgroup": ".cgroup",
        "Bounds": ".cgroup",
        "CgroupSupport": ".cgroup",
        "CachedBackend": ".base",
        "CheckRequest": ".backend",
        "Checker": ".verdict",
        "Containment": ".bounding",
        "DECLARATION_KINDS": ".heads",
        "DEFAULT_REPL_REV": ".workspace",
        "DEFAULT_TOOLCHAIN": ".workspace",
        "ENV_ALLOW_UNTESTED": ".selftest.record",
        "ENV_ATTEMPT_CGROUP": ".bounding",
        "ENV_SPEC": ".factory",
        "EXECUTORS": ".executor",
        "Finding": ".doctor",
        "INSTALL_HINT": ".sandbox",
        "Keep": ".output",
        "KiminaBackend": ".kimina",
        "LAKE_CALL": ".bounded",
        "Kind": ".source",
        "LeanBackend": ".backend",
        "LeanMessage": ".verdict",
        "LeanUnavailable": ".backend",
        "LeanVerdict": ".verdict",
        "Lexed": ".source",
        "LocalBackend": ".local",
        "PROBE_PATH": ".selftest.programs",
        "Probe": ".selftest.programs",
        "ProgramRun": ".selftest.programs",
        "RAY_INSTALL": ".executor",
        "RayOptions": ".executor",
        "Run": ".bounded",
        "RunBounds": ".bounded",
        "STANDARD_AXIOMS": ".verdict",
        "SYNTAX_COMMANDS": ".screen",
        "READ_ONLY_DEV": ".sandbox",
        "SandboxStatus": ".sandbox",
        "sized_tmpfs": ".sandbox",
        "SandboxUnavailable": ".sandbox",
        "SelfTestRequired": ".selftest.record",
        "SelfTestResult": ".selftest.runner",
        "Status": ".verdict",
        "VerdictCache": ".cache",
        "attributes_in": ".screen",
        "broken_by_code": ".verdict",
        "build_limits_finding": ".doctor",
        "cgroup_support": ".cgroup",
        "check": ".base",
        "code_only": ".source",
        "containment": ".bounding",
        "decide_sandbox": ".sandbox",
        "declared_names": ".soundness",
        "default_cache_path": ".cache",
        "find_repl_binary": ".local",
        "is_sorry_warning": ".soundness",
        "kimina_finding": ".doctor",
        "lex": ".source",
        "next_steps": ".workspace",
        "open_backend": ".factory",
        "open_checker": ".executor",
        "parse_spec": ".factory",
        "progress_bar": ".progress",
        "project_findings": ".doctor",
        "read_heads": ".heads",
        "repl_bounds": ".local",
        "repl_limits_finding": ".doctor",
        "require_sandbox": ".sandbox",
        "run_bounded": ".bounded",
        "run_bounds": ".bounded",
        "sandbox_argv": ".sandbox",
        "sandbox_choice": ".sandbox",
        "sandbox_finding": ".doctor",
        "screen_code": ".screen",
        "selftest_workspace": ".selftest.runner",
        "tail_of": ".kernel",
        "tool_findings": ".doctor",
        "unsandboxed_allowed": ".sandbox",
        "untested_allowed": ".selftest.record",
        "write_workspace": ".workspace",
    },
)
