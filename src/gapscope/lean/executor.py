"""One job-runner interface for Lean checks: a local pool (default) or Ray actors.

Checking is the cost of every Lean-backed diagnostic (a Mathlib import per Lean process,
project builds of minutes), so every one of them (``t2``, ``prove``, ``onng`` and
``gapscope onng check``) opens its checker through ``open_checker`` and nothing else:
``executor="local"`` is the backend ``open_backend`` opens on this machine (its self-test gate
and sandbox refusal included); ``executor="ray"`` spreads the same checks over Ray actors,
each owning one Lean backend (a REPL pool or a kimina client, opened by ``open_backend`` in
the actor) whose imports load once and then serve many checks. Calls go one way: diagnostic
-> ``open_checker`` -> ``gapscope.lean.factory.open_backend`` -> a backend. Both are
``LeanBackend``s: verdicts come back in submission order, with progress and the verdict cache
handled once on the driver (``CachedBackend``).

A check whose actor dies is retried on another actor, at most ``max_retries`` times; the dead
actor is replaced while the restart budget lasts. Every actor, a replacement too, must open a
backend with the same toolchain and judge (the verdict cache's key): a checker whose actors
differ is refused, and a replacement that differs is dropped. A check that runs out of
retries, or of actors, comes back as ``server_error`` - never lost, never reported as a proof.
Every check also has a wall-clock deadline on the driver (its own timeout plus
``deadline_slack_s``): an actor that stops answering (stalled, SIGSTOPped, partitioned)
costs that check a ``timeout`` verdict and is killed and replaced, instead of stalling the
batch.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gapscope.lean.backend import CheckRequest, LeanUnavailable
from gapscope.lean.base import CachedBackend
from gapscope.lean.cache import VerdictCache
from gapscope.lean.factory import open_backend
from gapscope.lean.selftest.record import untested_allowed
from gapscope.lean.verdict import UNREACHED_CHECK, LeanVerdict, Status

EXECUTORS = ("local", "ray")
RAY_INSTALL = "Ray is not installed; install the extra with: pip install 'gapscope[ray]'"
MAX_RAY_ACTORS = 1024
"""Each actor holds a Lean backend (gigabytes with Mathlib): more than this is a typo, and a
count the cluster cannot place leaves actors pending forever."""


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide: ``address`` None starts a local Ray, ``auto`` joins the running
    cluster, ``ray://H:P`` a remote one. ``actors`` None = one per CPU Ray reports (at most
    :data:`MAX_RAY_ACTORS`). ``deadline_slack_s``: how long past a check's own timeout the
    driver waits for its actor; ``start_timeout_s``: how long the first actor may take to open
    its backend."""

    address: str | None = None
    actors: int | None = None
    cpus_per_actor: float = 1.0
    checks_per_actor: int = 1
    max_retries: int = 2
    max_restarts: int | None = None
    deadline_slack_s: float = 60.0
    start_timeout_s: float = 600.0

    def __post_init__(self) -> None:
        if self.actors is not None and not 1 <= self.actors <= MAX_RAY_ACTORS:
            raise ValueError(
                f"ray_actors must be between 1 and {MAX_RAY_ACTORS} (or unset: one per CPU), "
                f"got {self.actors}"
            )
        if self.cpus_per_actor <= 0 or self.deadline_slack_s < 0 or self.start_timeout_s <= 0:
            raise ValueError(
                "cpus_per_actor and start_timeout_s must be > 0, deadline_slack_s >= 0"
            )


def open_checker(
    spec: str | None = None,
    *,
    executor: str = "local",
    ray: RayOptions | None = None,
    cache: VerdictCache | None = None,
    progress: bool | None = None,
    **backend_options: Any,
) -> CachedBackend:
    """The checker ``executor`` names, for the Lean backend ``spec``.

    ``backend_options`` go to each backend's constructor (``max_workers``, ``repl_command``,
    ``env`` ...). LeanUnavailable when there is no backend, or no Ray for ``executor="ray"``.
    """
    if executor == "local":
        return open_backend(spec, cache=cache, progress=progress, **backend_options)
    if executor == "ray":
        if untested_allowed(bool(backend_options.get("allow_untested", False))):
            # the driver's opt-out travels to the actors (they may not share its environment);
            # the gate itself stays in open_backend, which each actor calls
            backend_options["allow_untested"] = True
        return RayBackend(
            spec, ray or RayOptions(), backend_options, cache=cache, progress=progress
        )
    raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")


