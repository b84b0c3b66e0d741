"""A stand-in for ``lake build MODULE`` and ``lake env CMD ...``, with lake's package rules.

What the judge project relies on is modelled as lake does it (``src/lake/Lake/Load/
Resolve.lean`` ``materializeDeps``, ``Materialize.lean`` ``PackageEntry.materialize``): with
``[[require]]``s there must be a ``lake-manifest.json`` ("missing manifest; use `lake update`
to generate one"); every require - the root's and, recursively, each package's own
``lakefile.toml`` requires - is looked up *by name in the root's manifest* ("dependency 'x'
of 'y' not in manifest"); a ``path`` entry is the directory ``<root>/<dir>`` as it is; a
``git`` entry must already be checked out in the root's packages directory (the sandbox has
no network: cloning fails). The module search path is the root's build, each resolved
package's ``.lake/build/lib/lean``, then ``$LEAN_PATH`` (lake's augmented path).

``lake build M`` builds the root's ``lean_lib`` module ``M.lean`` and the local modules it
imports: each ``import X`` must be a local module or an ``X.olean`` on the search path
(else ``unknown module prefix``, exit 1); the "olean" written to ``.lake/build/lib/lean`` is
the module's source (the fake lean4export prints it). ``lake env CMD`` runs CMD with
``LEAN_PATH`` set to the search path.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path

IMPORT = re.compile(r"^\s*import\s+(\S+)", re.MULTILINE)


class LakeError(Exception):
    pass


def _config(directory: Path) -> dict:
    path = directory / "lakefile.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def resolve(root: Path) -> list[Path]:
    """The directories of every package the root needs, through the root's manifest."""
    requires = _config(root).get("require", [])
    if not requires:
        return []
    manifest_file = root / "lake-manifest.json"
    if not manifest_file.is_file():
        raise LakeError("missing manifest; use `lake update` to generate one")
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    entries = {e["name"]: e for e in manifest.get("packages", [])}
    packages_dir = root / manifest.get("packagesDir", ".lake/packages")
    found: dict[str, Path] = {}
    pending = [("root", r["name"]) for r in requires]
    while pending:
        parent, name = pending.pop()
        if name in found:
            continue
        entry = entries.get(name)
        if entry is None:
            where = "" if parent == "root" else f" of '{parent}'"
            raise LakeError(f"dependency '{name}'{where} not in manifest")
        if entry["type"] == "path":
            directory = root / entry["dir"]
            if not directory.is_dir():
                raise LakeError(f"{name}: package directory not found: {directory}")
        else:
            directory = packages_dir / name
            if not directory.is_dir():
                raise LakeError(f"{name}: cloning {entry.get('url')}: network unreachable")
        found[name] = directory
        pending += [(name, r["name"]) for r in _config(directory).get("require", [])]
    return list(found.values())


def search_path(root: Path) -> list[Path]:
    builds = [root / ".lake" / "build" / "lib" / "lean"]
    builds += [d / ".lake" / "build" / "lib" / "lean" for d in resolve(root)]
    inherited = [Path(p) for p in os.environ.get("LEAN_PATH", "").split(os.pathsep) if p]
    return builds + inherited


def build(root: Path, module: str, path: list[Path], done: set[str]) -> None:
    if module in done:
        return
    source_file = root / (module.replace(".", "/") + ".lean")
    source = source_file.read_text(encoding="utf-8")
    for imported in IMPORT.findall(source):
        relative = imported.replace(".", "/")
        if (root / f"{relative}.lean").is_file():
            build(root, imported, path, done)
        elif not any((d / f"{relative}.olean").is_file() for d in path):
            raise LakeError(
                f"{source_file}: bad import '{imported}': unknown module prefix "
                f"'{imported.split('.')[0]}'"
            )
    out = root / ".lake" / "build" / "lib" / "lean" / f"{module.replace('.', '/')}.olean"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(source, encoding="utf-8")
    done.add(module)


def main(args: list[str]) -> int:
    root = Path.cwd()
    try:
        if args[:1] == ["build"] and len(args) == 2:
            libraries = {lib["name"] for lib in _config(root).get("lean_lib", [])}
            if args[1] not in libraries:
                raise LakeError(f"unknown target '{args[1]}'")
            build(root, args[1], search_path(root), set())
            return 0
        if args[:1] == ["env"] and len(args) > 1:
            lean_path = os.pathsep.join(str(d) for d in search_path(root))
            os.execvpe(args[1], args[1:], {**os.environ, "LEAN_PATH": lean_path})
    except LakeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"fake lake: unsupported {args}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
