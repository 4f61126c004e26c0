"""The vault graph: notes, attachments, tags and memories, with typed edges, and its export.

One ``networkx.MultiDiGraph`` (:func:`vault_graph`, :class:`VaultGraph`). Nodes (ids by
:func:`magma.graph.node_id`): notes and memories (``note:<path>``, ``kind`` ``note`` or
``memory``), attachments, tags, subjects (``subject:<key>``) and unresolved link targets.
Edges, each with ``relation`` (its type) and a key:

- ``links_to`` / ``embeds``: a wikilink, embed or markdown link, with its heading or block
  ``subpath`` (integer keys: a note may link one target twice);
- ``tagged``: a note to each of its tags (key ``tag``);
- ``supersedes`` / ``merged_into`` / ``derived_from``: a memory's lineage
  (:mod:`magma.lineage`; key the relation);
- ``mentions``: a memory to each note whose title, alias or memory name its text holds
  (:mod:`magma.graph_mentions`; key ``mentions``), its code left out;
- ``same_subject``: a memory to the node of its ``subject`` property (key ``same_subject``;
  the subject in :func:`subject_key` form): memories of one subject share that node.

- ``cut_from``: a diary snippet (node ``snippet:<key>``, ``kind`` ``snippet``: a few lines
  of a daily note light sleep cut, :class:`magma.snippets.Snippet`, read from the snippet
  table of :mod:`magma.snippet_store`) to the note it was cut from, while that note is in
  the graph (key ``cut_from``).

:func:`graph_text` writes it for other tools: GraphML (``networkx.generate_graphml``; Gephi,
yEd, Cytoscape) or node-link JSON (``networkx.node_link_data``; D3).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

import networkx as nx

from ccb.markdown import mask_code
from ccb.memory_file import normalise_text
from ccb.model import EMBED_KINDS
from ccb.names import nfc_key
from magma.buckets import bucket_add, bucket_discard, members
from magma.gc_pause import collector_paused
from magma.graph import GraphLink, LinkResolver, link_key, node_id, path_key
from magma.graph_mentions import MentionIndex
from magma.lineage import (
    LineageMemory,
    LineageResolver,
    add_lineage_edge,
    lineage_links,
    lineage_memory,
    link_stem,
    memory_attrs,
    name_key,
)
from magma.snippets import Snippet

__all__ = ["GRAPH_FORMATS", "GraphFormat", "VaultGraph", "VaultGraphFile", "graph_text",
           "snippets_by_path", "subject_key", "vault_graph"]

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


def vault_graph(files: Iterable[VaultGraphFile], links: Iterable[GraphLink],
                texts: Mapping[str, str] | None = None,
                snippets: Iterable[Snippet] = ()) -> nx.MultiDiGraph:
    """The vault graph of ``files``, ``links``, the memories' ``texts`` and the diary
    ``snippets`` (module docstring). O(files + links + snippets + words of the texts)."""
    return VaultGraph.build(files, links, texts, snippets).graph


def snippets_by_path(snippets: Iterable[Snippet]) -> dict[str, tuple[Snippet, ...]]:
    """``snippets`` grouped by the note they were cut from, in the order given."""
    grouped: dict[str, list[Snippet]] = {}
    for snippet in snippets:
        grouped.setdefault(snippet.path, []).append(snippet)
    return {path: tuple(found) for path, found in grouped.items()}


def _snippet_attrs(snippet: Snippet) -> dict[str, Any]:
    return {"kind": "snippet", "path": snippet.path, "day": snippet.day.isoformat(),
            "evidence": snippet.evidence, "heading": snippet.heading,
            "origin": snippet.origin, "statement": snippet.kind}


def subject_key(subject: object) -> str | None:
    """The comparison form of a ``subject`` property, as
    :func:`consistency.judgement.subject_key` writes it (case, spacing and the separators
    ``. _ - / :`` do not count); ``None`` when blank or not text."""
    if not isinstance(subject, str) or not subject.strip():
        return None
    key = normalise_text(subject)
    for sep in "._-/:":
        key = key.replace(sep, " ")
    return " ".join(key.split()) or None


#: What the graph keeps of a file (:func:`_held_kind`): one of these three strings, shared by
#: every file (its node's kind and whether it is a memory are all a later change reads; its
#: title, aliases and properties went into its node and the mention index; at 100,000 notes a
#: record per file held 16 MB by sys.getsizeof, these 4 MB).
_NOTE, _ATTACHMENT, _MEMORY = "note", "attachment", "memory"


def _held_kind(file: VaultGraphFile) -> str:
    """``file`` as the graph keeps it: an attachment, a memory or another note."""
    if file.kind == "attachment":
        return _ATTACHMENT
    return _NOTE if file.memory_type is None else _MEMORY


def _labels(file: VaultGraphFile) -> list[str | None]:
    """A file's names others may mention: title, aliases, memory name."""
    aliases = file.properties.get("aliases")
    found: list[str | None] = [file.title]
    if isinstance(aliases, list):
        found += [a for a in aliases if isinstance(a, str)]
    elif isinstance(aliases, str):
        found.append(aliases)
    name = file.properties.get("name")
    if file.memory_type is not None and isinstance(name, str):
        found.append(name)
    return found


