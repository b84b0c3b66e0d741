"""The release's family sets by name: the main set and the held-out slice of Appendix M."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gapscope.ladder.families import load_bundled
from gapscope.ladder.released_sets import ReleasedSetError, released_families
from gapscope.ladder.task import oracle_ladder
from tests.environment import SharedData


def _release(tmp_path: Path, n: int) -> Path:
    """A release-shaped folder whose held-out file has ``n`` families."""
    families = load_bundled().families
    records = [f.to_dict() | {"pid": f"held-{i}"} for i, f in enumerate(families[:1] * n)]
    (tmp_path / "data").mkdir(parents=True)
    path = tmp_path / "data" / "diagnostic_held_out_32.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tmp_path


def test_a_named_set_is_read_from_the_release_checkout(tmp_path: Path) -> None:
    release = _release(tmp_path, 32)
    loaded = released_families("held-out-32", release)
    assert [f.pid for f in loaded.families] == [f"held-{i}" for i in range(32)]
    task = oracle_ladder(families="held-out-32", release=str(release), k=1, conditions="C1")
    assert task.metadata is not None
    assert task.metadata["families"] == "held-out-32" and task.metadata["n_families"] == 32


def test_a_named_set_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ReleasedSetError, match="pass its folder as release"):
        released_families("held-out-32", None)
    with pytest.raises(ReleasedSetError, match="unknown released set 'held-out'; choose from"):
        released_families("held-out", tmp_path)
    with pytest.raises(ReleasedSetError, match=r"diagnostic_354_families\.jsonl: not found"):
        released_families("main-354", tmp_path)
    short = _release(tmp_path / "short", 31)
    with pytest.raises(ReleasedSetError, match="31 valid families, the release has 32"):
        released_families("held-out-32", short)


def test_the_released_held_out_slice_is_32_families_apart_from_the_main_set(
    shared_data: SharedData,
) -> None:
    held_out = shared_data("oracleladder/data/diagnostic_held_out_32.jsonl")
    release = held_out.parent.parent
    slice_pids = {f.pid for f in released_families("held-out-32", release).families}
    main = {f.pid for f in released_families("main-354", release).families}
    assert len(slice_pids) == 32 and len(main) == 354 and not slice_pids & main
