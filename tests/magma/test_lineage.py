"""Memory lineage read from real memory files, the canvas picture, and the vault graph export.

Real files in tmp_path, parsed by ``ccb.parse``; real networkx; the vault graph export reads a
real LanceDB store (the fake embedder of the MAGMA tests: nothing here is about meaning).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lineage_files import checked_canvas, read_lineage, write_memory

from ccb.parse import parse_note
from magma.canvas import Card, Link, canvas_bytes, columns
from magma.lineage import chain_of, lineage_graph, relations_of
from magma.store import GraphFileRow, LinkRecord, MagmaStore, NoteRecord, graph_reads
from magma.vault_graph import VaultGraph, graph_text, vault_graph


def _edges(graph: nx.MultiDiGraph) -> set[tuple[str, str, str]]:
    return {(u.split(":", 1)[1], v.split(":", 1)[1], k) for u, v, k in graph.edges(keys=True)}


def test_every_lineage_property_becomes_one_typed_edge(tmp_path: Path) -> None:
    write_memory(tmp_path, "old", "Old fact", superseded_by="new")
    write_memory(tmp_path, "new", "New fact", supersedes="old")  # both sides: one edge
    write_memory(tmp_path, "dup", "Duplicate", merged_into="new", status="archived",
                 archived_reason="exact duplicate")
    write_memory(tmp_path, "summary", "Summary", derived_from=["new", "Memory/Old.md"])
    graph = lineage_graph(read_lineage(tmp_path))
    assert _edges(graph) == {
        ("Memory/new.md", "Memory/old.md", "supersedes"),
        ("Memory/dup.md", "Memory/new.md", "merged_into"),
        ("Memory/summary.md", "Memory/new.md", "derived_from"),
        ("Memory/summary.md", "Memory/old.md", "derived_from"),
    }
    data = graph.get_edge_data("note:Memory/new.md", "note:Memory/old.md", key="supersedes")
    assert data["written_in"] == "superseded_by+supersedes"
    assert relations_of(graph, "note:Memory/new.md") == {
        "supersedes": ["note:Memory/old.md"], "merged into it": ["note:Memory/dup.md"],
        "derives from it": ["note:Memory/summary.md"]}
    assert graph.nodes["note:Memory/dup.md"]["archived_reason"] == "exact duplicate"


def test_chinese_and_decomposed_names_resolve(tmp_path: Path) -> None:
    write_memory(tmp_path, "咖啡偏好", "咖啡偏好")
    # a Mac stores names decomposed: the link typed composed still finds it
    write_memory(tmp_path, unicodedata.normalize("NFD", "crème"), "Crème")
    write_memory(tmp_path, "总结", "总结", derived_from=["咖啡偏好", "Crème"])
    graph = lineage_graph(read_lineage(tmp_path))
    sources = {v for _, v, k in graph.out_edges(
        "note:Memory/总结.md", keys=True) if k == "derived_from"}
    assert sources == {"note:Memory/咖啡偏好.md",
                       "note:Memory/" + unicodedata.normalize("NFD", "crème") + ".md"}


def test_a_link_to_no_memory_goes_to_an_unresolved_node(tmp_path: Path) -> None:
    write_memory(tmp_path, "summary", "Summary", derived_from="Forgotten fact")
    graph = lineage_graph(read_lineage(tmp_path))
    assert graph.nodes["unresolved:forgotten fact"] == {"kind": "unresolved",
                                                         "target": "[[Forgotten fact]]"}


def test_the_chain_is_walked_once_around_a_loop(tmp_path: Path) -> None:
    write_memory(tmp_path, "a", "A", supersedes="b")
    write_memory(tmp_path, "b", "B", supersedes="c")
    write_memory(tmp_path, "c", "C", supersedes="a")  # written by hand: a loop
    write_memory(tmp_path, "d", "D", derived_from="c")
    write_memory(tmp_path, "alone", "Alone")
    graph = lineage_graph(read_lineage(tmp_path))
    chain = chain_of(graph, "note:Memory/a.md")
    assert sorted(chain.nodes) == [f"note:Memory/{s}.md" for s in "abcd"]
    assert len(chain.edges) == 4
    assert chain_of(graph, "note:Memory/alone.md").edges == ()
    with pytest.raises(KeyError):
        chain_of(graph, "note:Memory/nothing.md")


def test_columns_put_the_older_left_and_end_on_a_cycle() -> None:
    keys = ["new", "mid", "old"]
    assert columns(keys, [Link("new", "mid", ""), Link("mid", "old", "")]) == {
        "new": 2, "mid": 1, "old": 0}
    looped = columns(keys, [Link("new", "mid", ""), Link("mid", "old", ""),
                            Link("old", "new", "")])
    assert max(looped.values()) < len(keys)


def test_a_canvas_is_valid_json_canvas_and_every_card_file_exists(tmp_path: Path) -> None:
    write_memory(tmp_path, "old", "Old")
    write_memory(tmp_path, "新的", "新的", supersedes="old", derived_from="gone")
    graph = lineage_graph(read_lineage(tmp_path))
    chain = chain_of(graph, "note:Memory/新的.md")
    cards = [Card(n, file=graph.nodes[n]["path"]) if graph.nodes[n]["kind"] == "memory"
             else Card(n, text="gone") for n in chain.nodes]
    data = canvas_bytes(cards, [Link(e.src, e.dst, e.kind) for e in chain.edges])
    (tmp_path / "Memory" / "picture.canvas").write_bytes(data)
    canvas = checked_canvas(tmp_path, "Memory/picture.canvas")
    assert {n["type"] for n in canvas["nodes"]} == {"file", "text"}
    assert sorted(e["label"] for e in canvas["edges"]) == ["derived_from", "supersedes"]
    assert canvas_bytes(cards, [Link(e.src, e.dst, e.kind) for e in chain.edges]) == data
    with pytest.raises(ValueError, match="share a key"):
        canvas_bytes([Card("x", text=""), Card("x", text="")], [])


def test_vault_graph_export_round_trips(
    tmp_path: Path, store: MagmaStore, record_of: Callable[..., NoteRecord]
) -> None:
    write_memory(tmp_path, "old", "Old")
    write_memory(tmp_path, "新", "新", supersedes="old")
    (tmp_path / "Project.md").write_text("---\ntags: [kiln]\n---\nSee [[新]] and ![[Old]].\n",
                                         encoding="utf-8")
    paths = ["Memory/old.md", "Memory/新.md", "Project.md"]
    store.apply(upserts=[record_of(parse_note(p, (tmp_path / p).read_bytes())) for p in paths])
    files, links = graph_reads(store)
    graph = vault_graph(files, links)
    relations = {(u, v, d["relation"]) for u, v, d in graph.edges(data=True)}
    assert relations >= {("note:Project.md", "note:Memory/新.md", "links_to"),
                         ("note:Project.md", "note:Memory/old.md", "embeds"),
                         ("note:Project.md", "tag:kiln", "tagged"),
                         ("note:Memory/新.md", "note:Memory/old.md", "supersedes")}
    assert graph.nodes["note:Memory/新.md"]["kind"] == "memory"
    target = tmp_path / "graph.graphml"
    target.write_text(graph_text(graph, "graphml"), encoding="utf-8")
    back = nx.read_graphml(target)
    assert {(u, v, d["relation"]) for u, v, d in back.edges(data=True)} == relations
    data = json.loads(graph_text(graph, "json"))
    again = nx.node_link_graph(data, edges="edges")
    assert {(u, v, d["relation"]) for u, v, d in again.edges(data=True)} == relations
    with pytest.raises(ValueError, match="unknown format"):
        graph_text(graph, "dot")  # type: ignore[arg-type]


# ------------------------------------------------------------------ the graph kept in step

_NAMES = ["Alpha", "beta", "咖啡", "Gamma"]
_FOLDERS = ["", "Memory/", "sub/"]


def _snapshot(graph: nx.MultiDiGraph) -> tuple[object, object]:
    """Nodes with their attributes (an unresolved target's spelling aside: the first link to
    it names it) and edges as a multiset, link edges' numeric keys aside."""
    nodes = sorted((n, sorted((k, str(v)) for k, v in d.items() if k != "target"))
                   for n, d in graph.nodes(data=True))
    edges = sorted((u, v, k if isinstance(k, str) else "", str(sorted(d.items())))
                   for u, v, k, d in graph.edges(keys=True, data=True))
    return nodes, edges


