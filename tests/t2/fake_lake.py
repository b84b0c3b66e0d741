"""A stand-in for ``lake`` in the repository track: ``build MODULE...`` and ``env lean FILE``.

It "compiles" by reading the files: a line with ``-- fake-error`` is an error there, and
``-- fake-breaks: a, b`` in any file it reads is an error at the head of the declarations
``a`` and ``b`` wherever they are among those files. A line with ``sorry`` gets the sorry
warning. Every call is appended to ``FAKE_LAKE_LOG`` (cwd, arguments and pid);
``FAKE_LAKE_DELAY`` seconds are slept first (for timeouts).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

HEAD = re.compile(r"^(?:theorem|lemma|def)\s+(\S+)")


def diagnostics(files: list[str]) -> tuple[list[str], bool]:
    texts = {f: Path(f).read_text(encoding="utf-8").split("\n") for f in files}
    broken = {
        name.strip()
        for lines in texts.values()
        for line in lines
        for match in re.finditer(r"-- fake-breaks:(.*)", line)
        for name in match[1].split(",")
    }
    out: list[str] = []
    failed = False
    for path, lines in texts.items():
        for number, line in enumerate(lines, 1):
            head = HEAD.match(line)
            if "-- fake-error" in line or (head and head[1] in broken):
                out.append(f"error: ./{path}:{number}:0: fake error")
                failed = True
            elif re.search(r"\bsorry\b", line):
                out.append(f"warning: ./{path}:{number}:0: declaration uses 'sorry'")
    return out, failed


def main(args: list[str]) -> int:
    log = os.environ.get("FAKE_LAKE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"cwd": os.getcwd(), "args": args, "pid": os.getpid()}) + "\n")
    time.sleep(float(os.environ.get("FAKE_LAKE_DELAY", "0")))
    if args[:1] == ["build"]:
        files = [m.replace(".", "/") + ".lean" for m in args[1:]]
    elif args[:2] == ["env", "lean"]:
        files = args[2:]
    else:
        print(f"fake lake: unsupported {args}", file=sys.stderr)
        return 2
    lines, failed = diagnostics(files)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
