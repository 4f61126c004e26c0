"""Memory lineage: who superseded whom, what was merged into what, what derives from what.

dreamd writes these relations into memory frontmatter as wikilinks by file stem
(``daemon.dream_edits``): a newer memory names the older in ``supersedes`` and the older names
the newer in ``superseded_by``; a merged duplicate, or a source of a synthesis, names its keeper
in ``merged_into``; a derived memory names its sources in ``derived_from``. This module reads
them into typed edges of the vault graph (:mod:`magma.graph`'s node ids, ``note:<path>``):

=================  ==========================  =================================
edge kind          direction                   written in
=================  ==========================  =================================
``supersedes``     newer → older               ``supersedes`` (newer), ``superseded_by`` (older)
``merged_into``    absorbed → keeper           ``merged_into`` (absorbed)
``derived_from``   derived → source            ``derived_from`` (derived)
=================  ==========================  =================================

A link naming no memory goes to an ``unresolved:<stem>`` node (a forgotten or renamed memory).
Every walk here keeps a visited set, so a cycle written by hand never loops. Pure: the caller
reads the files (or the index's properties) and hands in :class:`LineageMemory` values.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, TypeAlias

import networkx as nx

from ccb.names import nfc_key
from magma.graph import node_id

__all__ = [
    "EVIDENCE",
    "LINEAGE_KINDS",
    "LINEAGE_PROPERTIES",
    "RELATIONS",
    "Chain",
    "LineageEdge",
    "LineageKind",
    "LineageMemory",
    "LineageResolver",
    "add_lineage",
    "add_lineage_edge",
    "chain_of",
    "lineage_graph",
    "lineage_key",
    "lineage_links",
    "lineage_memory",
    "lineage_out",
    "link_junk",
    "link_stem",
    "link_values",
    "memory_attrs",
    "name_key",
    "relations_of",
]

LineageKind: TypeAlias = Literal["supersedes", "merged_into", "derived_from"]

#: The lineage edge kinds, in the order they are shown.
LINEAGE_KINDS: tuple[LineageKind, ...] = ("supersedes", "merged_into", "derived_from")

#: Frontmatter property → (edge kind, does the link name the *newer* end of the edge).
LINEAGE_PROPERTIES: Mapping[str, tuple[LineageKind, bool]] = {
    "supersedes": ("supersedes", False),
    "superseded_by": ("supersedes", True),
    "merged_into": ("merged_into", False),
    "derived_from": ("derived_from", False),
}


#: Evidence a promoted diary line names in ``derived_from``: a file's lines
#: (``Daily/2026-12-04.md:11``, ``memory/2026-06-15.md:5-8``, ``~/.claude/projects/….jsonl:42``),
#: the raw layer's own format (issue "From diary to memory"), not a link to a memory.
EVIDENCE = re.compile(r"[^\[\]|#\n]+\.(?:md|jsonl|txt):\d+(?:-\d+)?")


def link_stem(link: str) -> str:
    """``[[folder/name|alias]]`` or ``folder/name.md`` → ``name``, NFC and case-folded: the
    key a memory is found by (the same rule as ``daemon.forget_links.link_stem``)."""
    text = link.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
    return nfc_key(text.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".md").strip()
                   ).casefold()


def _text(value: object) -> str | None:
    """A frontmatter scalar as text (dates ISO), ``None`` when empty."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, list | dict):
        return None
    text = str(value).strip()
    return text or None


def link_values(value: object) -> tuple[str, ...]:
    """The links of a property value as written: one string or a list of them. A wikilink
    written without quotes (``derived_from: [[name]]``, or ``- [[name]]``) is a list in a
    list to YAML (``[["name"]]``); it is read back as the link ``[[name]]``."""
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], list) \
                and len(item[0]) == 1:
            item = item[0]  # ``- [[name]]`` in a block list: one list deeper
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], str):
            item = f"[[{item[0].strip()}]]"
        if isinstance(item, str) and item.strip():
            several = _WIKILINK.findall(item)
            # "[[a]], [[b]]": one text holding several links (a text property in Obsidian)
            found.extend(several if len(several) > 1 else [item.strip()])
    return tuple(found)


#: One wikilink in a text (``[[target|alias]]``).
_WIKILINK = re.compile(r"\[\[[^\[\]\n]+\]\]")


