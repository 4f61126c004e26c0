"""Checks on the memory lineage graph (:mod:`magma.lineage`). Pure.

- :class:`SupersedesCycle`: memories that supersede each other round a loop (a memory naming
  itself is a loop of one); :class:`MergedIntoCycle`: memories merged into each other round
  a loop. Found per strongly connected component of the ``supersedes`` (``merged_into``)
  edges, one cycle each, so the cost is linear in the graph, whatever the loops. A link of a
  loop says nothing: it is reported and ignored (:func:`loop_edges`), so a loop never makes
  a memory superseded, merged, archived or "changed" for anything derived from it. Whether a
  memory is current stays its own status and days (:func:`consistency.lifecycle.is_current`).
- :class:`SupersededTwice`: one memory named as superseded by two or more (two successors of
  one fact; usually one of them should supersede the other).
- :class:`DanglingLineage`: a ``supersedes``, ``superseded_by``, ``merged_into`` or
  ``derived_from`` link naming no memory (forgotten, renamed, mistyped).
- :class:`JunkLineage`: a value of one of those properties that is no link at all (a number,
  a mapping, an empty list item), written by hand: reported and ignored
  (:func:`junk_lineage`, from the memories rather than the graph, which holds links only).
- :class:`ChangedSource`: a live memory derived (``derived_from``, directly or through other
  derived memories) from a source that changed since: superseded or merged into a memory
  outside the chain, archived, gone, or forgotten (``dreamd forget`` leaves a count in
  ``forgotten_sources``, never the name). The walk keeps a visited set, so a chain of
  derivations that loops is walked once and flags each memory once per changed source.

Each drift carries the chain as vault paths (``[[stem]]`` for a link naming nothing).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from magma.lineage import LINEAGE_PROPERTIES, LineageMemory, link_stem

__all__ = [
    "FORGOTTEN",
    "ChangedSource",
    "DanglingLineage",
    "GraphDrift",
    "JunkLineage",
    "MergedIntoCycle",
    "SupersededTwice",
    "SupersedesCycle",
    "graph_drifts",
    "junk_lineage",
    "loop_edges",
    "names_nothing",
]


@dataclass(frozen=True, slots=True)
class SupersedesCycle:
    """``chain`` supersedes round a loop: ``chain[0]`` supersedes ``chain[1]`` … and the last
    supersedes ``chain[0]``; ``path`` is ``chain[0]`` (the smallest path of the loop)."""

    path: str
    chain: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MergedIntoCycle:
    """``chain`` is merged round a loop: ``chain[0]`` names ``chain[1]`` in ``merged_into`` …
    and the last names ``chain[0]``; ``path`` is ``chain[0]`` (the smallest path)."""

    path: str
    chain: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JunkLineage:
    """``path`` holds ``value`` (as YAML reads it, shown as JSON: ``42``, ``{"a": 1}``,
    ``null`` for an empty list item) in its ``written_in`` property, and it is no link."""

    path: str
    written_in: str
    value: str


@dataclass(frozen=True, slots=True)
class SupersededTwice:
    """``path`` is superseded by each memory of ``by`` (two or more, sorted)."""

    path: str
    by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DanglingLineage:
    """``path`` names ``target`` (as written) in its ``written_in`` property, and no memory
    has that name."""

    path: str
    written_in: str
    target: str


@dataclass(frozen=True, slots=True)
class ChangedSource:
    """``path`` derives from ``chain[-1]`` through ``chain`` (``chain[0]`` is ``path``), and
    that source ``change``-d: ``"superseded by X"``, ``"merged into X"``, ``"archived
    (reason)"`` or ``"not found"``."""

    path: str
    chain: tuple[str, ...]
    change: str


GraphDrift = (SupersedesCycle | MergedIntoCycle | SupersededTwice | DanglingLineage
              | JunkLineage | ChangedSource)

#: The end of a chain whose source was forgotten: ``dreamd forget`` takes the name out of the
#: memories derived from it and counts it in their ``forgotten_sources``.
FORGOTTEN = "(a forgotten memory)"


def _link_name(target: str) -> str:
    target = target.strip()
    return target if target.startswith("[[") else f"[[{target}]]"


