"""Every Ray actor must judge by the same rules: the verdict cache keys verdicts by the judge
the driver reports, so an actor on a node without comparator or landrun (its VALID from the
REPL's text alone) must never answer under a kernel-checked judge. In-process fakes of Ray and
of the actors' backends keep this fast; the real Ray paths are in tests/t2/test_executor.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from gapscope.lean import executor
from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.executor import RayBackend, RayOptions
from gapscope.lean.verdict import LeanVerdict, Status


class ActorDied(Exception):
    pass


class _Ref:
    def __init__(self, call: Callable[[], Any]) -> None:
        try:
            self.value, self.error = call(), None
        except Exception as exc:  # what ray.get raises for it
            self.value, self.error = None, exc


class _Handle:
    """An actor: each method call runs at once, in this process."""

    def __init__(self, instance: Any) -> None:
        self.instance, self.dead = instance, False

    def __getattr__(self, name: str) -> Any:
        def remote(*args: Any) -> _Ref:
            def call() -> Any:
                if self.dead:
                    raise ActorDied(f"actor died calling {name}")
                return getattr(self.instance, name)(*args)

            return _Ref(call)

        return SimpleNamespace(remote=remote)


class FakeRay:
    exceptions = SimpleNamespace(
        GetTimeoutError=TimeoutError, RayActorError=ActorDied, RayError=RuntimeError
    )

    def __init__(self) -> None:
        self.killed: list[_Handle] = []

    def is_initialized(self) -> bool:
        return True

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2}

    def remote(self, **_: Any) -> Callable[[type], Any]:
        return lambda cls: SimpleNamespace(remote=lambda *a: _Handle(cls(*a)))

    def get(self, ref: Any, timeout: float | None = None) -> Any:
        if isinstance(ref, list):
            return [self.get(r) for r in ref]
        if ref.error is not None:
            raise ref.error
        return ref.value

    def wait(
        self, refs: list[Any], num_returns: int, timeout: float
    ) -> tuple[list[Any], list[Any]]:
        return refs[:num_returns], refs[num_returns:]

    def kill(self, actor: _Handle) -> None:
        actor.dead = True
        self.killed.append(actor)


class _Backend:
    def __init__(self, judge: str) -> None:
        self.judge, self.toolchain = judge, "leanprover/lean4:v4.33.0-rc2"

    def check_many(self, requests: list[CheckRequest]) -> list[LeanVerdict]:
        return [LeanVerdict(Status.VALID, detail=f"judged by {self.judge}") for _ in requests]


@pytest.fixture
def judges(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The judge each next actor's backend opens with, in start order."""
    order: list[str] = []
    monkeypatch.setattr(executor, "_import_ray", FakeRay)
    monkeypatch.setattr(executor, "open_backend", lambda *a, **k: _Backend(order.pop(0)))
    yield order


def _open(actors: int, **options: Any) -> RayBackend:
    return RayBackend("local:/ws", RayOptions(actors=actors, **options), {})


def test_actors_that_judge_differently_are_refused(judges: list[str]) -> None:
    judges.extend(["comparator:tested", "repl-text:tested"])  # node 2 lacks comparator
    with pytest.raises(LeanUnavailable, match="Ray actors' Lean backends differ"):
        _open(actors=2)


def test_actors_that_agree_give_their_judge(judges: list[str]) -> None:
    judges.extend(["comparator:tested", "comparator:tested"])
    checker = _open(actors=2)
    with checker:
        assert checker.judge == "comparator:tested"


@pytest.mark.parametrize("replacement", ["repl-text:tested", "comparator:tested"])
def test_a_restarted_actor_is_checked_again(judges: list[str], replacement: str) -> None:
    judges.extend(["comparator:tested", replacement])
    checker = _open(actors=1, max_retries=1, max_restarts=1)
    with checker:
        checker.actors[0].dead = True  # the node goes; its replacement lands elsewhere
        (verdict,) = checker.check_many([CheckRequest("theorem t : True := trivial")])
        assert checker.stats.restarts == 1
        if replacement == checker.judge:
            assert verdict.status is Status.VALID and replacement in verdict.detail
            assert checker.stats.refused == 0
        else:  # never a VALID from another judge under this checker's key
            assert verdict.status is Status.SERVER_ERROR and checker.stats.refused == 1
            assert checker.actors == []
