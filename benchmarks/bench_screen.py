"""The command screen on hostile vs benign replies of the same size (issue 17).

``python -m benchmarks.bench_screen``: ``gapscope.lean.screen.screen`` on 56 KB of model
output, best of 5 runs each. Benign: a proof of many short tactic lines with comments, the
shape of a long honest reply. Hostile: the shapes of the hostile round, each 56 KB: runs of
unclosed ``@[simp `` (quadratic before the lexer: 15.7 s at 28 KB, 79 s at 56 KB), one
``«a»`` name per three characters (each name is read a second time), unclosed block comments,
strings with braces (each read both ways). Target: every hostile/benign ratio < 3.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gapscope.lean.screen import screen

SIZE = 56_000
_HEADER = "theorem t (a b : Nat) (h₁ : a = b) (h₂ : a + b = 2) : b + a = 2 := by\n"
_LINE = "  rw [Nat.add_comm a b, h₁] at h₂ -- reorder, then close\n"
BENIGN = (_HEADER + _LINE * 1000)[:SIZE]
HOSTILE = {
    "unclosed @[simp runs": ("@[simp " * SIZE)[:SIZE],
    "«a» names": ("«a» " * SIZE)[:SIZE],
    "nested /- openers": ("/- " * SIZE)[:SIZE],
    'strings with "{x}"': ('"{x}" ' * SIZE)[:SIZE],
}


def _best(run: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    benign = _best(lambda: screen(BENIGN))
    print(f"benign {len(BENIGN):,} chars: {benign * 1000:.1f} ms")
    for name, text in HOSTILE.items():
        hostile = _best(lambda text=text: screen(text))
        print(f"{name} {len(text):,} chars: {hostile * 1000:.1f} ms, ratio {hostile / benign:.2f}")


if __name__ == "__main__":
    main()
