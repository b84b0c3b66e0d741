"""The O-NNG problem set: our own Peano-arithmetic library and its problems, loaded from data.

``problems/library.lean`` defines ``MyNat``, numerals, ``+ * ^`` by structural recursion and
``≤`` as ``∃ c, b = a + c``, and proves the Peano facts (``add_zero``, ``add_succ``, ...) as
theorems by ``rfl`` before making ``+ * ^`` irreducible. So the "axioms" are theorems and every
valid proof uses only Lean's standard axioms: the checker's soundness allow-list needs no
exception, and ``rfl`` cannot shortcut a proof by computing. Each ``problems/NN_<module>.toml``
holds one module: the tactics it adds and its problems (statement and reference proof) in
dependency order. A module may use its own tactics and those of every earlier module.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gapscope.onng.lexicon import identifiers

PROBLEM_DIR = Path(__file__).parent / "problems"
NAMESPACE = "MyNat"


@dataclass(frozen=True)
class Problem:
    """One theorem to prove: ``theorem <name> <binders> : <statement>``."""

    name: str
    module: str
    index: int
    binders: str
    statement: str
    proof: str

    def header(self) -> str:
        """The declaration up to ``:=``."""
        binders = f" {self.binders}" if self.binders else ""
        return f"theorem {self.name}{binders} : {self.statement}"

    def declaration(self, proof: str | None = None) -> str:
        """The theorem with ``proof`` (default: the reference proof) as its tactic block."""
        body = (proof if proof is not None else self.proof).strip("\n")
        indented = "\n".join(f"  {line}" if line else "" for line in body.splitlines())
        return f"{self.header()} := by\n{indented}"

    def closed_statement(self) -> str:
        """The statement with its binders as a ``∀`` (the type the theorem must have)."""
        return f"∀ {self.binders}, {self.statement}" if self.binders else self.statement


@dataclass(frozen=True)
class Module:
    """A world of the game: its new tactics and its problems in dependency order."""

    name: str
    title: str
    tactics: tuple[str, ...]
    problems: tuple[Problem, ...]


@dataclass(frozen=True)
class ProblemSet:
    """The library preamble and the modules in order."""

    library: str
    modules: tuple[Module, ...]

    @property
    def problems(self) -> tuple[Problem, ...]:
        return tuple(p for m in self.modules for p in m.problems)

    def module(self, name: str) -> Module:
        for m in self.modules:
            if m.name == name:
                return m
        raise KeyError(f"no module {name!r}; modules: {', '.join(self.module_names)}")

    @property
    def module_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.modules)

    def allowed_tactics(self, module: str) -> tuple[str, ...]:
        """The tactics of ``module`` and of every module before it."""
        allowed: list[str] = []
        for m in self.modules:
            allowed.extend(m.tactics)
            if m.name == module:
                return tuple(allowed)
        raise KeyError(f"no module {module!r}")

    @property
    def tactics(self) -> tuple[str, ...]:
        return tuple(t for m in self.modules for t in m.tactics)

    def given_theorems(self) -> tuple[str, ...]:
        """The library's theorem declarations up to ``:=`` (the "axioms" a prompt shows)."""
        return tuple(
            line.split(" := ")[0]
            for line in self.library.splitlines()
            if line.startswith("theorem ")
        )

    def given_names(self) -> tuple[str, ...]:
        return tuple(header.split()[1] for header in self.given_theorems())

    def declared_names(self) -> tuple[str, ...]:
        """Every name the library and the problems declare (type, constructors, definitions,
        theorems): the names obfuscation renames, with the tactics."""
        names: list[str] = []
        for line in self.library.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("inductive", "def", "theorem"):
                names.append(words[1])
            elif len(words) >= 2 and words[0] == "@[reducible]" and words[1] == "def":
                names.append(words[2])
            elif len(words) >= 3 and words[0] == "|" and words[2] == ":":
                names.append(words[1])
        names.extend(p.name for p in self.problems)
        return tuple(dict.fromkeys(names))

    def vocabulary(self) -> tuple[str, ...]:
        """The declared names and the tactics, without repeats."""
        return tuple(dict.fromkeys(self.declared_names() + self.tactics))

    def all_identifiers(self) -> frozenset[str]:
        """Every identifier occurring anywhere (names, variables, hypotheses, core names)."""
        text = "\n".join([self.library, *(p.declaration() for p in self.problems)])
        return frozenset(identifiers(text)) | frozenset(self.tactics)


def _load_module(path: Path, start: int) -> Module:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    head = data["module"]
    problems = tuple(
        Problem(
            name=p["name"],
            module=head["name"],
            index=start + i,
            binders=p.get("binders", ""),
            statement=p["statement"],
            proof=p["proof"].strip("\n"),
        )
        for i, p in enumerate(data["problem"])
    )
    return Module(head["name"], head["title"], tuple(head["tactics"]), problems)


@cache
def load_problem_set(directory: Path = PROBLEM_DIR) -> ProblemSet:
    """The library and the modules of ``directory`` (files sorted by their number prefix)."""
    modules: list[Module] = []
    for path in sorted(directory.glob("*.toml")):
        modules.append(_load_module(path, sum(len(m.problems) for m in modules)))
    library = (directory / "library.lean").read_text(encoding="utf-8").rstrip("\n")
    return ProblemSet(library=library, modules=tuple(modules))
