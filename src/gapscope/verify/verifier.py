"""The verifier cascade: extraction, bounds, in-process fast paths, isolated symbolic stage.

Order matters for speed and safety. Extraction, the input bounds and the fast paths are
linear-time string work, so they run in the caller's process and settle most answers; the
worker pool is not even started until a pair needs it. Only pairs they cannot settle go to the
pool, where sympy and math-verify run under a wall-clock deadline. Verdicts are cached by
(answer, gold, schema) in memory and, when a cache file is given, on disk across runs.

Inputs are consumed in windows and verdicts are handed out in input order as soon as every
earlier one is decided, so a streaming caller loses nothing to an interrupt.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import cast

from gapscope.verify.disk_cache import DiskCache, cache_key
from gapscope.verify.extract import BARE, BOXED, BOXES, NONE, Extracted, find_answer, read_gold
from gapscope.verify.fast import fast_check
from gapscope.verify.infer import infer_schema
from gapscope.verify.limits import screen_pair, screen_response
from gapscope.verify.normalize import clean, squeeze
from gapscope.verify.pool import TaskPool
from gapscope.verify.schema import AnswerSchema
from gapscope.verify.split import split_top, wrapped
from gapscope.verify.verdict import (
    HEDGED,
    NO_BOXED,
    STRING_MATCH,
    TIMEOUT,
    Label,
    Verdict,
    accept,
    reject,
)
from gapscope.verify.worker import Result, deep_check

SchemaLike = AnswerSchema | str | None
Item = tuple[str, str] | tuple[str, str, SchemaLike]
Key = tuple[str, str, AnswerSchema]
_TIMEOUT: Result = ("NOT_ACCEPT", TIMEOUT, "pool")
MAX_TIMEOUT_S = 3600.0
_MAX_PENDING = 4096
IDENTICAL = "identical"
"""The stage that accepts a response that is the gold text itself (found whole: ``BARE``)."""
_MULTI_ANSWER = (AnswerSchema.SET, AnswerSchema.TUPLE_LIST, AnswerSchema.EQUATION)
_ELEMENT_SEPARATORS = (",", ";", " or ", " and ")


def as_schema(schema: SchemaLike, gold: str) -> AnswerSchema:
    """The schema to use: the given one (by name or value), else inferred from the gold."""
    if schema is None or schema == "":
        return infer_schema(gold)
    return AnswerSchema(str(schema).upper())


def check_timeout(timeout_s: float) -> float:
    """``timeout_s`` when it is a finite number of seconds in (0, 3600], else ValueError."""
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s)):
        raise ValueError(f"timeout_s must be a finite number of seconds, got {timeout_s!r}")
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout_s must be in (0, {MAX_TIMEOUT_S:g}] seconds, got {timeout_s!r}")
    return float(timeout_s)


def _items(text: str) -> list[str]:
    """The top-level items of an answer (set braces dropped)."""
    body = clean(text)
    if body.startswith("\\{") and body.endswith("\\}"):
        body = body[2:-2]
    return split_top(body, _ELEMENT_SEPARATORS)


def _tuple_size(text: str) -> int:
    """Components of an answer that is one parenthesised tuple, else 0."""
    w = wrapped(clean(text))
    return len(split_top(w[1], (",",))) if w is not None and w[0] == "(" else 0


def combined_answer(found: Extracted, gold: str, schema: AnswerSchema) -> tuple[str, str]:
    """(answer, extraction stage): the final group of boxes as one answer where that is meant.

    ``\\boxed{1}`` and ``\\boxed{2}`` against ``{1,2}``, or one box per unknown (against a
    tuple ``(x, y)`` or a system), are one answer when the gold is a set/tuple/list or a system
    of equations with more values than the last box holds. A run of trailing math spans
    (``$x=1$ or $x=2$``) is joined the same way and stays ``trailing_math``.
    """
    if schema not in _MULTI_ANSWER or len(found.group) < 2:
        return found.answer, found.stage
    stage = BOXES if found.stage == BOXED else found.stage
    # ``\\pm 3`` holds two values: ``\\boxed{3}`` and ``\\boxed{-3}`` are its answer, not a hedge.
    gold_items = len(_items(gold)) + gold.count("\\pm") + gold.count("\\mp")
    answer_items = len(_items(found.answer))
    if gold_items > answer_items:
        return ", ".join(found.group), stage
    size = _tuple_size(gold)
    if gold_items == 1 and size == len(found.group) and not _tuple_size(found.answer):
        return "(" + ", ".join(found.group) + ")", stage
    return found.answer, found.stage


def hedged(found: Extracted, schema: AnswerSchema, rel_tol: float) -> bool:
    """Whether the final group of boxes (or of trailing math spans) names different answers.

    A response that lists several boxed candidates has not committed to one of them, and
    grading it by its last box would reward listing every candidate (boxes with words
    between them, ``\\boxed{3} for part one, and overall \\boxed{7}``, are not a list). The
    same answer boxed twice (also as ``\\boxed{2}`` and ``\\boxed{2.0}``: the fast path must
    find them equal) is one answer; boxes that together form one multi-valued answer were
    joined by ``combined_answer`` before this is asked. Boxes past the input bounds are
    compared as written: normalising them is what the bounds exist to prevent.
    """
    listed = found.group[len(found.group) - found.listed :]
    if not listed:
        return False
    last = listed[-1]
    others = set(listed) - {last}
    if not others:
        return False
    if any(screen_pair(box, last) is not None for box in others):
        return True

    def same(box: str) -> bool:
        if squeeze(clean(box)) == squeeze(clean(last)):
            return True
        verdict = fast_check(box, last, schema, rel_tol)
        return verdict is not None and verdict.accepted

    return not all(same(box) for box in others)


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """Hit and miss counts of the in-memory verdict cache (disk hits count as hits)."""

    hits: int
    misses: int
    size: int


@dataclass(frozen=True, slots=True)
class _Planned:
    """An item after extraction: a verdict already, or the pair still to compare."""

    verdict: Verdict | None
    key: Key | None = None
    extraction: str = NONE


class Verifier:
    """Grades answers against golds; owns a worker pool (use it as a context manager).

    ``timeout_s`` bounds each slow check (wall clock); ``workers`` is the pool size;
    ``rel_tol`` is the relative tolerance granted to decimals written by the response;
    ``memory_mb`` caps each worker's address space (None: no cap); ``cache_path`` keeps
    verdicts on disk across runs (None: memory only).
    """

    def __init__(
        self,
        timeout_s: float = 5.0,
        workers: int | None = None,
        *,
        rel_tol: float = 1e-6,
        cache_size: int = 65536,
        memory_mb: int | None = 4096,
        cache_path: Path | None = None,
    ) -> None:
        self.timeout_s = check_timeout(timeout_s)
        self.rel_tol = rel_tol
        self._pool: TaskPool[Result] = TaskPool(
            deep_check, workers or min(4, os.cpu_count() or 1), memory_mb
        )
        self._cache: OrderedDict[Key, Verdict] = OrderedDict()
        self._cache_size = cache_size
        self._disk = DiskCache(cache_path) if cache_path is not None else None
        self._hits = 0
        self._misses = 0
        # Inspect scores samples from several threads; the caches and the pool are shared.
        self._lock = threading.Lock()

    def __enter__(self) -> Verifier:
        with self._lock:
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
        """Stop the worker pool and close the disk cache (both reopen on demand)."""
        with self._lock:
            self._pool.close()
            if self._disk is not None:
                self._disk.close()

    @property
    def recycles(self) -> int:
        """How many workers were killed and replaced after a timeout or crash."""
        return self._pool.recycles

    @property
    def pool_started(self) -> bool:
        """Whether a worker process was ever needed (cheap stages settle most answers)."""
        return self._pool.started

    def cache_info(self) -> CacheInfo:
        """Cache statistics since creation or the last ``cache_clear``."""
        return CacheInfo(self._hits, self._misses, len(self._cache))

    def cache_clear(self) -> None:
        """Forget every verdict cached in memory and reset the statistics (disk is kept)."""
        with self._lock:
            self._cache.clear()
            self._hits = self._misses = 0

    def check(self, response: str, gold: str, schema: SchemaLike = None) -> Verdict:
        """Grade one model response (its final answer, see ``extract``) against a gold."""
        return self.check_many([(response, gold, schema)])[0]

    def compare(self, answer: str, gold: str, schema: SchemaLike = None) -> Verdict:
        """Grade a bare answer (no extraction) against a gold answer (its stated answer)."""
        gold = read_gold(gold).answer
        plan = self._pair_plan(answer, gold, as_schema(schema, gold), "bare")
        out: list[Verdict] = []
        with self._lock:
            _Stream(self, out.append).run_plans([plan])
        return out[0]

    def check_many(self, items: Iterable[Item]) -> list[Verdict]:
        """Grade many responses; verdicts come back in input order."""
        verdicts: list[Verdict] = []
        self.check_each(items, verdicts.append)
        return verdicts

    def check_each(self, items: Iterable[Item], on_verdict: Callable[[Verdict], None]) -> None:
        """Call ``on_verdict`` once per item, in input order, as soon as each is decided.

        Items are read lazily and slow pairs go to the pool as they are read, so a long file
        streams through and one slow pair holds back only the lines after it (at most
        ``_MAX_PENDING`` of them are read ahead), never the workers.
        """
        with self._lock:
            _Stream(self, on_verdict).run(items)

    def _settle(self, key: Key) -> Verdict | None:
        """The verdict from the caches or the fast paths, else None (the pair needs a worker)."""
        if (cached := self._cached(key)) is not None:
            self._hits += 1
            return cached
        self._misses += 1
        verdict = fast_check(key[0], key[1], key[2], self.rel_tol)
        return None if verdict is None else self._remember(key, verdict)

    def _plan(self, item: Item) -> _Planned:
        response, given = item[0], item[2] if len(item) > 2 else None
        gold = read_gold(item[1])
        schema = as_schema(given, gold.answer)
        if (too_big := screen_response(response)) is not None:
            return _Planned(replace(too_big, extraction=NONE))
        if response.strip() in (item[1].strip(), gold.answer.strip()):
            # the gold itself, whatever its form: a sentence such as ``$z=0$ is a pole of the
            # fourth order`` has no single math span to extract, yet it is the answer
            return _Planned(accept(STRING_MATCH, IDENTICAL, BARE))
        found = find_answer(response)
        if found is None:
            return _Planned(reject(NO_BOXED, "extract", NONE))
        answer, stage = combined_answer(found, gold.answer, schema)
        if answer == found.answer and hedged(found, schema, self.rel_tol):
            return _Planned(reject(HEDGED, "extract", stage))
        if len(gold.group) > 1 and _tuple_size(answer) == len(gold.group):
            # ``\\boxed{1} papers and \\boxed{2} bins`` against ``(1, 2)``: one box per component.
            tuple_gold = "(" + ", ".join(gold.group) + ")"
            return self._pair_plan(answer, tuple_gold, as_schema(given, tuple_gold), stage)
        return self._pair_plan(answer, gold.answer, schema, stage)

    @staticmethod
    def _pair_plan(answer: str, gold: str, schema: AnswerSchema, stage: str) -> _Planned:
        if (bounded := screen_pair(answer, gold)) is not None:
            return _Planned(replace(bounded, extraction=stage))
        return _Planned(None, (answer, gold, schema), stage)

    def _cached(self, key: Key) -> Verdict | None:
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        if self._disk is not None:
            stored = self._disk.get(cache_key(key[0], key[1], key[2].value, self.rel_tol))
            if stored is not None:
                return self._remember(key, stored)
        return None

    def _remember(self, key: Key, verdict: Verdict) -> Verdict:
        self._cache[key] = verdict
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        if self._disk is not None:
            self._disk.put(cache_key(key[0], key[1], key[2].value, self.rel_tol), verdict)
        return verdict


class _Stream:
    """One ordered pass over items: cheap verdicts at once, slow pairs to the pool as read.

    Verdicts leave in input order: a plan waits in ``pending`` until every plan before it is
    decided. The same (answer, gold, schema) is sent to the pool once, however often it occurs.
    """

    def __init__(self, verifier: Verifier, on_verdict: Callable[[Verdict], None]) -> None:
        self._verifier = verifier
        self._pool = verifier._pool
        self._on_verdict = on_verdict
        self._pending: deque[_Planned] = deque()
        self._decided: dict[Key, Verdict] = {}
        self._tickets: dict[int, Key] = {}
        self._asked: set[Key] = set()

    def run(self, items: Iterable[Item]) -> None:
        self.run_plans(self._verifier._plan(item) for item in items)

    def run_plans(self, plans: Iterable[_Planned]) -> None:
        try:
            for plan in plans:
                self._add(plan)
                self._emit()
                if self._tickets:
                    self._collect(0.0)
                while len(self._pending) >= _MAX_PENDING:
                    self._collect(None)
            while self._tickets:
                self._collect(None)
            self._emit()
        finally:
            if self._tickets:  # the caller stopped (Ctrl-C, an error): free the workers
                self._pool.cancel()

    def _add(self, plan: _Planned) -> None:
        key = plan.key
        self._pending.append(plan)
        if key is None or key in self._decided or key in self._asked:
            return
        verdict = self._verifier._settle(key)
        if verdict is not None:
            self._decided[key] = verdict
            return
        self._asked.add(key)
        args = (key[0], key[1], key[2].value, self._verifier.rel_tol)
        self._tickets[self._pool.submit(args)] = key

    def _collect(self, wait_s: float | None) -> None:
        timeout_s = self._verifier.timeout_s
        for ticket, (label, reason, stage) in self._pool.collect(timeout_s, _TIMEOUT, wait_s):
            key = self._tickets.pop(ticket)
            verdict = Verdict(cast(Label, label), reason, stage)
            self._decided[key] = self._verifier._remember(key, verdict)
        self._emit()

    def _emit(self) -> None:
        while self._pending:
            plan = self._pending[0]
            verdict = plan.verdict
            if verdict is None:
                assert plan.key is not None
                if plan.key not in self._decided:
                    return
                verdict = replace(self._decided[plan.key], extraction=plan.extraction)
            self._pending.popleft()
            self._on_verdict(verdict)
