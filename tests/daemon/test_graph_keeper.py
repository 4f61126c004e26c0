"""The vault graph of a running vault follows every sync: the ``edges`` table after a batch
equals a fresh build of the index, and a restart with nothing changed builds nothing.

Real LanceDB store and files in tmp_path; the token-hash fake embedder (conftest; nothing
here is about meaning)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest
from lineage_files import write_memory

from daemon.app import App
from magma.edge_table import read_graph
from magma.graph_keeper import memory_texts
from magma.store import graph_reads
from magma.vault_graph import VaultGraph

Builder = Callable[..., tuple[App, object]]


def _shape(graph: nx.MultiDiGraph) -> tuple[object, object]:
    nodes = sorted((n, sorted((k, str(v)) for k, v in d.items() if k != "target"))
                   for n, d in graph.nodes(data=True))
    edges = sorted((u, v, k if isinstance(k, str) else "", str(sorted(d.items())))
                   for u, v, k, d in graph.edges(keys=True, data=True))
    return nodes, edges


def _fresh(app: App) -> nx.MultiDiGraph:
    files, links = graph_reads(app.store)
    return VaultGraph.build(files, links, memory_texts(app.store)).graph


def test_the_edges_table_follows_each_sync(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    assert _shape(read_graph(app.store)) == _shape(_fresh(app))
    relations = {d["relation"] for _, _, d in read_graph(app.store).edges(data=True)}
    assert {"links_to", "tagged"} <= relations

    path = write_memory(vault, "kiln-moved", "Kiln moved to February",
                        supersedes="kiln-first-firing-in-january")
    target = vault / path
    target.write_text(target.read_text(encoding="utf-8").replace(
        "version: 1", "version: 1\nsubject: kiln.date"), encoding="utf-8")
    (vault / "Welcome.md").unlink()
    assert app.indexing.index_now([path, "Welcome.md"])
    graph = read_graph(app.store)
    assert _shape(graph) == _shape(_fresh(app))
    assert "note:Welcome.md" not in graph
    edges = {(u, v, d["relation"]) for u, v, d in graph.edges(data=True)}
    assert ("note:Memory/kiln-moved.md", "note:Memory/kiln-first-firing-in-january.md",
            "supersedes") in edges
    assert ("note:Memory/kiln-moved.md", "subject:kiln date", "same_subject") in edges

    again, _ = make_app(vault)  # a restart: the table is in step, nothing is built
    assert again.indexing.graph_keeper.follow().built is False
    edges_version = again.store._t.edges.version
    assert _shape(again.indexing.graph_keeper.graph()) == _shape(graph)
    # the graph held for search is built in memory: the table in step is not written again
    assert again.store._t.edges.version == edges_version


def test_a_start_with_the_graph_sealed_reads_no_edge_row_and_hashes_no_path(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keeper seals the versions at which its table is in step; a new process finding
    them reads neither the meta row nor hashes the index (issue 24: ≈0.2 s at 100,000
    notes), and an edit after the seal is followed as before."""
    import magma.graph_keeper as keeper_module

    app, _ = make_app(vault)
    app.sync()
    calls: list[str] = []
    real_meta, real_mix = keeper_module.read_meta, keeper_module._mix_of
    monkeypatch.setattr(keeper_module, "read_meta",
                        lambda store: calls.append("read_meta") or real_meta(store))
    monkeypatch.setattr(keeper_module, "_mix_of",
                        lambda hashes: calls.append("mix") or real_mix(hashes))
    again, _ = make_app(vault)
    again.sync()
    assert calls == []
    (vault / "Welcome.md").write_text("# Welcome\n\nSee [[Kiln log]].\n", encoding="utf-8")
    third, _ = make_app(vault)
    third.sync()  # not sealed any more: read, hashed, followed
    assert "mix" in calls
    assert _shape(read_graph(third.store)) == _shape(_fresh(third))


