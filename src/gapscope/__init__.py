"""gapscope: diagnose where a language model's mathematical reasoning breaks.

The diagnostics live in sub-packages (``s2b`` today); ``models`` reaches models through Inspect
providers, ``stats`` holds the exact statistics. Domain logic never imports Inspect; the
``task`` modules wire it to Inspect's runner.
"""

__version__ = "0.1.0"
