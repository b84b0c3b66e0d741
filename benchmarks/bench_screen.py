"""The command screen on hostile vs benign replies of the same size (issue 17).

``python -m benchmarks.bench_screen``: ``gapscope.lean.screen.screen`` on 56 KB of model
output. Benign: a proof of many short tactic lines with comments, the shape of a long honest
reply. Hostile: the shapes of the hostile round, each 56 KB: runs of unclosed ``@[simp ``
(quadratic before the lexer: 15.7 s at 28 KB, 79 s at 56 KB), one ``«a»`` name per four
characters (each name is read a second time), unclosed block comments, strings with braces
(each read both ways). Benign and hostile runs alternate, best of 7 each. Target: every
hostile/benign ratio at most ``MAX_RATIO`` (required: the screen runs on every reply).
"""

from __future__ import annotations

import time

from benchmarks.targets import Target, at_most
from gapscope.lean.screen import screen_code

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


MAX_RATIO = 3.0


def _seconds(text: str) -> float:
    start = time.perf_counter()
    screen_code(text)
    return time.perf_counter() - start


def main(repeats: int = 7) -> list[Target]:
    """Benign and hostile runs alternate (a busy machine slows both alike); best of each."""
    targets = []
    for name, text in HOSTILE.items():
        pairs = [(_seconds(BENIGN), _seconds(text)) for _ in range(repeats)]
        benign, hostile = min(b for b, _ in pairs), min(h for _, h in pairs)
        print(
            f"{name}: {hostile * 1000:.1f} ms vs benign {benign * 1000:.1f} ms "
            f"({len(text):,} chars each), ratio {hostile / benign:.2f}"
        )
        targets.append(at_most(f"screen {name} / benign", hostile / benign, MAX_RATIO))
    return targets


if __name__ == "__main__":
    main()
