"""A stand-in for ``lake`` in the repository track: ``build MODULE...`` and ``env lean FILE``.

It "compiles" by reading the files: a line with ``-- fake-error`` is an error there, and
``-- fake-breaks: a, b`` in any file it reads is an error at the head of the declarations
``a`` and ``b`` wherever they are among those files. A line with ``sorry`` gets the sorry
warning. Every call is appended to ``FAKE_LAKE_LOG`` (cwd, arguments and pid);
``FAKE_LAKE_DELAY`` seconds are slept first (for timeouts). ``build`` writes what it built to
``.lake/fake-build`` as a real build writes ``.lake``: a sandbox that cannot write the
project fails it.

For the bounds tests, as a build running the model's code may: ``-- fake-hogs N MB`` in a file
it reads starts N children that each hold MB megabytes and sleep (their sum, not any one of
them, passes a limit); ``-- fake-forks N`` forks up to N sleeping children and prints how many
the kernel let it start. Standard library only: it runs under any interpreter the sandbox's
uid can reach.

For the output tests, as a theorem that logs without end: ``-- fake-flood N`` prints N MB of
noise before its diagnostics and N MB after them (at the output cap it keeps trying);
``-- fake-forge N`` adds N error lines of its own, naming ``Lib/Other.lean``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lean"))
from fake_children import forks, hog

HEAD = re.compile(r"^(?:theorem|lemma|def)\s+(\S+)")


def take_resources(files: list[str]) -> None:
    """What the ``-- fake-hogs`` and ``-- fake-forks`` lines of ``files`` ask for."""
    text = "\n".join(Path(f).read_text(encoding="utf-8") for f in files)
    hogs = re.search(r"-- fake-hogs (\d+) (\d+)", text)
    if hogs:
        hog(int(hogs[1]), int(hogs[2]))
    forked = re.search(r"-- fake-forks (\d+)", text)
    if forked:
        print(forks(int(forked[1])), flush=True)


def flood(text: str) -> None:
    """``-- fake-flood N``: N MB of lines that are no diagnostic, a MB at a time. Past the
    run's output cap a write fails (``EFBIG``: Python ignores ``SIGXFSZ``); it is tried again
    until the run is killed, as a writer that ignores the signal would."""
    asked = re.search(r"-- fake-flood (\d+)", text)
    if asked:
        sys.stdout.flush()
        megabyte = ("noise " * 170 + "\n").encode() * 1027  # 1,021-byte lines
        for _ in range(int(asked[1])):
            while True:
                try:
                    os.write(1, megabyte)
                    break
                except OSError:
                    time.sleep(0.01)


def diagnostics(files: list[str]) -> tuple[list[str], bool]:
    texts = {f: Path(f).read_text(encoding="utf-8").split("\n") for f in files}
    broken = {
        name.strip()
        for lines in texts.values()
        for line in lines
        for match in re.finditer(r"-- fake-breaks:(.*)", line)
        for name in match[1].split(",")
    }
    forged = re.search(r"-- fake-forge (\d+)", "\n".join("\n".join(t) for t in texts.values()))
    out = ["error: ./Lib/Other.lean:1:0: forged"] * int(forged[1]) if forged else []
    failed = bool(out)
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
    take_resources(files)
    lines, failed = diagnostics(files)
    if args[:1] == ["build"]:
        built = Path(".lake", "fake-build")
        built.parent.mkdir(exist_ok=True)
        built.write_text("\n".join(args[1:]) + "\n", encoding="utf-8")
    text = "\n".join(Path(f).read_text(encoding="utf-8") for f in files)
    flood(text)
    print("\n".join(lines))
    flood(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
