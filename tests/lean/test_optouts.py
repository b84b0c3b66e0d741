"""The opt-out switches read alike, and a backend that finds no kernel judge says so."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from gapscope.lean.local import LocalBackend
from gapscope.lean.sandbox import ENV_ALLOW_UNSANDBOXED, unsandboxed_allowed
from gapscope.lean.selftest.record import ENV_ALLOW_UNTESTED, untested_allowed


@pytest.mark.parametrize(
    ("value", "allowed"),
    [("1", True), ("true", True), (" TRUE ", True), ("yes", True), ("0", False), ("", False)],
)
def test_both_opt_outs_read_a_value_the_same_way(
    monkeypatch: pytest.MonkeyPatch, value: str, allowed: bool
) -> None:
    monkeypatch.setenv(ENV_ALLOW_UNSANDBOXED, value)
    monkeypatch.setenv(ENV_ALLOW_UNTESTED, value)
    assert unsandboxed_allowed() is allowed
    assert untested_allowed() is allowed


def test_auto_without_a_kernel_judge_warns_naming_what_is_missing(
    make_backend: Callable[..., LocalBackend],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("PATH", "")  # no lake, no landrun
    with caplog.at_level(logging.WARNING, logger="gapscope.lean.local"):
        backend = make_backend(kernel_checker="auto")
    assert backend.kernel is None
    (record,) = [r for r in caplog.records if "no kernel judge" in r.getMessage()]
    assert "landrun" in record.getMessage() and "lake on PATH" in record.getMessage()


def test_no_warning_when_the_kernel_judge_is_turned_off(
    make_backend: Callable[..., LocalBackend], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="gapscope.lean.local"):
        make_backend(kernel_checker=None)
    assert not [r for r in caplog.records if "no kernel judge" in r.getMessage()]
