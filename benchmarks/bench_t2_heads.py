"""Declaration heads on a 56 KB hostile reply vs a benign reply of the same size.

``python -m benchmarks.bench_t2_heads``: the hostile replies are one fenced block of
``"open a in " * n + "zzz"`` (the chain on which T2's old head regex backtracked
exponentially: 0.8 s at n = 18, over 20 s at n = 24) and one of ``"instance (priority "``
repeated (each head's unclosed group, which a scan per head would read to the end: quadratic),
the benign one a block of ordinary theorems, all 56 KB. Each is read by T2's
``extract_answer`` (the splitter) and by the soundness rule's ``prepare`` (the axiom
queries), which share ``gapscope.lean.heads``. Target: each hostile reply at most 3x the
benign one (each is one linear pass over tokens); required, T2 reads every reply so.
"""

from __future__ import annotations

import time

from benchmarks.targets import Target, at_most
from gapscope.lean.soundness import prepare
from gapscope.t2.extract import extract_answer, last_lean_block
from gapscope.t2.successors import TargetIdentity

SIZE = 56_000
TARGET = TargetIdentity("target", "theorem")


def _replies() -> tuple[list[str], str]:
    hostile = ["open a in " * (SIZE // 10) + "zzz", "instance (priority " * (SIZE // 19)]
    theorem = "theorem t{k} (n : Nat) : n + {k} = {k} + n := by\n  omega\n\n"
    benign = ""
    k = 0
    while len(benign) < SIZE:
        benign += theorem.format(k=k)
        k += 1
    fence = "```lean\n{}\n```".format
    return [fence(h) for h in hostile], fence(benign[:SIZE])


def _read(reply: str, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        extract_answer(reply, TARGET)
        prepare(last_lean_block(reply) or "")
    return (time.perf_counter() - start) / rounds


def main() -> list[Target]:
    hostile, benign = _replies()
    targets = []
    _read(benign, 1)  # warm-up
    base = _read(benign, 3)
    for label, reply in zip(("open a in …", "instance (priority …"), hostile, strict=True):
        slow = _read(reply, 3)
        print(
            f"56 KB replies: hostile {label} {slow * 1000:.0f} ms, benign {base * 1000:.0f} ms,"
            f" ratio {slow / base:.2f}x (target <= 3x)"
        )
        targets.append(at_most(f"T2 heads, hostile {label} / benign", slow / base, 3.0))
    return targets


if __name__ == "__main__":
    main()
