"""Character-level name obfuscation at noise level lambda (O-NNG, P = lambda^2.5).

Per character of a name: it is deleted with probability 0.3P; a kept character is substituted
with probability P by another character of the identifier alphabet (position 0 draws from the
start alphabet); independently, a random character is inserted after it with probability 0.4P.
A draw that is empty, not a valid identifier, a reserved word, another original name or an
earlier result is rejected and redrawn, so the renaming is a bijection onto valid, fresh
names. lambda = 0 is the identity. Each name has its own generator seeded by (seed, lambda,
name): the same seed gives the same renaming byte for byte, whatever else is renamed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from gapscope.onng.lexicon import REST_CHARS, START_CHARS, is_identifier

MAX_DRAWS = 1000


def perturbation_probability(lam: float) -> float:
    """P = lambda^2.5, the per-character substitution probability."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"noise level lambda must be in [0, 1], got {lam}")
    return float(lam**2.5)


@dataclass(frozen=True)
class Edit:
    """What one draw did: the result and its substitution/insertion/deletion counts."""

    text: str
    substitutions: int
    insertions: int
    deletions: int


def perturb(name: str, lam: float, rng: random.Random) -> Edit:
    """One draw of the noise process on ``name`` (may be invalid; callers validate)."""
    p = perturbation_probability(lam)
    out: list[str] = []
    subs = ins = dels = 0
    for ch in name:
        if rng.random() < 0.3 * p:
            dels += 1
        else:
            if rng.random() < p:
                pool = START_CHARS if not out else REST_CHARS
                ch = rng.choice(pool.replace(ch, ""))
                subs += 1
            out.append(ch)
        if rng.random() < 0.4 * p:
            out.append(rng.choice(REST_CHARS if out else START_CHARS))
            ins += 1
    return Edit("".join(out), subs, ins, dels)


def _name_rng(name: str, lam: float, seed: int) -> random.Random:
    return random.Random(f"onng:{seed}:{lam!r}:{name}")


def build_renaming(
    names: Iterable[str], lam: float, seed: int, reserved: Iterable[str] = ()
) -> dict[str, str]:
    """A bijective renaming of ``names`` (original -> obfuscated), in sorted name order.

    ``reserved`` holds every other identifier of the corpus (variables, hypotheses, core
    names): no result may equal one of them, nor a Lean keyword or core tactic.
    """
    ordered = sorted(set(names))
    if perturbation_probability(lam) == 0.0:
        return {n: n for n in ordered}
    originals = set(ordered)
    taken = set(reserved) - originals
    renaming: dict[str, str] = {}
    used: set[str] = set()
    for name in ordered:
        rng = _name_rng(name, lam, seed)
        for _ in range(MAX_DRAWS):
            text = perturb(name, lam, rng).text
            if text == name:
                break
            fresh = text not in used and text not in taken and text not in originals
            if fresh and is_identifier(text):
                break
        else:
            raise RuntimeError(f"no valid obfuscation of {name!r} in {MAX_DRAWS} draws")
        renaming[name] = text
        used.add(text)
    return renaming
