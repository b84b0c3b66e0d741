"""A toy of Lean's elaboration of declarations, shared by the fake REPL and the fake checker.

Enough of Lean's meaning to model the attacks on "which theorem was proved": ``namespace``
scopes qualify declared names (``_root_.`` escapes them, ``«...»`` names may hold any text),
and an identifier in a signature resolves to a constant the code declared in an enclosing
namespace before the root one (``Nat.Prime`` inside ``namespace Evil`` after ``def Nat.Prime``
means ``Evil.Nat.Prime``). A constant is its printed signature plus the axioms it uses (given
by the caller: the fake REPL's fixtures decide them).
"""

from __future__ import annotations

import re
from typing import Any

DECL = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable)\s+)*"
    r"(?P<kw>theorem|lemma|def|abbrev|axiom)\s+(?P<name>«[^»]*»|[^\s:({\[]+)"
)
SCOPE = re.compile(r"^\s*(namespace|section|end)\b\s*(\S*)")
IDENT = re.compile(r"[A-Za-z_][\w.'₀-₉]*")

Constants = dict[str, dict[str, Any]]


def _resolve(signature: str, scopes: list[str], known: Constants) -> str:
    prefixes = [".".join(scopes[:k]) for k in range(len(scopes), 0, -1)]

    def full(match: re.Match[str]) -> str:
        word = match[0]
        for prefix in prefixes:
            if f"{prefix}.{word}" in known:
                return f"{prefix}.{word}"
        return word

    return IDENT.sub(full, " ".join(signature.split()))


def elaborate(
    code: str, known: Constants, axioms: list[str], flags: tuple[str, ...] = ()
) -> Constants:
    """The constants ``code`` declares on top of ``known`` (name -> signature, axioms)."""
    scopes: list[str] = []
    kinds: list[str] = []
    new: Constants = {}
    lines = code.split("\n")
    for index, line in enumerate(lines):
        scope = SCOPE.match(line)
        if scope:
            kind, ident = scope.groups()
            if kind == "end":
                if kinds and kinds.pop() == "namespace":
                    scopes.pop()
            else:
                kinds.append(kind)
                if kind == "namespace":
                    scopes.extend(ident.split("."))
            continue
        decl = DECL.match(line)
        if not decl:
            continue
        raw = decl["name"]
        rest = "\n".join([line[decl.end() :], *lines[index + 1 :]])
        signature = rest.split(":=", 1)[0].strip()
        name = raw[1:-1] if raw.startswith("«") else raw
        qualified = (
            name.removeprefix("_root_.")
            if name.startswith("_root_.")
            else ".".join([*scopes, name])
        )
        text = _resolve(signature, scopes, {**known, **new})
        new[qualified] = {
            "signature": f"{qualified} {text}",
            "axioms": axioms,
            "flags": list(flags),
        }
    return new
