"""A stand-in for landrun (zouuup/landrun v0.1.17), faithful in what a child may see.

It takes the flags comparator's ``buildLandrunArgs`` writes (comparator ``Main.lean`` at
5d21b89: ``--best-effort --ro / --rw /dev -ldd -add-exec``, then ``--env NAME`` for each name
passed, ``--ro``/``--rwx``/``--rox PATH`` for each path) and runs the command after ``--``
with an environment that holds *only* the ``--env`` names (their values from landrun's own
environment; ``NAME=VALUE`` sets one), as landrun's runner does: nothing else is inherited,
not ``LEAN_PATH``, not ``GAPSCOPE_*``. No Landlock is applied (the tests check what the
child sees, not the kernel's enforcement). Each argv is logged to ``$FAKE_LANDRUN_LOG``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

WITH_VALUE = {"--ro", "--rox", "--rw", "--rwx", "--env", "--bind-tcp", "--connect-tcp",
              "--log-level"}  # fmt: skip
ALONE = {"--best-effort", "-ldd", "--ldd", "-add-exec", "--add-exec",
         "--unrestricted-network", "--unrestricted-filesystem"}  # fmt: skip


def main(args: list[str]) -> int:
    log = os.environ.get("FAKE_LANDRUN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(args) + "\n")
    env: dict[str, str] = {}
    index = 0
    while index < len(args) and args[index] != "--":
        flag = args[index]
        if flag in WITH_VALUE:
            if flag == "--env":
                name, _, value = args[index + 1].partition("=")
                if value or "=" in args[index + 1]:
                    env[name] = value
                elif name in os.environ:
                    env[name] = os.environ[name]
            index += 2
        elif flag in ALONE:
            index += 1
        else:
            print(f"landrun: unknown flag {flag}", file=sys.stderr)
            return 2
    command = args[index + 1 :]
    if not command:
        print("landrun: no command given", file=sys.stderr)
        return 2
    found = shutil.which(command[0], path=os.environ.get("PATH"))
    if found is None:
        print(f"landrun: command not found: {command[0]}", file=sys.stderr)
        return 1
    os.execve(found, command, env)
    return 1  # unreachable: execve replaces this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
