"""The prove task end to end (scripted prover, fake Lean backend), the report and the CLI."""

# ruff: noqa: RUF001  (Lean's double-struck N and R are meant, not look-alike letters)

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import typer
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from gapscope.analysis.prove import read_run, summarize
from gapscope.app.prove import prove_app, run_prove
from gapscope.lean.backend import CheckRequest, LeanBackend, LeanUnavailable
from gapscope.lean.verdict import LeanMessage, LeanVerdict, Status
from gapscope.models.scripted import script
from gapscope.prove import task as prove_task
from gapscope.prove.task import parse_ks, prove

HEADER = "import Mathlib\n\nopen Real\n\n"


class FakeLean:
    """Decides by a marker comment in the code, as a REPL would report each outcome."""

    def __init__(self) -> None:
        self.requests: list[CheckRequest] = []
        self.closed = False
        self._lock = threading.Lock()

    @property
    def toolchain(self) -> str:
        return "fake"

    def check_many(self, requests: Sequence[CheckRequest]) -> list[LeanVerdict]:
        with self._lock:
            self.requests.extend(requests)
        return [self._verdict(r.code) for r in requests]

    @staticmethod
    def _verdict(code: str) -> LeanVerdict:
        if "-- VALID" in code:
            return LeanVerdict(Status.VALID, axioms=("propext",))
        if "-- SORRY" in code:
            return LeanVerdict(Status.SORRY, (LeanMessage("warning", "declaration uses 'sorry'"),))
        if "-- SERVER" in code:
            return LeanVerdict(Status.SERVER_ERROR, detail="connection reset")
        if "-- PARSE" in code:
            message = "unexpected token '⟩'; expected term"
            return LeanVerdict(Status.LEAN_ERROR, (LeanMessage("error", message, 5, 9),))
        message = "unsolved goals\nx : ℕ\n⊢ x + x = 2 * x"
        return LeanVerdict(Status.LEAN_ERROR, (LeanMessage("error", message, 3, 60),))

    def close(self) -> None:
        self.closed = True


def _statement(name: str) -> str:
    return f"theorem {name} (x : ℕ) :\n    x + x = 2 * x := by"


def _dataset(tmp_path: Path) -> Path:
    rows = [
        {"name": n, "split": s, "header": HEADER, "formal_statement": _statement(n)}
        for n, s in [("aime_a", "test"), ("aime_b", "test"), ("mathd_c", "test"), ("v", "valid")]
    ]
    path = tmp_path / "mini.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _block(body: str) -> str:
    return f"Proof:\n```lean\n{body}\n```"


def _full(name: str, marker: str) -> str:
    return _block(f"import Mathlib\n{_statement(name)}\n  omega {marker}")


REPLIES: dict[str, list[str]] = {
    "aime_a": [_full("aime_a", "-- VALID"), _full("aime_a", "-- VALID"), _full("aime_a", ""), ""],
    "aime_b": [
        _full("aime_b", "-- PARSE"),
        "\n  ring_nf",  # a completion that does not close the goal
        _block("theorem aime_b : True := trivial -- VALID"),  # changed statement: never checked
        _block("sorry -- SORRY"),
    ],
    "mathd_c": [
        _full("mathd_c", "-- VALID"),
        _full("mathd_c", "-- SERVER"),
        _full("mathd_c", ""),
        _full("mathd_c", ""),
    ],
}


def _prover() -> Callable[[list[ChatMessage]], str]:
    """Each problem's replies in turn; the counts do not depend on the epochs' order."""
    queues = {name: list(replies) for name, replies in REPLIES.items()}
    lock = threading.Lock()

    def reply(messages: list[ChatMessage]) -> str:
        name = next(n for n in queues if f"theorem {n} " in messages[-1].text)
        with lock:
            return queues[name].pop(0)

    return reply


def _cli() -> typer.Typer:
    """The commands mounted as the main CLI mounts them."""
    app = typer.Typer()
    app.add_typer(prove_app, name="prove")
    app.command("run-prove")(run_prove)
    return app


@pytest.fixture
def fake_lean(monkeypatch: pytest.MonkeyPatch) -> FakeLean:
    fake = FakeLean()

    def open_fake(spec: str | None, **_: object) -> LeanBackend:
        assert spec == "fake"
        return fake

    monkeypatch.setattr(prove_task, "open_checker", open_fake)
    return fake


def _run(tmp_path: Path, name: str) -> EvalLog:
    task = prove(dataset=str(_dataset(tmp_path)), n=4, k="1,2,4", lean="fake")
    model = script(name, _prover())
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    return log


