"""The OracleLadder release's family sets by name, read from a local copy of the release.

The paper's main diagnostic set and its held-out slice are public (CC BY 4.0) but are not
shipped with gapscope (reference data is loaded, never copied): a user points at a checkout
of the authors' release and names the set. The held-out slice is Appendix M's (Table 25):
32 families compiled apart from the main set, on which the matched roadmap and answers lift
recovery and the random and generic controls do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gapscope.ladder.families import FamiliesVersion, LoadResult, load_families

RELEASE_URL = "https://github.com/slark-prime/OracleLadder"


@dataclass(frozen=True)
class ReleasedSet:
    """A family file of the release, the number of families it holds, what it is for."""

    path: str
    size: int
    about: str


RELEASED_SETS: dict[str, ReleasedSet] = {
    "main-354": ReleasedSet(
        "data/diagnostic_354_families.jsonl", 354, "the diagnostic set (Sections 3-4)"
    ),
    "held-out-32": ReleasedSet(
        "data/diagnostic_held_out_32.jsonl",
        32,
        "the held-out slice, compiled apart from the main set (Appendix M, Table 25)",
    ),
}


class ReleasedSetError(ValueError):
    """A named set that cannot be read from the given release; says what to fetch."""


def released_families(
    name: str, release: Path | None, version: FamiliesVersion = FamiliesVersion.CORRECTED
) -> LoadResult:
    """Family set ``name`` from the release checkout ``release``, every family of it."""
    chosen = RELEASED_SETS.get(name)
    if chosen is None:
        raise ReleasedSetError(
            f"unknown released set {name!r}; choose from {', '.join(RELEASED_SETS)}"
        )
    if release is None:
        raise ReleasedSetError(
            f"family set {name!r} is read from a copy of the authors' release: pass its "
            f"folder as release (--release; git clone {RELEASE_URL})"
        )
    path = release / chosen.path
    if not path.is_file():
        raise ReleasedSetError(f"{path}: not found; is {release} a checkout of {RELEASE_URL}?")
    loaded = load_families(path, version=version)
    if len(loaded.families) != chosen.size:
        problems = "; ".join(map(str, loaded.problems[:3])) or "no load problem"
        raise ReleasedSetError(
            f"{path}: {len(loaded.families)} valid families, the release has {chosen.size} "
            f"({problems})"
        )
    return loaded
