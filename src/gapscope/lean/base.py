"""What every concrete backend shares: cache look-ups, progress, blame, the ``check`` shortcut.

Subclasses implement only ``_check_uncached``; the cache, progress bar, request order and the
control check behind a ``server_error`` are handled once here so that the local, server and Ray
backends cannot disagree on them.

The control check decides who a ``server_error`` belongs to. Diagnostics leave an attempt whose
check failed on the machine out of their fractions (nothing is known of it), so a model that
cannot solve a problem would gain by crashing the checker instead (an elaboration that exhausts
memory, output that kills the REPL). After such a verdict the same backend checks a control in
the same header - the request's challenge (the statement with ``sorry``) or a trivial example;
when the control gets a verdict, the backend was healthy and the error is the code's: the
verdict lists :data:`~gapscope.lean.verdict.CONTROL_CHECK` and every diagnostic counts it as a
failure (:func:`~gapscope.lean.verdict.broken_by_code`). The header is the request's, before
the backend moves the code's own ``import`` lines into it, so an import the model wrote that
breaks the header is the code's doing too. One control per distinct control and header in a
batch, and only when a server error occurred that reached the code (not
:data:`~gapscope.lean.verdict.UNREACHED_CHECK`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace

from gapscope.lean.backend import CheckRequest, LeanBackend
from gapscope.lean.cache import VerdictCache
from gapscope.lean.progress import progress_bar
from gapscope.lean.verdict import (
    CONTROL_CHECK,
    UNREACHED_CHECK,
    LeanVerdict,
    Status,
    broken_by_code,
)

TRIVIAL_CONTROL = "example : True := trivial"
"""The control checked after a ``server_error`` on a request without a challenge."""


def is_import_line(line: str) -> bool:
    """Blank or ``import ...``: the lines Lean (and kimina-lean-server) treat as the header."""
    return not line.strip() or line.lstrip().startswith("import ")


def split_imports(header: str, code: str) -> tuple[str, str]:
    """Move ``code``'s leading ``import`` lines into the header.

    Lean accepts ``import`` only at the start of a file, and the REPL runs code in the header's
    environment, so model output that begins with ``import Mathlib`` must be split the way
    kimina-lean-server splits it. Positions in messages are then relative to the body.
    """
    lines = code.split("\n")
    cut = 0
    while cut < len(lines) and (
        not lines[cut].strip() or lines[cut].lstrip().startswith("import ")
    ):
        cut += 1
    imports = [line.strip() for line in lines[:cut] if line.strip()]
    if not imports:
        return header, code
    known = {line.strip() for line in header.split("\n")}
    extra = [line for line in dict.fromkeys(imports) if line not in known]
    merged = "\n".join(extra + ([header] if header else []))
    return merged, "\n".join(lines[cut:])


def check(
    backend: LeanBackend, code: str, header: str = "", timeout_s: float = 60.0
) -> LeanVerdict:
    """Check one piece of code with any backend."""
    return backend.check_many([CheckRequest(code, header, timeout_s)])[0]


class CachedBackend(ABC):
    """Base of the concrete backends: cache by (toolchain, header, code) and show progress."""

    def __init__(self, cache: VerdictCache | None, progress: bool | None) -> None:
        self.cache = cache
        self.progress = progress

    @property
    @abstractmethod
    def toolchain(self) -> str: ...

    @property
    def judge(self) -> str:
        """What decides this backend's verdicts (checker, revision, source hash): part of
        every cache key, so that a verdict is never served for another judge."""
        return ""

    @abstractmethod
    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        """Verdicts in order; call ``done(1)`` as each one is settled."""

    @abstractmethod
    def close(self) -> None: ...

    def check(self, code: str, header: str = "", timeout_s: float = 60.0) -> LeanVerdict:
        return self.check_many([CheckRequest(code, header, timeout_s)])[0]

    def check_many(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        verdicts: list[LeanVerdict | None] = [None] * len(requests)
        if self.cache is not None:
            for i, request in enumerate(requests):
                verdicts[i] = self.cache.get(
                    self.toolchain,
                    request.header,
                    request.code,
                    request.required,
                    request.challenge,
                    self.judge,
                )
        todo = [i for i, v in enumerate(verdicts) if v is None]
        with progress_bar(len(requests), self.progress) as advance:
            advance(len(requests) - len(todo))
            fresh = self._blamed(
                [requests[i] for i in todo],
                self._check_uncached([requests[i] for i in todo], advance),
            )
        for i, verdict in zip(todo, fresh, strict=True):
            verdicts[i] = verdict
            if self.cache is not None:
                request = requests[i]
                self.cache.put(
                    self.toolchain,
                    request.header,
                    request.code,
                    verdict,
                    request.required,
                    request.challenge,
                    self.judge,
                )
        return [v for v in verdicts if v is not None]

    def _blamed(
        self, requests: Sequence[CheckRequest], verdicts: list[LeanVerdict]
    ) -> list[LeanVerdict]:
        """``verdicts`` with :data:`CONTROL_CHECK` listed on each ``server_error`` whose header's
        control the backend then answered (module docstring)."""
        suspects = {
            i: (requests[i].header, requests[i].challenge or TRIVIAL_CONTROL)
            for i, v in enumerate(verdicts)
            if v.status is Status.SERVER_ERROR
            and not broken_by_code(v)
            and UNREACHED_CHECK not in v.checks
        }
        controls: dict[tuple[str, str], CheckRequest] = {}
        for i, (header, code) in suspects.items():
            controls.setdefault((header, code), CheckRequest(code, header, requests[i].timeout_s))
        if not controls:
            return verdicts
        answers = self._check_uncached(list(controls.values()), lambda _n: None)
        healthy = {
            key
            for key, answer in zip(controls, answers, strict=True)
            if answer.status is not Status.SERVER_ERROR
        }
        out = list(verdicts)
        for i, key in suspects.items():
            if key in healthy:
                out[i] = replace(out[i], checks=(*out[i].checks, CONTROL_CHECK))
        return out

    def __enter__(self) -> CachedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
