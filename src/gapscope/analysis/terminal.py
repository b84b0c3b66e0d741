"""Terminal tables for every diagnostic's summary and the gap profile.

The command modules (``gapscope.app``) only parse arguments; what a run or a report prints lives
here (a comparison's table sits beside it, in :mod:`.compare`), so the same table serves ``run X``
and ``X report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gapscope.analysis.literal import printable
from gapscope.ladder.taxonomy import GAP_ORDER, OUTCOME_ORDER
from gapscope.prove.coherence import Coherence

if TYPE_CHECKING:
    from gapscope.analysis.onng import ONNGSummary
    from gapscope.analysis.profile import GapRow
    from gapscope.analysis.prove import ProveSummary
    from gapscope.analysis.s2b import S2BRunSummary
    from gapscope.stats.quadrant import QuadrantResult
    from gapscope.steer.dosage import CurvePoint, Trend
    from gapscope.t2.audit import Audit


def _styled(text: str, style: str) -> Text:
    """A styled cell or prefix: printed literally on any console (see ``analysis.literal``)."""
    return Text(printable(text), style=style)


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def rate_cell(rate: Mapping[str, Any]) -> str:
    """``hits/pairs (rate)`` of a containment rate (terminal and HTML report)."""
    return f"{rate['hits']}/{rate['pairs']} ({_percent(rate['rate'])})"


def print_rows(rows: Sequence[GapRow], console: Console, title: str = "Gap profile") -> None:
    """The gap-profile rows: one line per (model, diagnostic, metric)."""
    table = Table(title=title)
    for col in ("model", "diagnostic", "metric", "value [95% CI] (n)"):
        table.add_column(col, justify="right" if col.startswith("value") else "left")
    for row in rows:
        model = row.model if row.status == "success" else f"{row.model} (run {row.status})"
        table.add_row(model, row.diagnostic, row.metric, row.cell())
    console.print(table)


def print_dosage(points: Sequence[CurvePoint], trends: Sequence[Trend], console: Console) -> None:
    """A dosage curve's points (mean, CI, incoherent share) and each direction's trend."""
    table = Table(title="Dosage curve (mean ± sd over units, 95% bootstrap CI)")
    columns = ("direction", "alpha", "n", "mean ± sd", "95% CI", "vs baseline", "incoherent")
    for column in (*columns, "extra"):
        table.add_column(column, justify="left" if column == "direction" else "right")
    for p in points:
        drop = "" if p.relative_drop is None else f"{-100 * p.relative_drop:+.0f}%"
        table.add_row(
            p.direction + (" (not held out)" if p.overlaps_extraction else ""),
            f"{p.alpha:g}",
            str(p.n),
            f"{p.mean:.3g} ± {p.sd:.2g}",
            _interval(p.ci_low, p.ci_high, p.n),
            drop,
            f"{100 * p.incoherent:.1f}%",
            " ".join(f"{k} {v:.3g}" for k, v in p.extra.items()),
        )
    console.print(table)
    table = Table(title="Monotonicity (baseline included)")
    for column in ("direction", "Spearman rho", "slope", "slope 95% CI", "points", "dropped"):
        table.add_column(column, justify="left" if column == "direction" else "right")
    for t in trends:
        rho = "n/a (constant)" if t.rho is None else f"{t.rho:.3f}"
        table.add_row(
            t.direction,
            rho,
            "n/a (one alpha)" if t.slope is None else f"{t.slope:.3g}",
            _interval(t.slope_low, t.slope_high),
            str(t.points),
            f"{t.dropped}/{t.resamples}" if t.resamples else "",
        )
    console.print(table)


def _interval(low: float | None, high: float | None, n: int | None = None) -> str:
    """A CI as ``[low, high]``, or why there is none (fewer than two units: no spread)."""
    if low is None or high is None:
        return f"n/a (n = {n}, no CI)" if n is not None and n < 2 else "n/a"
    return f"[{low:.3g}, {high:.3g}]"


def print_funnel(title: str, counts: Mapping[str, int], console: Console) -> None:
    """A stage -> families count table (teacher compilation, the anchor screen)."""
    table = Table(title=title)
    table.add_column("stage")
    table.add_column("families", justify="right")
    for stage, n in counts.items():
        table.add_row(stage, str(n))
    console.print(table)


def print_s2b(summary: S2BRunSummary, console: Console) -> None:
    """Per-seed ZSCT rows and the mean +- sd over seeds (listener or speaker role)."""
    if summary.role == "speaker":
        _print_s2b_speaker(summary, console)
    else:
        table = Table(title=f"S2B-LM {summary.preset} | listener {summary.listener}")
        for column in ("seed", "ZSCT", "adj-ZSCT", "ZSCT strict", "unparsed", "support acc"):
            table.add_column(column, justify="right")
        for row in summary.per_seed:
            if "error" in row:
                table.add_row(str(row["seed"]), _styled(row["error"], "red"), "", "", "", "")
                continue
            table.add_row(
                str(row["seed"]),
                f"{row['zsct']:.1f}",
                f"{row['adj_zsct']:.1f}",
                f"{row['zsct_strict']:.1f}",
                f"{row['unparsed']:.0f}",
                f"{row['support_acc']:.1f}",
            )
        s = summary.summary
        if s:
            keys = ("zsct", "adj_zsct", "zsct_strict", "unparsed", "support_acc")
            table.add_row("mean ± sd", *(str(s[k]) for k in keys))
        console.print(table)
    for note in summary.notes:
        console.print(Text.assemble(_styled("warning:", "yellow"), " ", printable(note)))
    console.print(f"model: {summary.model}  log: {summary.log_location}")


SPEAKER_COLUMNS = {
    "zsct": ("ZSCT", ".1f"),
    "adj_zsct": ("adj-ZSCT", ".1f"),
    "zsct_strict": ("ZSCT strict", ".1f"),
    "malformed": ("malformed %", ".1f"),
    "support_acc": ("support acc", ".1f"),
    "topsim": ("topsim", ".3f"),
    "posdis": ("posdis", ".3f"),
    "bosdis": ("bosdis", ".3f"),
}
"""The speaker role's per-seed columns: score key -> (heading, format)."""


