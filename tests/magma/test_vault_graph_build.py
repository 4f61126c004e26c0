"""A whole build of the vault graph gives the graph recorded before its build was made
faster: ``vault_example`` (every note, its attachment) and memories whose frontmatter
supersedes, merges into and derives from each other, indexed into a real LanceDB store and
read back as the daemon reads it (``magma.store.graph_reads``). Nodes, edges, edge keys,
attributes and the order of each are compared with ``data/vault_example_graph.json``,
written by the build of commit 8968f9e. The fake embedder of the MAGMA tests: nothing here
is about meaning.

Regenerate the recording only for a change of the graph itself:
``RECORD_VAULT_GRAPH=1 pytest tests/magma/test_vault_graph_build.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import networkx as nx
from lineage_files import write_memory
from vault_index import store_folder

from magma.graph_keeper import memory_texts
from magma.store import MagmaStore, NoteRecord, graph_reads
from magma.vault_graph import VaultGraph

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "data" / "vault_example_graph.json"


def _recorded_form(graph: nx.MultiDiGraph) -> dict[str, object]:
    """Nodes and edges in the graph's own order, keys and attributes as JSON values."""
    return json.loads(json.dumps({
        "nodes": [[n, d] for n, d in graph.nodes(data=True)],
        "edges": [[u, v, k, d] for u, v, k, d in graph.edges(keys=True, data=True)],
    }, ensure_ascii=False, default=str))


def _vault(root: Path) -> None:
    shutil.copytree(ROOT / "vault_example", root, ignore=shutil.ignore_patterns("edge-cases"))
    write_memory(root, "kiln-moved", "Kiln moved to February, see Project Kiln",
                 supersedes="kiln-first-firing-in-january")
    write_memory(root, "kiln-dup", "Kiln moved", merged_into="kiln-moved",
                 status="archived", archived_reason="exact duplicate")
    write_memory(root, "kiln-summary", "Kiln and glaze summary",
                 derived_from=["kiln-moved", "glaze-recipes-live-in-the-studio-binder",
                               "no-such-memory"])
    write_memory(root, "loop-a", "Loop a", supersedes="loop-b")
    write_memory(root, "loop-b", "Loop b", supersedes="loop-a")


def test_a_whole_build_gives_the_recorded_graph(
    tmp_path: Path, store: MagmaStore, record_of: Callable[..., NoteRecord]
) -> None:
    vault = tmp_path / "vault"
    _vault(vault)
    store_folder(store, vault, record_of)
    rows, links = graph_reads(store)
    got = _recorded_form(VaultGraph.build(rows, links, memory_texts(store)).graph)
    if os.environ.get("RECORD_VAULT_GRAPH"):
        RECORDED.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n",
                            encoding="utf-8")
    assert got == json.loads(RECORDED.read_text(encoding="utf-8"))
    assert len(got["nodes"]) >= 50 and len(got["edges"]) >= 100  # type: ignore[arg-type]
