"""The gap-profile row: the one shape every table, figure, comparison and ``--json`` uses.

A diagnostic's summary may hold much more (per-seed rows, tau tables, coherence classes), but
what a researcher compares across models is a list of rows of (model, diagnostic, metric,
value, CI, n, log), each with its run's status and what the model never answered behind it
(the unanswered count and cause, and for shares the all-fail / all-pass bounds). Keeping them
in one shape is what lets the report, ``profile``, ``compare`` and every ``--json`` put four
diagnostics in one table and read a log the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gapscope.stats import wilson_percent


@dataclass(frozen=True)
class GapRow:
    """One number of a model's gap profile.

    ``value`` and ``ci`` are on the metric's own scale (``unit`` says which: ``%`` or a
    count); ``n`` is the number of units behind the value (query games, families, problems);
    ``log`` is the file the number came from; ``status`` is that run's Inspect status (a
    row of a run that did not finish says so wherever it is shown). ``unanswered`` says what
    the model never answered behind the row (``16 rollouts cancelled``: left out of ``n``,
    never counted as failures), and ``bounds`` what the value would be had every unanswered
    unit failed or passed (shares only: the reader knows its units).
    """

    model: str
    diagnostic: str
    metric: str
    value: float | None
    ci: tuple[float, float] | None
    n: int
    log: str
    unit: str = "%"
    status: str = "success"
    unanswered: str = ""
    bounds: tuple[float, float] | None = None

    @classmethod
    def share(
        cls,
        model: str,
        diagnostic: str,
        metric: str,
        k: int,
        n: int,
        log: str,
        status: str = "success",
        unanswered: tuple[int, str] = (0, ""),
    ) -> GapRow:
        """``k`` of ``n`` units (``n`` > 0) as a percentage with its Wilson interval: the row of
        every count-of-successes metric, so all of them carry the same interval; ``unanswered``
        is how many more units the model never answered, and why (they set the bounds)."""
        missing, why = unanswered
        bounds = (100 * k / (n + missing), 100 * (k + missing) / (n + missing)) if missing else None
        return cls(
            model=model,
            diagnostic=diagnostic,
            metric=metric,
            value=100 * k / n,
            ci=wilson_percent(k, n),
            n=n,
            log=log,
            status=status,
            unanswered=why if missing else "",
            bounds=bounds,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "diagnostic": self.diagnostic,
            "metric": self.metric,
            "value": self.value,
            "ci": list(self.ci) if self.ci else None,
            "n": self.n,
            "log": self.log,
            "unit": self.unit,
            "status": self.status,
            "unanswered": self.unanswered or None,
            "bounds": list(self.bounds) if self.bounds else None,
        }

    def cell(self) -> str:
        """The value with its interval and n, as tables print it."""
        if self.value is None:
            return f"n/a (n={self.n})"
        text = f"{self.value:.1f}" if self.unit == "%" else f"{self.value:g}"
        if self.ci is not None:
            text += f" [{self.ci[0]:.1f}, {self.ci[1]:.1f}]"
        return f"{text} (n={self.n}){self.unanswered_text()}"

    def unanswered_text(self) -> str:
        """`` · 2 families cancelled, not scored: 0.0-100.0 if all failed/passed`` or ""."""
        if not self.unanswered:
            return ""
        if self.bounds is None:
            return f" · {self.unanswered}, not scored"
        low, high = self.bounds
        return f" · {self.unanswered}, not scored: {low:.1f} if all failed, {high:.1f} if passed"