def test_the_graph_takes_the_rows_a_batch_wrote_and_reads_back_what_changed_after(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch hands the graph the rows it wrote (nothing read back for them); a row a later
    batch of the same sync changed (a link resolved again when its target arrives) is read
    back: the graph after either equals a fresh build of the index."""
    import magma.graph_keeper as keeper_module

    app, _ = make_app(vault, **{"sync.write_batch_files": 1})
    app.sync()
    app.indexing.graph_keeper.graph()
    reads: list[list[str]] = []
    real_reads = keeper_module.graph_reads_of

    def counted(store: object, paths: list[str]) -> object:
        reads.append(sorted(paths))
        return real_reads(store, paths)  # type: ignore[arg-type]

    monkeypatch.setattr(keeper_module, "graph_reads_of", counted)
    first = write_memory(vault, "glaze-test", "Glaze test on Friday")
    assert app.indexing.index_now([first])
    assert reads == []  # the memory's rows came from its own batch
    assert _shape(app.indexing.graph_keeper.graph()) == _shape(_fresh(app))

    # one sync of two batches: a.md links to b.md, which the second batch adds
    (vault / "Notes").mkdir(exist_ok=True)
    (vault / "Notes" / "a-kiln.md").write_text("See [[b-kiln]] for the schedule.\n",
                                               encoding="utf-8")
    (vault / "Notes" / "b-kiln.md").write_text("Firing on Monday.\n", encoding="utf-8")
    assert app.indexing.index_now(["Notes/a-kiln.md", "Notes/b-kiln.md"])
    assert reads == [["Notes/a-kiln.md"]]  # resolved again by the second batch: read back
    graph = app.indexing.graph_keeper.graph()
    assert _shape(graph) == _shape(_fresh(app))
    assert any(d["relation"] == "links_to" for u, v, d in graph.edges(data=True)
               if u == "note:Notes/a-kiln.md" and v == "note:Notes/b-kiln.md")


def test_a_note_another_process_indexed_and_this_one_deleted_leaves_the_edges_table(
    vault: Path, make_app: Builder
) -> None:
    """Two processes on one store without a daemon (an MCP server that holds its graph, and a
    one-shot command): the one-shot indexes a note (its keeper writes the note's edges), the
    long-lived one deletes it. The ``edges`` table (what ``dreamd graph`` and a process
    without a graph read) holds no row of the deleted note, also after a restart; and a note
    the one-shot changed that the long-lived one writes back as it knew it holds its edges of
    now, not the one-shot's."""
    long_lived, _ = make_app(vault)
    long_lived.sync()
    long_lived.indexing.graph_keeper.graph()
    one_shot, _ = make_app(vault)  # a separate store handle and graph keeper, as a process
    (vault / "Kiln plan.md").write_text("# Kiln plan\n\nSee [[Welcome]].\n", encoding="utf-8")
    welcome = (vault / "Welcome.md").read_bytes()
    (vault / "Welcome.md").write_text("# Welcome\n\nSee [[Kiln plan]].\n", encoding="utf-8")
    assert one_shot.indexing.index_now(["Kiln plan.md", "Welcome.md"])
    long_lived.store.refresh()  # a search there sees the one-shot's note
    assert _shape(long_lived.indexing.graph_keeper.graph()) == _shape(_fresh(long_lived))

    (vault / "Kiln plan.md").unlink()
    (vault / "Welcome.md").write_bytes(welcome)  # back to what the long-lived one knew
    assert long_lived.indexing.index_now(["Kiln plan.md", "Welcome.md"])
    assert _shape(long_lived.indexing.graph_keeper.graph()) == _shape(_fresh(long_lived))
    table = read_graph(long_lived.store)
    assert "note:Kiln plan.md" not in table
    assert _shape(table) == _shape(_fresh(long_lived))
    restarted, _ = make_app(vault)
    restarted.sync()
    assert _shape(read_graph(restarted.store)) == _shape(_fresh(restarted))
