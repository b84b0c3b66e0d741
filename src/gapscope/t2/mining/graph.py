"""The dependency graph over a project's declarations: who uses whom, successors and depth.

An edge runs from a declaration to each declaration that uses it (its dependents). The paper's
successors of a target are the integration tests of a generated target: every declaration
that depends on it, directly or through others - its transitive dependents (the paper reports
1.6k on average, which only transitive dependents reach). Its depth is the length of the
longest chain of dependents from it: 0 for a declaration nothing uses, 1 when only direct
users exist, 2 or more when some dependent is itself used ("distance to successors > 1").

Lean adds a constant only after everything it mentions, so the graph is acyclic but for
mutual blocks (mutual inductive types mention each other); a cycle's members are one node for
depth (its strongly connected component), which keeps the longest chain finite.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gapscope.t2.mining.traced import TracedDeclaration


@dataclass(frozen=True)
class DependencyGraph:
    """``dependents[name]``: the declarations that use ``name`` directly (sorted)."""

    dependents: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, declarations: Iterable[TracedDeclaration]) -> DependencyGraph:
        """The graph of ``declarations``; uses of names outside them are not edges."""
        decls = list(declarations)
        known = {d.name for d in decls}
        users: dict[str, set[str]] = {name: set() for name in known}
        for d in decls:
            for used in d.uses:
                if used in known and used != d.name:
                    users[used].add(d.name)
        return cls({name: tuple(sorted(u)) for name, u in users.items()})

    def successors(self, name: str) -> set[str]:
        """Every declaration that depends on ``name``, directly or not (never ``name``)."""
        seen: set[str] = set()
        todo = list(self.dependents.get(name, ()))
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(self.dependents.get(current, ()))
        seen.discard(name)
        return seen

    def depths(self) -> dict[str, int]:
        """Longest chain of dependents from each declaration (members of a cycle share one)."""
        component = _components(self.dependents)
        members: dict[int, list[str]] = {}
        for name, c in component.items():
            members.setdefault(c, []).append(name)
        # Tarjan numbers components in reverse topological order: a component's dependents
        # are numbered before it, so one pass in increasing order sees them first.
        depth: dict[int, int] = {}
        for c in sorted(members):
            below = [
                depth[component[u]] + 1
                for n in members[c]
                for u in self.dependents[n]
                if component[u] != c
            ]
            depth[c] = max(below, default=0)
        return {name: depth[c] for name, c in component.items()}


def _components(edges: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Tarjan's strongly connected components, iteratively (no recursion limit on long
    chains): node -> component number, numbered in reverse topological order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    component: dict[str, int] = {}
    counter = components = 0
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, ())
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = components
                    if member == node:
                        break
                components += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return component
