"""Parity: is a small number even or odd? A diagnostic small enough to read in one sitting.

:mod:`.task` is the Inspect task (gapscope's steering solver aside, plain Inspect);
:mod:`.diagnostic` is the spec gapscope's table lists: its reader, plan and steering target. The
package's face (``__all__``) is the task, which the reader imports from here: moved into
gapscope, other packages import a package's names through its face (tests/test_faces.py).
"""

from gapscope_parity.task import TASK, parity

__all__ = ["TASK", "parity"]
