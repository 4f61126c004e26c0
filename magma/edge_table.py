"""The vault graph in LanceDB: the ``edges`` table, rebuilt from the index like every derived
table and written per batch.

One row per node and per edge of the vault graph (:mod:`magma.vault_graph`):

- a node: ``edge_id`` = ``src`` = the node id, ``dst`` and ``key`` empty, ``relation``
  ``"node"``, ``attrs_json`` its attributes;
- an edge: ``edge_id`` = ``src``, ``dst`` and ``key`` joined by ``\\x1f``, ``key`` the
  networkx key as JSON (``"tag"``, ``0``: a note may link one target twice), ``relation``
  the edge's, ``attrs_json`` its attributes;
- one row ``relation`` ``"meta"`` (``src`` :data:`META`) holding the fingerprint of the
  files the graph was built from and the version of the snippet table it read
  (:mod:`magma.graph_keeper`): a start with nothing changed reads that row and builds
  nothing.

Rows are grouped by ``src`` (a node's own row and its outgoing edges), so the nodes a batch
changed (:meth:`magma.vault_graph.VaultGraph.take_changed`) are rewritten in one
``merge_insert`` commit: their rows upserted, their other rows deleted. :func:`graph_of`
reads the rows back into the same graph: nodes, edges, keys and attributes (JSON values:
text, numbers, ``None``), exactly.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import networkx as nx
import pyarrow as pa

from config.errors import StoreError
from magma.store import MagmaStore
from magma.store_tables import _edges_schema

__all__ = ["GRAPH_FORMAT", "META", "EdgeRow", "graph_of", "graph_rows", "read_fingerprint",
           "read_graph", "read_meta", "write_rows"]

#: The ``src`` of the meta row (every node id has a ``kind:`` prefix, so none is this).
META = "meta"
#: Bumped when what the graph holds changes (a new edge type): a table written by an older
#: dreamd no longer matches the fingerprint and is rebuilt. 1: links, tags,
#: lineage, mentions, subjects; 2: diary snippets.
GRAPH_FORMAT = 2
_SEP = "\x1f"

EdgeRow = dict[str, str]


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), sort_keys=True, ensure_ascii=False, default=str)


def graph_rows(graph: nx.MultiDiGraph, nodes: Iterable[str] | None = None) -> list[EdgeRow]:
    """The rows of ``nodes`` of ``graph`` (``None``: every node), each node's own row and its
    outgoing edges; a node not in the graph has none."""
    rows: list[EdgeRow] = []
    for node in graph.nodes if nodes is None else nodes:
        if node not in graph:
            continue
        rows.append({"edge_id": node, "src": node, "dst": "", "key": "", "relation": "node",
                     "attrs_json": _json(graph.nodes[node])})
        for _, dst, key, data in graph.out_edges(node, keys=True, data=True):
            key_json = json.dumps(key, ensure_ascii=False)
            rows.append({"edge_id": f"{node}{_SEP}{dst}{_SEP}{key_json}", "src": node,
                         "dst": dst, "key": key_json, "relation": str(data.get("relation", "")),
                         "attrs_json": _json(data)})
    return rows


def graph_of(rows: Iterable[Mapping[str, str]]) -> nx.MultiDiGraph:
    """The graph ``rows`` hold (:func:`graph_rows`; the meta row is skipped)."""
    graph = nx.MultiDiGraph()
    edges = []
    for row in rows:
        if row["relation"] == "node":
            graph.add_node(row["src"], **json.loads(row["attrs_json"]))
        elif row["src"] != META:
            edges.append(row)
    for row in edges:
        graph.add_edge(row["src"], row["dst"], key=json.loads(row["key"]),
                       **json.loads(row["attrs_json"]))
    return graph


def _meta_row(stamp: str, snippets: int | None) -> EdgeRow:
    return {"edge_id": META, "src": META, "dst": "", "key": "", "relation": "meta",
            "attrs_json": _json({"fingerprint": stamp, "snippets": snippets})}


def read_meta(store: MagmaStore) -> dict[str, Any]:
    """The meta row the ``edges`` table was last written with: ``fingerprint`` (of the
    files) and ``snippets`` (the version of the snippet table read, or ``None``); ``{}``:
    never written. Raises :class:`StoreError`."""
    tables = store._t
    found = tables.read(tables.edges, ["attrs_json"], f"src = '{META}'").to_pylist()
    return dict(json.loads(found[0]["attrs_json"])) if found else {}


def read_fingerprint(store: MagmaStore) -> str | None:
    """The fingerprint the ``edges`` table was last written with (``None``: never). Raises
    :class:`StoreError`."""
    return read_meta(store).get("fingerprint")


def read_graph(store: MagmaStore) -> nx.MultiDiGraph:
    """The graph the ``edges`` table holds. Raises :class:`StoreError`."""
    tables = store._t
    return graph_of(tables.read(tables.edges, None).to_pylist())


def write_rows(store: MagmaStore, rows: list[EdgeRow], nodes: Collection[str] | None,
               stamp: str, snippets: int | None = None) -> int:
    """Write ``rows`` (:func:`graph_rows` of ``nodes``; ``None``: of the whole graph) and the
    meta row (``stamp``, ``snippets``: :func:`read_meta`) in one commit: every other row of
    those nodes is deleted (``None``: every other row of the table). Returns the rows
    written. Raises :class:`StoreError`."""
    tables = store._t
    data = pa.Table.from_pylist([*rows, _meta_row(stamp, snippets)], schema=_edges_schema())
    try:
        # one filter over the sources: a batch touches a handful of nodes
        tables.replace(tables.edges, "edge_id", "src", data,
                       None if nodes is None else sorted(nodes))
    except Exception as exc:
        raise StoreError(f"magma: write the graph's edges to {store.uri}: {exc}") from exc
    return data.num_rows