@st.composite
def _file(draw: st.DrawFn) -> tuple[GraphFileRow, list[LinkRecord]]:
    folder = draw(st.sampled_from(_FOLDERS))
    name = draw(st.sampled_from(_NAMES))
    if draw(st.booleans()) and folder == "":
        return GraphFileRow(f"{name}.png", "attachment", name, (), None, {}), []
    path = f"{folder}{name}.md"
    memory = folder == "Memory/" and draw(st.booleans())
    props: dict[str, object] = {}
    if memory:
        for prop in ("supersedes", "superseded_by", "merged_into", "derived_from"):
            targets = draw(st.lists(st.sampled_from([*_NAMES, "ghost"]), max_size=2))
            if targets:
                props[prop] = [f"[[{t}]]" for t in targets]
        props["status"] = draw(st.sampled_from(["active", "archived"]))
    tags = tuple(draw(st.lists(st.sampled_from(["kiln", "Kiln", "咖啡"]), max_size=2)))
    links = [LinkRecord(path, draw(st.sampled_from([*_NAMES, "ghost", "Alpha.png",
                                                    "sub/Gamma", ""])),
                        draw(st.sampled_from(["wikilink", "embed", "markdown",
                                              "markdown-embed"])),
                        draw(st.sampled_from([None, "Intro"])), None, i)
             for i in range(draw(st.integers(0, 3)))]
    row = GraphFileRow(path, "note", name, tags, "project" if memory else None, props)
    return row, links


