"""Who a ``server_error`` belongs to: the control check after it (``gapscope.lean.base``).

A model that cannot solve a problem gains if its attempt is left out of the fractions, so a
check it crashes must not read as the machine's failure while the machine is healthy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gapscope.lean.backend import CheckRequest
from gapscope.lean.base import TRIVIAL_CONTROL, CachedBackend
from gapscope.lean.verdict import CONTROL_CHECK, LeanVerdict, Status, broken_by_code
from tests.lean.conftest import read_log
from tests.lean.test_local import HEADER, Make, proof


class Scripted(CachedBackend):
    """A backend whose verdict for each code is looked up; it records what it was asked."""

    def __init__(self, verdicts: dict[str, Status], default: Status = Status.SORRY) -> None:
        super().__init__(cache=None, progress=False)
        self.verdicts, self.default, self.asked = verdicts, default, list[CheckRequest]()

    @property
    def toolchain(self) -> str:
        return "test"

    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        self.asked += requests
        out = [LeanVerdict(self.verdicts.get(r.code, self.default), detail="x") for r in requests]
        done(len(out))
        return out

    def close(self) -> None:
        pass


def test_a_crash_on_a_healthy_backend_is_the_codes_doing() -> None:
    backend = Scripted({"crash me": Status.SERVER_ERROR})
    verdict = backend.check_many(
        [CheckRequest("crash me", "import H", 5.0, ("t",), challenge="theorem t : P := sorry")]
    )[0]
    assert verdict.status is Status.SERVER_ERROR and verdict.checks == (CONTROL_CHECK,)
    assert broken_by_code(verdict)
    control = backend.asked[-1]
    assert (control.code, control.header, control.required) == (
        "theorem t : P := sorry",
        "import H",
        (),
    )


def test_a_backend_that_fails_the_control_too_keeps_the_server_error() -> None:
    backend = Scripted({}, default=Status.SERVER_ERROR)
    verdict = backend.check_many([CheckRequest("anything", "import H")])[0]
    assert verdict.status is Status.SERVER_ERROR and not broken_by_code(verdict)
    assert [r.code for r in backend.asked] == ["anything", TRIVIAL_CONTROL]


def test_one_control_per_header_and_none_without_a_server_error() -> None:
    backend = Scripted({"a": Status.SERVER_ERROR, "b": Status.SERVER_ERROR})
    ok = backend.check_many([CheckRequest("fine", "import H")])
    assert ok[0].status is Status.SORRY and len(backend.asked) == 1
    verdicts = backend.check_many(
        [
            CheckRequest("a", "import H"),
            CheckRequest("b", "import H"),
            CheckRequest("a", "import G"),
        ]
    )
    assert all(broken_by_code(v) for v in verdicts)
    controls = [(r.header, r.code) for r in backend.asked[4:]]
    assert controls == [("import H", TRIVIAL_CONTROL), ("import G", TRIVIAL_CONTROL)]


def test_a_verdict_already_blamed_after_acceptance_gets_no_control() -> None:
    kernel = LeanVerdict(Status.SERVER_ERROR, checks=("kernel:comparator",))
    assert broken_by_code(kernel)
    assert not broken_by_code(LeanVerdict(Status.SERVER_ERROR))
    assert not broken_by_code(LeanVerdict(Status.LEAN_ERROR, checks=(CONTROL_CHECK,)))


def test_a_real_protocol_repl_that_crashes_on_the_code_blames_the_code(
    make_backend: Make, repl_log: Path
) -> None:
    backend = make_backend(max_workers=1)
    verdict = backend.check(proof("crash"), header=HEADER, timeout_s=5)
    assert verdict.status is Status.SERVER_ERROR and CONTROL_CHECK in verdict.checks
    commands = [e["cmd"] for e in read_log(repl_log)]
    assert any(": True := trivial" in c for c in commands[2:])  # the control, on a fresh REPL
