"""The vault graph: notes, attachments, tags and memories, with typed edges, and its export.

One ``networkx.MultiDiGraph`` (:func:`vault_graph`): :func:`magma.graph.build_graph` gives
the notes, attachments, tags and unresolved targets with ``links_to`` / ``embeds`` /
``tagged`` edges; :func:`magma.lineage.add_lineage` marks the memories and adds
``supersedes`` / ``merged_into`` / ``derived_from``. Every edge carries ``relation``, its type.
:func:`graph_text` writes it for other tools: GraphML (``networkx.generate_graphml``; Gephi,
yEd, Cytoscape) or node-link JSON (``networkx.node_link_data``; D3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

import networkx as nx

from ccb.names import nfc_key
from magma.graph import GraphLink, LinkResolver, link_key, node_id, path_key
from magma.lineage import (
    LineageMemory,
    add_lineage_edge,
    lineage_links,
    lineage_memory,
    link_stem,
    memory_attrs,
)

__all__ = ["GRAPH_FORMATS", "GraphFormat", "VaultGraph", "VaultGraphFile", "graph_text",
           "vault_graph"]

GraphFormat = Literal["graphml", "json"]
#: The export formats of ``dreamd graph export``.
GRAPH_FORMATS: tuple[GraphFormat, ...] = ("graphml", "json")


class VaultGraphFile(Protocol):
    """A file as the vault graph reads it (``magma.store.GraphFileRow`` fits)."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def memory_type(self) -> str | None: ...
    @property
    def properties(self) -> Mapping[str, Any]: ...


def vault_graph(files: Iterable[VaultGraphFile], links: Iterable[GraphLink]) -> nx.MultiDiGraph:
    """The vault graph of ``files`` and ``links`` (module docstring). O(files + links)."""
    return VaultGraph.build(files, links).graph


#: The link edge relations a file writes (its lineage edges are kept apart).
_LINK_RELATIONS = frozenset({"links_to", "embeds", "tagged"})


