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

from gapscope.lean.backend import CheckRequest, LeanBackend, LeanUnavailable
from gapscope.lean.base import CachedBackend, check
from gapscope.lean.cache import VerdictCache, default_cache_path
from gapscope.lean.executor import RayOptions, open_checker
from gapscope.lean.factory import open_backend
from gapscope.lean.kimina import KiminaBackend
from gapscope.lean.local import LocalBackend
from gapscope.lean.sandbox import SandboxUnavailable
from gapscope.lean.verdict import STANDARD_AXIOMS, Checker, LeanMessage, LeanVerdict, Status

__all__ = [
    "STANDARD_AXIOMS",
    "CachedBackend",
    "CheckRequest",
    "Checker",
    "KiminaBackend",
    "LeanBackend",
    "LeanMessage",
    "LeanUnavailable",
    "LeanVerdict",
    "LocalBackend",
    "RayOptions",
    "SandboxUnavailable",
    "Status",
    "VerdictCache",
    "check",
    "default_cache_path",
    "open_backend",
    "open_checker",
]
