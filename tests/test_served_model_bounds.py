"""A served model that misbehaves ends a run in bounded time with one line naming the model and
quoting the server, and what finished is kept.

Each case runs the real ``gapscope run`` against :mod:`tests.openai_stub` over HTTP (Inspect's
``openai-api`` provider and the ``openai`` client, as a user's vLLM or ``transformers serve``).
A server that fails from the first request is caught by the preflight (exit 2, no sample
started, no log written); one that fails mid-run ends the run with the server's words, the
finished samples in the log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gapscope.app.main import app
from tests.openai_stub import StubServer, closed_port_url, serve

runner = CliRunner()
LADDER = ["ladder", "--families", "bundled", "--limit", "2", "-k", "1", "--max-tokens", "64"]


def _model(monkeypatch: pytest.MonkeyPatch, url: str, name: str) -> str:
    monkeypatch.setenv("STUB_BASE_URL", url)
    monkeypatch.setenv("STUB_API_KEY", "test-key")
    return f"openai-api/stub/{name}"


def _run(model: str, log_dir: Path, *args: str, bounds: tuple[str, ...] = ()) -> Any:
    result = runner.invoke(
        app, ["run", *bounds, *args, "--model", model, "--log-dir", str(log_dir)]
    )
    return result


def _error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("error-under-200", "the server answered HTTP 200 with an error: stub overloaded"),
        ("empty-choices", "the server answered HTTP 200 without choices"),
        ("oversized", "declares 209,715,200 bytes, over gapscope's cap"),
        ("streamed-oversized", "(streamed) passed 1,048,576 bytes, over gapscope's cap"),
    ],
)
def test_a_malformed_reply_is_one_line_before_any_sample(
    mode: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gapscope.models import endpoint

    # a lower cap: the openai client re-joins a streamed reply's text on every chunk, so
    # 32 MiB of stream takes it minutes on a loaded machine (the cap itself takes seconds)
    monkeypatch.setattr(endpoint, "MAX_REPLY_BYTES", 1024 * 1024)
    with serve(StubServer(mode=mode)) as stub:
        model = _model(monkeypatch, stub.url, f"malformed-{mode}")
        result = _run(model, tmp_path, *LADDER)
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result)
    assert model in line and words in line
    assert stub.requests == 1  # the preflight's first request, not retried
    assert not list(tmp_path.glob("*.eval"))  # no sample started
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("stub_args", "name", "words"),
    [
        ({"served": "served-name"}, "wrong-name", "(HTTP 404): The model `wrong-name` does not"),
        ({"api_key": "the-right-key"}, "bad-key", "(HTTP 401): Incorrect API key provided"),
        ({"fail": lambda n, body: 500}, "always-500", "(HTTP 500): stub failure"),
    ],
)
def test_a_refusing_server_is_one_line_quoting_it_before_any_sample(
    stub_args: dict[str, Any],
    name: str,
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve(StubServer(**stub_args)) as stub:
        model = _model(monkeypatch, stub.url, name)
        result = _run(model, tmp_path, *LADDER)
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result)
    assert line.startswith(f"error: {model}: the server refused the request") and words in line
    assert stub.requests == 1 and not list(tmp_path.glob("*.eval"))
    assert "eval-retry" not in result.output


def test_a_server_that_is_down_is_named_before_any_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(monkeypatch, closed_port_url(), "down")
    result = _run(model, tmp_path, *LADDER)
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result)
    assert f"{model}: cannot reach http://127.0.0.1:" in line
    assert not list(tmp_path.glob("*.eval"))


CODE = ["ladder-code", "--bundled", "--limit", "1", "-k", "1", "--allow-unsandboxed"]
S2B = ["s2b", "--seeds", "1", "--max-tokens", "64"]


@pytest.mark.parametrize(
    ("command", "where"),
    [
        (LADDER, "before"),
        (LADDER, "after"),
        (CODE, "after"),
        (["s2b", "--seeds", "1", "--max-tokens", "64"], "after"),
    ],
)
def test_a_trickling_server_is_abandoned_at_the_attempt_timeout(
    command: list[str], where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--attempt-timeout`` works before the diagnostic's name and after it, on every run
    command; the preflight waits that long, and its refusal names the flag with a value."""
    bounds = ["--attempt-timeout", "2", "--timeout", "30", "--max-retries", "0"]
    args = [*bounds, *command] if where == "before" else [*command, *bounds]
    with serve(StubServer(mode="trickle")) as stub:
        model = _model(monkeypatch, stub.url, f"trickle-{command[0]}-{where}")
        result = _run(model, tmp_path, *args)
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result)
    assert line == (
        f"error: {model}: no reply within 2 s; a slow server (not a stalled one) needs "
        "longer: --attempt-timeout 8"
    )


