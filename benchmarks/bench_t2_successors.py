"""T2's project-wide successors: the name index of ``ProjectIndex`` vs a scan per record.

``python -m benchmarks.bench_t2_successors``: a synthetic Lake project of 60 modules x 40
theorems, each module importing the one before (so every later module is a dependent), each
theorem using two earlier ones. For 50 targets of the first modules, the baseline concatenates
every dependent module's declarations and runs ``successors_in`` over them (lexing each one
per record, as ``ProjectIndex`` did first); the index is built once per project (its build
is counted) and followed from each target's name. Both give the same successors (asserted).
Target: the index at least 5x faster on the 50 records.
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.targets import Target
from gapscope.t2.declarations import split_declarations
from gapscope.t2.project import ProjectIndex, dependents
from gapscope.t2.records import T2Record
from gapscope.t2.successors import successors_in, target_identity

MODULES, PER_MODULE, RECORDS = 60, 40, 50


def _project(root: Path) -> dict[str, tuple[int, str]]:
    """Write the project; name -> (module number, theorem text)."""
    rng = random.Random(0)
    (root / "P").mkdir(parents=True)
    (root / "lakefile.toml").write_text("name = 'P'\n", encoding="utf-8")
    targets: dict[str, tuple[int, str]] = {}
    names: list[str] = []
    for m in range(MODULES):
        parts = [f"import P.M{m - 1}"] if m else []
        for d in range(PER_MODULE):
            used = " ".join(rng.sample(names[-200:], min(len(names), 2))) or "0"
            code = f"theorem c{m}_{d} : True := (fun _ => trivial) ({used})"
            targets[f"c{m}_{d}"] = (m, code)
            names.append(f"c{m}_{d}")
            parts.append(code)
        (root / "P" / f"M{m}.lean").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return targets


def _record(name: str, m: int, code: str) -> T2Record:
    base = T2Record("", code, "", "", f"theorem {name}", "", "", "", "P")
    return replace(base, id=f"P/M{m}.lean/{name}")


def _scan(root: Path, record: T2Record, m: int, code: str) -> list[str | None]:
    """The baseline: every dependent module's declarations, lexed for this record."""
    text = (root / "P" / f"M{m}.lean").read_text(encoding="utf-8")
    later = split_declarations(text[text.index(code) + len(code) :])
    for other in sorted(dependents(root, f"P.M{m}"), key=lambda x: int(x.rsplit("M", 1)[1])):
        later += split_declarations((root / "P" / f"{other[2:]}.lean").read_text("utf-8"))
    return [s.name for s in successors_in(later, target_identity(record))]


def main() -> list[Target]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "P"
        targets = _project(root)
        chosen = list(targets.items())[:RECORDS]
        start = time.perf_counter()
        scanned = [_scan(root, _record(n, m, c), m, c) for n, (m, c) in chosen]
        baseline = time.perf_counter() - start
        start = time.perf_counter()
        index = ProjectIndex(root)
        found = [
            [s.name for s in index.successors(_record(n, m, c), f"P.M{m}")] for n, (m, c) in chosen
        ]
        indexed = time.perf_counter() - start
        assert found == scanned, "the index and the scan disagree"
        mean = sum(map(len, found)) / len(found)
        print(
            f"{RECORDS} records, {MODULES * PER_MODULE} declarations, {mean:.0f} successors"
            f" each: scan {baseline:.2f} s, index {indexed:.2f} s (its build included),"
            f" ratio {baseline / indexed:.1f}x"
        )
    return [Target("T2 successors: scan per record / name index", baseline / indexed, 5.0)]


if __name__ == "__main__":
    main()
