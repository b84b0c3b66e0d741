"""The shared-data locator: a worktree (``/work/wt-NAME``) and a clone beside ``shared/`` both
find the data, and ``$GAPSCOPE_SHARED_DATA`` wins, even when it is wrong (then the skip names
it rather than quietly using another copy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import environment
from tests.environment import ENV_SHARED_DATA, SharedData, find_shared_data


def test_the_data_is_found_above_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "shared" / "data"
    (data / "nng").mkdir(parents=True)
    (data / "nng" / "levels.md").write_text("levels", encoding="utf-8")
    monkeypatch.delenv(ENV_SHARED_DATA, raising=False)
    monkeypatch.setattr(environment, "CHECKOUT", tmp_path / "wt-h-lean")
    assert find_shared_data() == (data, str(data))
    assert SharedData(*find_shared_data())("nng/levels.md").read_text(encoding="utf-8") == "levels"


def test_the_variable_wins_and_a_wrong_one_is_named_in_the_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.setattr(environment, "CHECKOUT", tmp_path / "clone")
    monkeypatch.setenv(ENV_SHARED_DATA, str(tmp_path / "elsewhere"))
    located = SharedData(*find_shared_data())
    assert located.root is None
    with pytest.raises(pytest.skip.Exception, match=f"{ENV_SHARED_DATA}=.*elsewhere"):
        located("nng/levels.md")