def _memory_text(file: VaultGraphFile, body: str | None) -> str:
    """The words a memory mentions names in: its description and body, code (fenced,
    inline) left out — a command or an example names nothing, as Obsidian reads no link in
    code (:func:`ccb.markdown.mask_code`)."""
    description = file.properties.get("description")
    return f"{description if isinstance(description, str) else ''}\n{mask_code(body or '')}"


#: The link edge relations a file writes (its lineage edges are kept apart).
_LINK_RELATIONS = frozenset({"links_to", "embeds", "tagged"})
#: Edge keys a file's own node writes with its attributes (replaced by :meth:`_place`).
_OWN_KEYS = frozenset({"tag", "same_subject"})

#: A file's links as the graph keeps them: one flat tuple of ``target, kind, subpath`` for
#: each link in order, the strings interned (most targets are linked from many notes; at
#: 100,000 notes a link record each held 41 MB by sys.getsizeof, these 11 MB).
_Links = tuple[str | None, ...]
_NO_LINKS: _Links = ()


def _held_links(links: Iterable[GraphLink]) -> _Links:
    held: list[str | None] = []
    for link in links:
        held += (sys.intern(link.target), sys.intern(link.kind),
                 None if link.subpath is None else sys.intern(link.subpath))
    return tuple(held) if held else _NO_LINKS


def _triples(links: _Links) -> Iterable[tuple[str, str, str | None]]:
    """``(target, kind, subpath)`` of each link of :func:`_held_links`."""
    return zip(links[0::3], links[1::3], links[2::3], strict=True)  # type: ignore[arg-type]