def _print_s2b_speaker(summary: S2BRunSummary, console: Console) -> None:
    """Constructivity per seed: the rule listener's ZSCT on the speaker's messages, the
    malformed share and the language measures, then mean ± sd over seeds."""
    table = Table(
        title=f"S2B-LM {summary.preset} | speaker {summary.speaker} (constructivity, rule listener)"
    )
    table.add_column("seed", justify="right")
    for heading, _ in SPEAKER_COLUMNS.values():
        table.add_column(heading, justify="right")
    for row in summary.per_seed:
        if "error" in row:
            blanks = [""] * (len(SPEAKER_COLUMNS) - 1)
            table.add_row(str(row["seed"]), _styled(row["error"], "red"), *blanks)
            continue
        table.add_row(
            str(row["seed"]), *(format(row[k], spec) for k, (_, spec) in SPEAKER_COLUMNS.items())
        )
    s = summary.summary
    if s:
        table.add_row(
            "mean ± sd",
            *(
                f"{format(s[k].mean, spec)} ± {format(s[k].sd, spec)}"
                for k, (_, spec) in SPEAKER_COLUMNS.items()
            ),
        )
    console.print(table)
    console.print(
        "topsim: Spearman between meaning Hamming and message edit distances; posdis, bosdis: "
        "Chaabouni et al. (2020); all over the speaker's own well-formed messages"
    )


