"""The local backend: Lean REPL processes in a Lean project of the user's, pooled per header.

Why not LeanInteract: it is a good library, but it downloads and builds its own REPL and
toolchain on first use (against this project's offline-first rule), it cannot be exercised
without a Lean installation, and the pieces gapscope needs - per-header reuse, recycling by
use count and RSS, hard kills on timeout, typed verdicts with the axiom rule - are a few
hundred lines that are fully testable against a fake REPL.

The REPLs run sandboxed (``gapscope.lean.sandbox``: no network, read-only filesystem) when
bubblewrap works here; ``sandbox=True`` insists on it, ``sandbox=False`` turns it off.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.base import CachedBackend, split_imports
from gapscope.lean.cache import VerdictCache
from gapscope.lean.pool import PoolConfig, PoolError, ReplPool
from gapscope.lean.process import ReplCrashed, ReplTimeout
from gapscope.lean.protocol import ProtocolError, encode_command, parse_response
from gapscope.lean.sandbox import INSTALL_HINT, sandbox_argv, sandbox_status
from gapscope.lean.soundness import judge, prepare
from gapscope.lean.verdict import LeanVerdict, Status

REPL_BINARY_CANDIDATES = (
    ".lake/packages/REPL/.lake/build/bin/repl",
    ".lake/packages/repl/.lake/build/bin/repl",
    ".lake/build/bin/repl",
)
"""Where ``lake build`` leaves the REPL: as a dependency of the project, or the project itself."""


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


def _use_sandbox(requested: bool | None) -> bool:
    """Whether to sandbox: as ``requested``, or when it works here if None (with a warning
    when it does not); LeanUnavailable if it is required and does not work."""
    if requested is False:
        return False
    status = sandbox_status()
    if requested and not status.available:
        raise LeanUnavailable(f"a sandbox was required but {status.detail}; {INSTALL_HINT}.")
    if not status.available:
        logging.getLogger(__name__).warning(
            "Lean REPLs run without a sandbox (%s); %s.", status.detail, INSTALL_HINT
        )
    return status.available


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

    ``sandbox``: None runs the REPLs under bubblewrap when it works here, True requires it,
    False never uses it (``self.sandboxed`` says which happened).
    """

    def __init__(
        self,
        project: Path,
        *,
        repl_command: Sequence[str] | None = None,
        max_workers: int = 2,
        max_uses: int = 100,
        max_rss_mb: float | None = 8192.0,
        header_timeout_s: float = 600.0,
        env: Mapping[str, str] | None = None,
        cache: VerdictCache | None = None,
        progress: bool | None = None,
        sandbox: bool | None = None,
    ) -> None:
        super().__init__(cache, progress)
        project = Path(project)
        if not project.is_dir():
            raise LeanUnavailable(
                f"Lean project {project} does not exist; create one with `gapscope lean setup "
                f"{project}`."
            )
        command = tuple(repl_command) if repl_command else default_repl_command(project)
        self.sandboxed = _use_sandbox(sandbox)
        if self.sandboxed:
            command = tuple(sandbox_argv(command, project))
        self._toolchain = read_toolchain(project)
        self.pool = ReplPool(
            PoolConfig(command, project, env, max_workers, max_uses, max_rss_mb, header_timeout_s)
        )
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="lean-repl")

    @property
    def toolchain(self) -> str:
        return self._toolchain

    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        futures = [self._executor.submit(self._run_one, request) for request in requests]
        for _ in as_completed(futures):
            done(1)
        return [future.result() for future in futures]

    def _run_one(self, request: CheckRequest) -> LeanVerdict:
        header, body = split_imports(request.header, request.code)
        prepared = prepare(body, request.required)
        start = time.monotonic()
        try:
            repl = self.pool.acquire(header, request.timeout_s)
        except PoolError as exc:
            return LeanVerdict(
                Status.SERVER_ERROR, elapsed_s=time.monotonic() - start, detail=str(exc)
            )
        healthy = False
        start = time.monotonic()
        try:
            payload = encode_command(prepared.code, repl.header_env)
            response = parse_response(repl.request(payload, request.timeout_s))
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

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self.pool.close()
