"""The Ray driver's deadline and its actor-count check (Ray comes with the ``[ray]`` extra)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gapscope.lean.backend import CheckRequest
from gapscope.lean.executor import MAX_RAY_ACTORS, RayOptions, open_checker
from gapscope.lean.verdict import Status
from tests.lean.conftest import FAKE_REPL


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.mark.parametrize("actors", [0, MAX_RAY_ACTORS + 1, 100000])
def test_an_impossible_actor_count_is_refused_naming_the_parameter(actors: int) -> None:
    """Regression: ``--ray-actors 100000`` hung, waiting for actors nobody could place."""
    with pytest.raises(ValueError, match=f"ray_actors must be between 1 and {MAX_RAY_ACTORS}"):
        RayOptions(actors=actors)


def test_a_stalled_actor_costs_its_check_a_timeout_and_is_replaced(
    project: Path, ray_local: Any
) -> None:
    """Regression: a SIGSTOPped actor stalled the whole batch until it was resumed."""
    options = RayOptions(actors=1, deadline_slack_s=1.0)
    with open_checker(
        f"local:{project}",
        executor="ray",
        ray=options,
        repl_command=(sys.executable, str(FAKE_REPL)),
        allow_unsandboxed=True,
        allow_untested=True,  # Ray workers do not see the test process's environment
    ) as checker:
        stalled = ray_local.get(checker.actors[0].pid.remote())
        os.kill(stalled, signal.SIGSTOP)
        try:
            verdict = checker.check_many([CheckRequest("theorem t : True := trivial", "", 1.0)])
        finally:
            os.kill(stalled, signal.SIGCONT)
        assert verdict[0].status is Status.TIMEOUT, verdict
        assert "deadline_slack_s" in verdict[0].detail
        assert checker.stats.deadlines == 1 and checker.stats.restarts == 1
        assert checker.check_many([CheckRequest("theorem u : True := trivial")])[0].valid
