"""S2B-LM: meta-referential games that test receptive compositional learning behaviour.

A listener must decode a speaker's freshly permuted positional code from a few supporting
games and generalise to held-out combinations (the zero-shot compositional test, ZSCT).
"""