def print_ladder(result: dict[str, Any], console: Console) -> None:
    """The OracleLadder report's tables (``LadderReport.to_dict()``)."""
    models: dict[str, Any] = result["models"]
    outcomes = Table(title=f"OracleLadder outcomes (tau = {result['tau']})")
    outcomes.add_column("model")
    for o in OUTCOME_ORDER:
        outcomes.add_column(o.value, justify="right")
    for col in ("any probe [95% CI]", "Stage 0 pass", "milestones passed", "C1 acc"):
        outcomes.add_column(col, justify="right")
    for name, m in models.items():
        ci = m["any_probe_ci95"]
        interval = "n/a" if ci["low"] is None else f"{ci['low']:.0f}, {ci['high']:.0f}"
        label = name if m["status"] == "success" else f"{name} (run {m['status']})"
        if m.get("families_not_run"):
            label += f" ({m['families_not_run']} families not run)"
        outcomes.add_row(
            label,
            *(str(m["outcomes"][o.value]) for o in OUTCOME_ORDER),
            f"{m['any_probe']}/{m['n_families']} [{interval}]",
            str(m["stage0_pass"]),
            f"{100 * m['milestone_pass_fraction']:.1f}%",
            f"{100 * m['direct_accuracy']:.1f}%",
        )
    console.print(outcomes)

    gaps = Table(title="Five-way gap labels (families not solved directly)")
    gaps.add_column("model")
    for g in GAP_ORDER[1:]:
        gaps.add_column(g.value, justify="right")
    for name, m in models.items():
        gaps.add_row(name, *(str(m["gaps"][g.value]) for g in GAP_ORDER[1:]))
    console.print(gaps)

    controls = Table(title="Families solved per condition (specificity of the help)")
    controls.add_column("model")
    first = next(iter(models.values()))
    for c in first["solved_by_condition"]:
        controls.add_column(c, justify="right")
    for name, m in models.items():
        controls.add_row(name, *(str(n) for n in m["solved_by_condition"].values()))
    console.print(controls)

    tests = [(name, t) for name, m in models.items() for t in m["specificity_tests"]]
    if tests:
        table = Table(title="Matched help vs its control: exact McNemar on per-family outcomes")
        for col in ("model", "matched", "control"):
            table.add_column(col)
        for col in ("families", "matched only", "control only", "p", "Holm p"):
            table.add_column(col, justify="right")
        for name, t in tests:
            table.add_row(
                name,
                t["matched"],
                t["control"],
                str(t["families"]),
                str(t["matched_only"]),
                str(t["control_only"]),
                f"{t['p_value']:.3g}",
                f"{t['p_holm']:.3g}",
            )
        console.print(table)

    contained = [(name, m["containment"]) for name, m in models.items() if m["containment"]]
    if contained:
        matchers = sorted({c.get("match", "token") for _, c in contained})
        table = Table(
            title="Milestone answers in unaided (C1) attempts: own problem vs other problems "
            f"(match: {', '.join(matchers)})"
        )
        for col in ("model", "subset"):
            table.add_column(col)
        for col in ("milestones", "own problem", "other problems"):
            table.add_column(col, justify="right")
        for name, c in contained:
            for subset, s in c["subsets"].items():
                table.add_row(
                    name,
                    subset,
                    str(s["milestones"]),
                    rate_cell(s["own"]),
                    rate_cell(s["control"]),
                )
        console.print(table)

    taus = Table(title="Threshold sensitivity: outcome counts at tau = 1..5")
    taus.add_column("model")
    taus.add_column("tau", justify="right")
    for o in OUTCOME_ORDER:
        taus.add_column(o.value, justify="right")
    for name, m in models.items():
        for t, row in m["tau_sensitivity"].items():
            taus.add_row(name, t, *(str(row[o.value]) for o in OUTCOME_ORDER))
    console.print(taus)

    if result["ranking_stability"]:
        stab = Table(title="Ranking stability: share of family resamples where A beats B")
        for col in ("A", "B", "A beats B", "ties"):
            stab.add_column(col)
        for s in result["ranking_stability"]:
            stab.add_row(s["a"], s["b"], f"{100 * s['a_beats_b']:.0f}%", f"{100 * s['ties']:.0f}%")
        console.print(stab)
    if result["kendall_tau_direct_accuracy_vs_any_probe"] is not None:
        console.print(
            "Kendall tau (C1 accuracy vs any-probe ranking): "
            f"{result['kendall_tau_direct_accuracy_vs_any_probe']:+.2f}"
        )
    anchors = result["kendall_tau_composition_gap_across_anchors"]
    if anchors is not None:
        compared_on = (
            "the models that are neither anchor"
            if anchors["rule"] == "others"
            else "every model, anchors included"
        )
        table = Table(
            title="Composition-gap ranking agreement between anchors (Kendall tau-b, "
            f"compared on {compared_on})"
        )
        for col in ("anchor A", "anchor B", "models compared", "tau"):
            table.add_column(col)
        for pair in anchors["pairs"]:
            tau = "undefined" if pair["tau"] is None else f"{pair['tau']:+.2f}"
            table.add_row(pair["a"], pair["b"], ", ".join(pair["compared"]), tau)
        console.print(table)
        ranks = Table(title="Composition-gap count of each model (columns) on each anchor's screen")
        ranks.add_column("anchor")
        ranks.add_column("screened", justify="right")
        for model in anchors["rankings"]:
            ranks.add_column(model, justify="right")
        for anchor, row in anchors["rankings"].items():
            ranks.add_row(anchor, str(anchors["screened"][anchor]), *(f"{row[m]:.0f}" for m in row))
        console.print(ranks)
        if anchors["mean"] is not None:
            console.print(f"mean over anchor pairs: {anchors['mean']:+.2f}")
    if result["transition_matrix"]:
        names = list(models)
        trans = Table(title=f"Transitions {names[0]} (rows) -> {names[1]} (columns)")
        trans.add_column("")
        for o in OUTCOME_ORDER:
            trans.add_column(o.value, justify="right")
        for row_name, row in result["transition_matrix"].items():
            trans.add_row(row_name, *(str(row[o.value]) for o in OUTCOME_ORDER))
        console.print(trans)


