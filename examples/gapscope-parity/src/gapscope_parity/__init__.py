"""Parity: is a small number even or odd? A diagnostic small enough to read in one sitting.

:mod:`.task` is the Inspect task (it imports nothing of gapscope); :mod:`.diagnostic` is
what gapscope reads: the summary of a log, its view and the spec gapscope's table lists.
"""