class LeanActor:
    """Runs inside a Ray actor: one Lean backend, opened once, checking one request per call."""

    def __init__(self, spec: str | None, options: dict[str, Any]) -> None:
        self.backend = open_backend(spec, progress=False, **options)

    def toolchain(self) -> str:
        return self.backend.toolchain

    def judge(self) -> str:
        return self.backend.judge

    def check(self, request: CheckRequest) -> LeanVerdict:
        return self.backend.check_many([request])[0]

    def pid(self) -> int:
        import os

        return os.getpid()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise LeanUnavailable(RAY_INSTALL) from None
    return ray


@dataclass
class RayStats:
    """Observable behaviour: retried checks, actors replaced, checks given up on, checks
    that passed their deadline, replacements dropped (they did not start, or would judge
    differently from the actors the checker opened with)."""

    retries: int = 0
    restarts: int = 0
    abandoned: int = 0
    deadlines: int = 0
    refused: int = 0


class RayBackend(CachedBackend):
    """Lean checks on Ray actors; a ``LeanBackend`` like the local one."""

    def __init__(
        self,
        spec: str | None,
        options: RayOptions,
        backend_options: dict[str, Any],
        *,
        cache: VerdictCache | None = None,
        progress: bool | None = None,
    ) -> None:
        super().__init__(cache, progress)
        self._ray = _import_ray()
        if options.max_retries < 0 or options.checks_per_actor < 1:
            raise ValueError("max_retries must be >= 0 and checks_per_actor >= 1")
        if not self._ray.is_initialized():
            self._ray.init(address=options.address, include_dashboard=False, log_to_driver=False)
        self.options = options
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        count = options.actors or min(MAX_RAY_ACTORS, max(1, cpus))
        self.stats = RayStats()
        self._restarts_left = count if options.max_restarts is None else options.max_restarts
        self._actor_class = self._ray.remote(
            num_cpus=options.cpus_per_actor, max_concurrency=options.checks_per_actor
        )(LeanActor)
        self._spec, self._backend_options = spec, backend_options
        self._lock = threading.Lock()
        self.actors: list[Any] = [self._start_actor() for _ in range(count)]
        try:
            identities = self._identities(self.actors)
        except self._ray.exceptions.GetTimeoutError:
            self.close()
            raise LeanUnavailable(
                f"no Ray actor started within {options.start_timeout_s} s; can the cluster "
                f"place {count} actors of {options.cpus_per_actor} CPU (ray_actors)?"
            ) from None
        except self._ray.exceptions.RayActorError as exc:
            self.close()
            raise LeanUnavailable(f"the Lean backend did not start on a Ray actor: {exc}") from None
        if len(set(identities)) > 1:
            self.close()
            seen = "; ".join(sorted({f"{t} judged by {j}" for t, j in identities}))
            raise LeanUnavailable(
                f"the Ray actors' Lean backends differ ({seen}): a verdict from one would be "
                "cached under another's judge; give every node the same workspace (toolchain, "
                "comparator, landrun, self-test)"
            )
        self._toolchain, self._judge = identities[0]

    def _identities(self, actors: Sequence[Any]) -> list[tuple[str, str]]:
        """Each actor's (toolchain, judge), waited for together up to ``start_timeout_s``:
        the cache keys every verdict by the judge, so every actor must have the same one."""
        refs = [ref for a in actors for ref in (a.toolchain.remote(), a.judge.remote())]
        got = [str(v) for v in self._ray.get(refs, timeout=self.options.start_timeout_s)]
        return list(zip(got[::2], got[1::2], strict=True))

    def _start_actor(self) -> Any:
        return self._actor_class.remote(self._spec, self._backend_options)

    @property
    def toolchain(self) -> str:
        return self._toolchain

    @property
    def judge(self) -> str:
        return self._judge

    def _check_uncached(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        with self._lock:  # one batch at a time owns the actors' slots
            return self._dispatch(requests, done)

    def _dispatch(
        self, requests: Sequence[CheckRequest], done: Callable[[int], None]
    ) -> list[LeanVerdict]:
        ray = self._ray
        results: list[LeanVerdict | None] = [None] * len(requests)
        attempts = [0] * len(requests)
        todo: deque[int] = deque(range(len(requests)))
        running: dict[Any, tuple[int, Any]] = {}
        deadlines: dict[Any, float] = {}
        load = {id(a): 0 for a in self.actors}

        def settle(index: int, verdict: LeanVerdict) -> None:
            results[index] = verdict
            done(1)

        while todo or running:
            for actor in list(self.actors):
                while todo and load[id(actor)] < self.options.checks_per_actor:
                    index = todo.popleft()
                    ref = actor.check.remote(requests[index])
                    running[ref] = (index, actor)
                    deadlines[ref] = (
                        time.monotonic() + requests[index].timeout_s + self.options.deadline_slack_s
                    )
                    load[id(actor)] += 1
            if not running:  # no actor is left to take the remaining checks
                for index in todo:
                    self.stats.abandoned += 1
                    settle(
                        index, _lost(attempts[index], "no live Ray actor is left", reached=False)
                    )
                todo.clear()
                break
            wait_s = max(0.0, min(deadlines.values()) - time.monotonic())
            ready, _ = ray.wait(list(running), num_returns=1, timeout=wait_s)
            if not ready:
                self._expire(running, deadlines, load, settle, requests)
                continue
            ref = ready[0]
            deadlines.pop(ref)
            index, actor = running.pop(ref)
            if id(actor) in load:  # a replaced actor's slots are gone with it
                load[id(actor)] -= 1
            try:
                settle(index, ray.get(ref))
            except ray.exceptions.RayActorError as exc:
                attempts[index] += 1
                self._replace(actor, load)
                if attempts[index] > self.options.max_retries:
                    self.stats.abandoned += 1
                    settle(index, _lost(attempts[index], str(exc).splitlines()[0]))
                else:
                    self.stats.retries += 1
                    todo.appendleft(index)
            except ray.exceptions.RayError as exc:
                settle(index, LeanVerdict(Status.SERVER_ERROR, detail=f"Ray: {exc}"))
        return [v for v in results if v is not None]

    def _expire(
        self,
        running: dict[Any, tuple[int, Any]],
        deadlines: dict[Any, float],
        load: dict[int, int],
        settle: Callable[[int, LeanVerdict], None],
        requests: Sequence[CheckRequest],
    ) -> None:
        """Settle every check past its deadline as TIMEOUT and kill its actor (its other
        checks then fail over as after any actor death)."""
        now = time.monotonic()
        for ref in [r for r, deadline in deadlines.items() if deadline <= now]:
            index, actor = running.pop(ref)
            deadlines.pop(ref)
            if id(actor) in load:
                load[id(actor)] -= 1
            self.stats.deadlines += 1
            limit = requests[index].timeout_s + self.options.deadline_slack_s
            settle(
                index,
                LeanVerdict(
                    Status.TIMEOUT,
                    detail=f"the Ray actor gave no answer within {limit:.1f} s (the check's "
                    "timeout plus deadline_slack_s); actor killed and replaced",
                ),
            )
            self._ray.kill(actor)
            self._replace(actor, load)

    def _replace(self, dead: Any, load: dict[int, int]) -> None:
        """Drop a dead actor (once) and start a replacement while the budget lasts."""
        if not any(a is dead for a in self.actors):
            return
        self.actors = [a for a in self.actors if a is not dead]
        load.pop(id(dead), None)
        if self._restarts_left > 0:
            self._restarts_left -= 1
            self.stats.restarts += 1
            fresh = self._start_actor()
            if not self._same_judge(fresh):
                self.stats.refused += 1
                self._ray.kill(fresh)
                return
            self.actors.append(fresh)
            load[id(fresh)] = 0

    def _same_judge(self, fresh: Any) -> bool:
        """Whether a replacement actor opened a backend with this checker's judge (a node
        without comparator or landrun, or untested, would judge by other rules)."""
        ray = self._ray
        try:
            (identity,) = self._identities([fresh])
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError):
            return False
        return identity == (self._toolchain, self._judge)

    def close(self) -> None:
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []


def _lost(attempts: int, why: str, reached: bool = True) -> LeanVerdict:
    """A check no actor settled; ``reached``: an actor died running it (the code may have
    killed it, so a control decides), else no actor was left to ask."""
    return LeanVerdict(
        Status.SERVER_ERROR,
        detail=f"the Ray actor checking this died {attempts} time(s) ({why}); not checked",
        checks=() if reached else (UNREACHED_CHECK,),
    )