def print_agreement(result: dict[str, Any], console: Console) -> None:
    """``ladder agree``: outcome and label agreement, milestones of both family sets."""
    a, b = result["a"], result["b"]
    console.print(
        f"{result['matched_families']} families in both {a} and {b}"
        f" ({len(result['only_a'])} only in {a}, {len(result['only_b'])} only in {b})"
    )
    table = Table(title=f"Per-family outcome agreement (solved = >= {result['tau']} correct)")
    table.add_column("condition")
    for col in ("agree", "share", "both", f"{a} only", f"{b} only", "neither"):
        table.add_column(col, justify="right")
    for o in result["outcome_agreement"]:
        table.add_row(
            o["condition"],
            f"{o['agree']}/{o['families']}",
            _percent(o["share"]),
            *(str(o[k]) for k in ("both", "only_a", "only_b", "neither")),
        )
    console.print(table)
    table = Table(title="Five-way label agreement (families neither solves directly)")
    table.add_column("milestone test")
    for col in ("agree", "share", "disagree, same outcome"):
        table.add_column(col, justify="right")
    for la in result["label_agreement"]:
        table.add_row(
            "every milestone" if la["milestone_test"] == "strict" else "at least half",
            f"{la['agree']}/{la['labelled']}",
            _percent(la["share"]),
            str(la["disagree_same_outcome"]),
        )
    console.print(table)
    table = Table(title="Milestones of each family set (compare labels at matched granularity)")
    table.add_column("family set")
    for col in ("tested", "per family", "passed", "fraction passed", "mean per family"):
        table.add_column(col, justify="right")
    for name, m in result["milestones"].items():
        table.add_row(
            name,
            str(m["tested"]),
            f"{m['mean_tested_per_family']:.1f}",
            str(m["passed"]),
            _percent(m["fraction_passed"]),
            _percent(m["mean_fraction_passed_per_family"]),
        )
    console.print(table)