@given(st.lists(st.tuples(st.booleans(), _file()), min_size=1, max_size=25))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_graph_kept_in_step_equals_a_fresh_build(
    steps: list[tuple[bool, tuple[GraphFileRow, list[LinkRecord]]]],
) -> None:
    held = VaultGraph()
    now: dict[str, tuple[GraphFileRow, list[LinkRecord]]] = {}
    for delete, (row, links) in steps:
        if delete:
            held.remove(row.path)
            now.pop(row.path, None)
        else:
            held.upsert(row, links)
            now[row.path] = (row, links)
    fresh = VaultGraph.build([r for r, _ in now.values()],
                             [link for _, links in now.values() for link in links])
    assert _snapshot(held.graph) == _snapshot(fresh.graph)


def test_the_vault_graph_agrees_with_the_link_graph_of_the_store(
    tmp_path: Path, store: MagmaStore, record_of: Callable[..., NoteRecord]
) -> None:
    """The resolution the graph does itself is the store's (``resolved`` column)."""
    (tmp_path / "sub").mkdir()
    for path, text in [("a.md", "[[b]] [[sub/c]] [c](sub/c.md) ![[b#Intro]] [[ghost]]"),
                       ("b.md", "[[a]]"), ("sub/c.md", "[[../a.md]]"), ("c.md", "x")]:
        (tmp_path / path).write_text(text, encoding="utf-8")
    notes = [parse_note(p, (tmp_path / p).read_bytes()) for p in
             ["a.md", "b.md", "sub/c.md", "c.md"]]
    store.apply(upserts=[record_of(n) for n in notes])
    files, links = graph_reads(store)
    graph = vault_graph(files, links)
    stored = {(f"note:{r.src}", f"note:{r.resolved}" if r.resolved else
               f"unresolved:{r.target.lower()}") for r in links}
    drawn = {(u, v) for u, v, d in graph.edges(data=True) if d["relation"] != "tagged"}
    assert drawn == stored


def test_graphml_holds_no_character_xml_cannot_read() -> None:
    """A link written with a control character in it ("[[Ctl\\x02Note]]") still exports as
    GraphML an XML parser reads."""
    import xml.etree.ElementTree as ET

    import networkx as nx

    from magma.vault_graph import graph_text

    graph = nx.MultiDiGraph()
    graph.add_node("note:Plain.md", kind="note", path="Plain.md")
    graph.add_node("unresolved:ctl\x02note", kind="unresolved", name="Ctl\x02Note")
    graph.add_edge("note:Plain.md", "unresolved:ctl\x02note", key="links_to",
                   relation="links_to", target="Ctl\x02Note")
    root = ET.fromstring(graph_text(graph, "graphml"))
    assert root.tag.endswith("graphml")
