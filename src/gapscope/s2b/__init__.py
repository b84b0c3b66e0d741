"""S2B-LM: meta-referential games that test compositional learning behaviour.

As listener (receptivity), a model must decode a speaker's freshly permuted positional code
from a few supporting games and generalise to held-out combinations (the zero-shot
compositional test, ZSCT). As speaker (constructivity, ``role="speaker"``), it must invent a
code that a rule-based listener learns from the sync rounds, and extend it to held-out
combinations; its messages are also scored with the emergent-language measures.
"""
