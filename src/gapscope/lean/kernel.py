"""The out-of-environment kernel judge: leanprover/comparator, run challenge-first.

comparator (leanprover's own judge; commit :data:`COMPARATOR_REV` is the one built against the
pinned toolchain v4.33.0-rc2) is handed a fresh project per check holding the *challenge* (the
dataset's statement, proofs ``sorry``) and the *solution* (the model's code), both on the same
header, and a ``config.json`` naming the official theorems and the permitted axioms. As its
README prescribes it then, in this order: builds the challenge with lake in a landrun sandbox
and exports it with lean4export; only then builds and exports the solution (so nothing the
solution's build does can change the challenge it is compared with); compares every constant
the official statements mention, constructors and recursors included, kind and universe
parameters too; checks the axioms; and replays the solution's export into the kernel. It never
maps a model-built ``.olean`` into its own memory.

Each check runs in a fresh project laid out as comparator's own test runner lays one out
(:func:`judge_files`); nothing outside it is writable, and packages the header imports
(Mathlib, ...) are ``require``d from the workspace's builds with a manifest lake resolves
offline (``gapscope.lean.packages``): comparator's build runs under landrun, which passes the
build nothing but ``PATH``, ``HOME`` and ``LEAN_ABORT_ON_PANIC``, so a ``LEAN_PATH`` never
reaches it.

The channel a model's code cannot write is comparator's **exit status** (its children's output
reaches the same stdout, so no line of output can make a verdict VALID): exit 0 is VALID, any
other exit is a rejection, and why is read from the *last* ``uncaught exception:`` line, which
comparator prints after every child it ran has exited (:func:`rejection`). comparator killed by
a signal, or a build it ran that failed or was killed (out of memory: SIGKILL), is
``server_error`` - never a cached ``lean_error`` - because it says nothing about the proof.

gapscope's own checker (``GapscopeCheck.lean``) is retired (docs/lean.md says why): it did not
compile on the pinned toolchain, could not see the constants it replayed, and mapped the
model-built ``.olean``, which comparator's authors name as the attack surface they avoid.
SafeVerify has no revision for v4.33 (its newest branch targets v4.29), so it is not offered.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gapscope.lean.binaries import file_sha256, identify
from gapscope.lean.bounded import Run, run_bounds
from gapscope.lean.cgroup import Bounds
from gapscope.lean.childenv import child_environment
from gapscope.lean.landlock import landlock_abi
from gapscope.lean.packages import MANIFEST, judge_requires, read_manifest
from gapscope.lean.verdict import STANDARD_AXIOMS, Checker, LeanMessage, LeanVerdict, Status

COMPARATOR_REV = "5d21b8939e541cb4982c73fe79be125ae8fbd2eb"
"""leanprover/comparator at "feat: delay kernel rejection until all kernels have run"; its
``lean-toolchain`` is ``leanprover/lean4:v4.33.0-rc2`` (the next commit moves to v4.33.0)."""
LEAN4EXPORT_REV = "9fb131bb100eb32ccf6836f14e4f8328d13b6792"
"""The lean4export commit comparator's own ``lake-manifest.json`` pins at :data:`COMPARATOR_REV`."""
LANDRUN_REV = "62823c05e58ec22c1f91b4c8468318c1f97f2d32"
"""zouuup/landrun at tag v0.1.17 ("feat: upgrade to go-landlock v0.9.0 (Landlock ABI v9)",
2026-07-22), the newest release; its ``go.mod`` asks for Go 1.24.0 or newer. The binary run is
what counts (:attr:`KernelChecker.identity` holds its sha256), the pin is what setup installs."""
CHALLENGE_MODULE = "GapscopeChallenge"
SOLUTION_MODULE = "GapscopeSolution"
COMPARATOR_BINARY = ".lake/packages/Comparator/.lake/build/bin/comparator"
LEAN4EXPORT_BINARY = ".lake/packages/lean4export/.lake/build/bin/lean4export"
ENV_LANDRUN = "COMPARATOR_LANDRUN"
_UNCAUGHT = "uncaught exception:"
_ENVIRONMENT = re.compile(
    r"process '(?P<tool>[^']+)' exited with code|could not execute external process"
    r" '(?P<missing>[^']+)'|no such file or directory|Expected config file path"
    r"|property not found|unexpected (?:end of input|character)",
    re.IGNORECASE,
)
"""comparator's failures before it builds anything (``M.run`` and ``main`` in ``Main.lean``
at 5d21b89: ``lean --print-prefix`` and ``which git`` through ``IO.Process.run``, reading and
parsing ``config.json``): they say nothing about the proof."""
_PRELUDE_TOOLS = ("lean", "which", "git")
"""What comparator runs before building (``queryLeanPrefix``, ``queryGitLocation``), found on
the PATH it is started with; ``git`` must also be executable inside its landrun sandbox."""
_MISMATCH = re.compile(
    r"not found in solution|do not match|does not match|don't match|is not a theorem"
    r"|is not a definition",
    re.IGNORECASE,
)


