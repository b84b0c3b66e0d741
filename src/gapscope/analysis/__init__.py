"""The one place results are read: Inspect logs -> typed summaries -> gap-profile rows.

* :mod:`.logs` reads a log (task-name check, samples, model, task args, run time) and turns
  every unreadable or wrong-kind log into a :class:`~.logs.LogError` with a message a user can
  act on. No other module calls ``inspect_ai.log.read_eval_log``.
* :mod:`.s2b`, :mod:`.ladder`, :mod:`.onng`, :mod:`.prove`, :mod:`.t2` hold each diagnostic's
  typed summary, read through the keys the diagnostic declares in its ``contract`` module;
  :mod:`.ladder_panel` reads the OracleLadder authors' released results into the same summary.
* :mod:`.profile` is the one row shape (:class:`~.profile.GapRow`) that terminal tables,
  ``--json``, the HTML report and ``compare`` all use.
* :mod:`.spec` is what a diagnostic is to gapscope (:class:`~.spec.DiagnosticSpec`: tasks,
  budgets, readers, figures, report sections); :mod:`.table` is the table of them (the
  built-ins and the ``gapscope.diagnostics`` entry points), the one place a diagnostic is
  declared. :mod:`.diagnostics` finds a log's reader there;
  :func:`~.diagnostics.present` is what ``run X`` shows of the log it just wrote.
* :mod:`.view` pairs a summary with its rows, ``--json`` details and printer. Each diagnostic's
  terminal tables sit beside its summary (:mod:`.s2b_tables`, :mod:`.ladder_tables`,
  :mod:`.onng_tables`, :mod:`.prove_tables`, :mod:`.t2_tables`) and take it typed;
  :mod:`.terminal` holds the tables of no one diagnostic (gap profile, plan, funnels, quadrant,
  dosage) and the cell formats they share; :mod:`.steering` regroups steered runs into dosage
  curves; :mod:`.compare` pairs two models; :mod:`.figures`, :mod:`.report_sections` and
  :mod:`.report` write HTML.

The commands that call all this live in :mod:`gapscope.app`; nothing here imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.analysis import ladder, ladder_review, onng, prove
    from gapscope.analysis.compare import ComparisonError, compare_runs, print_comparison
    from gapscope.analysis.diagnostics import (
        LoadedLog,
        LoadedLogs,
        load_all,
        load_standing,
        loaded_from,
        present,
    )
    from gapscope.analysis.figures import dosage_figure, quadrant_scatter, save_figure
    from gapscope.analysis.glance import glance_dict, print_glance
    from gapscope.analysis.ladder import ModelRun, compile_funnel
    from gapscope.analysis.ladder_budgets import (
        BudgetError,
        compare_budgets,
        print_budgets,
        read_budget_run,
    )
    from gapscope.analysis.ladder_hard100 import (
        hard100_details,
        print_hard100,
        read_hard100_log,
        read_hard100_panel,
    )
    from gapscope.analysis.ladder_panel import read_panels
    from gapscope.analysis.ladder_review import review_cases, review_view, summarize
    from gapscope.analysis.ladder_tables import print_agreement
    from gapscope.analysis.literal import LiteralConsole, printable
    from gapscope.analysis.logs import (
        CUT_OFF,
        LogError,
        error_cause,
        expand_log_paths,
        log_path,
        read_log,
    )
    from gapscope.analysis.report import write_report
    from gapscope.analysis.s2b_table1 import TABLE1_PRESETS, table1_view
    from gapscope.analysis.spec import BUDGETS, DiagnosticSpec, Inputs, NamedFigure, SpecError
    from gapscope.analysis.steering import (
        SWEEP_KEY,
        DosageCurve,
        build_curve,
        dosage_rows,
        is_steering_run,
    )
    from gapscope.analysis.t2_tables import print_t2_audit
    from gapscope.analysis.table import BUILTINS, S2B, lean_backed, load_problems, spec_named, specs
    from gapscope.analysis.terminal import (
        print_dosage,
        print_funnel,
        print_plan,
        print_quadrant,
        print_rows,
    )
    from gapscope.analysis.view import View, ViewOptions, ladder_view, onng_view, prove_view

__all__ = [
    "BUDGETS",
    "BUILTINS",
    "CUT_OFF",
    "S2B",
    "SWEEP_KEY",
    "TABLE1_PRESETS",
    "BudgetError",
    "ComparisonError",
    "DiagnosticSpec",
    "DosageCurve",
    "Inputs",
    "LiteralConsole",
    "LoadedLog",
    "LoadedLogs",
    "LogError",
    "ModelRun",
    "NamedFigure",
    "SpecError",
    "View",
    "ViewOptions",
    "build_curve",
    "compare_budgets",
    "compare_runs",
    "compile_funnel",
    "dosage_figure",
    "dosage_rows",
    "error_cause",
    "expand_log_paths",
    "glance_dict",
    "hard100_details",
    "is_steering_run",
    "ladder",
    "ladder_review",
    "ladder_view",
    "lean_backed",
    "load_all",
    "load_problems",
    "load_standing",
    "loaded_from",
    "log_path",
    "onng",
    "onng_view",
    "present",
    "print_agreement",
    "print_budgets",
    "print_comparison",
    "print_dosage",
    "print_funnel",
    "print_glance",
    "print_hard100",
    "print_plan",
    "print_quadrant",
    "print_rows",
    "print_t2_audit",
    "printable",
    "prove",
    "prove_view",
    "quadrant_scatter",
    "read_budget_run",
    "read_hard100_log",
    "read_hard100_panel",
    "read_log",
    "read_panels",
    "review_cases",
    "review_view",
    "save_figure",
    "spec_named",
    "specs",
    "summarize",
    "table1_view",
    "write_report",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "prove": ".prove",
        "onng": ".onng",
        "ladder_review": ".ladder_review",
        "ladder": ".ladder",
        "BUDGETS": ".spec",
        "BUILTINS": ".table",
        "ComparisonError": ".compare",
        "DiagnosticSpec": ".spec",
        "CUT_OFF": ".logs",
        "DosageCurve": ".steering",
        "Inputs": ".spec",
        "LiteralConsole": ".literal",
        "LoadedLog": ".diagnostics",
        "LoadedLogs": ".diagnostics",
        "LogError": ".logs",
        "ModelRun": ".ladder",
        "NamedFigure": ".spec",
        "S2B": ".table",
        "SWEEP_KEY": ".steering",
        "SpecError": ".spec",
        "View": ".view",
        "ViewOptions": ".view",
        "build_curve": ".steering",
        "compare_runs": ".compare",
        "compile_funnel": ".ladder",
        "dosage_figure": ".figures",
        "dosage_rows": ".steering",
        "error_cause": ".logs",
        "is_steering_run": ".steering",
        "expand_log_paths": ".logs",
        "ladder_view": ".view",
        "lean_backed": ".table",
        "load_all": ".diagnostics",
        "load_problems": ".table",
        "load_standing": ".diagnostics",
        "loaded_from": ".diagnostics",
        "log_path": ".logs",
        "onng_view": ".view",
        "present": ".diagnostics",
        "print_agreement": ".ladder_tables",
        "print_comparison": ".compare",
        "print_dosage": ".terminal",
        "print_funnel": ".terminal",
        "glance_dict": ".glance",
        "print_glance": ".glance",
        "print_plan": ".terminal",
        "print_quadrant": ".terminal",
        "print_rows": ".terminal",
        "print_t2_audit": ".t2_tables",
        "table1_view": ".s2b_table1",
        "TABLE1_PRESETS": ".s2b_table1",
        "printable": ".literal",
        "prove_view": ".view",
        "quadrant_scatter": ".figures",
        "read_log": ".logs",
        "BudgetError": ".ladder_budgets",
        "compare_budgets": ".ladder_budgets",
        "hard100_details": ".ladder_hard100",
        "print_budgets": ".ladder_budgets",
        "read_budget_run": ".ladder_budgets",
        "print_hard100": ".ladder_hard100",
        "read_hard100_log": ".ladder_hard100",
        "read_hard100_panel": ".ladder_hard100",
        "read_panels": ".ladder_panel",
        "review_cases": ".ladder_review",
        "review_view": ".ladder_review",
        "save_figure": ".figures",
        "spec_named": ".table",
        "specs": ".table",
        "summarize": ".ladder_review",
        "write_report": ".report",
    },
)
