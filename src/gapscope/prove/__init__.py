"""Whole-proof generation pass@k on miniF2F-style problems, with coherence classes.

Domain logic (problems, extraction, coherence) is plain Python; ``task`` wires it to Inspect
and a Lean backend, ``analysis`` turns logs into pass@k and coherence tables.
"""
