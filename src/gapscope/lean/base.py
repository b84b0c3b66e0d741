"""What every concrete backend shares: cache look-ups, progress, the ``check`` shortcut.

Subclasses implement only ``_check_uncached``; the cache, progress bar and request order are
handled once here so that the local and server backends cannot disagree on them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from gapscope.lean.backend import CheckRequest, LeanBackend
from gapscope.lean.cache import VerdictCache
from gapscope.lean.progress import progress_bar
from gapscope.lean.verdict import LeanVerdict


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
            fresh = self._check_uncached([requests[i] for i in todo], advance)
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

    def __enter__(self) -> CachedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