def test_the_preflight_waits_as_long_as_the_attempt_timeout_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past its own 120 s only when told: ``--attempt-timeout 600`` gives a slow server 600 s
    (it was cut to 120, and the refusal then advised the flag that had been given)."""
    from gapscope.app import preflight
    from gapscope.models import EndpointError

    waited: list[int] = []

    async def fake_probe(model: object, name: str, timeout: int) -> None:
        waited.append(timeout)
        raise EndpointError(f"{name}: stopped here")

    monkeypatch.setattr(preflight, "probe", fake_probe)
    monkeypatch.setattr(preflight, "is_served", lambda name: True)
    for given in (600, 5):
        with pytest.raises(EndpointError):
            preflight.check_endpoints({"openai-api/x/y": object()}, given)  # type: ignore[dict-item]
    assert waited == [600, 5]


def test_a_model_that_only_calls_tools_gets_one_request_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's ``generate()`` loops on tool calls by default (772 requests in 200 s against
    such a server); no gapscope task offers tools, so a tool call ends the sample. The stub
    refuses past 50 requests so that a loop ends in a failure rather than running on."""

    def refuse_a_loop(n: int, body: dict[str, Any]) -> int | None:
        return 400 if n > 50 else None

    from gapscope.models import PREFLIGHT_REQUESTS

    with serve(StubServer(mode="tool-call", fail=refuse_a_loop)) as stub:
        model = _model(monkeypatch, stub.url, "tool-caller")
        result = _run(model, tmp_path, *LADDER)
        assert result.exit_code == 0, result.output
        (log,) = tmp_path.glob("*.eval")
        from inspect_ai.log import read_eval_log

        samples = read_eval_log(str(log)).samples or []
        assert samples and stub.requests == PREFLIGHT_REQUESTS + len(samples)  # then one each


def test_a_server_that_fails_mid_run_ends_in_one_line_and_keeps_finished_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preflight and the first samples are answered; then every reply is an error body
    under HTTP 200. Each request is retried ``--max-retries`` times, then the run stops."""
    from inspect_ai.log import read_eval_log

    from gapscope.models import PREFLIGHT_REQUESTS

    with serve(StubServer(mode="error-under-200", after=PREFLIGHT_REQUESTS + 3)) as stub:
        model = _model(monkeypatch, stub.url, "mid-run")
        # the retries, not the timeout, must end it: on a loaded machine 20 s of backoff ran out
        # first, and the log then carries tenacity's RetryError without the server's words
        bounds = ("--max-retries", "1", "--timeout", "120")
        result = _run(model, tmp_path, *LADDER, bounds=bounds)
    assert result.exit_code == 1, result.output
    (line,) = _error_lines(result)
    assert "stub overloaded: no capacity" in line and "\n" not in line
    (log,) = tmp_path.glob("*.eval")
    finished = [s for s in read_eval_log(str(log)).samples or [] if s.error is None]
    assert len(finished) == 3  # the three requests after the preflight's are kept


def test_a_piped_run_shows_output_tokens_before_its_samples_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An S2B-LM episode is one sample of many calls: the progress line counts each call's
    tokens as it returns, and is shown on a timer in a pipe, where Inspect shows nothing."""
    from gapscope.app import study
    from gapscope.models import PREFLIGHT_REQUESTS

    monkeypatch.setattr(study, "PIPED_EVERY_S", 0.5)
    stub_server = StubServer(mode="slow", delay=0.3, completion_tokens=7, after=PREFLIGHT_REQUESTS)
    with serve(stub_server) as stub:
        model = _model(monkeypatch, stub.url, "slow")
        args = ["s2b", "--preset", "demo", "--seeds", "1", "--max-tokens", "16"]
        result = _run(model, tmp_path, *args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("study:")]
    mid_episode = [
        line for line in lines if "samples 0/1" in line and "output tokens 0," not in line
    ]
    assert mid_episode, lines