def _name(graph: nx.MultiDiGraph, node: str) -> str:
    data = graph.nodes[node]
    if data.get("kind") == "unresolved":
        return _link_name(str(data.get("target") or node.split(":", 1)[-1]))
    return str(data.get("path", node))


def _is_memory(graph: nx.MultiDiGraph, node: str) -> bool:
    return graph.nodes[node].get("kind") == "memory"


def _typed(graph: nx.MultiDiGraph, kind: str) -> nx.DiGraph:
    """The edges of one lineage ``kind`` as a plain digraph."""
    sub = nx.DiGraph()
    sub.add_edges_from((u, v) for u, v, k in graph.edges(keys=True) if k == kind)
    return sub


def _loops(typed: nx.DiGraph) -> list[set[str]]:
    """The node sets of ``typed`` that lie on a loop (a strongly connected component of two
    or more, or one node with an edge to itself)."""
    return [component for component in nx.strongly_connected_components(typed)
            if len(component) > 1 or typed.has_edge(next(iter(component)),
                                                     next(iter(component)))]


def loop_edges(graph: nx.MultiDiGraph) -> set[tuple[str, str, str]]:
    """``(src, dst, kind)`` of every ``supersedes`` and ``merged_into`` edge of ``graph`` that
    lies on a loop of its kind (both ends in one loop): the links a loop is made of, which
    say nothing about which memory is newer or kept. O(graph)."""
    found: set[tuple[str, str, str]] = set()
    for kind in ("supersedes", "merged_into"):
        typed = _typed(graph, kind)
        for component in _loops(typed):
            found.update((u, v, kind) for u, v in typed.subgraph(component).edges)
    return found


def _cycles(graph: nx.MultiDiGraph, typed: nx.DiGraph,
            make: type[SupersedesCycle] | type[MergedIntoCycle]
            ) -> list[SupersedesCycle | MergedIntoCycle]:
    found: list[SupersedesCycle | MergedIntoCycle] = []
    for component in _loops(typed):
        first = min(component, key=lambda n: _name(graph, n))
        edges = nx.find_cycle(typed.subgraph(component), source=first)
        chain = tuple(_name(graph, u) for u, _v in edges)
        start = chain.index(min(chain))
        chain = chain[start:] + chain[:start]
        found.append(make(chain[0], chain))
    return found


def _twice(graph: nx.MultiDiGraph, supersedes: nx.DiGraph) -> list[SupersededTwice]:
    found: list[SupersededTwice] = []
    for node in supersedes.nodes:
        newer = sorted(_name(graph, u) for u in supersedes.predecessors(node)
                       if _is_memory(graph, u) and u != node)
        if len(newer) > 1 and _is_memory(graph, node):
            found.append(SupersededTwice(_name(graph, node), tuple(newer)))
    return found


def _dangling(graph: nx.MultiDiGraph) -> list[DanglingLineage]:
    found: list[DanglingLineage] = []
    for src, dst, data in graph.edges(data=True):
        if data.get("relation") not in {"supersedes", "merged_into", "derived_from"}:
            continue
        for prop in str(data.get("written_in", "")).split("+"):
            names_newer = LINEAGE_PROPERTIES[prop][1]
            writer, named = (dst, src) if names_newer else (src, dst)
            if graph.nodes[named].get("kind") == "unresolved" and _is_memory(graph, writer):
                found.append(DanglingLineage(_name(graph, writer), prop,
                                             str(graph.nodes[named].get("target", ""))))
    return found


def _live(graph: nx.MultiDiGraph, node: str, loops: set[tuple[str, str, str]]) -> bool:
    data = graph.nodes[node]
    return data.get("status") != "archived" and not any(
        k == "supersedes" and (u, v, k) not in loops
        for u, v, k in graph.in_edges(node, keys=True))


