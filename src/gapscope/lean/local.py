"""The local backend: Lean REPL processes in a Lean project of the user's, pooled per header.

Why not LeanInteract: it is a good library, but it downloads and builds its own REPL and
toolchain on first use (against this project's offline-first rule), it cannot be exercised
without a Lean installation, and the pieces gapscope needs - per-header reuse, recycling by
use count and RSS, hard kills on timeout, typed verdicts with the axiom rule - are a few
hundred lines that are fully testable against a fake REPL.

The REPLs run sandboxed (``gapscope.lean.sandbox``: no network, read-only filesystem). Without
a working bubblewrap the backend refuses to start unless ``allow_unsandboxed=True`` (fail
closed); every verdict records whether its check ran sandboxed, and the limits that held the
REPL with everything it started (``bounds``: its own cgroup where the host offers one, else
``RLIMIT_NPROC`` under an unprivileged uid; ``gapscope.lean.bounding``). Those limits hold per
REPL process, for its life (why not per check: ``gapscope.lean.pool``).

A request naming ``required`` theorems is accepted outside the model's environment: the REPL
restores the solution's constants into a fresh environment (without a kernel check at the
pinned REPL) and compares each official name's printed type with the challenge's there
(``gapscope.lean.replay``); when comparator is built in the workspace
(``gapscope.lean.kernel``) it has the last word. A request without ``required`` names claims
no theorem (T2's compile checks) and is judged from the REPL's text
(``gapscope.lean.soundness``). Every verdict lists the checks that ran and whether this
installation passed the known-answer self-test (``gapscope.lean.selftest``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.base import CachedBackend, split_imports
from gapscope.lean.binaries import command_binaries, identify, toolchain_binaries
from gapscope.lean.bounded import run_bounds
from gapscope.lean.cache import VerdictCache
from gapscope.lean.cgroup import Bounds
from gapscope.lean.kernel import (
    KernelChecker,
    find_kernel_checker,
    kernel_checker_missing,
    manifest_revision,
)
from gapscope.lean.pool import PoolConfig, PoolError, ReplPool
from gapscope.lean.process import DEFAULT_MAX_REPLY_BYTES, ReplCrashed, ReplProcess, ReplTimeout
from gapscope.lean.protocol import ProtocolError, encode_command, encode_request, parse_response
from gapscope.lean.replay import (
    Signature,
    acceptance_verdict,
    challenge_command,
    elaboration_verdict,
    read_signatures,
    solution_command,
)
from gapscope.lean.sandbox import decide_sandbox
from gapscope.lean.selftest.programs import key_source
from gapscope.lean.selftest.record import InstallationKey, passed
from gapscope.lean.soundness import judge, prepare
from gapscope.lean.verdict import LeanVerdict, Status, with_text_label

REPL_BINARY_CANDIDATES = (
    ".lake/packages/REPL/.lake/build/bin/repl",
    ".lake/packages/repl/.lake/build/bin/repl",
    ".lake/build/bin/repl",
)
"""Where ``lake build`` leaves the REPL: as a dependency of the project, or the project itself."""


REPL_PROCESSES = 512
"""Processes and threads one sandboxed REPL may run with all it starts: Lean runs a worker
thread per hardware thread, ``lake env`` adds itself and the REPL."""


def repl_bounds(max_rss_mb: float | None) -> Bounds:
    """The default limits of one sandboxed REPL: its memory is ``max_rss_mb``, the RSS past
    which a REPL was already retired after a check (8 GB: room for ``import Mathlib``), now
    also a hard limit during one; one CPU, as a code-pilot attempt."""
    return Bounds(int(max_rss_mb or DEFAULT_MAX_RSS_MB), REPL_PROCESSES, 1.0)


DEFAULT_MAX_RSS_MB = 8192.0


def find_repl_binary(project: Path) -> Path | None:
    """The built REPL executable inside ``project``, if there is one."""
    for candidate in REPL_BINARY_CANDIDATES:
        path = project / candidate
        if path.is_file():
            return path
    return None


def read_toolchain(project: Path) -> str:
    """The project's ``lean-toolchain`` pin; the project path stands in when there is none."""
    pin = project / "lean-toolchain"
    text = pin.read_text(encoding="utf-8").strip() if pin.is_file() else ""
    return text or f"unpinned@{project.resolve()}"


def default_repl_command(project: Path) -> tuple[str, ...]:
    """``lake env <repl>`` so the REPL sees the project's packages; LeanUnavailable if absent."""
    if shutil.which("lake") is None:
        raise LeanUnavailable(
            "`lake` is not on PATH. Install elan (https://github.com/leanprover/elan), then run "
            "`gapscope lean setup DIR` and the commands it prints."
        )
    binary = find_repl_binary(project)
    if binary is None:
        raise LeanUnavailable(
            f"no built Lean REPL in {project} (looked for {', '.join(REPL_BINARY_CANDIDATES)}). "
            f"Run `gapscope lean setup {project}` (or add leanprover-community/repl to its "
            f"lakefile), then `lake update && lake build` in it."
        )
    return ("lake", "env", str(binary))