def lineage_key(link: str) -> str:
    """``[[folder/name.md#heading|alias]]`` → ``folder/name``, NFC and case-folded: the
    target a link names, with its folders (``name`` alone for a link by file stem or by
    memory name)."""
    text = link.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
    return "/".join(nfc_key(part.strip()).casefold()
                    for part in text.replace("\\", "/").removesuffix(".md").split("/")
                    if part.strip())


@dataclass(slots=True)
class LineageResolver:
    """The one rule a lineage link names a memory by, for check, lineage, the dream and the
    graph: a link with folders (``[[work/lunch]]``) names the memory whose path ends so
    (vault-relative or below any folder, as Obsidian resolves it); one without names a file
    stem (several files of one stem: the shortest path wins, as in Obsidian), else a
    memory's ``name`` (:func:`name_key`). ``None``: no memory. Built from the memory paths
    and names, O(1) a lookup (a link with folders: O(files of that stem))."""

    stems: dict[str, set[str]]
    names: dict[str, set[str]]

    @classmethod
    def of(cls, memories: Iterable[tuple[str, str]]) -> LineageResolver:
        """From ``(path, name)`` pairs."""
        made = cls({}, {})
        for path, name in memories:
            made.add(path, name)
        return made

    def add(self, path: str, name: str) -> None:
        self.stems.setdefault(link_stem(path), set()).add(path)
        self.names.setdefault(name_key(name), set()).add(path)

    def remove(self, path: str, name: str) -> None:
        for table, key in ((self.stems, link_stem(path)), (self.names, name_key(name))):
            held = table.get(key)
            if held is not None:
                held.discard(path)
                if not held:
                    del table[key]

    def __call__(self, link: str) -> str | None:
        target = lineage_key(link)
        stem = target.rsplit("/", 1)[-1]
        if not stem:
            return None
        found: Iterable[str] = self.stems.get(stem, ())
        if "/" in target:
            found = [p for p in found if (key := lineage_key(p)) == target
                     or key.endswith("/" + target)]
        elif not found:
            found = self.names.get(stem, ())
        return min(found, key=lambda p: (len(p), p)) if found else None


def link_junk(value: object) -> tuple[str, ...]:
    """The items of a property value that :func:`link_values` cannot read as a link, each
    shown as JSON (``42``, ``true``, ``{"a": 1}``; ``null`` for an empty list item): a
    number, a mapping, a list that is not the YAML shape of ``[[name]]``. An empty property
    (``supersedes:``) and blank text are no value at all, not junk."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ()
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            continue
        if link_values([item]):
            continue  # ``- [[name]]`` written without quotes: a link
        found.append(json.dumps(item, ensure_ascii=False, default=str))
    return tuple(found)


def _links(value: object) -> tuple[str, ...]:
    """The links of a property value (:func:`link_values`)."""
    return link_values(value)


def name_key(name: str) -> str:
    """A memory's ``name`` as a ``derived_from`` may name it (``derived_from: Atlas staging
    overview``): NFC, case-folded, the key :func:`link_stem` gives the same text."""
    return nfc_key(name.strip()).casefold()


@dataclass(frozen=True, slots=True)
class LineageMemory:
    """What the lineage reads of one memory: ``path`` (vault-relative), its ``name``, id,
    status, ``created``/``updated``/``valid_to`` as written (ISO text), ``archived_reason``,
    and ``links`` as ``(property, link as written)``, property one of
    :data:`LINEAGE_PROPERTIES`."""

    path: str
    name: str
    memory_id: str | None = None
    status: str | None = None
    created: str | None = None
    updated: str | None = None
    valid_to: str | None = None
    archived_reason: str | None = None
    version: str | None = None
    links: tuple[tuple[str, str], ...] = ()
    #: Sources forgotten since it was derived (``forgotten_sources``: ``dreamd forget``
    #: takes the name out and counts it here).
    forgotten_sources: int = 0
    #: ``(property, value as JSON)`` of each value of a lineage property that is no link
    #: (:func:`link_junk`): reported by the checker, never an edge.
    junk: tuple[tuple[str, str], ...] = ()


def lineage_memory(path: str, properties: Mapping[str, Any]) -> LineageMemory:
    """A memory's lineage facts from its frontmatter ``properties`` — as parsed
    (``ccb.model.Note.properties``: dates are ``date``/``datetime``) or as the index keeps
    them (``MagmaStore.memory_properties``: dates are ISO strings)."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    links = tuple((prop, link) for prop in LINEAGE_PROPERTIES
                  for link in _links(properties.get(prop)))
    return LineageMemory(
        path=path, name=_text(properties.get("name")) or stem,
        memory_id=_text(properties.get("id")), status=_text(properties.get("status")),
        created=_text(properties.get("created")), updated=_text(properties.get("updated")),
        valid_to=_text(properties.get("valid_to")),
        archived_reason=_text(properties.get("archived_reason")),
        version=_text(properties.get("version")), links=links,
        forgotten_sources=_count(properties.get("forgotten_sources")),
        junk=tuple((prop, value) for prop in LINEAGE_PROPERTIES
                   for value in link_junk(properties.get(prop))))