def _change(graph: nx.MultiDiGraph, source: str, chain: set[str],
            loops: set[tuple[str, str, str]]) -> str | None:
    """How ``source`` changed, ignoring what the derivation itself did (a source archived
    into, or superseded by, a memory of ``chain``) and the links of a loop (``loops``)."""
    if graph.nodes[source].get("kind") == "unresolved":
        return "not found (forgotten or renamed)"
    newer = sorted(_name(graph, u) for u, _, key in graph.in_edges(source, keys=True)
                   if key == "supersedes" and u not in chain
                   and (u, source, key) not in loops)
    if newer:
        return "superseded by " + " and ".join(newer)
    into = [v for _, v, k in graph.out_edges(source, keys=True)
            if k == "merged_into" and (source, v, k) not in loops]
    keepers = sorted(_name(graph, v) for v in into if v not in chain)
    if keepers:
        return "merged into " + " and ".join(keepers)
    data = graph.nodes[source]
    if data.get("status") == "archived" and not into:
        return "archived" + (f" ({data['archived_reason']})" if data.get("archived_reason")
                             else "")
    return None


def _forgotten(graph: nx.MultiDiGraph, node: str) -> int:
    count = graph.nodes[node].get("forgotten_sources", 0)
    return count if isinstance(count, int) else 0


def _changed_sources(graph: nx.MultiDiGraph, derived: nx.DiGraph,
                     loops: set[tuple[str, str, str]]) -> list[ChangedSource]:
    found: list[ChangedSource] = []
    starts = {*derived.nodes, *(n for n in graph.nodes if _forgotten(graph, n))}
    for start in sorted(starts, key=lambda n: _name(graph, n)):
        if not _is_memory(graph, start) or not _live(graph, start, loops):
            continue
        parents: dict[str, str | None] = {start: None}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            path = [node]
            while (up := parents[path[-1]]) is not None:
                path.append(up)
            chain = tuple(_name(graph, n) for n in reversed(path))
            if _is_memory(graph, node) and _forgotten(graph, node):
                count = _forgotten(graph, node)
                found.append(ChangedSource(chain[0], (*chain, FORGOTTEN),
                                           f"{count} of its sources forgotten" if count > 1
                                           else "forgotten"))
            if node != start:
                change = _change(graph, node, set(path), loops)
                if change is not None:
                    found.append(ChangedSource(chain[0], chain, change))
            for source in sorted(derived.successors(node)) if node in derived else ():
                if source not in parents:  # met before: a loop of derivations is walked once
                    parents[source] = node
                    queue.append(source)
    return found


def names_nothing(drifts: Iterable[GraphDrift]) -> set[tuple[str, str]]:
    """``(memory path, link stem)`` of each lineage link in ``drifts`` that names no memory
    (a dangling link, a source not found): the checker reports them here, not again as
    broken links."""
    found: set[tuple[str, str]] = set()
    for drift in drifts:
        if isinstance(drift, DanglingLineage):
            found.add((drift.path, link_stem(drift.target)))
        elif isinstance(drift, ChangedSource) and drift.chain[-1].startswith("[["):
            found.add((drift.chain[-2], link_stem(drift.chain[-1])))
    return found


def graph_drifts(graph: nx.MultiDiGraph) -> list[GraphDrift]:
    """Every lineage drift of ``graph`` (a vault or lineage graph, :mod:`magma.lineage`), in
    a stable order: cycles, memories superseded twice, dangling links, changed sources, each
    by path."""
    supersedes = _typed(graph, "supersedes")
    changed = _changed_sources(graph, _typed(graph, "derived_from"), loop_edges(graph))
    # a live memory derived from nothing is one finding: its source is "not found"
    gone = {(c.path, c.chain[1]) for c in changed if len(c.chain) == 2}
    dangling = [d for d in _dangling(graph) if d.written_in != "derived_from"
                or (d.path, _link_name(d.target)) not in gone]
    found: list[GraphDrift] = [*_cycles(graph, supersedes, SupersedesCycle),
                               *_cycles(graph, _typed(graph, "merged_into"), MergedIntoCycle),
                               *_twice(graph, supersedes), *dangling, *changed]
    kinds = [SupersedesCycle, MergedIntoCycle, SupersededTwice, DanglingLineage, JunkLineage,
             ChangedSource]
    return sorted(found, key=lambda d: (kinds.index(type(d)), d.path, str(d)))


def junk_lineage(memories: Iterable[LineageMemory]) -> list[JunkLineage]:
    """Every lineage property value of ``memories`` that is no link
    (:attr:`magma.lineage.LineageMemory.junk`), by path: each is reported and ignored."""
    return sorted((JunkLineage(m.path, prop, value) for m in memories for prop, value in m.junk),
                  key=lambda d: (d.path, d.written_in, d.value))
