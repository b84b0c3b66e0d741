"""The paper's tracer: LeanDojo (``lean_dojo.trace``), where it is installed.

LeanDojo builds the project and runs its own metaprogram (``ExtractData.lean``) over every
file, keeping the syntax tree with each identifier resolved by Lean's elaborator to the
constant it names. From that this adapter reads, per traced file, the declarations
(``TracedFile.get_premise_definitions``: full name, range, source) and, as a declaration's uses,
the constants named by the identifiers inside its range - exact references, but only those
written in the source (a lemma that ``simp`` finds by itself is not one). LeanDojo gives no
types, so the Hard tag is T2's own rule for its LeanDojo path: a theorem-like keyword
(``theorem``/``lemma``). LeanDojo needs the project to be a git repository (it traces a commit)
and keeps its own cache. Dependencies are not traced (``build_deps=False``): only the
project's declarations can be targets or successors; a dependency's file LeanDojo still
returns is counted as traced, not as the project's.

Written against LeanDojo 4.20's API (read from its wheel: ``lean_dojo.trace``,
``LeanGitRepo(url, commit)``, ``TracedFile.get_premise_definitions`` and ``traverse_preorder``,
``IdentNode.full_name``/``get_closure``, 1-based ``Pos`` columns, ends exclusive); untested
against a running LeanDojo, which needs Lean (not installable where gapscope is developed).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from gapscope.lean import LeanUnavailable
from gapscope.t2.declarations import THEOREM_LIKE_KINDS, head
from gapscope.t2.mining.trace import Trace
from gapscope.t2.mining.trace_cache import read_cache, source_key, write_cache
from gapscope.t2.mining.traced import TracedDeclaration, parse_declaration
from gapscope.t2.project import module_of


def leandojo_available() -> bool:
    try:
        import lean_dojo  # noqa: F401
    except ImportError:
        return False
    return True


def head_commit(project: Path) -> str:
    """The commit LeanDojo traces; LeanUnavailable when the project is no git repository, or
    when its ``.lean`` files differ from that commit (LeanDojo would trace the commit while
    the records are cut from the files: their ranges would not match)."""
    git = ["git", "-C", str(project)]
    done = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    if done.returncode != 0:
        raise LeanUnavailable(
            f"LeanDojo traces a git commit, and {project} has none ({done.stderr.strip()}); "
            "commit the project or use --tracer gapscope"
        )
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--", "*.lean"], capture_output=True, text=True
    ).stdout.split("\n")
    dirty = [line[3:] for line in changed if line.strip()]
    if dirty:
        raise LeanUnavailable(
            f"LeanDojo traces the commit, and {len(dirty)} .lean file(s) of {project} differ"
            f" from it ({', '.join(dirty[:3])}); commit them or use --tracer gapscope"
        )
    return done.stdout.strip()


def _position(pos: Any) -> tuple[int, int]:
    """LeanDojo's ``Pos`` (1-based line and column) -> Lean's (1-based line, 0-based column)."""
    line, column = tuple(pos)
    return int(line), int(column) - 1


def declarations_of(traced_file: Any, ident_class: type) -> list[TracedDeclaration]:
    """The declarations of one LeanDojo ``TracedFile``, each with the constants its
    identifiers name."""
    path = Path(str(traced_file.path)).as_posix()
    module = module_of(path)
    idents: list[tuple[tuple[int, int], str]] = []

    def collect(node: Any, _parents: Any) -> None:
        span = node.get_closure()  # (start, end); either may be None (synthetic syntax)
        if getattr(node, "full_name", None) and span is not None and span[0] is not None:
            idents.append((_position(span[0]), str(node.full_name)))

    traced_file.traverse_preorder(collect, ident_class)
    out: list[TracedDeclaration] = []
    for d in traced_file.get_premise_definitions():
        start, end = _position(d["start"]), _position(d["end"])
        found = head(d.get("code", ""))
        kind = "unknown" if found is None else found[0]
        name = str(d["full_name"])
        uses = sorted({u for at, u in idents if start <= at < end and u != name})
        out.append(
            TracedDeclaration(
                name,
                module,
                "theorem" if kind in THEOREM_LIKE_KINDS else kind,
                kind in THEOREM_LIKE_KINDS,
                start,
                end,
                tuple(uses),
            )
        )
    return out


def trace_with_leandojo(project: Path, cache: Path) -> Trace:
    """The project traced by LeanDojo (all of it at once: LeanDojo schedules its own work),
    or from ``cache`` while the sources and LeanDojo's version are unchanged."""
    import lean_dojo
    from lean_dojo.data_extraction.ast import IdentNode

    version = getattr(lean_dojo, "__version__", "unknown")
    key = source_key(project, f"leandojo {version}".encode())
    cached = read_cache(cache, key)
    if cached:
        trace = Trace(key, tracer="leandojo")
        for module, entries in cached.items():
            trace.modules[module] = [
                parse_declaration(e, f"{cache}: {module}[{i}]") for i, e in enumerate(entries)
            ]
        return trace
    repo = lean_dojo.LeanGitRepo(str(project), head_commit(project))
    traced = lean_dojo.trace(repo, build_deps=False)  # the project's files, not all of Mathlib
    trace = Trace(key, traced_now=1, tracer="leandojo")
    for traced_file in sorted(traced.traced_files, key=lambda f: str(f.path)):
        for d in declarations_of(traced_file, IdentNode):
            trace.modules.setdefault(d.module, []).append(d)
    modules = {m: [d.to_dict() for d in ds] for m, ds in trace.modules.items()}
    write_cache(cache, key, modules, {})
    return trace