def test_a_rerun_of_an_interrupted_episode_replays_the_calls_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An S2B-LM episode is one sample of many calls: the server fails from the episode's 4th
    call on, so the episode is lost; run again, the three finished calls come from Inspect's
    cache and only the rest reach the server."""
    from gapscope.models import PREFLIGHT_REQUESTS
    from gapscope.s2b.task import s2b_lm

    args = ["s2b", "--preset", "demo", "--seeds", "1", "--max-tokens", "16"]
    calls = sum((s2b_lm(preset="demo", seeds=1).metadata or {})["model_calls"].values())
    answered = PREFLIGHT_REQUESTS + 3
    with serve(StubServer(fail=lambda n, body: 500 if n > answered else None)) as stub:
        model = _model(monkeypatch, stub.url, "episode")
        cut = _run(model, tmp_path, *args, bounds=("--max-retries", "0"))
        assert cut.exit_code == 1, cut.output
        assert stub.answered == answered  # the preflight's and three calls of the episode
        stub.fail, before = (lambda n, body: None), stub.answered
        again = _run(model, tmp_path, *args)
    assert again.exit_code == 0, again.output
    assert stub.answered - before == PREFLIGHT_REQUESTS + calls - 3  # then the missing calls


def test_the_plan_counts_each_requests_fixed_cost_and_prompt_reading() -> None:
    """The preflight's two timings (a short streamed prompt, a long one) give a request's
    fixed cost, its reading per prompt token and its decoding per output token; an S2B-LM
    episode's calls each re-read the transcript, so its plan counts far more prompt tokens
    than calls, and the estimate charges them (it was 3.5x short without them)."""
    from gapscope.app.preflight import estimated_seconds, measured_rate
    from gapscope.app.study import plan_of
    from gapscope.models.endpoint import Probe
    from gapscope.s2b.task import s2b_lm

    model = "openai-api/local/m"
    probe = Probe(model, 10.0, 32, 3.8, 20, 13.0, 920)  # 32 tokens in 10 s, the first at 3.8
    rate = measured_rate(probe)
    assert rate.tokens_per_s == pytest.approx(31 / 6.2)
    assert rate.prompt_token_s == pytest.approx(9.2 / 900)
    assert rate.call_s == pytest.approx(3.8 - 20 * 9.2 / 900)
    row = plan_of(s2b_lm(preset="demo", seeds=1, max_tokens=160), model, "s2b", "s2b")
    assert row.prompt_tokens > 500 * row.generations
    (estimate,) = estimated_seconds([row], {model: rate}).values()
    fixed = row.generations * rate.call_s + row.prompt_tokens * rate.prompt_token_s
    assert row.reply_tokens == 72  # a listener's decision, well below its 160-token cap
    typical = row.generations * 72 / rate.tokens_per_s
    assert estimate.about == pytest.approx(fixed + typical, abs=0.1)
    assert estimate.up_to == pytest.approx(fixed + row.token_budget / rate.tokens_per_s, abs=0.1)


def test_the_estimate_is_the_spread_of_three_probes_and_counts_the_preflight() -> None:
    """One probe made the same quick plan 84 min, 2.9 h, 3.6 h and 5.2 h within 20 minutes:
    the plan now shows the spread of 3 rounds as its range, each with the preflight's own
    time (60 s here) added, and takes the median round for its single numbers."""
    from gapscope.app.preflight import (
        estimate_lines,
        estimated_seconds,
        measured_rate,
        measured_rates,
    )
    from gapscope.app.study import plan_of
    from gapscope.ladder.task import oracle_ladder
    from gapscope.models.endpoint import Preflight, Probe

    model = "openai-api/local/m"
    # 32 tokens in 10, 40 and 16 s, the first token at 1 s; the long prompt 9 s more
    probes = tuple(Probe(model, s, 32, 1.0, 20, 10.0, 920) for s in (10.0, 40.0, 16.0))
    rate = measured_rates(Preflight(model, probes, 60.0))
    assert rate.tokens_per_s == measured_rate(probes[2]).tokens_per_s  # the median round
    task = oracle_ladder(families="bundled", k=1, max_tokens=384)
    row = plan_of(task, model, "ladder", "ladder")
    (estimate,) = estimated_seconds([row], {model: rate}).values()
    alone = [estimated_seconds([row], {model: measured_rate(p)})[model] for p in probes]
    assert estimate.probes == 3
    assert estimate.about == pytest.approx(alone[2].about + 60, abs=0.1)
    assert estimate.about_range == (
        pytest.approx(alone[0].about + 60, abs=0.1),
        pytest.approx(alone[1].about + 60, abs=0.1),
    )
    assert estimate.up_to_range[1] == pytest.approx(alone[1].up_to + 60, abs=0.1)
    line = estimate_lines([row], {model: rate})[0]
    low, high = (f"{v / 3600:.1f}" for v in estimate.about_range)  # hours, at 1-3 tokens/s
    assert f"time: {model}: about {low}-{high} h (from 3 probes), up to " in line
    assert "measured on 3 probes of 32 tokens" in line and "the preflight took 60 s" in line


def test_each_task_tells_the_plan_how_long_its_replies_run() -> None:
    """The plan's "about" takes each task's own expected reply length (measured on SmolLM2
    against ``transformers serve``): a speaker writes to its cap, an OracleLadder rollout half
    its cap, a listener's decision 72 tokens below a higher cap; a task that declares none is
    assumed to stop after 64 tokens."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig

    from gapscope.app.study import plan_of
    from gapscope.ladder.task import oracle_ladder
    from gapscope.s2b.task import s2b_lm

    def reply(task: Task) -> int:
        return plan_of(task, "openai-api/local/m", "x", "x").reply_tokens

    assert reply(s2b_lm(preset="demo", seeds=1, role="speaker", max_tokens=32)) == 32
    assert reply(s2b_lm(preset="demo", seeds=1, max_tokens=160)) == 72
    assert reply(s2b_lm(preset="demo", seeds=1, max_tokens=40)) == 40  # never over the cap
    assert reply(oracle_ladder(families="bundled", k=1, max_tokens=384)) == 192
    bare = Task(dataset=[Sample(input="q")], config=GenerateConfig(max_tokens=512))
    assert reply(bare) == 64


