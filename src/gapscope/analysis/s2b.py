"""S2B-LM logs -> per-seed ZSCT rows, the mean +- sd over seeds, and per-query-game outcomes.

Each sample is one episode; its store holds every game's record (phase, truth, the listener's
parsed decision). The per-seed scores come from the scorer; the gap-profile row pools the
query games of all seeds (equal-sized episodes, so the pooled rate equals the seed mean) and
gives it a Wilson interval over those games.

A ``role=speaker`` log measures constructivity: its rows are the rule listener's ZSCT on the
model's query messages (``constructivity ZSCT [preset]``), the share of malformed messages
(Wilson interval over the messages) and the language measures ``topsim``/``posdis``/``bosdis``
(mean over seeds, no interval: a handful of episodes supports none). :func:`axes` pairs each
model's receptivity and constructivity for the report's side-by-side table and scatter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from gapscope.analysis.logs import (
    counted_samples,
    malformed_sample,
    read_log,
    require_task,
    run_info,
    sample_score,
)
from gapscope.analysis.profile import GapRow
from gapscope.s2b import (
    LANGUAGE_KEYS,
    SCORE_KEYS,
    SPEAKER_SCORE_KEYS,
    TASK,
    EpisodeMetadata,
    RunMetadata,
    SeedSummary,
    adj_zsct,
    beyond_context,
)
from gapscope.stats import wilson_percent
from gapscope.steer import Extraction, seed_overlap

if TYPE_CHECKING:
    from pathlib import Path

    from inspect_ai.log import EvalLog

DIAGNOSTIC = "S2B-LM"
ANSWER_WORDS: dict[str, bool | None] = {"same": True, "different": False, "unparsed": None}
"""A query game's decision as the listener gave it: same, different, or nothing that parsed."""


@dataclass(frozen=True)
class S2BRunSummary:
    """What a user reads after a run: settings, one row per seed, and the seed aggregate.

    ``query`` maps ``seed-S/game-I`` to whether the listener's flexible decision was right:
    the per-item outcomes that ``compare`` pairs across models.
    """

    preset: str
    listener: str
    model: str
    log_location: str
    status: str
    per_seed: list[dict[str, Any]]
    summary: dict[str, SeedSummary]
    query: dict[str, bool]
    notes: list[str] = field(default_factory=list)
    """What a reader must know to trust the numbers (games past the model's context)."""
    role: str = "listener"
    speaker: str = "lm"
    malformed: tuple[int, int] = (0, 0)
    """Speaker role: (malformed, all) messages the speaker wrote itself, over every seed."""
    answers: dict[str, int] = field(default_factory=dict)
    """The deciding listener's answers to the query games: ``same``, ``different``,
    ``unparsed``."""
    cut: tuple[int, int] = (0, 0)
    """(games, episodes) whose replies stopped at the model's context window
    (``model_length``): part of the number is the window's, not the model's."""

    @property
    def episodes(self) -> int:
        """The scored episodes (one per seed)."""
        return sum("error" not in row for row in self.per_seed)

    @property
    def warnings(self) -> list[str]:
        """What changes how this run's ZSCT is read, for its cell in the report's first
        table: the games the context window cut, one answer to every query game. The
        per-seed lines stay in :attr:`notes`."""
        games, episodes = self.cut
        cut = (
            [
                f"{games} games in {episodes} of {self.episodes} episodes cut by the context "
                "window: their empty replies count as wrong, so part of this number is the "
                "window's, not the model's"
            ]
            if games
            else []
        )
        constant = constant_answer_note(self.role, self.answers)
        return cut + ([constant] if constant else [])

    @property
    def label(self) -> str:
        """The model for an LM in the tested seat; else the reference listener or speaker."""
        if self.role == "speaker":
            return self.model if self.speaker == "lm" else f"{self.speaker} speaker"
        return self.model if self.listener == "lm" else f"{self.listener} listener"

    def metric(self, name: str) -> str:
        """A row's metric name: ``ZSCT [preset]`` for receptivity, ``constructivity ZSCT
        [preset]`` for the speaker role, so both axes sit side by side in one profile."""
        axis = "constructivity " if self.role == "speaker" else ""
        return f"{axis}{name} [{self.preset}]"

    def rows(self) -> list[GapRow]:
        """ZSCT and adj-ZSCT for this preset, over every query game of every seed; for the
        speaker role also the malformed share and the language measures."""
        n = len(self.query)
        if not n:
            return []
        right = sum(self.query.values())
        zsct = 100 * right / n
        low, high = wilson_percent(right, n)
        rows = [
            GapRow(self.label, DIAGNOSTIC, metric, value, ci, n, self.log_location)
            for metric, value, ci in (
                (self.metric("ZSCT"), zsct, (low, high)),
                (self.metric("adj-ZSCT"), adj_zsct(zsct), (adj_zsct(low), adj_zsct(high))),
            )
        ]
        if self.role == "speaker":
            rows += self._speaker_rows()
        return rows

    def adjusted_row(self) -> GapRow:
        """The adj-ZSCT row: the axis value the receptivity/constructivity scatter uses."""
        return next(r for r in self.rows() if r.metric == self.metric("adj-ZSCT"))

    def _speaker_rows(self) -> list[GapRow]:
        bad, messages = self.malformed
        rows = [
            GapRow(
                self.label,
                DIAGNOSTIC,
                f"malformed [{self.preset}]",
                100 * bad / messages if messages else None,
                wilson_percent(bad, messages) if messages else None,
                messages,
                self.log_location,
            )
        ]
        for key in LANGUAGE_KEYS:
            if key in self.summary:
                s = self.summary[key]
                metric = f"{key} [{self.preset}]"
                rows.append(
                    GapRow(self.label, DIAGNOSTIC, metric, s.mean, None, s.n, self.log_location, "")
                )
        return rows

    def outcomes(self) -> dict[str, dict[str, bool]]:
        return {self.metric("ZSCT"): dict(self.query)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "preset": self.preset,
            "listener": self.listener,
            "speaker": self.speaker,
            "model": self.model,
            "log": self.log_location,
            "status": self.status,
            "per_seed": self.per_seed,
            "summary": {
                key: {"mean": s.mean, "sd": s.sd, "n": s.n} for key, s in self.summary.items()
            },
            "notes": self.notes,
            "answers": self.answers,
            "context_cut": {"games": self.cut[0], "episodes": self.cut[1], "of": self.episodes},
        }