class VaultGraph:
    """The vault graph (module docstring), kept in step one file at a time.

    :meth:`upsert` and :meth:`remove` change what one file contributes — its node, its link
    and tag edges, the lineage edges its frontmatter writes — and re-resolve only the links
    that could change meaning: those whose target has the file name of the path added or
    removed (Obsidian resolves by file name, :mod:`magma.graph`), and the lineage links
    naming its stem. The result equals a fresh :meth:`build` of the same files
    (property-tested). Links resolve by :class:`magma.graph.LinkResolver`, as the store does.
    """

    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()
        self._resolver = LinkResolver()
        self._files: dict[str, VaultGraphFile] = {}
        self._links: dict[str, list[GraphLink]] = {}
        self._by_key: dict[str, set[str]] = {}  # link key → sources with such a target
        self._memories: dict[str, LineageMemory] = {}
        self._memory_stems: dict[str, set[str]] = {}  # stem → memory paths
        self._naming: dict[str, set[str]] = {}  # stem → memories whose links name it
        self._written: dict[str, list[tuple[str, str, str, str]]] = {}
        self._touched: set[str] = set()  # nodes that lost an edge: pruned if left alone

    @classmethod
    def build(cls, files: Iterable[VaultGraphFile], links: Iterable[GraphLink]) -> VaultGraph:
        """The graph of every file and link (links grouped by their ``src``)."""
        held = cls()
        by_src: dict[str, list[GraphLink]] = {}
        for link in links:
            by_src.setdefault(link.src, []).append(link)
        files = list(files)
        for file in files:  # every path first: a link resolves against all of them
            held._files[file.path] = file
            held._resolver.add(file.path)
            if file.memory_type is not None:
                held._index_memory(lineage_memory(file.path, file.properties))
        for file in files:
            held._place(file)
        for file in files:
            held._link(file.path, by_src.get(file.path, []))
        for path in list(held._memories):
            held._write_lineage(path)
        return held

    # ------------------------------------------------------------------ changes

    def upsert(self, file: VaultGraphFile, links: Iterable[GraphLink]) -> None:
        """``file`` is new or changed, with its ``links`` now."""
        new = file.path not in self._files
        self._drop_lineage(file.path)
        self._unindex_memory(file.path)
        self._files[file.path] = file
        if new:
            self._resolver.add(file.path)
        if file.memory_type is not None:
            self._index_memory(lineage_memory(file.path, file.properties))
        self._place(file)
        self._link(file.path, list(links))
        self._write_lineage(file.path)
        if new:
            self._reresolve_links(file.path)
        self._reresolve_lineage(file.path)  # it may have become, or stopped being, a memory
        self._prune()

    def remove(self, path: str) -> None:
        """``path`` is gone from the vault (no error when unknown)."""
        if path not in self._files:
            return
        self._drop_lineage(path)
        self._unindex_memory(path)
        self._unlink(path)
        file = self._files.pop(path)
        node = node_id(_node_kind(file), path)
        self._touched.update(self.graph.successors(node) if node in self.graph else ())
        self._resolver.discard(path)
        if node in self.graph:
            self.graph.remove_node(node)
        self._reresolve_links(path)
        self._reresolve_lineage(path)
        self._prune()

    # ------------------------------------------------------------------ parts

    def _place(self, file: VaultGraphFile) -> None:
        """The file's node with fresh attributes (a memory's lineage facts included), its
        tag edges replaced."""
        kind = _node_kind(file)
        node = node_id(kind, file.path)
        memory = self._memories.get(file.path)
        attrs: dict[str, Any] = memory_attrs(memory) if memory is not None else {
            "kind": kind, "path": file.path, "title": file.title}
        if memory is not None:
            attrs["title"] = file.title
        if node in self.graph:
            self.graph.nodes[node].clear()
            self.graph.nodes[node].update(attrs)
            stale = [(node, v, k) for _, v, k in self.graph.out_edges(node, keys=True)
                     if k == "tag"]
            self._touched.update(v for _, v, _ in stale)
            self.graph.remove_edges_from(stale)
        else:
            self.graph.add_node(node, **attrs)
        for tag in file.tags:
            tag_node = node_id("tag", tag.lower())
            if tag_node not in self.graph:
                self.graph.add_node(tag_node, kind="tag", name=tag.lower())
            self.graph.add_edge(node, tag_node, key="tag", kind="tag", relation="tagged")

    def _link(self, src: str, links: list[GraphLink]) -> None:
        """Replace the link edges of ``src`` with ``links``, resolved now."""
        self._unlink(src)
        self._links[src] = links
        node = node_id(_node_kind(self._files[src]), src)
        for link in links:
            self._by_key.setdefault(link_key(link.target), set()).add(src)
            resolved = self._resolver.resolve(link.target, src, kind=link.kind)  # type: ignore[arg-type]
            if resolved is not None and resolved in self._files:
                dst = node_id(_node_kind(self._files[resolved]), resolved)
            else:
                dst = node_id("unresolved", nfc_key(link.target).lower())
                if dst not in self.graph:
                    self.graph.add_node(dst, kind="unresolved", target=link.target)
            self.graph.add_edge(node, dst, kind=link.kind, subpath=link.subpath,
                                relation="embeds" if link.kind == "embed" else "links_to")

    def _unlink(self, src: str) -> None:
        for link in self._links.pop(src, []):
            waiting = self._by_key.get(link_key(link.target))
            if waiting is not None:
                waiting.discard(src)
                if not waiting:
                    del self._by_key[link_key(link.target)]
        file = self._files.get(src)
        node = node_id(_node_kind(file), src) if file is not None else None
        if node is not None and node in self.graph:
            stale = [(node, v, k) for _, v, k, d in self.graph.out_edges(node, keys=True,
                                                                        data=True)
                     if d.get("relation") in _LINK_RELATIONS and k != "tag"]
            self._touched.update(v for _, v, _ in stale)
            self.graph.remove_edges_from(stale)

    def _reresolve_links(self, path: str) -> None:
        """Links whose target has ``path``'s file name: they may name it now, or named it."""
        for src in sorted(self._by_key.get(path_key(path), ())):
            if src != path and src in self._files:
                self._link(src, self._links.get(src, []))

    def _reresolve_lineage(self, path: str) -> None:
        """Lineage links of other memories naming ``path``'s stem."""
        for writer in sorted(self._naming.get(link_stem(path), ())):
            if writer != path:
                self._drop_lineage(writer)
                self._write_lineage(writer)

    def _index_memory(self, memory: LineageMemory) -> None:
        self._memories[memory.path] = memory
        self._memory_stems.setdefault(link_stem(memory.path), set()).add(memory.path)
        for _, link in memory.links:
            self._naming.setdefault(link_stem(link), set()).add(memory.path)

    def _unindex_memory(self, path: str) -> None:
        memory = self._memories.pop(path, None)
        if memory is None:
            return
        stems = self._memory_stems.get(link_stem(path))
        if stems is not None:
            stems.discard(path)
            if not stems:
                del self._memory_stems[link_stem(path)]
        for _, link in memory.links:
            naming = self._naming.get(link_stem(link))
            if naming is not None:
                naming.discard(path)

    def _memory_at(self, stem: str) -> str | None:
        paths = self._memory_stems.get(stem)
        return min(paths, key=lambda p: (len(p), p)) if paths else None

    def _write_lineage(self, path: str) -> None:
        memory = self._memories.get(path)
        if memory is None:
            return
        targets = {link_stem(link): link for _, link in memory.links}
        written = lineage_links(memory, self._memory_at)
        for src, dst, kind, prop in written:
            add_lineage_edge(self.graph, src, dst, kind, prop, targets)
        self._written[path] = [(s, d, k, p) for s, d, k, p in written]

    def _drop_lineage(self, path: str) -> None:
        for src, dst, kind, prop in self._written.pop(path, []):
            data = self.graph.get_edge_data(src, dst, key=kind)
            if data is None:
                continue
            left = sorted(set(data["written_in"].split("+")) - {prop})
            if left:
                data["written_in"] = "+".join(left)
            else:
                self.graph.remove_edge(src, dst, key=kind)
                self._touched.update((src, dst))

    def _prune(self) -> None:
        """Unresolved targets and tags that lost their last edge."""
        idle = [n for n in self._touched if n in self.graph
                and self.graph.nodes[n].get("kind") in {"unresolved", "tag"}
                and self.graph.degree(n) == 0]
        self.graph.remove_nodes_from(idle)
        self._touched.clear()


def _node_kind(file: VaultGraphFile | None) -> str:
    return "attachment" if file is not None and file.kind == "attachment" else "note"


def _plain(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy without ``None`` attributes (GraphML has no null)."""
    plain = nx.MultiDiGraph()
    for node, data in graph.nodes(data=True):
        plain.add_node(node, **{k: v for k, v in data.items() if v is not None})
    for src, dst, key, data in graph.edges(keys=True, data=True):
        plain.add_edge(src, dst, key=key, **{k: v for k, v in data.items() if v is not None})
    return plain


def graph_text(graph: nx.MultiDiGraph, fmt: GraphFormat) -> str:
    """``graph`` as GraphML (XML, UTF-8) or node-link JSON (``{"nodes": […], "edges":
    […]}``, ``ensure_ascii=False``), ending in a newline. Raises ``ValueError`` for another
    ``fmt``."""
    if fmt == "graphml":
        return "\n".join(nx.generate_graphml(_plain(graph))) + "\n"
    if fmt == "json":
        data = nx.node_link_data(graph, edges="edges")
        return json.dumps(data, ensure_ascii=False, indent=1, default=str) + "\n"
    raise ValueError(f"graph export: unknown format {fmt!r} (graphml or json)")
