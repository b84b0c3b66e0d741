"""A stand-in for lean4export: ``lean4export MODULE -- NAMES...`` finds ``MODULE``'s
``.olean`` on ``$LEAN_PATH`` (as Lean's ``importModules`` does) and prints it; the fake lake's
"olean" is the module's source, which the fake comparator reads for its semantics."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    module = args[0]
    relative = module.replace(".", "/") + ".olean"
    for directory in os.environ.get("LEAN_PATH", "").split(os.pathsep):
        olean = Path(directory) / relative
        if directory and olean.is_file():
            sys.stdout.write(olean.read_text(encoding="utf-8"))
            return 0
    print(f"uncaught exception: object file {relative} of module {module} does not exist",
          file=sys.stderr)  # fmt: skip
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