class VaultGraph:
    """The vault graph (module docstring), kept in step one file at a time.

    :meth:`upsert` and :meth:`remove` change what one file contributes — its node, its link
    and tag edges, the lineage edges its frontmatter writes — and re-resolve only the links
    that could change meaning: those whose target has the file name of the path added or
    removed (Obsidian resolves by file name, :mod:`magma.graph`), and the lineage links
    naming its stem. The result equals a fresh :meth:`build` of the same files
    (property-tested). Links resolve by :class:`magma.graph.LinkResolver`, as the store does.
    Every node whose attributes or outgoing edges a change touched is kept until
    :meth:`take_changed`: what the edges table (:mod:`magma.edge_table`) rewrites.

    Held compact for a daemon's life: the edges that have no attribute of their own (links,
    tags, mentions, subjects, snippets: all but the lineage edges, whose ``written_in`` a
    change rewrites) share one attribute dict per distinct content (kept for the graph's
    life: one per link kind and heading or block linked, 7,560 at 100,000 notes), so
    :attr:`graph`'s edge attributes are read, never written, by its users; each file is kept
    as its kind alone and its links as one flat tuple (:func:`_held_links`).
    """

    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()
        self._resolver = LinkResolver()
        self._files: dict[str, str] = {}  # path → _NOTE, _ATTACHMENT or _MEMORY
        self._links: dict[str, _Links] = {}
        self._by_key: dict[str, str | set[str]] = {}  # link key → sources with such a target
        self._memories: dict[str, LineageMemory] = {}
        self._lineage_resolver = LineageResolver({}, {})  # what a lineage link names
        self._naming: dict[str, set[str]] = {}  # stem → memories whose links name it
        self._written: dict[str, list[tuple[str, str, str, str]]] = {}
        self._touched: set[str] = set()  # nodes that lost an edge: pruned if left alone
        self._mentions = MentionIndex()
        self._changed: set[str] = set()  # nodes whose own row or out-edges changed
        self._snippets: dict[str, list[str]] = {}  # note path → its snippets' nodes
        #: the attribute dicts the edges share, by their items
        self._shared: dict[tuple[tuple[str, str | None], ...], dict[str, str | None]] = {}

    @classmethod
    def build(cls, files: Iterable[VaultGraphFile], links: Iterable[GraphLink],
              texts: Mapping[str, str] | None = None,
              snippets: Iterable[Snippet] = ()) -> VaultGraph:
        """The graph of every file and link (links grouped by their ``src``); ``texts``: the
        body of each memory (``{path: text}``; its description is read from its properties),
        for its ``mentions``; ``snippets``: the diary snippets."""
        with collector_paused():
            held = cls._build(files, links, texts or {})
            for path, found in snippets_by_path(snippets).items():
                held.set_snippets(path, found)
            return held

    @classmethod
    def _build(cls, files: Iterable[VaultGraphFile], links: Iterable[GraphLink],
               texts: Mapping[str, str]) -> VaultGraph:
        held = cls()
        by_src: dict[str, list[GraphLink]] = {}
        for link in links:
            by_src.setdefault(link.src, []).append(link)
        files = list(files)
        for file in files:  # every path first: a link resolves against all of them
            held._files[sys.intern(file.path)] = _held_kind(file)
            held._resolver.add(file.path)
            if file.memory_type is not None:
                held._index_memory(lineage_memory(file.path, file.properties))
        for file in files:
            held._place(file)
        held._link_fresh(files, by_src)
        for path in list(held._memories):
            held._write_lineage(path)
        for file in files:
            held._mentions.set_names(file.path, MentionIndex.names(_labels(file)))
        for file in files:
            if file.memory_type is not None:
                held._mentions.set_text(file.path, _memory_text(file, texts.get(file.path)))
                held._mention(file.path)
        return held

    def take_changed(self) -> set[str]:
        """The nodes changed since the last call (added, removed, their attributes or their
        outgoing edges), and forget them."""
        changed, self._changed = self._changed, set()
        return changed

    # ------------------------------------------------------------------ changes

    def upsert(self, file: VaultGraphFile, links: Iterable[GraphLink],
               text: str | None = None) -> None:
        """``file`` is new or changed, with its ``links`` now (and, for a memory, its body
        ``text``)."""
        new = file.path not in self._files
        before = self._memories.get(file.path)
        self._drop_lineage(file.path)
        self._unindex_memory(file.path)
        self._files[sys.intern(file.path)] = _held_kind(file)
        if new:
            self._resolver.add(file.path)
        if file.memory_type is not None:
            self._index_memory(lineage_memory(file.path, file.properties))
        self._place(file)
        self._link(file.path, _held_links(links))
        self._write_lineage(file.path)
        if new:
            self._reresolve_links(file.path)
            self._tie_snippets(file.path)
        now = self._memories.get(file.path)
        # it may have become, or stopped being, a memory, or changed its name
        self._reresolve_lineage(file.path, [m.name for m in (before, now) if m is not None])
        affected = self._mentions.set_names(file.path, MentionIndex.names(_labels(file)))
        self._mentions.set_text(file.path, None if file.memory_type is None
                                else _memory_text(file, text))
        for memory in sorted(affected | {file.path}):
            self._mention(memory)
        self._prune()

    def remove(self, path: str) -> None:
        """``path`` is gone from the vault (no error when unknown)."""
        if path not in self._files:
            return
        before = self._memories.get(path)
        self._drop_lineage(path)
        self._unindex_memory(path)
        self._unlink(path)
        affected = self._mentions.set_names(path, frozenset())
        self._mentions.set_text(path, None)
        node = self._node(path)
        del self._files[path]
        if node in self.graph:
            self._touched.update(self.graph.successors(node))
            self._changed.update(self.graph.predecessors(node))  # their edges to it go
            self._changed.add(node)
        self._resolver.discard(path)
        if node in self.graph:
            self.graph.remove_node(node)
        self._reresolve_links(path)
        self._reresolve_lineage(path, [before.name] if before is not None else [])
        for memory in sorted(affected - {path}):
            self._mention(memory)
        self._prune()

    def set_snippets(self, path: str, snippets: Iterable[Snippet]) -> None:
        """The diary snippets cut from note ``path`` are now ``snippets`` (none: it has none
        left): their nodes replace the ones it had, each with its ``cut_from`` edge to the
        note while the note is in the graph (it gets them back when it comes back)."""
        for node in self._snippets.pop(path, []):
            if node in self.graph:
                self.graph.remove_node(node)
                self._changed.add(node)
        nodes = []
        for snippet in snippets:
            node = node_id("snippet", snippet.key)
            self.graph.add_node(node, **_snippet_attrs(snippet))
            self._changed.add(node)
            nodes.append(node)
        if nodes:
            self._snippets[path] = nodes
        self._tie_snippets(path)

    # ------------------------------------------------------------------ parts

    def _node(self, path: str) -> str:
        """The node of known file ``path``."""
        return node_id(_ATTACHMENT if self._files[path] == _ATTACHMENT else _NOTE, path)

    def _edge(self, src: str, dst: str, key: Any, *items: tuple[str, str | None]) -> None:
        """Add the edge ``src → dst`` under ``key`` (``None``: the next integer) with the
        attributes ``items``, in that order, in a dict shared with every edge of the same
        items (class docstring)."""
        attrs = self._shared.get(items)
        if attrs is None:
            attrs = self._shared[items] = dict(items)
        key = self.graph.add_edge(src, dst, key)
        self.graph._adj[src][dst][key] = attrs  # (the one key dict of both directions)

    def _tie_snippets(self, path: str) -> None:
        """The ``cut_from`` edges of the snippets of ``path`` to its node, when it has one."""
        if path not in self._files:
            return
        source = self._node(path)
        for node in self._snippets.get(path, ()):
            if not self.graph.has_edge(node, source, key="cut_from"):
                self._edge(node, source, "cut_from", ("kind", "cut_from"),
                           ("relation", "cut_from"))
                self._changed.add(node)

    def _place(self, file: VaultGraphFile) -> None:
        """The file's node with fresh attributes (a memory's lineage facts included), its
        tag edges replaced."""
        node = self._node(file.path)
        memory = self._memories.get(file.path)
        attrs: dict[str, Any] = memory_attrs(memory) if memory is not None else {
            "kind": _ATTACHMENT if file.kind == "attachment" else _NOTE, "path": file.path,
            "title": file.title}
        if memory is not None:
            attrs["title"] = file.title
        self._changed.add(node)
        if node in self.graph:
            self.graph.nodes[node].clear()
            self.graph.nodes[node].update(attrs)
            stale = [(node, v, k) for _, v, k in self.graph.out_edges(node, keys=True)
                     if k in _OWN_KEYS]
            self._touched.update(v for _, v, _ in stale)
            self.graph.remove_edges_from(stale)
        else:
            self.graph.add_node(node, **attrs)
        for tag in file.tags:
            tag_node = node_id("tag", tag.lower())
            if tag_node not in self.graph:
                self.graph.add_node(tag_node, kind="tag", name=tag.lower())
                self._changed.add(tag_node)
            self._edge(node, tag_node, "tag", ("kind", "tag"), ("relation", "tagged"))
        subject = subject_key(file.properties.get("subject")) if memory is not None else None
        if subject is not None:
            subject_node = node_id("subject", subject)
            if subject_node not in self.graph:
                self.graph.add_node(subject_node, kind="subject", name=subject)
                self._changed.add(subject_node)
            self._edge(node, subject_node, "same_subject", ("kind", "same_subject"),
                       ("relation", "same_subject"))

    def _mention(self, path: str) -> None:
        """Rewrite the ``mentions`` edges of memory ``path`` (none when it is no memory)."""
        if path not in self._files:
            return
        node = self._node(path)
        if node not in self.graph:
            return
        stale = [(node, v, k) for _, v, k in self.graph.out_edges(node, keys=True)
                 if k == "mentions"]
        targets = self._mentions.targets(path) if self._files[path] == _MEMORY else []
        if not stale and not targets:
            return
        self.graph.remove_edges_from(stale)
        self._changed.add(node)
        for target in targets:
            self._edge(node, self._node(target), "mentions", ("kind", "mentions"),
                       ("relation", "mentions"))

    def _link(self, src: str, links: _Links) -> None:
        """Replace the link edges of ``src`` with ``links``, resolved now."""
        self._unlink(src)
        if links:
            self._links[src] = links
        node = self._node(src)
        self._changed.add(node)
        for target, kind, subpath in _triples(links):
            bucket_add(self._by_key, sys.intern(link_key(target)), src)
            self._edge(node, self._target(target, kind, src), None, ("kind", kind),
                       ("subpath", subpath), ("relation", _relation(kind)))

    def _link_fresh(self, files: list[VaultGraphFile],
                    by_src: Mapping[str, list[GraphLink]]) -> None:
        """The link edges of every file of a fresh build, as :meth:`_link` writes them, with
        no unlinking (nothing is linked yet), one :func:`magma.graph.link_key` per distinct
        target, and the edge keys counted here: 0, 1, … per pair of nodes in link order,
        the keys networkx picks itself (no other edge between a file and a link target has
        an integer key)."""
        keys: dict[str, str] = {}
        for file in files:
            src = file.path
            links = _held_links(by_src.get(src, ()))
            if links:
                self._links[src] = links
            node = self._node(src)
            self._changed.add(node)
            counts: dict[str, int] = {}
            for target, kind, subpath in _triples(links):
                key = keys.get(target)
                if key is None:
                    key = keys[target] = sys.intern(link_key(target))
                bucket_add(self._by_key, key, src)
                dst = self._target(target, kind, src)
                count = counts[dst] = counts.get(dst, -1) + 1
                self._edge(node, dst, count, ("kind", kind), ("subpath", subpath),
                           ("relation", _relation(kind)))

    def _target(self, target: str, kind: str, src: str) -> str:
        """The node a link to ``target`` of ``kind`` (written in ``src``) points at: a
        file's, or an unresolved target's (added when new)."""
        resolved = self._resolver.resolve(target, src, kind=kind)  # type: ignore[arg-type]
        if resolved is not None and resolved in self._files:
            return self._node(resolved)
        dst = node_id("unresolved", nfc_key(target).lower())
        if dst not in self.graph:
            self.graph.add_node(dst, kind="unresolved", target=target)
            self._changed.add(dst)
        return dst

    def _unlink(self, src: str) -> None:
        for target, _, _ in _triples(self._links.pop(src, _NO_LINKS)):
            bucket_discard(self._by_key, link_key(target), src)
        node = self._node(src) if src in self._files else None
        if node is not None and node in self.graph:
            stale = [(node, v, k) for _, v, k, d in self.graph.out_edges(node, keys=True,
                                                                        data=True)
                     if d.get("relation") in _LINK_RELATIONS and k != "tag"]
            self._touched.update(v for _, v, _ in stale)
            self._changed.add(node)
            self.graph.remove_edges_from(stale)

    def _reresolve_links(self, path: str) -> None:
        """Links whose target has ``path``'s file name: they may name it now, or named it."""
        for src in sorted(members(self._by_key.get(path_key(path)))):
            if src != path and src in self._files:
                self._link(src, self._links.get(src, _NO_LINKS))

    def _reresolve_lineage(self, path: str, names: Iterable[str] = ()) -> None:
        """Lineage links of other memories naming ``path``'s stem, or one of ``names`` (the
        memory's name, before and after a change: a link may name a memory by its name)."""
        keys = {link_stem(path), *(name_key(n) for n in names)}
        for writer in sorted({w for k in keys for w in self._naming.get(k, ())}):
            if writer != path:
                self._drop_lineage(writer)
                self._write_lineage(writer)

    def _index_memory(self, memory: LineageMemory) -> None:
        self._memories[memory.path] = memory
        self._lineage_resolver.add(memory.path, memory.name)
        for _, link in memory.links:
            self._naming.setdefault(link_stem(link), set()).add(memory.path)

    def _unindex_memory(self, path: str) -> None:
        memory = self._memories.pop(path, None)
        if memory is None:
            return
        self._lineage_resolver.remove(path, memory.name)
        for _, link in memory.links:
            naming = self._naming.get(link_stem(link))
            if naming is not None:
                naming.discard(path)

    def _memory_at(self, link: str) -> str | None:
        return self._lineage_resolver(link)

    def _write_lineage(self, path: str) -> None:
        memory = self._memories.get(path)
        if memory is None:
            return
        targets = {link_stem(link): link for _, link in memory.links}
        written = lineage_links(memory, self._memory_at)
        for src, dst, kind, prop in written:
            self._changed.update(n for n in (src, dst) if n not in self.graph)
            self._changed.add(src)
            add_lineage_edge(self.graph, src, dst, kind, prop, targets)
        self._written[path] = [(s, d, k, p) for s, d, k, p in written]

    def _drop_lineage(self, path: str) -> None:
        for src, dst, kind, prop in self._written.pop(path, []):
            data = self.graph.get_edge_data(src, dst, key=kind)
            if data is None:
                continue
            self._changed.add(src)
            left = sorted(set(data["written_in"].split("+")) - {prop})
            if left:
                data["written_in"] = "+".join(left)
            else:
                self.graph.remove_edge(src, dst, key=kind)
                self._touched.update((src, dst))

    def _prune(self) -> None:
        """Unresolved targets and tags that lost their last edge."""
        idle = [n for n in self._touched if n in self.graph
                and self.graph.nodes[n].get("kind") in {"unresolved", "tag", "subject"}
                and self.graph.degree(n) == 0]
        self._changed.update(idle)
        self.graph.remove_nodes_from(idle)
        self._touched.clear()


def _relation(kind: str) -> str:
    """The edge relation of a link of ``kind``."""
    return "embeds" if kind in EMBED_KINDS else "links_to"


#: Characters XML 1.0 cannot hold (C0 controls but tab, newline and carriage return).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(value: Any) -> Any:
    """``value`` with the characters XML cannot hold taken out (a link written with a control
    character in it made the GraphML unreadable)."""
    return _NOT_XML.sub("", value) if isinstance(value, str) else value


def _plain(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy without ``None`` attributes (GraphML has no null) and with no character XML
    cannot hold (:func:`_xml`)."""
    plain = nx.MultiDiGraph()
    for node, data in graph.nodes(data=True):
        plain.add_node(_xml(node), **{k: _xml(v) for k, v in data.items() if v is not None})
    for src, dst, key, data in graph.edges(keys=True, data=True):
        plain.add_edge(_xml(src), _xml(dst), key=_xml(key),
                       **{k: _xml(v) for k, v in data.items() if v is not None})
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