def print_onng(summary: ONNGSummary, console: Console) -> None:
    """The per-lambda table and the tests of each model."""
    for model, m in summary.models.items():
        table = Table(title=f"O-NNG {model}")
        for col in ("lambda", "n", "correct rate", "mean s", "mean tokens", "parse", "verdicts"):
            table.add_column(col, justify="right")
        for row in m.by_lam:
            parse = ", ".join(f"{k} {v}" for k, v in row.parse_status.items())
            verdicts = ", ".join(f"{k} {v}" for k, v in row.verdicts.items())
            table.add_row(
                f"{row.lam:g}",
                str(row.n),
                _fmt(row.correct_rate),
                _fmt(row.mean_inference_s),
                _fmt(row.mean_output_tokens, 4),
                parse,
                verdicts,
            )
        console.print(table)
        tests = Table(title=f"{model}: effect of lambda")
        for col in ("outcome", "ANOVA F", "ANOVA p", "Kruskal H", "Kruskal p"):
            tests.add_column(col, justify="right")
        for outcome, t in m.tests.items():
            tests.add_row(
                outcome,
                _fmt(t.anova.statistic if t.anova else None),
                _fmt(t.anova.p_value if t.anova else None),
                _fmt(t.kruskal.statistic if t.kruskal else None),
                _fmt(t.kruskal.p_value if t.kruskal else None),
            )
        console.print(tests)


def print_prove(summaries: Sequence[ProveSummary], console: Console, per_problem: bool) -> None:
    """pass@k and coherence tables; with ``per_problem`` also each problem's n, c, pass@k."""
    ks = list(dict.fromkeys(k for s in summaries for k in s.pass_at_k))
    passk = Table(title="Whole-proof pass@k (unbiased, mean over problems)")
    for col in ("model", "problems", "attempts", "server errors"):
        passk.add_column(col, justify="left" if col == "model" else "right")
    for k in ks:
        passk.add_column(f"pass@{k}", justify="right")
    for s in summaries:
        passk.add_row(
            s.model,
            str(len(s.problems)),
            str(s.attempts),
            str(s.server_errors),
            *(_percent(s.pass_at_k.get(k)) for k in ks),
        )
    console.print(passk)
    classes = [c for c in Coherence if c is not Coherence.SERVER_ERROR]
    coherence = Table(title="Coherence of attempts (server errors excluded)")
    coherence.add_column("model")
    for c in classes:
        coherence.add_column(c.value, justify="right")
    coherence.add_column("coherent", justify="right")
    for s in summaries:
        coherence.add_row(
            s.model,
            *(f"{s.coherence[c]} ({_percent(s.coherence_fraction(c))})" for c in classes),
            _percent(s.coherent_fraction),
        )
    console.print(coherence)
    for s in summaries:
        for note in s.notes:
            console.print(Text.assemble(_styled(f"{s.model}:", "yellow"), " ", printable(note)))
    if per_problem:
        for s in summaries:
            table = Table(title=f"Per-problem pass@k: {s.model}")
            table.add_column("problem")
            for col in ("n", "c", *(f"pass@{k}" for k in s.ks)):
                table.add_column(col, justify="right")
            for p in s.problems:
                table.add_row(
                    p.name,
                    str(p.n),
                    str(p.c),
                    *(_percent(s.problem_pass_at_k(p, k)) for k in s.ks),
                )
            console.print(table)


def print_t2_audit(data: str, result: Audit, profile: Mapping[str, Any], console: Console) -> None:
    """Records per defect class (first five ids each) and the successor profile."""
    table = Table(title=f"T2 audit of {data}: {len(result.valid)} of {result.total} records valid")
    table.add_column("defect")
    table.add_column("records", justify="right")
    table.add_column("ids")
    ids = result.ids()
    for defect, count in result.counts().items():
        shown = ids.get(defect, [])
        more = f" (+{len(shown) - 5} more)" if len(shown) > 5 else ""
        table.add_row(defect, str(count), ", ".join(shown[:5]) + more)
    console.print(table)
    console.print(f"skipped by run t2: {result.skipped()} of {result.total} records")
    console.print("funnel: " + " -> ".join(f"{k} {v}" for k, v in result.funnel().items()))
    for key, value in profile.items():
        console.print(f"{key.replace('_', ' ')}: {value}")


def t2_pct(ci: dict[str, Any] | None) -> str:
    if ci is None:
        return "n/a"
    if ci["low"] is None:  # one record: an estimate without an interval
        return f"{100 * ci['estimate']:.1f} [n/a]"
    return f"{100 * ci['estimate']:.1f} [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}]"


