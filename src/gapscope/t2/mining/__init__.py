"""Mining a T2 set from a Lean 4 project (``gapscope t2 mine``): trace the project with Lean
(``trace``, or LeanDojo's tracer through ``leandojo``), build the dependency graph (``graph``),
apply the paper's filters and cut the records out (``targets``), write them (``output``), and
optionally describe each target in natural language with a model (``informalize``)."""

__all__: list[str] = []
"""Nothing is re-exported: only ``gapscope.t2`` uses these modules, each by name."""