def constant_answer_note(role: str, answers: dict[str, int]) -> str | None:
    """The note for a deciding listener that gave every query game (more than one) the same
    answer (None otherwise; all unparsed is the unparsed count's to say): its ZSCT is that
    answer's share of the games, not a convention learnt."""
    given = {word: n for word, n in answers.items() if n}
    if len(given) != 1 or "unparsed" in given:
        return None
    ((word, count),) = given.items()
    if count < 2:
        return None
    if role == "listener":
        return (
            f"the listener answered every query game ({count}) with {word}: "
            "its ZSCT is that answer's share of the games, not evidence of learning a convention"
        )
    return (
        f"the rule listener answered every query game ({count}) with {word}: the "
        "speaker's messages gave it no convention to decode (ZSCT is that answer's share)"
    )


def verdict(summary: S2BRunSummary, row: GapRow) -> str:
    """Chance or not, for the report's first table, from the pooled query games' Wilson
    interval of ZSCT against 50 % (adj-ZSCT's 0): at chance whenever the interval covers it,
    and whatever the interval, a listener that gave every game one answer is at chance."""
    n = len(summary.query)
    given = [word for word, count in summary.answers.items() if count]
    if not n:
        return ""
    if given == ["unparsed"]:
        return "no answer parsed"
    if len(given) == 1:
        return f"at chance: every answer '{given[0]}'"
    low, high = wilson_percent(sum(summary.query.values()), n)
    chance = "0" if "adj-ZSCT" in row.metric else "50 %"
    if low > 50:
        return f"above chance (CI excludes {chance})"
    if high < 50:
        return "below chance (ZSCT's CI under 50 %)"
    return f"at chance (CI covers {chance})"