T2_OUTCOMES = {
    "renamed": "renamed",
    "no_answer": "no answer",
    "forbidden_command": "forbidden",
    "server_error": "server err",
    "broke_check": "broke check",
    "missing": "missing",
}
"""The outcomes counted per context, with their column names."""


def t2_unit(summary: Mapping[str, Any]) -> str:
    """What a T2 run's denominators count: file rows under the released rules, else records."""
    return "rows" if summary.get("rules") == "t2" else "records"


def t2_contexts(summary: Mapping[str, Any]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The per-context table of a T2 run (terminal and HTML report): its column names, and per
    context compile, TA, strict, graded, precision, the Hard subset and the outcome counts."""
    unit = t2_unit(summary)
    columns: tuple[str, ...] = (
        *("context", unit, "compile", "TA", "TA strict", "graded TA", "P(TA|compile)"),
        *(f"Hard {unit}", "Hard compile", "Hard TA", "Hard P(TA|compile)"),
        *T2_OUTCOMES.values(),
    )
    rows = []
    for name, c in summary["contexts"].items():
        hard = c.get("hard", {"records": 0, "compile": None, "ta": None})
        rows.append(
            (name, str(c.get(unit, c["records"])))
            + tuple(t2_pct(c[m]) for m in ("compile", "ta", "ta_strict", "graded"))
            + (t2_pct(c["compile_precision"]), str(hard.get(unit, hard["records"])))
            + (t2_pct(hard["compile"]), t2_pct(hard["ta"]), t2_pct(hard.get("compile_precision")))
            + tuple(str(c["outcomes"][o]) for o in T2_OUTCOMES)
        )
    return columns, rows


def t2_bleu_cells(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """One BLEU bucket: its label, samples, TA % and wrong %."""
    return row["bleu"], str(row["samples"]), f"{100 * row['ta']:.1f}", f"{100 * row['wrong']:.1f}"


def t2_bleu_caption(bleu: Mapping[str, Any]) -> str:
    """Which BLEU made the buckets (its sacrebleu signature), its mean, and T2's own per-record
    BLEU-4 and exact match, the numbers its paper reports."""
    text = (
        f"buckets by the {bleu.get('metric', 'sacrebleu')} BLEU ({bleu['signature']}): "
        f"mean {bleu['mean']:.1f} over {bleu['samples']} samples"
    )
    if bleu.get("t2_bleu4") is not None:
        text += (
            f"; T2's own per-record BLEU-4 {bleu['t2_bleu4']:.2f}, "
            f"exact match {100 * bleu['t2_exact_match']:.2f} %"
        )
    return text


def print_t2(summary: dict[str, Any], console: Console) -> None:
    """Compile vs TA vs strict vs graded per context, the Hard subset's compile and TA, TA by
    successors, what was skipped."""
    unit = t2_unit(summary)
    shown = "rows (the released evaluator's rules)" if unit == "rows" else unit
    table = Table(title=f"T2 {summary['model']} (95% bootstrap CIs over {shown})")
    columns, rows = t2_contexts(summary)
    for col in columns:
        table.add_column(col, justify="left" if col == "context" else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for name, c in summary["contexts"].items():
        by = Table(title=f"{name}: TA by number of successors")
        for col in ("successors", "records", "samples", "TA", "graded TA"):
            by.add_column(col, justify="right")
        for row in c["ta_by_successors"]:
            by.add_row(
                str(row["successors"]),
                str(row["records"]),
                str(row["samples"]),
                f"{100 * row['ta']:.1f}",
                "n/a" if row["graded"] is None else f"{100 * row['graded']:.1f}",
            )
        console.print(by)
        print_t2_bleu(name, c.get("bleu"), console)
    skipped = ", ".join(f"{reason} {n}" for reason, n in summary["skipped"].items() if n)
    console.print(
        f"rules: {summary.get('rules', 'gapscope')}; records: {summary['records']}, "
        f"evaluated: {summary['evaluated_records']}" + (f"; skipped: {skipped}" if skipped else "")
    )
    if "ground_truth_invalid" in summary:
        invalid = summary["ground_truth_invalid"]
        console.print(f"ground truth fails on {len(invalid)} record(s): {', '.join(invalid)}")
    console.print(f"log: {summary['log']}")


def print_t2_bleu(context: str, bleu: Mapping[str, Any] | None, console: Console) -> None:
    """TA per BLEU bucket: the paper's contrast (high BLEU, still semantically wrong)."""
    if not bleu or not bleu["by_bucket"]:
        return
    table = Table(title=f"{context}: TA by BLEU of the answer against the ground truth")
    for col in ("BLEU", "samples", "TA", "wrong"):
        table.add_column(col, justify="right")
    for row in bleu["by_bucket"]:
        table.add_row(*t2_bleu_cells(row))
    console.print(table)
    console.print(t2_bleu_caption(bleu))


def print_quadrant(result: QuadrantResult, x_col: str, y_col: str, console: Console) -> None:
    """The 2 x 2 median-split table, the forbidden cell and both p-values."""
    # Column names are user data: the console (a LiteralConsole) prints them as they are.
    table = Table(title=f"Quadrant test: {y_col} vs {x_col} (median split)")
    table.add_column("")
    table.add_column(f"low {x_col} (<= {result.x_median:g})", justify="right")
    table.add_column(f"high {x_col} (> {result.x_median:g})", justify="right")
    table.add_row(
        f"high {y_col} (> {result.y_median:g})",
        f"{result.low_x_high_y} (forbidden)",
        str(result.high_x_high_y),
    )
    table.add_row(
        f"low {y_col} (<= {result.y_median:g})",
        str(result.low_x_low_y),
        str(result.high_x_low_y),
    )
    console.print(table)
    console.print(f"n = {result.n} models; forbidden cell (high Y, low X) = {result.forbidden}")
    if result.forbidden_labels:
        console.print("forbidden-cell models: " + ", ".join(result.forbidden_labels), markup=False)
    console.print(
        f"p (exact, {result.p_method} over {result.n_placements} placements) = {result.p_exact:.6g}"
    )
    console.print(f"p (hypergeometric cross-check) = {result.p_hypergeom:.6g}")


PLAN_COLUMNS = (
    ("model", "model"),
    ("diagnostic", "diagnostic"),
    ("task", "label"),
    ("samples", "samples"),
    ("generations", "generations"),
    ("max tokens", "max_tokens"),
    ("token budget", "token_budget"),
    ("Lean checks", "lean_checks"),
)
"""A study plan's columns (``gapscope profile``): heading and the plan row's key."""
PLAN_TEXT = frozenset({"model", "diagnostic", "label"})


def print_plan(plan: dict[str, Any], console: Console) -> None:
    """The plan as a table, then what is skipped (once per diagnostic and reason) and why."""
    table = Table(title="Plan")
    for column, key in PLAN_COLUMNS:
        table.add_column(column, justify="left" if key in PLAN_TEXT else "right")
    totals = plan["totals"]
    rows = [
        *plan["tasks"],
        {"model": "total", "diagnostic": "", "label": f"{totals['tasks']} tasks"} | totals,
    ]
    for row in rows:
        table.add_row(
            *(
                str(row[key]) if key in PLAN_TEXT else f"{row[key]:,}" if key in row else ""
                for _, key in PLAN_COLUMNS
            )
        )
    console.print(table)
    by_reason: dict[str, tuple[list[str], list[str]]] = {}
    for skipped in plan["skipped"]:
        diagnostics, models = by_reason.setdefault(skipped["reason"], ([], []))
        for value, seen in ((skipped["diagnostic"], diagnostics), (skipped["model"], models)):
            if value not in seen:
                seen.append(value)
    for reason, (diagnostics, models) in by_reason.items():
        console.print(
            f"skipped: {', '.join(diagnostics)} ({', '.join(models)}): {reason}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for line in plan.get("time", {}).get("lines", []):  # the estimated wall time per model
        console.print(line, markup=False, highlight=False, soft_wrap=True)
