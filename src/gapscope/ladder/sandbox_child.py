"""The program that runs inside the sandbox: limits itself, then runs one attempt's tests.

Started by :mod:`gapscope.ladder.sandbox` as ``python -I -S sandbox_child.py`` in the
attempt's private directory with the job (JSON) on its stdin, it uses the standard library
only (nothing of gapscope is on its path). It reads the job and swaps its stdin for
/dev/null, so the expected outputs are nowhere the attempt could read them as a file. Before
the attempt's code runs it lowers its own resource limits (inherited by anything it could
start), then installs an audit hook that refuses sockets, process creation, signals to other
processes, native code through ctypes, raising the limits again, and writing outside the
private directory (stdin-style tests read their input from memory). The hook stays for the
life of the interpreter (Python has no way to remove one). The verdict goes to the file the
job names; a killed child writes none and the parent reports why it was killed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import traceback
from typing import Any

BLOCKED_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.exec",
        "os.system",
        "os.kill",
        "os.killpg",
        "subprocess.Popen",
        "pty.spawn",
        "resource.setrlimit",
        "resource.prlimit",
    }
)
BLOCKED_PREFIXES = ("socket.", "ctypes.")
BLOCKED_IMPORTS = frozenset({"_posixsubprocess", "_ctypes", "_socket", "_multiprocessing"})
PROCESS_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "subprocess.Popen"}
)
PATH_EVENTS = frozenset(
    {
        "os.remove",
        "os.rmdir",
        "os.rename",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.link",
        "os.symlink",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.move",
    }
)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Blocked(PermissionError):
    """The attempt did something the sandbox refuses."""


def set_limits(limits: dict[str, int]) -> None:
    """Lower soft and hard limits alike, so the attempt cannot raise them back."""
    for name, value in limits.items():
        which = getattr(resource, name)
        resource.setrlimit(which, (value, value))


def install_hook(root: str, allow_processes: bool) -> None:
    root = os.path.realpath(root)
    blocked = BLOCKED_EVENTS - PROCESS_EVENTS if allow_processes else BLOCKED_EVENTS
    imports = BLOCKED_IMPORTS - {"_posixsubprocess"} if allow_processes else BLOCKED_IMPORTS

    def inside(target: Any) -> bool:
        path = os.path.realpath(os.fsdecode(target))
        return path == root or path.startswith(root + os.sep)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in blocked or event.startswith(BLOCKED_PREFIXES):
            raise Blocked(f"sandbox: {event} is not allowed")
        if event == "import" and args[0] in imports:
            raise Blocked(f"sandbox: importing {args[0]} is not allowed")
        if event == "open" and args[0] is not None and not isinstance(args[0], int):
            mode, flags = args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS
            )
            if writes and not inside(args[0]):
                raise Blocked(f"sandbox: writing {os.fsdecode(args[0])} is not allowed")
        if event in PATH_EVENTS:
            for arg in args:
                if isinstance(arg, str | bytes | os.PathLike) and not inside(arg):
                    raise Blocked(f"sandbox: {event} on {os.fsdecode(arg)} is not allowed")

    sys.addaudithook(hook)


def lines(text: str) -> list[str]:
    """Output compared line by line, each stripped, trailing blank lines ignored."""
    return [line.strip() for line in text.strip().splitlines()]


def plain(value: Any) -> Any:
    """A return value as JSON would carry it (tuples become lists), for comparison; a value
    JSON cannot carry (a set) becomes its repr, which equals no expected output."""
    return json.loads(json.dumps(value, default=repr))


def run_stdin(code: Any, test: dict[str, Any]) -> bool:
    out = io.StringIO()
    sys.stdin = io.StringIO(test["input"])
    with contextlib.redirect_stdout(out):
        try:
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit as stop:  # exit() after printing the answer ends a program normally
            if stop.code not in (None, 0):
                raise
    return lines(out.getvalue()) == lines(test["output"])


def run_call(namespace: dict[str, Any], entry: str, test: dict[str, Any]) -> bool:
    if callable(namespace.get(entry)):
        function = namespace[entry]
    elif "Solution" in namespace:  # LiveCodeBench's functional problems: a method of Solution
        function = getattr(namespace["Solution"](), entry)
    else:
        raise NameError(f"the program defines no function {entry!r}")
    with contextlib.redirect_stdout(io.StringIO()):
        result = function(*test["input"])
    return bool(plain(result) == plain(test["output"]))


def main() -> None:
    job = json.load(sys.stdin)
    devnull = os.open(os.devnull, os.O_RDONLY)  # the job (expected outputs) leaves fd 0
    os.dup2(devnull, 0)
    os.close(devnull)
    result_path = job["result"]
    result: dict[str, Any] = {"status": "error", "passed": 0, "detail": ""}
    set_limits(job["limits"])
    install_hook(job["root"], job["allow_processes"])
    try:
        code = compile(job["program"], "solution.py", "exec")
        namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": __builtins__}
        if job["entry"] is not None:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)
        for index, test in enumerate(job["tests"]):
            ok = (
                run_stdin(code, test)
                if job["entry"] is None
                else run_call(namespace, job["entry"], test)
            )
            if not ok:
                result.update(status="failed", detail=f"test {index + 1} gave a wrong answer")
                break
            result["passed"] = index + 1
        else:
            result.update(status="passed")
    except MemoryError:
        result.update(status="memory", detail="MemoryError: the memory limit was reached")
    except Blocked as exc:
        result.update(status="blocked", detail=str(exc))
    except BaseException as exc:  # the attempt's own error, whatever it is, is its verdict
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, Blocked):  # e.g. an import that failed because of the hook
            result.update(status="blocked", detail=str(cause))
        else:
            frame = traceback.format_exception_only(type(exc), exc)[-1].strip()
            result.update(status="error", detail=frame[:500])
    sys.stdin = sys.__stdin__
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
