"""The program that runs inside the sandbox: limits itself, runs the attempt on each test's
input, and hands back what it printed or returned. It judges nothing.

Started by :mod:`gapscope.ladder.sandbox` (or through an Inspect sandbox) as
``python -I -S sandbox_child.py`` with the job (JSON) on its stdin. It uses the standard library
only (nothing of gapscope is on its path). The job holds the program, the tests' *inputs*, the
entry point, the limits and the number of the channel's file descriptor; the expected outputs,
the comparison and any result file stay with the parent, so nothing the attempt does in this
process (rebinding a function, reading a caller's frame, walking the stack) can reach them.

For each test, in order, one line of JSON goes to the channel: ``{"i": n, "out": text}``
(stdin tests: what the program printed), ``{"i": n, "ret": value}`` (call tests: the return
value), ``{"i": n, "unserialisable": type}`` (a return value JSON cannot carry), or
``{"i": n, "end": "error"|"memory"|"blocked", "detail": text}`` when the attempt raised, which
ends the run. The attempt shares this process, so it can write to the channel too: the parent
parses nothing but these lines, decides a pass only by comparing them with the expected
outputs itself, and takes any malformed or out-of-order line as a broken attempt.

Before the attempt runs, the child lowers its own resource limits (inherited by anything it
could start) and installs an audit hook refusing sockets, process creation, signals, ctypes,
raising the limits and writing outside its folder. The hook is Python-level and can be
bypassed (a renamed extension module, ``dir_fd`` arguments): the boundary is bubblewrap's
namespaces around this process, and without them the parent refuses to run unless told.
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
DETAIL_CHARS = 500


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


def text_stream(text: str = "") -> io.TextIOWrapper:
    """A text stream over bytes, so ``sys.stdin.buffer``/``sys.stdout.buffer`` work too."""
    return io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", newline=None)


def run_stdin(code: Any, stdin: str) -> str:
    """Run the program as ``__main__`` on ``stdin``; what it printed."""
    out = text_stream()
    sys.stdin = text_stream(stdin)
    with contextlib.redirect_stdout(out):
        try:
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit as stop:  # exit() after printing the answer ends a program normally
            if stop.code not in (None, 0):
                raise
        out.flush()
    buffer = out.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def run_call(namespace: dict[str, Any], entry: str, arguments: list[Any]) -> Any:
    """Call the entry point (a top-level function or a method of ``Solution``) on
    ``arguments``; its return value."""
    if callable(namespace.get(entry)):
        function = namespace[entry]
    elif "Solution" in namespace:  # LiveCodeBench's functional problems: a method of Solution
        function = getattr(namespace["Solution"](), entry)
    else:
        raise NameError(f"the program defines no function {entry!r}")
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*arguments)


class Channel:
    """The write end the parent reads: one JSON line per frame."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, frame: dict[str, Any]) -> None:
        data = (json.dumps(frame) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data) :]


def answer_frame(index: int, entry: str | None, value: Any) -> dict[str, Any]:
    """The frame of one test's output; a return value JSON cannot carry (a set, a cycle) is
    named by its type and is a wrong answer, never its repr."""
    if entry is None:
        return {"i": index, "out": value}
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return {"i": index, "unserialisable": type(value).__name__}
    return {"i": index, "ret": value}


def error_frame(index: int, exc: BaseException) -> dict[str, Any]:
    """How the attempt ended on test ``index``: memory, blocked by the hook, or its error."""
    if isinstance(exc, MemoryError):
        return {"i": index, "end": "memory", "detail": "MemoryError: the memory limit was reached"}
    cause = exc if isinstance(exc, Blocked) else exc.__cause__ or exc.__context__
    if isinstance(cause, Blocked):  # also an import that failed because of the hook
        return {"i": index, "end": "blocked", "detail": str(cause)[:DETAIL_CHARS]}
    line = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return {"i": index, "end": "error", "detail": line[:DETAIL_CHARS]}


def run_job(job: dict[str, Any], channel: Channel) -> None:
    """Run the attempt on every input in order, one frame each, until it raises."""
    entry = job["entry"]
    index = 0
    try:
        code = compile(job["program"], "solution.py", "exec")
        namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": __builtins__}
        if entry is not None:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)
        for index, given in enumerate(job["inputs"]):
            value = run_stdin(code, given) if entry is None else run_call(namespace, entry, given)
            channel.send(answer_frame(index, entry, value))
    except BaseException as exc:  # the attempt's own error, whatever it is, is its ending
        channel.send(error_frame(index, exc))


def main() -> None:
    job = json.load(sys.stdin)
    devnull = os.open(os.devnull, os.O_RDONLY)  # the job leaves fd 0
    os.dup2(devnull, 0)
    os.close(devnull)
    channel = Channel(os.dup(job["channel"]))
    if job["channel"] == 1:  # stdout is the channel (Inspect sandboxes): raw writes go to stderr
        os.dup2(2, 1)
    set_limits(job["limits"])
    install_hook(job["root"] or os.getcwd(), job["allow_processes"])
    run_job(job, channel)


if __name__ == "__main__":
    main()