def _first_file(project: Path, relative: str) -> Path | None:
    path = project / relative
    return path if path.is_file() else None


def find_comparator(project: Path) -> Path | None:
    """The comparator binary ``lake build`` left in the workspace, if any."""
    return _first_file(project, COMPARATOR_BINARY)


def find_lean4export(project: Path) -> Path | None:
    """The lean4export binary comparator needs, built in the workspace, if any."""
    return _first_file(project, LEAN4EXPORT_BINARY)


def find_landrun() -> str | None:
    """landrun (comparator's sandbox): ``$COMPARATOR_LANDRUN`` or on PATH."""
    named = os.environ.get(ENV_LANDRUN, "").strip()
    if named:
        return named if Path(named).is_file() else None
    return shutil.which("landrun")


def tail_of(text: str, limit: int = 2000) -> str:
    """The last ``limit`` characters of a tool's output (where its error is), marked cut."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def comparator_config(names: Sequence[str]) -> dict[str, object]:
    """comparator's ``config.json`` (its README's fields) for the official ``names``."""
    return {
        "challenge_module": CHALLENGE_MODULE,
        "solution_module": SOLUTION_MODULE,
        "theorem_names": list(names),
        "permitted_axioms": sorted(STANDARD_AXIOMS),
        "enable_nanoda": False,
    }


_LEAN_LIB_NAME = re.compile(r'^\[\[lean_lib\]\]\s*\nname\s*=\s*"([^"]+)"', re.MULTILINE)


def workspace_libraries(workspace: Path) -> list[str]:
    """The ``[[lean_lib]]`` names of the workspace's ``lakefile.toml`` (O-NNG's library...)."""
    lakefile = workspace / "lakefile.toml"
    text = lakefile.read_text(encoding="utf-8") if lakefile.is_file() else ""
    return _LEAN_LIB_NAME.findall(text)


def judge_files(
    workspace: Path, header: str, challenge: str, solution: str, judge_dir: Path
) -> dict[str, str]:
    """The per-check project in ``judge_dir``, laid out as comparator's own test runner lays
    one out (``runtests.lean`` 52-66, 100 at 5d21b89): the workspace's ``lean-toolchain``, a
    ``lakefile.toml`` with the challenge, the solution and the workspace's own libraries as
    ``lean_lib``s, a ``require`` of each library package the workspace requires and a
    ``lake-manifest.json`` locking them to the workspace's built copies
    (:func:`gapscope.lean.packages.judge_requires`: nothing is fetched), and the modules."""
    libraries = [CHALLENGE_MODULE, SOLUTION_MODULE, *workspace_libraries(workspace)]
    requires, manifest = judge_requires(workspace, judge_dir)
    lakefile = (
        'name = "gapscope_judge"\n'
        + "".join(f'\n[[lean_lib]]\nname = "{name}"\n' for name in libraries)
        + requires
    )
    toolchain = workspace / "lean-toolchain"
    files = {
        "lakefile.toml": lakefile,
        f"{CHALLENGE_MODULE}.lean": f"{header}\n\n{challenge}\n",
        f"{SOLUTION_MODULE}.lean": f"{header}\n\n{solution}\n",
    }
    if manifest is not None:
        files[MANIFEST] = manifest
    if toolchain.is_file():
        files["lean-toolchain"] = toolchain.read_text(encoding="utf-8")
    for name in libraries[2:]:
        for source in [workspace / f"{name}.lean", *sorted((workspace / name).rglob("*.lean"))]:
            if source.is_file() and not source.is_symlink():
                files[source.relative_to(workspace).as_posix()] = source.read_text("utf-8")
    return files


SOLUTION_NOT_BUILT = "comparator could not build or export the solution"
"""The detail of a ``server_error`` in which comparator built and exported the challenge, went
on to the solution (its own ``Building GapscopeSolution`` line, printed before any of the
model's code runs, so the model cannot forge it), and the solution's build or export exited
non-zero without being killed by a signal: the solution's own Lean failed. In a run that is
still ``server_error`` (comparator runs only after the REPL accepted the same code), but the
self-test, which puts every case to comparator directly, counts it as comparator refusing the
solution (``gapscope.lean.selftest.runner``)."""


def _solution_failed(output: str, why: str) -> bool:
    """Whether comparator's failure is the solution's build or export exiting on its own (not
    the challenge's, not a child killed by a signal: ``Child exited with 137`` is SIGKILL)."""
    code = re.fullmatch(r"Child exited with (\d+)", why)
    reached = f"Building {SOLUTION_MODULE}" in output.splitlines()
    return code is not None and int(code.group(1)) < 128 and reached


def rejection(run: Run) -> tuple[Status, str]:
    """What comparator's non-zero exit means, read only from what the model's code cannot
    write: the signal that killed comparator, or comparator's own last ``uncaught
    exception`` line (printed after every child it ran has exited; its children's output, the
    model's build log included, comes before it and is never read for a verdict).

    A failed build or export (``Child exited with N``) is ``server_error``: comparator runs
    only after the REPL accepted the same code on the same header, so a build that then fails
    was killed (out of memory: SIGKILL), ran out of room, or met an environment the REPL does
    not share - nothing about the proof is established, and nothing is cached."""
    if run.code is not None and run.code < 0:
        return Status.SERVER_ERROR, f"comparator was killed by signal {-run.code}"
    lines = run.output.splitlines()
    last = next((ln for ln in reversed(lines) if ln.startswith(_UNCAUGHT)), "")
    why = last.removeprefix(_UNCAUGHT).strip()
    if not why:
        return Status.SERVER_ERROR, f"comparator exited {run.code} without saying why"
    environment = _ENVIRONMENT.search(why)
    if environment:
        tool = environment["tool"] or environment["missing"]
        named = f" (`{tool}` failed or is missing)" if tool else ""
        return Status.SERVER_ERROR, f"comparator could not start its checks{named}: {why}"
    if _solution_failed(run.output, why):
        return Status.SERVER_ERROR, f"{SOLUTION_NOT_BUILT}: {why}"
    if why.startswith("Child exited") or "not found in challenge" in why:
        return Status.SERVER_ERROR, f"comparator could not build or export a module: {why}"
    if "Illegal axiom" in why:
        return Status.SORRY, f"comparator: {why}"
    if _MISMATCH.search(why):
        return Status.MISSING_DECLARATION, f"comparator: {why}: not the theorem asked for"
    return Status.LEAN_ERROR, f"comparator rejected the solution: {why}"


@dataclass(frozen=True)
class KernelChecker:
    """How to run comparator for one check.

    ``run``: the command prefix (``lake env <comparator>``) that takes the config file;
    ``env``: what it needs in its environment (``COMPARATOR_LEAN4EXPORT``,
    ``COMPARATOR_LANDRUN``); ``revision``: the commit it was built from; ``sandbox``: the
    landrun it runs the builds in, as ``<path>#<sha256>`` (both in every cached verdict's key
    and in the self-test's: another landrun, or the same path rebuilt, voids a pass);
    ``binaries``: comparator, lean4export and landrun as ``<path>#<sha256>`` (the self-test's
    key holds them: a rebuilt comparator voids a pass as another landrun does)."""

    name: Checker
    run: tuple[str, ...]
    revision: str
    env: Mapping[str, str] = field(default_factory=dict)
    sandbox: str = ""
    binaries: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """What a verdict lists among its checks: ``kernel:comparator``."""
        return f"kernel:{self.name.value}"

    @property
    def identity(self) -> str:
        return f"{self.label}@{self.revision}" + (
            f"+landrun:{self.sandbox}" if self.sandbox else ""
        )

    def missing_tools(self) -> list[str]:
        """The tools comparator runs before building that are not on the PATH it gets."""
        path = child_environment(self.env).get("PATH")
        return [tool for tool in _PRELUDE_TOOLS if shutil.which(tool, path=path) is None]

    def check(
        self,
        project: Path,
        header: str,
        challenge: str,
        solution: str,
        names: Sequence[str],
        timeout_s: float,
        sandboxed: bool,
        messages: tuple[LeanMessage, ...] = (),
        bounds: Bounds | None = None,
    ) -> LeanVerdict:
        """comparator's verdict on ``solution`` against ``challenge`` (``messages``: what the
        REPL said of the solution, kept on the verdict for the record). Sandboxed, with
        ``bounds``, the check is held to them as a REPL is (``gapscope.lean.bounded``: a
        cgroup per check where the host offers one, comparator being started afresh for each;
        else, as root, the sandbox started as an unprivileged uid under ``RLIMIT_NPROC``); a
        check a limit stopped is a ``server_error`` naming it. The verdict's ``bounds`` say
        which held."""
        start = time.monotonic()
        if not sandboxed and landlock_abi() == 0:
            return LeanVerdict(
                Status.SERVER_ERROR, messages, 0.0, None,
                "comparator refused: this kernel has no Landlock, so landrun --best-effort "
                "would build the model's code unconfined, and the check is not in bubblewrap "
                "either; install bubblewrap or use a kernel with Landlock",
                checker=self.name, checks=("repl-text", self.label),
            )  # fmt: skip
        missing = self.missing_tools()
        if missing:
            return LeanVerdict(
                Status.SERVER_ERROR, messages, 0.0, None,
                f"comparator cannot run here: {', '.join(missing)} not on PATH (comparator "
                "runs `lean --print-prefix` and `which git` before building anything)",
                checker=self.name, checks=("repl-text", self.label),
            )  # fmt: skip
        held = run_bounds("kernel check", bounds, sandboxed, self.run, project, self.env)
        scratch = Path(tempfile.mkdtemp(prefix="gapscope-kernel-"))
        try:
            files = judge_files(project, header, challenge, solution, scratch)
            files["config.json"] = json.dumps(comparator_config(names))
            for name, text in files.items():
                (scratch / name).parent.mkdir(parents=True, exist_ok=True)
                (scratch / name).write_text(text, encoding="utf-8")
            argv = [*self.run, str(scratch / "config.json")]
            done = held.run(argv, scratch, timeout_s, writable=(scratch,), env=self.env)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        limit = held.exceeded(done)
        if limit is not None:
            status, detail = Status.SERVER_ERROR, limit
        elif done.code is None:
            status, detail = Status.TIMEOUT, f"comparator gave no answer within {timeout_s} s"
        elif done.code == 0:
            status, detail = Status.VALID, "comparator accepted the solution"
        else:
            status, detail = rejection(done)
        return LeanVerdict(
            status,
            messages,
            time.monotonic() - start,
            None,  # comparator checks the axioms against the permitted ones; it lists none
            detail,
            checker=self.name,
            checks=("repl-text", self.label),
            bounds=held.describe(),
        )


def kernel_checker_missing(project: Path) -> list[str]:
    """What comparator needs in ``project`` and is not there (empty: it can run)."""
    return [
        what
        for what, there in (
            ("lake on PATH", shutil.which("lake") is not None),
            (f"comparator ({COMPARATOR_BINARY})", find_comparator(project) is not None),
            (f"lean4export ({LEAN4EXPORT_BINARY})", find_lean4export(project) is not None),
            (f"landrun (PATH or ${ENV_LANDRUN})", find_landrun() is not None),
        )
        if not there
    ]


def find_kernel_checker(project: Path) -> KernelChecker | None:
    """comparator where the workspace built it and lean4export, ``lake`` and landrun exist;
    None otherwise (``lean doctor`` says which is missing)."""
    comparator, export = find_comparator(project), find_lean4export(project)
    landrun = find_landrun()
    if shutil.which("lake") is None or comparator is None or export is None or landrun is None:
        return None
    sandbox = Path(landrun).resolve()
    env = {"COMPARATOR_LEAN4EXPORT": str(export.resolve()), ENV_LANDRUN: str(sandbox)}
    revision = manifest_revision(project, "Comparator") or f"unknown (not {COMPARATOR_REV})"
    run = ("lake", "env", str(comparator.resolve()))
    binaries = (
        ("comparator", identify(comparator)),
        ("lean4export", identify(export)),
        ("landrun", identify(sandbox)),
    )
    return KernelChecker(
        Checker.COMPARATOR, run, revision, env, f"{sandbox}#{file_sha256(sandbox)}", binaries
    )


def manifest_revision(project: Path, package: str) -> str | None:
    """The commit ``lake-manifest.json`` says ``package`` was fetched at (what was built)."""
    entries = read_manifest(project).get("packages", [])
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("name", "")).lower() == package.lower():
            rev = entry.get("rev")
            return str(rev) if rev else None
    return None
