"""The application: the ``gapscope`` command and everything that runs tasks and reads them back.

The top floor (DESIGN.md: app -> analysis -> diagnostics -> floors); nothing imports it.

* :mod:`.main` mounts the command groups; :mod:`.kit` is what every command shares (the
  ``--json`` envelope, exit codes, the run skeleton, opening ``--model``); :mod:`.options` holds
  the option types several commands take; :mod:`.csv_columns` reads a per-model CSV.
* One module per command group: :mod:`.s2b` (``run s2b``, ``episodes``), :mod:`.ladder`,
  :mod:`.onng`, :mod:`.prove`, :mod:`.t2` and :mod:`.t2_mine` (``t2 mine``), :mod:`.steer`
  (``steer extract``, ``run steer``), :mod:`.lean` and :mod:`.workspace_setup` (``lean
  setup``), :mod:`.stats`, :mod:`.verify`, :mod:`.doctor`, :mod:`.report` (``report``,
  ``compare``), :mod:`.profile` (``profile``: the diagnostics it plans come from
  :mod:`gapscope.analysis.table`).
* Orchestration over several tasks: :mod:`.study` (a profile's plan and its one
  ``eval_set``), :mod:`.preflight` (served models answer first; time estimates),
  :mod:`.endings` (how a run ended, read from its logs), :mod:`.sweep` (the steering dosage
  sweep), :mod:`.demo`.

Command modules import Inspect, torch and scipy only inside their commands, so
``gapscope --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.app.verify import verify_command

__all__ = ["verify_command"]

__getattr__, __dir__ = lazy_face(
    __name__,
    {"verify_command": ".verify"},
)
