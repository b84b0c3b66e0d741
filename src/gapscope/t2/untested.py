"""T2's checking paths that no known-answer self-test certifies, and the gate in front of them.

A local Lean workspace is certified by ``gapscope lean selftest`` (``open_backend`` refuses it
untested). Two of T2's paths have no such test:

- ``kimina``: a kimina-lean-server's compile verdicts. Its REPL runs on the server, where
  gapscope can neither hash the binaries nor put the self-test's cases to it before a run.
- ``lake-build``: the repository track (``repo``), whose compile, TA and graded TA are read
  from ``lake`` exit codes and error lines; no known-answer case has gone through that path.

A run on either stops before any model call unless the user allows it (``allow_untested``:
``--allow-untested``, or ``$GAPSCOPE_LEAN_ALLOW_UNTESTED=1``, the variable the local gate
reads too); an allowed run's log names the path in its task metadata (``untested``) and every
sample it checked carries ``selftest: false`` in its score metadata, which the report shows.
"""

from __future__ import annotations

import os

from gapscope.lean import (
    ENV_ALLOW_UNTESTED,
    ENV_SPEC,
    LeanVerdict,
    SelfTestRequired,
    parse_spec,
    untested_allowed,
)

KIMINA = "kimina"
REPO_BUILD = "lake-build"
UNTESTED_PATHS = {
    KIMINA: "a kimina server's compile verdicts",
    REPO_BUILD: "the repository track (--repo: scores from lake build exit codes)",
}
"""Each untested path as the refusal and the report name it."""


def untested_path(lean: str | None, repo: str | None) -> str | None:
    """The path a T2 run would check with that has no self-test (:data:`KIMINA`,
    :data:`REPO_BUILD`), or None for a local workspace (gated by the Lean layer itself) and
    when nothing is configured (the checker's opening says what to install)."""
    if repo:
        return REPO_BUILD
    spec = lean or os.environ.get(ENV_SPEC, "").strip()
    if spec and parse_spec(spec)[0] == KIMINA:
        return KIMINA
    return None


def require_tested(path: str | None, allow: bool) -> None:
    """SelfTestRequired (a LeanUnavailable: the command exits 2 before asking the model) when
    ``path`` is untested and the user did not allow it."""
    if path is None or untested_allowed(allow):
        return
    raise SelfTestRequired(
        f"{UNTESTED_PATHS[path]}: no known-answer self-test certifies this path, so no T2 score"
        f" from it can be trusted; pass --allow-untested (task option allow_untested, or"
        f" {ENV_ALLOW_UNTESTED}=1) to run anyway, every score then labelled selftest=false"
    )


def certified(*verdicts: LeanVerdict) -> bool:
    """Whether every verdict came from a path that passed its self-test here (a kimina
    verdict's ``selftest`` is None: it was never tested, so it does not count as tested)."""
    return all(v.selftest is True for v in verdicts)
