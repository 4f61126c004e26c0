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

from magma.graph import GraphLink, build_graph
from magma.lineage import add_lineage, lineage_memory

__all__ = ["GRAPH_FORMATS", "GraphFormat", "VaultGraphFile", "graph_text", "vault_graph"]

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
    files = list(files)
    graph = build_graph(files, links)
    memories = [lineage_memory(f.path, f.properties) for f in files
                if f.memory_type is not None]
    return add_lineage(graph, memories)


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
