"""O-NNG: the obfuscated natural number game.

Our own Peano-arithmetic problem set in plain Lean 4 (``problems/``), character-level name
obfuscation at noise level lambda, prompts, an Inspect task checked by a Lean backend, and the
statistics of correct rate and latency across noise levels.
"""
