"""gapscope: diagnose where a language model's mathematical reasoning breaks.

The diagnostics live in sub-packages (``s2b``, ``ladder``, ``onng``, ``prove``, ``t2``, and
``steer`` for steering); ``analysis/table.py`` lists them, one ``DiagnosticSpec`` each, and
another package adds one through the ``gapscope.diagnostics`` entry point (docs/extending.md).
``models`` reaches models through Inspect providers, ``lean`` checks proofs, ``verify``
grades math answers, ``stats`` holds the exact statistics, ``analysis`` reads the logs and
``app`` is the command line. Domain logic never imports Inspect; the ``task`` modules wire it
to Inspect's runner.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
