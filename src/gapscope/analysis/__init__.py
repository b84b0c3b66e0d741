"""The one place results are read: Inspect logs -> typed summaries -> gap-profile rows.

* :mod:`.logs` reads a log (task-name check, samples, model, task args, run time) and turns
  every unreadable or wrong-kind log into a :class:`~.logs.LogError` with a message a user can
  act on. No other module calls ``inspect_ai.log.read_eval_log``.
* :mod:`.s2b`, :mod:`.ladder`, :mod:`.onng`, :mod:`.prove` hold each diagnostic's typed summary.
* :mod:`.profile` is the one row shape (:class:`~.profile.GapRow`) that terminal tables,
  ``--json``, the HTML report and ``compare`` all use.
* :mod:`.diagnostics` maps an Inspect task name to its diagnostic; T2 and steering register
  there.
* :mod:`.terminal` prints, :mod:`.compare` pairs two models, :mod:`.report` writes HTML.
"""
