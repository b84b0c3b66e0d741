"""A stand-in for ``bwrap``: logs its argv to ``FAKE_BWRAP_LOG`` (JSON lines), then runs the
command after ``--`` in the ``--chdir`` folder with the environment ``--clearenv`` and
``--setenv`` build (no isolation: the tests check the argv)."""

from __future__ import annotations

import json
import os
import sys

args = sys.argv[1:]
with open(os.environ["FAKE_BWRAP_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\n")
command = args[args.index("--") + 1 :]
os.chdir(args[args.index("--chdir") + 1])
options = args[: args.index("--")]
env = {} if "--clearenv" in options else dict(os.environ)
for n, arg in enumerate(options):
    if arg == "--setenv":
        env[options[n + 1]] = options[n + 2]
os.execvpe(command[0], command, env)