def test_a_server_that_does_not_stream_is_timed_unstreamed_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that answers the preflight's streamed request with one JSON reply was refused
    as ``RetryError[<Future ...> NoStreamDataError]`` (the ``openai`` client reads the reply
    as a stream of no events); the runs do not stream, so the preflight times it unstreamed
    (one request more) and says so in the plan."""
    from gapscope.models import PREFLIGHT_REQUESTS

    with serve(StubServer(mode="no-stream")) as stub:
        model = _model(monkeypatch, stub.url, "no-stream")
        result = _run(model, tmp_path, *LADDER)
        assert result.exit_code == 0, result.output
        (log,) = tmp_path.glob("*.eval")
        from inspect_ai.log import read_eval_log

        samples = read_eval_log(str(log)).samples or []
        assert stub.requests == PREFLIGHT_REQUESTS + 1 + len(samples)
    (time_line,) = [line for line in result.stderr.splitlines() if line.startswith("time:")]
    assert "the server does not stream" in time_line and "RetryError" not in result.output
    assert "(from 3 probes)" in time_line and "; the preflight took " in time_line


def test_an_empty_stream_is_named_not_its_retry_wrapper() -> None:
    """Inspect's retry loop wraps what failed in tenacity's ``RetryError(<Future ...>)``; the
    line names what the server did."""
    from inspect_ai.model._stream import NoStreamDataError
    from tenacity import Future, RetryError

    from gapscope.models.endpoint import describe_error

    attempt = Future(1)
    attempt.set_exception(NoStreamDataError("Streaming response ended without chunks."))
    line = describe_error("openai-api/x/m", RetryError(attempt))
    assert line == (
        "openai-api/x/m: the server answered a streamed request with HTTP 200 and no event at"
        " all (an empty stream); check the server's log for what failed"
    )


@pytest.mark.parametrize("json_out", [False, True])
def test_a_served_model_without_its_settings_is_one_line_naming_them(
    json_out: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect names one missing variable per attempt, on two lines, without the fix
    (``ERROR: Unable to initialise local client`` / ``No LOCAL_API_KEY defined``)."""
    import json

    for name in ("UNSET_BASE_URL", "UNSET_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    model = "openai-api/unset/m"
    args = [*LADDER, *(["--json"] if json_out else [])]
    result = _run(model, tmp_path, *args)
    assert result.exit_code == 2, result.output
    wanted = (
        f"--model {model}: cannot open it: set UNSET_BASE_URL (the server's address, ending in"
        " /v1, e.g. http://127.0.0.1:8000/v1) and UNSET_API_KEY (its key; any value for a"
        " server that takes none)"
    )
    if json_out:
        assert json.loads(result.stdout)["error"] == wanted
    else:
        assert result.stderr.strip() == f"error: {wanted}"
    monkeypatch.setenv("UNSET_API_KEY", "k")  # only the base URL is missing now
    result = _run(model, tmp_path, *LADDER)
    assert result.stderr.strip() == (
        f"error: --model {model}: cannot open it: set UNSET_BASE_URL (the server's address,"
        " ending in /v1, e.g. http://127.0.0.1:8000/v1)"
    )


def test_a_bad_request_quotes_the_server_and_says_what_to_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = (
        "This model's maximum context length is 2048 tokens. However, you requested 4096"
        " tokens (64 in the messages, 4032 in the completion)."
    )
    stub_server = StubServer(fail=lambda n, body: 400, failure_words=words)
    with serve(stub_server) as stub:
        model = _model(monkeypatch, stub.url, "bad-request")
        result = _run(model, tmp_path, *LADDER)
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result)
    assert line == (
        f"error: {model}: the server refused the request (HTTP 400): {words}; check what it"
        " names: a parameter the server does not take, or a reply cap (--max-tokens) over the"
        " served model's context length"
    )
    assert stub.requests == 1


