"""OracleLadder: milestone families, oracle probes, a symbolic verifier and the gap taxonomy.

Each parent problem carries a fixed roadmap of milestones written by a teacher. The evaluated
model is probed with increasing help (C1 direct, C2 roadmap, C3 roadmap + gold answers) and on
each milestone alone (Stage 0); crossing the two sorts every failure into one of five gaps.
"""
