"""A fake Lean REPL whose commands take resources through children, for the bounds tests.

Speaks the REPL's framing (a JSON command, a blank line; a JSON answer, a blank line) and
answers every command with the next env id. A command holding ``-- hogs N MB`` first starts N
children that each hold MB megabytes and sleep (so their sum, not any one of them, passes a
limit); ``-- forks N`` forks up to N sleeping children and reports in an info message how many
the kernel let it start. Standard library only: it runs under any interpreter the sandbox's
uid can reach.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_children import forks, hog


def answer(code: str, env: int) -> dict[str, object]:
    hogs = re.search(r"-- hogs (\d+) (\d+)", code)
    if hogs:
        hog(int(hogs[1]), int(hogs[2]))
    messages = []
    forked = re.search(r"-- forks (\d+)", code)
    if forked:
        text = forks(int(forked[1]))
        messages.append({"severity": "info", "pos": {"line": 1, "column": 0}, "data": text})
    return {"env": env, "messages": messages}


def main() -> None:
    env, block = 0, ""
    for line in sys.stdin:
        if line.strip():
            block += line
            continue
        if block:
            reply = answer(json.loads(block)["cmd"], env)
            env, block = env + 1, ""
            sys.stdout.write(json.dumps(reply) + "\n\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
