"""Declaration heads on a 56 KB hostile reply vs a benign reply of the same size.

``python -m benchmarks.bench_t2_heads``: the hostile replies are one fenced block of
``"open a in " * n + "zzz"`` (the chain on which T2's old head regex backtracked
exponentially: 0.8 s at n = 18, over 20 s at n = 24) and one of ``"instance (priority "``
repeated (each head's unclosed group, which a scan per head would read to the end: quadratic),
the benign one a block of ordinary theorems, all 56 KB. Each is read by T2's
``extract_answer`` (the splitter) and by the soundness rule's ``prepare`` (the axiom
queries), which share ``gapscope.lean.heads``. Target: each hostile reply at most 3x the
benign one (each is one linear pass over tokens); required, T2 reads every reply so.

Two more (issue 39): the splitter on a reply of one short command per line (``def x := 1``,
on which counting lines from the start for every command was quadratic: 1.4 MB took 54 s) at
512 KB against 128 KB, at most 6x (linear: 4x; quadratic: 16x); and a 32 MB reply of the same
lines, read end to end (extraction, then the axiom queries of what was extracted), against a
32 MB reply of ordinary theorems: at most 3x, and under 2 s (its code is over T2's cap,
``MAX_CODE_CHARS``, so it is refused unread).
"""

from __future__ import annotations

import time

from benchmarks.targets import Target, at_most
from gapscope.lean.soundness import prepare
from gapscope.t2.declarations import split_declarations
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


def _many_commands(size: int) -> str:
    return "def x := 1\n" * (size // 11)


def _benign(size: int) -> str:
    theorem = "theorem t (n : Nat) : n + 1 = 1 + n := by\n  omega\n\n"
    return theorem * (size // len(theorem))


def _split_seconds(text: str) -> float:
    start = time.perf_counter()
    split_declarations(text)
    return time.perf_counter() - start


def _whole_reply_seconds(code: str) -> float:
    start = time.perf_counter()
    answer = extract_answer(f"```lean\n{code}\n```", TARGET)
    prepare(answer.code or "")
    return time.perf_counter() - start


def linear_targets() -> list[Target]:
    small, large = _split_seconds(_many_commands(128_000)), _split_seconds(_many_commands(512_000))
    print(
        f"splitter, one command per line: 128 KB {small:.2f} s, 512 KB {large:.2f} s, "
        f"ratio {large / small:.2f}x (linear 4x; target <= 6x)"
    )
    size = 32 * 1024 * 1024
    hostile, benign = (
        _whole_reply_seconds(_many_commands(size)),
        _whole_reply_seconds(_benign(size)),
    )
    print(
        f"32 MB replies read whole: hostile {hostile:.2f} s, benign {benign:.2f} s, "
        f"ratio {hostile / benign:.2f}x (targets: <= 3x, < 2 s)"
    )
    return [
        at_most("T2 splitter, 512 KB / 128 KB of one-line commands", large / small, 6.0),
        at_most("T2 reading a 32 MB hostile reply / a benign one", hostile / benign, 3.0),
        # absolute, so machine-dependent: reported, not required
        at_most("T2 reading a 32 MB hostile reply, seconds / 2 s", hostile / 2.0, 1.0, False),
    ]


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
    return targets + linear_targets()


if __name__ == "__main__":
    main()
