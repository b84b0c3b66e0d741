"""Lean 4 checking layer: backends behind one interface, typed verdicts.

Backends: a pool of local Lean REPL processes in a user's Lean project, or a
kimina-lean-server over HTTP. A proof is valid only with no errors, no sorries and only the
standard axioms.
"""