def test_task_end_to_end(tmp_path: Path, fake_lean: FakeLean) -> None:
    log = _run(tmp_path, "prover-e2e")
    assert log.samples is not None and len(log.samples) == 12  # 3 test problems x 4 epochs
    assert {r.header for r in fake_lean.requests} == {HEADER}
    assert len(fake_lean.requests) == 10  # the empty and the changed attempt are not checked
    for request in fake_lean.requests:
        assert "import" not in request.code
        assert any(request.code.startswith(_statement(n)) for n in REPLIES)
        assert request.required == (request.code.split()[1],)  # the official name

    summary = summarize(read_run(log)).to_dict()
    assert summary["problems"] == 3
    assert summary["attempts"] == 11
    assert summary["server_errors"] == 1
    by_name = {p["name"]: p for p in summary["per_problem"]}
    assert (by_name["aime_a"]["n"], by_name["aime_a"]["c"]) == (4, 2)
    assert (by_name["aime_b"]["n"], by_name["aime_b"]["c"]) == (4, 0)
    assert (by_name["mathd_c"]["n"], by_name["mathd_c"]["c"]) == (3, 1)
    assert by_name["aime_a"]["pass_at_k"]["2"] == pytest.approx(5 / 6)
    assert summary["pass_at_k"]["1"] == pytest.approx((1 / 2 + 0 + 1 / 3) / 3)
    assert summary["pass_at_k"]["2"] == pytest.approx((5 / 6 + 0 + 2 / 3) / 3)
    assert summary["pass_at_k"]["4"] is None  # mathd_c has 3 checked attempts
    assert summary["notes"] == ["pass@4 needs n >= 4 checked attempts per problem: mathd_c (n=3)"]
    assert summary["coherence"] == {
        "proven": 3,
        "unproven": 5,
        "malformed": 1,
        "empty": 1,
        "changed": 1,
        "forbidden": 0,
        "unsettled": 0,
        "server_error": 1,
    }
    assert summary["coherent_fraction"] == pytest.approx(8 / 11)
    assert by_name["aime_b"]["coherence"]["changed"] == 1


def test_inspect_pass_at_agrees_with_the_report(tmp_path: Path, fake_lean: FakeLean) -> None:
    """``inspect view`` reads the log's results: Inspect's ``pass_at`` reducers, one per k,
    give the report's mean pass@k; the failed check (mathd_c's server error) is unscored in
    both. Where a problem has fewer scored attempts than k, Inspect averages the others and
    counts it unscored, the report gives none."""
    log = _run(tmp_path, "prover-reducers")
    assert log.results is not None
    inspect_pass = {str(s.reducer): s for s in log.results.scores}
    assert sorted(inspect_pass) == ["pass_at_1", "pass_at_2", "pass_at_4"]
    report = summarize(read_run(log)).pass_at_k
    for k in (1, 2):
        assert inspect_pass[f"pass_at_{k}"].metrics["accuracy"].value == pytest.approx(report[k])
        assert inspect_pass[f"pass_at_{k}"].unscored_samples == 0
    assert report[4] is None
    assert inspect_pass["pass_at_4"].unscored_samples == 1  # mathd_c: 3 scored attempts
    mathd_c = [s for s in log.samples or [] if s.id == "mathd_c"]
    values = sorted(str(next(iter(s.scores.values())).value) for s in mathd_c if s.scores)
    assert values == ["C", "I", "I", "nan"]


def test_report_cli(tmp_path: Path, fake_lean: FakeLean, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps narrower tables' headers
    log = _run(tmp_path, "prover-cli")
    runner = CliRunner()
    result = runner.invoke(_cli(), ["prove", "report", log.location, "--k", "1,3", "--json"])
    assert result.exit_code == 0, result.output
    (summary,) = json.loads(result.stdout)["details"]
    assert summary["pass_at_k"]["3"] == pytest.approx((1 - 0 / 4 + 0 + 1) / 3)
    table = runner.invoke(_cli(), ["prove", "report", log.location, "--per-problem"])
    assert table.exit_code == 0, table.output
    assert "pass@4" in table.output and "n/a" in table.output and "malformed" in table.output
    assert "Per-problem" in table.output and "mathd_c" in table.output


def test_report_rejects_other_logs_and_bad_k(tmp_path: Path, fake_lean: FakeLean) -> None:
    log = _run(tmp_path, "prover-bad")
    runner = CliRunner()
    assert runner.invoke(_cli(), ["prove", "report", log.location, "--k", "one"]).exit_code == 2
    missing = runner.invoke(_cli(), ["prove", "report", str(tmp_path / "none.eval")])
    assert missing.exit_code == 2


def test_task_arguments(tmp_path: Path, fake_lean: FakeLean) -> None:
    data = str(_dataset(tmp_path))
    aime = prove(dataset=data, subset="aime", n=2, k="1,2", lean="fake")
    assert [s.id for s in aime.dataset] == ["aime_a", "aime_b"]
    valid = prove(dataset=data, split="valid", n=1, k="1", lean="fake")
    assert [s.id for s in valid.dataset] == ["v"]
    with pytest.raises(ValueError, match="no problem"):
        prove(dataset=data, subset="imo", n=1, k="1", lean="fake")
    assert parse_ks("32, 1,8", 32) == (1, 8, 32)
    with pytest.raises(ValueError, match=r"k=\[32\] with n=8"):
        parse_ks("1,32", 8)


def test_no_lean_fails_at_creation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(spec: str | None, **_: object) -> LeanBackend:
        raise LeanUnavailable("no Lean found: install elan and build a Mathlib project")

    monkeypatch.setattr(prove_task, "open_checker", unavailable)
    with pytest.raises(LeanUnavailable, match="install elan"):
        prove(dataset=str(_dataset(tmp_path)), n=1, k="1")
    result = CliRunner().invoke(
        _cli(), ["run-prove", "--dataset", str(_dataset(tmp_path)), "-n", "1", "--k", "1"]
    )
    assert result.exit_code == 2
    assert "install elan" in result.output


def test_unconfigured_lean_fails_at_creation_with_the_real_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GAPSCOPE_LEAN", raising=False)
    with pytest.raises(LeanUnavailable):
        prove(dataset=str(_dataset(tmp_path)), n=1, k="1")


def test_a_score_names_the_limits_that_held_its_check() -> None:
    bounds = "per REPL (cgroup v1): memory 8192 MB, 512 processes, 1 CPU"
    verdict = LeanVerdict(Status.VALID, sandboxed=True, bounds=bounds)
    assert prove_task._verdict_metadata(verdict)["bounds"] == bounds
