"""The application: the ``gapscope`` command and everything that runs tasks and reads them back.

The top floor (DESIGN.md: app -> analysis -> diagnostics -> floors); nothing imports it.

* :mod:`.main` mounts the command groups; :mod:`.kit` is what every command shares (the
  ``--json`` envelope, exit codes, the run skeleton, opening ``--model``); :mod:`.options` holds
  the option types several commands take.
* One module per command group: :mod:`.s2b` (``run s2b``, ``episodes``), :mod:`.ladder`,
  :mod:`.onng`, :mod:`.prove`, :mod:`.t2`, :mod:`.steer` (``steer extract``, ``run steer``),
  :mod:`.lean`, :mod:`.stats`, :mod:`.verify`, :mod:`.report` (``report``, ``compare``).
* Orchestration over several tasks: :mod:`.sweep` (the steering dosage sweep), :mod:`.demo`.

Command modules import Inspect, torch and scipy only inside their commands, so
``gapscope --help`` stays fast.
"""