class LocalBackend(CachedBackend):
    """Checks code with REPL processes started in ``project``; ``max_workers`` run at once.

    ``allow_unsandboxed``: run where bubblewrap does not work (the default refuses to start).
    ``sandbox``: None sandboxes (fail closed), True insists even with the opt-out, False never
    sandboxes and needs ``allow_unsandboxed=True``; ``self.sandboxed`` says which happened.
    ``kernel_checker``: "auto" finds comparator in the project (where it and what it needs
    are built), None checks with the REPL alone (verdicts ``repl-text``).
    ``max_reply_bytes`` caps one REPL reply. ``bounds``: what one sandboxed REPL may use
    with all it starts (default :func:`repl_bounds`); ``self.bounds`` says how they hold.
    """

    def __init__(
        self,
        project: Path,
        *,
        repl_command: Sequence[str] | None = None,
        max_workers: int = 2,
        max_uses: int = 100,
        max_rss_mb: float | None = DEFAULT_MAX_RSS_MB,
        header_timeout_s: float = 600.0,
        env: Mapping[str, str] | None = None,
        cache: VerdictCache | None = None,
        progress: bool | None = None,
        sandbox: bool | None = None,
        allow_unsandboxed: bool = False,
        kernel_checker: KernelChecker | str | None = "auto",
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        bounds: Bounds | None = None,
    ) -> None:
        super().__init__(cache, progress)
        project = Path(project)
        if not project.is_dir():
            raise LeanUnavailable(
                f"Lean project {project} does not exist; create one with `gapscope lean setup "
                f"{project}`."
            )
        command = tuple(repl_command) if repl_command else default_repl_command(project)
        repl = (
            f"command:{' '.join(repl_command)}"
            if repl_command
            else f"REPL@{manifest_revision(project, 'REPL') or 'unknown'}"
        )
        self.sandboxed = decide_sandbox(sandbox, allow_unsandboxed, "model-written Lean")
        self.limits = limits = bounds or repl_bounds(max_rss_mb)
        held = run_bounds("REPL", limits, self.sandboxed, command, project, env)
        command = tuple(held.argv(command, project, env=env))
        self.bounds = held.describe()
        self.project = project
        if isinstance(kernel_checker, str) and kernel_checker != "auto":
            raise ValueError(
                f"kernel_checker must be 'auto', a KernelChecker or None, got {kernel_checker!r}"
            )
        self.kernel: KernelChecker | None = (
            find_kernel_checker(project) if isinstance(kernel_checker, str) else kernel_checker
        )
        if isinstance(kernel_checker, str) and self.kernel is None:
            logging.getLogger(__name__).warning(
                "no kernel judge in %s (missing: %s): official theorems are judged by the REPL"
                " alone (repl-text); `gapscope lean doctor %s` says how to build comparator",
                project,
                ", ".join(kernel_checker_missing(project)),
                project,
            )
        self._toolchain = read_toolchain(project)
        judges = ("repl-text",) + ((self.kernel.identity,) if self.kernel else ())
        self.installation = InstallationKey(
            self._toolchain, repl, judges, key_source(), self._binaries(repl_command),
            self.sandboxed,
        )  # fmt: skip
        self.selftest = passed(project, self.installation)
        self.pool = ReplPool(
            PoolConfig(
                command,
                project,
                env,
                max_workers,
                max_uses,
                max_rss_mb,
                header_timeout_s,
                max_reply_bytes,
                limits,
                held.containment,
            )
        )
        self._challenges: dict[tuple[str, str, tuple[str, ...]], dict[str, Signature]] = {}
        self._challenge_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="lean-repl")

    def _binaries(self, repl_command: Sequence[str] | None) -> tuple[tuple[str, str], ...]:
        """The programs this backend's verdicts depend on, each ``<path>#<sha256>``."""
        repl = (
            command_binaries(repl_command)
            if repl_command
            else identify(find_repl_binary(self.project))
        )
        found = {"repl": repl, **toolchain_binaries(self.project)}
        return tuple(sorted({**found, **dict(self.kernel.binaries if self.kernel else ())}.items()))

    @property
    def toolchain(self) -> str:
        return self._toolchain

    @property
    def judge(self) -> str:
        return f"{self.installation.digest}:{'tested' if self.selftest else 'untested'}"

    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        futures = [self._executor.submit(self._run_one, request) for request in requests]
        for _ in as_completed(futures):
            done(1)
        return [future.result() for future in futures]

    def _run_one(self, request: CheckRequest) -> LeanVerdict:
        verdict, bounds = self.check_repl(request), self.bounds
        if verdict.valid and request.required and self.kernel is not None:
            header, body = split_imports(request.header, request.code)
            verdict = self.kernel.check(
                self.project, header, request.challenge, body, request.required,
                request.timeout_s, self.sandboxed, verdict.messages, self.limits,
            )  # fmt: skip
            bounds = f"{bounds}; {verdict.bounds}"  # the REPL's, then the kernel check's
        return dataclasses.replace(
            verdict, sandboxed=self.sandboxed, selftest=self.selftest, bounds=bounds
        )

    def check_repl(self, request: CheckRequest) -> LeanVerdict:
        """The REPL path's verdict alone (no kernel checker, no cache): what ``repl-text``
        concludes; the self-test runs every case through it."""
        verdict = with_text_label(self._check_in_repl(request))
        return dataclasses.replace(verdict, sandboxed=self.sandboxed, bounds=self.bounds)

    def _check_in_repl(self, request: CheckRequest) -> LeanVerdict:
        header, body = split_imports(request.header, request.code)
        start = time.monotonic()
        if request.required and not request.challenge.strip():
            return LeanVerdict(
                Status.SERVER_ERROR,
                detail=f"no challenge statement for {', '.join(request.required)}: the "
                "solution's type cannot be compared, so it cannot be VALID",
            )
        if request.required and header != request.header:
            # The challenge is elaborated on the trusted header alone; a module the model
            # imports could change what its statement means there.
            return LeanVerdict(
                Status.FORBIDDEN,
                detail="forbidden command `import`: the code imports modules beyond the "
                "problem's header, which the challenge statement is elaborated on alone",
            )
        try:
            repl = self.pool.acquire(header, request.timeout_s)
        except PoolError as exc:
            return LeanVerdict(
                Status.SERVER_ERROR, elapsed_s=time.monotonic() - start, detail=str(exc)
            )
        healthy = False
        start = time.monotonic()
        deadline = start + request.timeout_s
        try:
            if request.required:
                verdict = self._accept(repl, header, body, request, deadline)
                healthy = verdict.status is not Status.SERVER_ERROR
                return verdict
            prepared = prepare(body)
            response = parse_response(
                repl.request(encode_command(prepared.code, repl.header_env), request.timeout_s)
            )
            healthy = response.error is None
            return judge(response, prepared, time.monotonic() - start)
        except ReplTimeout:
            return LeanVerdict(
                Status.TIMEOUT,
                elapsed_s=time.monotonic() - start,
                detail=f"no answer within {request.timeout_s} s; REPL killed",
            )
        except (ReplCrashed, ProtocolError) as exc:
            return LeanVerdict(
                Status.SERVER_ERROR, elapsed_s=time.monotonic() - start, detail=str(exc)
            )
        finally:
            self.pool.release(repl, header, healthy)

    def _accept(
        self, repl: ReplProcess, header: str, body: str, request: CheckRequest, deadline: float
    ) -> LeanVerdict:
        """Elaborate, pickle, unpickle (no kernel check), query: see ``gapscope.lean.replay``."""
        start = time.monotonic()

        def ask(command: dict[str, Any]) -> Any:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReplTimeout("the check's deadline passed")
            return parse_response(repl.request(encode_request(command), left))

        names = request.required
        challenge = self._challenge(repl, header, request.challenge, names, ask)
        first: dict[str, Any] = {"cmd": body}
        if repl.header_env is not None:
            first["env"] = repl.header_env
        elaborated = ask(first)
        settled = elaboration_verdict(elaborated, time.monotonic() - start)
        if settled is not None:
            return settled
        path = f"/tmp/gapscope-{uuid.uuid4().hex}.olean"
        try:
            pickled = ask({"pickleTo": path, "env": elaborated.env})
            if pickled.error is not None:
                return LeanVerdict(
                    Status.SERVER_ERROR,
                    elaborated.messages,
                    time.monotonic() - start,
                    detail=f"the REPL could not pickle the solution: {pickled.error}",
                )
            replayed = ask({"unpickleEnvFrom": path})
            if replayed.error is None:
                replayed = ask({"cmd": solution_command(names), "env": replayed.env})
        finally:
            if not self.sandboxed:  # sandboxed, the file lived in the sandbox's own /tmp
                with contextlib.suppress(OSError):
                    Path(path).unlink()
        return acceptance_verdict(
            elaborated.messages, challenge, replayed, names, time.monotonic() - start
        )

    def _challenge(
        self,
        repl: ReplProcess,
        header: str,
        challenge: str,
        names: tuple[str, ...],
        ask: Callable[[dict[str, Any]], Any],
    ) -> dict[str, Signature]:
        """The challenge's signatures, elaborated once per (header, challenge) by the harness
        alone: nothing of the model's is in that environment."""
        key = (header, challenge, names)
        with self._challenge_lock:
            known = self._challenges.get(key)
        if known is not None:
            return known
        code, first_line = challenge_command(challenge, names)
        command: dict[str, Any] = {"cmd": code}
        if repl.header_env is not None:
            command["env"] = repl.header_env
        response = ask(command)
        if response.error is not None:
            found = {n: Signature(None, f"REPL error: {response.error}") for n in names}
        else:
            found = read_signatures(response, names, first_line)
        if all(s.text is not None for s in found.values()):
            with self._challenge_lock:
                self._challenges[key] = found
        return found

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self.pool.close()
