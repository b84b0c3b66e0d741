"""Any change to the judging code voids the self-test record and the verdict cache key: the
source hash covers every module of ``gapscope.lean`` (and its self-test), not a hand-kept
list that missed the screen, the head reader, the lexer and the verdict types."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from gapscope.lean.selftest import cases
from gapscope.lean.selftest.cases import source_hash

LEAN = Path(str(resources.files("gapscope.lean")))


def _use_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the installed package that ``source_hash`` reads instead."""
    root = tmp_path / "lean"
    shutil.copytree(LEAN, root, ignore=shutil.ignore_patterns("__pycache__"))
    packages = {"gapscope.lean": root, "gapscope.lean.selftest": root / "selftest"}
    monkeypatch.setattr(cases.resources, "files", lambda name: packages[str(name)])
    return root


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _use_copy(tmp_path, monkeypatch)


def test_the_copy_hashes_as_the_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = source_hash()
    _use_copy(tmp_path, monkeypatch)
    assert source_hash() == installed


@pytest.mark.parametrize(
    "module",
    [
        "heads.py",
        "source.py",
        "verdict.py",
        "screen.py",
        "soundness.py",
        "childenv.py",
        "selftest/runner.py",
    ],
)
def test_a_change_to_any_judging_module_changes_the_hash(copy: Path, module: str) -> None:
    before = source_hash()
    path = copy / module
    path.write_text(path.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert source_hash() != before


def test_a_change_to_the_cases_changes_the_hash(copy: Path, tmp_path: Path) -> None:
    data = tmp_path / "cases.json"
    data.write_text((copy / "selftest" / "cases.json").read_text(encoding="utf-8") + " ")
    assert source_hash(data) != source_hash()