def _count(value: object) -> int:
    """A non-negative integer property (``3``, ``"3"``), else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    text = _text(value)
    return int(text) if text is not None and text.isdigit() else 0


@dataclass(frozen=True, slots=True)
class LineageEdge:
    """One lineage edge between graph node ids (``src`` → ``dst`` as in the module table),
    with the properties it was written in."""

    src: str
    dst: str
    kind: LineageKind
    written_in: tuple[str, ...]


def _memory_attrs(memory: LineageMemory) -> dict[str, str | int]:
    attrs: dict[str, str | int] = {"kind": "memory", "path": memory.path,
                                   "title": memory.name, "name": memory.name}
    for key in ("memory_id", "status", "created", "updated", "valid_to", "archived_reason",
                "version"):
        value = getattr(memory, key)
        if value is not None:
            attrs[key] = value
    if memory.forgotten_sources:
        attrs["forgotten_sources"] = memory.forgotten_sources
    return attrs


def memory_attrs(memory: LineageMemory) -> dict[str, str | int]:
    """The node attributes of a memory in a graph (``kind="memory"``, path, title, name and
    each lineage fact that is set)."""
    return _memory_attrs(memory)


def lineage_links(memory: LineageMemory, resolve: Callable[[str], str | None]
                  ) -> list[tuple[str, str, LineageKind, str]]:
    """``(src, dst, kind, property)`` graph edges ``memory``'s links write: ``resolve(link)``
    gives the path of the memory a link as written names (:class:`LineageResolver`; ``None``:
    none, the edge goes to ``unresolved:<stem>``). The edge and the property name its
    writer: ``superseded_by`` is written by the edge's ``dst``, every other property by its
    ``src``."""
    here = node_id("note", memory.path)
    found: list[tuple[str, str, LineageKind, str]] = []
    for prop, link in memory.links:
        kind, names_newer = LINEAGE_PROPERTIES[prop]
        if prop == "derived_from" and EVIDENCE.fullmatch(
                link.strip().removeprefix("[[").removesuffix("]]")):
            continue  # raw material's lines (a daily note, a transcript), not a memory
        stem = link_stem(link)
        if not stem:
            continue
        path = resolve(link)
        other = node_id("note", path) if path is not None else node_id("unresolved", stem)
        found.append((other, here, kind, prop) if names_newer else (here, other, kind, prop))
    return found


def add_lineage(graph: nx.MultiDiGraph, memories: Iterable[LineageMemory]) -> nx.MultiDiGraph:
    """Add each memory (node ``note:<path>``, ``kind="memory"``) and its lineage edges to
    ``graph`` (edge key and ``kind`` attribute: the :data:`LineageKind`, ``relation`` the
    same, ``written_in`` the properties, sorted and ``+``-joined). A link is resolved among
    ``memories`` by :class:`LineageResolver`; one naming none goes to ``unresolved:<stem>``.
    Returns ``graph``. O(memories + links)."""
    memories = list(memories)
    resolve = LineageResolver.of((m.path, m.name) for m in memories)
    for memory in memories:
        node = node_id("note", memory.path)
        if node in graph:
            graph.nodes[node].update(_memory_attrs(memory))
        else:
            graph.add_node(node, **_memory_attrs(memory))
    for memory in memories:
        targets = {link_stem(link): link for _, link in memory.links}
        for src, dst, kind, prop in lineage_links(memory, resolve):
            add_lineage_edge(graph, src, dst, kind, prop, targets)
    return graph


def add_lineage_edge(graph: nx.MultiDiGraph, src: str, dst: str, kind: LineageKind, prop: str,
                     targets: Mapping[str, str]) -> None:
    """Add one lineage edge written in ``prop`` (or add ``prop`` to the edge's
    ``written_in``); an ``unresolved:<stem>`` end is created with the link as written
    (``targets``: ``{stem: link}``)."""
    for end in (src, dst):
        if end not in graph:
            stem = end.split(":", 1)[1]
            graph.add_node(end, kind="unresolved", target=targets.get(stem, f"[[{stem}]]"))
    data = graph.get_edge_data(src, dst, key=kind)
    if data is None:
        graph.add_edge(src, dst, key=kind, kind=kind, relation=kind, written_in=prop)
    else:
        data["written_in"] = "+".join(sorted({*data["written_in"].split("+"), prop}))


def lineage_graph(memories: Iterable[LineageMemory]) -> nx.MultiDiGraph:
    """A graph of ``memories`` and their lineage edges only (:func:`add_lineage`)."""
    return add_lineage(nx.MultiDiGraph(), memories)


def lineage_out(graph: nx.MultiDiGraph, node: str) -> list[LineageEdge]:
    """The lineage edges leaving ``node``, by kind then target."""
    return sorted((LineageEdge(node, dst, key, tuple(data["written_in"].split("+")))
                   for _, dst, key, data in graph.out_edges(node, keys=True, data=True)
                   if key in LINEAGE_KINDS), key=lambda e: (e.kind, e.dst))


def _lineage_in(graph: nx.MultiDiGraph, node: str) -> list[LineageEdge]:
    return sorted((LineageEdge(src, node, key, tuple(data["written_in"].split("+")))
                   for src, _, key, data in graph.in_edges(node, keys=True, data=True)
                   if key in LINEAGE_KINDS), key=lambda e: (e.kind, e.src))


#: The direct relations of a memory, as shown by ``dreamd lineage``: name → (edge kind, is
#: the memory the edge's source).
RELATIONS: Mapping[str, tuple[LineageKind, bool]] = {
    "supersedes": ("supersedes", True),
    "superseded by": ("supersedes", False),
    "merged into it": ("merged_into", False),
    "merged into": ("merged_into", True),
    "derived from": ("derived_from", True),
    "derives from it": ("derived_from", False),
}


def relations_of(graph: nx.MultiDiGraph, node: str) -> dict[str, list[str]]:
    """``{relation: [node id, …]}`` of ``node``'s direct lineage (:data:`RELATIONS`, empty
    relations left out)."""
    out, into = lineage_out(graph, node), _lineage_in(graph, node)
    found: dict[str, list[str]] = {}
    for name, (kind, outgoing) in RELATIONS.items():
        others = [e.dst for e in out if e.kind == kind] if outgoing \
            else [e.src for e in into if e.kind == kind]
        if others:
            found[name] = others
    return found


@dataclass(frozen=True, slots=True)
class Chain:
    """Everything joined to ``root`` by lineage edges, either way: ``nodes`` in the order a
    breadth-first walk from ``root`` met them, ``edges`` between them (each once)."""

    root: str
    nodes: tuple[str, ...]
    edges: tuple[LineageEdge, ...]


def chain_of(graph: nx.MultiDiGraph, root: str, *, max_nodes: int = 500) -> Chain:
    """The lineage around ``root`` (:class:`Chain`): a breadth-first walk over lineage edges
    in both directions, each node visited once (a cycle ends the walk, never loops), at most
    ``max_nodes`` nodes (a bound for a picture a person reads, not a limit of the graph).
    Raises ``KeyError`` when ``root`` is not in ``graph``."""
    if root not in graph:
        raise KeyError(root)
    seen = {root: None}
    queue = deque([root])
    edges: dict[tuple[str, str, str], LineageEdge] = {}
    while queue:
        node = queue.popleft()
        for edge in [*lineage_out(graph, node), *_lineage_in(graph, node)]:
            other = edge.dst if edge.src == node else edge.src
            if other not in seen:
                if len(seen) >= max_nodes:
                    continue
                seen[other] = None
                queue.append(other)
            edges[(edge.src, edge.dst, edge.kind)] = edge
    return Chain(root, tuple(seen), tuple(edges[k] for k in sorted(edges)))
