"""Declaration heads on a 56 KB hostile reply vs a benign reply of the same size.

``python -m benchmarks.bench_t2_heads``: the hostile reply is one fenced block of
``"open a in " * n + "zzz"`` (the chain on which T2's old head regex backtracked
exponentially: 0.8 s at n = 18, over 20 s at n = 24), the benign one a block of ordinary
theorems, both 56 KB. Each is read by T2's ``extract_answer`` (the splitter) and by the
soundness rule's ``prepare`` (the axiom queries), which share ``gapscope.lean.heads``.
Target: the hostile reply at most 3x the benign one (both are one linear pass over tokens).
"""

from __future__ import annotations

import time

from gapscope.lean.soundness import prepare
from gapscope.t2.extract import extract_answer, last_lean_block
from gapscope.t2.successors import TargetIdentity

SIZE = 56_000
TARGET = TargetIdentity("target", "theorem")


def _replies() -> tuple[str, str]:
    hostile = "open a in " * (SIZE // 10) + "zzz"
    theorem = "theorem t{k} (n : Nat) : n + {k} = {k} + n := by\n  omega\n\n"
    benign = ""
    k = 0
    while len(benign) < SIZE:
        benign += theorem.format(k=k)
        k += 1
    return f"```lean\n{hostile}\n```", f"```lean\n{benign[:SIZE]}\n```"


def _read(reply: str, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        extract_answer(reply, TARGET)
        prepare(last_lean_block(reply) or "")
    return (time.perf_counter() - start) / rounds


def main() -> None:
    hostile, benign = _replies()
    _read(benign, 1)  # warm-up
    slow, base = _read(hostile, 3), _read(benign, 3)
    print(
        f"56 KB replies: hostile {slow * 1000:.0f} ms, benign {base * 1000:.0f} ms,"
        f" ratio {slow / base:.2f}x (target <= 3x)"
    )


if __name__ == "__main__":
    main()
