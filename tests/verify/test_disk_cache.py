"""The on-disk verdict cache: reruns are free, versions and timeouts are never reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gapscope.verify import Verifier, disk_cache
from gapscope.verify.disk_cache import DiskCache, cache_key
from gapscope.verify.verdict import Verdict


def test_a_rerun_reads_slow_verdicts_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    with Verifier(timeout_s=10.0, workers=1, cache_path=path) as first:
        verdict = first.check("\\boxed{(x+1)^2}", "x^2+2x+1")
    assert verdict.accepted and path.read_text(encoding="utf-8").count("\n") == 1
    second = Verifier(timeout_s=10.0, workers=1, cache_path=path)
    try:
        assert second.check("Thus \\boxed{(x+1)^2}", "x^2+2x+1") == verdict
        assert not second.pool_started  # the slow pair was never recomputed
    finally:
        second.close()


def test_key_holds_the_verifier_version(monkeypatch: pytest.MonkeyPatch) -> None:
    key = cache_key("1", "2", "NUMBER", 1e-6)
    monkeypatch.setattr(disk_cache, "VERIFIER_VERSION", "next")
    assert cache_key("1", "2", "NUMBER", 1e-6) != key


def test_timeouts_are_not_stored_and_torn_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    cache = DiskCache(path)
    cache.put("a", Verdict("NOT_ACCEPT", "timeout", "pool"))
    cache.put("b", Verdict("ACCEPT", "symbolic_match", "symbolic"))
    cache.close()
    with path.open("a", encoding="utf-8") as torn:
        torn.write('["c", "ACC')
    reloaded = DiskCache(path)
    assert reloaded.get("a") is None and reloaded.get("c") is None
    assert reloaded.get("b") == Verdict("ACCEPT", "symbolic_match", "symbolic")