def summarize(log: EvalLog) -> S2BRunSummary:
    """Per-seed values from each sample's score; failed samples are listed with their error."""
    require_task(log, TASK)
    info = run_info(log)
    role = str(info.task_args.get("role", "listener"))
    keys = SPEAKER_SCORE_KEYS if role == "speaker" else SCORE_KEYS
    rows: list[dict[str, Any]] = []
    query: dict[str, bool] = {}
    notes: list[str] = []
    malformed = [0, 0]
    cut = [0, 0]
    decisions: Counter[bool | None] = Counter()
    for sample in counted_samples(log):
        with malformed_sample(log, sample):
            seed = cast(EpisodeMetadata, sample.metadata).get("seed")
            row: dict[str, Any] = {"seed": seed}
            score = sample_score(sample)
            if score is not None and isinstance(score.value, dict):
                row.update({key: score.value[key] for key in keys})
                if role == "speaker":
                    own = [g for g in sample.store.get("games", []) if not g["exemplar"]]
                    malformed[0] += sum(g["problem"] is not None for g in own)
                    malformed[1] += len(own)
                beyond = beyond_context(sample.store.get("games", []))
                if beyond:
                    cut[0] += len(beyond)
                    cut[1] += 1
                    notes.append(
                        f"seed {seed}: {len(beyond)} games (from game {beyond[0]} on) did not fit "
                        "the model's context window; their empty replies count as unparsed. Use "
                        "a model with a longer context, or fewer games or tokens per game"
                    )
                for game in sample.store.get("games", []):
                    if game["phase"] == "query":
                        query[f"seed-{seed}/game-{game['index']}"] = (
                            game["flexible"] == game["same"]
                        )
                        decisions[game["flexible"]] += 1
            else:
                row["error"] = sample.error.message if sample.error else "not scored"
            rows.append(row)
    answers = {word: decisions[said] for word, said in ANSWER_WORDS.items()}
    constant = constant_answer_note(role, answers)
    notes += [constant] if constant else []
    scored = [r for r in rows if "error" not in r]
    summary = {key: SeedSummary.of([r[key] for r in scored]) for key in keys} if scored else {}
    if summary:  # headline adj-ZSCT is adj(mean ZSCT); per-seed rows keep their own values
        summary["adj_zsct"] = summary["zsct"].adjusted()
        summary["adj_zsct_strict"] = summary["zsct_strict"].adjusted()
    notes += _not_held_out(log, [int(r["seed"]) for r in rows if r["seed"] is not None])
    return S2BRunSummary(
        preset=str(info.task_args.get("preset", "")),
        listener=str(info.task_args.get("listener", "")),
        model=info.model,
        log_location=info.location,
        status=info.status,
        per_seed=rows,
        summary=summary,
        query=query,
        notes=notes,
        role=role,
        speaker=str(info.task_args.get("speaker", "lm")),
        malformed=(malformed[0], malformed[1]),
        answers=answers,
        cut=(cut[0], cut[1]),
    )


def _not_held_out(log: EvalLog, seeds: list[int]) -> list[str]:
    """A steered run that evaluated episodes its direction was read from says so."""
    run = cast(RunMetadata, log.eval.metadata or {})
    steering = run.get("steering")
    if not steering or not steering.get("extraction"):
        return []
    extraction = Extraction.from_json(steering["extraction"])
    overlap = seed_overlap(extraction, seeds, run.get("preset"), run.get("config"))
    if not overlap:
        return []
    return [
        f"steered on episodes the direction was extracted from (seeds {sorted(overlap)}): not "
        "held out; extract with the default seeds (gapscope steer extract) or evaluate others"
    ]


@dataclass(frozen=True)
class Axes:
    """One model's two S2B axes on one preset: adj-ZSCT as listener (receptivity) and as
    speaker (constructivity), with the speaker's language measures beside them."""

    model: str
    preset: str
    receptivity: GapRow
    constructivity: GapRow
    language: dict[str, float]


def axes(summaries: Sequence[S2BRunSummary]) -> list[Axes]:
    """Every (model, preset) that has both a listener and a speaker run, in first-seen order.

    Pairing is by the label the rows carry, so the reference runs ("rule listener", "rule
    speaker") stand alone: the axes compare one system in both seats.
    """
    seats: dict[tuple[str, str], dict[str, S2BRunSummary]] = {}
    for s in summaries:
        if s.query:
            seats.setdefault((s.label, s.preset), {})[s.role] = s
    out = []
    for (model, preset), both in seats.items():
        if {"listener", "speaker"} <= set(both):
            speaker = both["speaker"]
            out.append(
                Axes(
                    model,
                    preset,
                    both["listener"].adjusted_row(),
                    speaker.adjusted_row(),
                    {k: speaker.summary[k].mean for k in LANGUAGE_KEYS if k in speaker.summary},
                )
            )
    return out


def read(path: Path | str) -> S2BRunSummary:
    """Read and summarize one S2B-LM log."""
    return summarize(read_log(path, task=TASK))
