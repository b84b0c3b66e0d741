"""T2 on a checking path no self-test certifies: a kimina server (the repository track's
tests are in test_repo.py). Refused without --allow-untested, labelled selftest=false when
allowed; a local path's label follows its verdicts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from gapscope.app.main import app
from gapscope.lean import ENV_ALLOW_UNTESTED, CheckRequest, LeanVerdict, Status
from gapscope.models.scripted import REQUESTS, script
from gapscope.t2.evaluate import evaluate_answer
from gapscope.t2.extract import extract_answer
from gapscope.t2.records import load_records
from gapscope.t2.successors import target_identity
from tests.lean.test_kimina import repl_answer
from tests.t2.test_task import FIXTURE, _answer


class _Kimina(BaseHTTPRequestHandler):
    """kimina-lean-server's two routes (``GET /health``, ``POST /api/check``), answering each
    snippet as the REPL would for code without errors (tests/lean/test_kimina.py)."""

    def do_GET(self) -> None:
        self._reply({"status": "ok"} if self.path == "/health" else {"detail": "Not Found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        results = [{"id": s["id"], "time": 0.1, **repl_answer(s["code"])} for s in body["snippets"]]
        self._reply({"results": results})

    def _reply(self, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the log it writes, not the server's."""


@contextmanager
def kimina_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Kimina)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"kimina:http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _run(spec: str, name: str, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """Exit code, stdout and everything printed."""
    model = script(name, _answer)
    args = ["run", "t2", "--data", str(FIXTURE), "--lean", spec, "--context", "st"]
    args += ["--model", model, "--log-dir", str(tmp_path / "logs"), *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.output


def test_a_kimina_run_is_refused_untested_before_the_model_or_the_server_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    with kimina_server() as spec:
        code, _, output = _run(spec, "t2-kimina-refused", tmp_path)
    assert code == 2, output
    assert output.startswith("error: a kimina server's compile verdicts")
    assert "--allow-untested" in output and len(output.strip().splitlines()) == 1
    assert REQUESTS["t2-kimina-refused"] == []
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").glob("*.eval"))


def test_an_allowed_kimina_run_labels_every_checked_sample_selftest_false(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_ALLOW_UNTESTED)
    with kimina_server() as spec:
        code, stdout, output = _run(
            spec, "t2-kimina-allowed", tmp_path, "--allow-untested", "--json"
        )
    assert code == 0, output
    envelope = json.loads(stdout)
    assert envelope["details"]["untested"] == {"path": "kimina", "samples": 2, "checked": 2}
    assert any(n.startswith("UNTESTED (selftest=false): 2 of 2") for n in envelope["notes"])
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.metadata is not None and log.eval.metadata["untested"] == "kimina"
    assert log.samples is not None and len(log.samples) == 2
    labels = [s.scores["t2_scorer"].metadata or {} for s in log.samples if s.scores]
    assert [(m["outcome"], m["selftest"]) for m in labels] == [("checked", False)] * 2


@pytest.mark.parametrize(
    ("selftests", "label"),
    [((True, True), True), ((True, False), False), ((True, None), False)],
)
def test_a_sample_is_certified_only_when_both_its_checks_came_from_a_tested_path(
    selftests: tuple[bool | None, bool | None], label: bool
) -> None:
    """A local workspace that passed its self-test marks its verdicts selftest=True; one
    allowed untested marks them False; a kimina verdict carries None (never tested)."""
    record = next(r for r in load_records(str(FIXTURE)).records if r.id.endswith("double_eq"))
    answer = extract_answer(f"```lean\n{record.target_code}\n```", target_identity(record))

    def check(requests: list[CheckRequest]) -> list[LeanVerdict]:
        return [LeanVerdict(Status.VALID, selftest=s) for s in selftests]

    result = evaluate_answer(record, answer, check, 60.0)  # type: ignore[arg-type]
    assert (result.outcome, result.selftest) == ("checked", label)


def test_a_local_workspace_run_untested_is_labelled_too(fake_lean: str, tmp_path: Path) -> None:
    """The local gate's own opt-out (here the suite's GAPSCOPE_LEAN_ALLOW_UNTESTED=1): the
    run is not refused, its verdicts say selftest=false, and the report says whose they are."""
    code, stdout, output = _run(fake_lean, "t2-local-untested", tmp_path, "--json")
    assert code == 0, output
    envelope = json.loads(stdout)
    assert envelope["details"]["untested"] == {"path": None, "samples": 2, "checked": 2}
    note = next(n for n in envelope["notes"] if n.startswith("UNTESTED"))
    assert "judged by a local workspace whose self-test has not passed" in note
