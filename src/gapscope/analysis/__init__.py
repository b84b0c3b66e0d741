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