def test_a_reply_over_the_cap_mid_run_is_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preflight is answered, then every reply declares 200 MB. Each sample's request is
    sent once (it was turned into a retryable 502 and sent ``--max-retries`` + 1 times: 307
    requests in 392 s in one profile), and the run's error line names the cap."""
    from inspect_ai.log import read_eval_log

    from gapscope.models import PREFLIGHT_REQUESTS, endpoint

    monkeypatch.setattr(endpoint, "MAX_REPLY_BYTES", 1024 * 1024)
    with serve(StubServer(mode="oversized", after=PREFLIGHT_REQUESTS)) as stub:
        model = _model(monkeypatch, stub.url, "over-cap")
        result = _run(model, tmp_path, *LADDER, bounds=("--max-retries", "3"))
    assert result.exit_code == 1, result.output
    # Inspect's last panel line ends without a newline under CliRunner: the line starts there
    line = result.stderr[result.stderr.index("error: run error:") :].splitlines()[0]
    assert line.startswith(
        "error: run error: the server's reply declares 209,715,200 bytes, over gapscope's cap"
        " of 1,048,576 bytes"
    )
    (log,) = tmp_path.glob("*.eval")
    failed = [s for s in read_eval_log(str(log)).samples or [] if s.error is not None]
    # at most one request a sample (a run error cancels samples whose request was not sent yet;
    # retried, each would take --max-retries + 1 = 4)
    assert failed and stub.requests <= PREFLIGHT_REQUESTS + len(failed)
