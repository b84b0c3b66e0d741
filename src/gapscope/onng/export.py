"""``gapscope onng render``: one obfuscation written out for audit (library, renaming, prompts).

It sits above both :mod:`.render` (the Lean text) and :mod:`.prompting` (the prompts), which
need nothing of each other.
"""

from __future__ import annotations

import json
from pathlib import Path

from gapscope.onng.problemset import load_problem_set
from gapscope.onng.prompting import build_prompt
from gapscope.onng.render import library_file, obfuscation


def write_obfuscation(lam: float, seed: int, out_dir: Path) -> dict[str, object]:
    """Write ``library.lean``, ``renaming.json`` and ``prompts/NN_<name>.txt`` under
    ``out_dir``; returns a summary (counts and paths)."""
    problem_set = load_problem_set()
    obf = obfuscation(problem_set, lam, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "library.lean").write_text(library_file(problem_set, obf), encoding="utf-8")
    (out_dir / "renaming.json").write_text(
        json.dumps(obf.renaming, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    prompt_dir = out_dir / "prompts"
    prompt_dir.mkdir(exist_ok=True)
    for p in problem_set.problems:
        path = prompt_dir / f"{p.index:02d}_{p.name}.txt"
        path.write_text(build_prompt(problem_set, obf, p) + "\n", encoding="utf-8")
    changed = sum(1 for k, v in obf.renaming.items() if k != v)
    return {
        "lam": lam,
        "seed": seed,
        "problems": len(problem_set.problems),
        "names": len(obf.renaming),
        "renamed": changed,
        "out_dir": str(out_dir),
    }
