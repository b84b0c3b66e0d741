"""The verifier cascade: extraction, in-process fast paths, isolated symbolic and math-verify.

Order matters for speed and safety. Extraction and the fast paths are linear-time string work,
so they run in the caller's process and settle most answers. Only pairs they cannot settle go to
the worker pool, where sympy and math-verify run under a wall-clock deadline. Verdicts are cached
by (answer, gold, schema) in the parent, so repeated rollouts cost a dictionary lookup.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import cast

from gapscope.ladder.schema import AnswerSchema
from gapscope.verify.extract import extract_boxed
from gapscope.verify.fast import fast_check
from gapscope.verify.infer import infer_schema
from gapscope.verify.pool import TaskPool
from gapscope.verify.verdict import NO_BOXED, TIMEOUT, Label, Verdict, reject
from gapscope.verify.worker import Result, deep_check

SchemaLike = AnswerSchema | str | None
Item = tuple[str, str] | tuple[str, str, SchemaLike]
_TIMEOUT: Result = ("NOT_ACCEPT", TIMEOUT, "pool")


def as_schema(schema: SchemaLike, gold: str) -> AnswerSchema:
    """The schema to use: the given one (by name or value), else inferred from the gold."""
    if schema is None or schema == "":
        return infer_schema(gold)
    return AnswerSchema(str(schema).upper())


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """Hit and miss counts of the verdict cache."""

    hits: int
    misses: int
    size: int


class Verifier:
    """Grades answers against golds; owns a warm worker pool (use it as a context manager).

    ``timeout_s`` bounds each slow check (wall clock); ``workers`` is the pool size;
    ``rel_tol`` is the relative tolerance granted to decimals written by the response;
    ``memory_mb`` caps each worker's address space (None: no cap).
    """

    def __init__(
        self,
        timeout_s: float = 5.0,
        workers: int | None = None,
        *,
        rel_tol: float = 1e-6,
        cache_size: int = 65536,
        memory_mb: int | None = 4096,
    ) -> None:
        self.timeout_s = timeout_s
        self.rel_tol = rel_tol
        self._pool: TaskPool[Result] = TaskPool(
            deep_check, workers or min(4, os.cpu_count() or 1), memory_mb
        )
        self._cache: OrderedDict[tuple[str, str, AnswerSchema], Verdict] = OrderedDict()
        self._cache_size = cache_size
        self._hits = 0
        self._misses = 0
        # Inspect scores samples from several threads; the cache and the pool are shared.
        self._lock = threading.Lock()

    def __enter__(self) -> Verifier:
        self._pool.warm()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker pool."""
        self._pool.close()

    @property
    def recycles(self) -> int:
        """How often the pool was killed and restarted after a timeout or crash."""
        return self._pool.recycles

    def cache_info(self) -> CacheInfo:
        """Cache statistics since creation or the last ``cache_clear``."""
        return CacheInfo(self._hits, self._misses, len(self._cache))

    def cache_clear(self) -> None:
        """Forget every cached verdict and reset the statistics."""
        with self._lock:
            self._cache.clear()
            self._hits = self._misses = 0

    def check(self, response: str, gold: str, schema: SchemaLike = None) -> Verdict:
        """Grade one model response (its last ``\\boxed{}``) against a gold answer."""
        return self.check_many([(response, gold, schema)])[0]

    def compare(self, answer: str, gold: str, schema: SchemaLike = None) -> Verdict:
        """Grade a bare answer (no ``\\boxed{}`` needed) against a gold answer."""
        return self._judge([(answer, gold, as_schema(schema, gold))])[0]

    def check_many(self, items: Iterable[Item]) -> list[Verdict]:
        """Grade many responses; verdicts come back in input order."""
        verdicts: list[Verdict | None] = []
        todo: list[tuple[int, tuple[str, str, AnswerSchema]]] = []
        for item in items:
            response, gold = item[0], item[1]
            schema = as_schema(item[2] if len(item) > 2 else None, gold)
            answer = extract_boxed(response)
            if answer is None:
                verdicts.append(reject(NO_BOXED, "extract"))
                continue
            todo.append((len(verdicts), (answer, gold, schema)))
            verdicts.append(None)
        for (idx, _), verdict in zip(todo, self._judge([t for _, t in todo]), strict=True):
            verdicts[idx] = verdict
        return [v for v in verdicts if v is not None]

    def _judge(self, triples: Sequence[tuple[str, str, AnswerSchema]]) -> list[Verdict]:
        """Cache, then fast paths, then the pool (each distinct pair once); thread-safe."""
        with self._lock:
            return self._judge_unlocked(triples)

    def _judge_unlocked(self, triples: Sequence[tuple[str, str, AnswerSchema]]) -> list[Verdict]:
        found: dict[tuple[str, str, AnswerSchema], Verdict] = {}
        slow: list[tuple[str, str, AnswerSchema]] = []
        for key in triples:
            if key in found or key in slow:
                continue
            cached = self._cache.get(key)
            if cached is not None:
                self._hits += 1
                self._cache.move_to_end(key)
                found[key] = cached
                continue
            self._misses += 1
            verdict = fast_check(key[0], key[1], key[2], self.rel_tol)
            if verdict is None:
                slow.append(key)
            else:
                found[key] = self._remember(key, verdict)
        if slow:
            args = [(a, g, str(s), self.rel_tol) for a, g, s in slow]
            for key, (label, reason, stage) in zip(
                slow, self._pool.run(args, self.timeout_s, _TIMEOUT), strict=True
            ):
                found[key] = self._remember(key, Verdict(cast(Label, label), reason, stage))
        return [found[key] for key in triples]

    def _remember(self, key: tuple[str, str, AnswerSchema], verdict: Verdict) -> Verdict:
        self._cache[key] = verdict
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return verdict
