"""Parity: is a small number even or odd? A diagnostic small enough to read in one sitting.

:mod:`.task` is the Inspect task (it imports nothing of gapscope); :mod:`.diagnostic` is
what gapscope reads: the summary of a log, its view and the spec gapscope's table lists. The
package's face (``__all__``) is the task, which the reader imports from here: moved into
gapscope, other packages import a package's names through its face (tests/test_faces.py).
"""

from gapscope_parity.task import TASK, parity

__all__ = ["TASK", "parity"]
