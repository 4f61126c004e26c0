"""The vault graph's mentions, subjects and diary snippets, its per-node change tracking,
and the ``edges`` table: rows written per change equal the rows of a fresh build, and a
round trip through LanceDB gives the same graph back (nodes, edges, keys, attributes). Real
LanceDB in tmp_path; no embedder is involved."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccb.parse import parse_note
from consistency.judgement import subject_key as judgement_subject_key
from magma.edge_table import EdgeRow, graph_of, graph_rows, read_fingerprint, read_graph, write_rows
from magma.graph_keeper import GraphKeeper
from magma.snippet_store import SnippetStore
from magma.snippets import Snippet, snippet_key
from magma.store import GraphFileRow, LinkRecord, MagmaStore, NoteRecord
from magma.vault_graph import VaultGraph, subject_key

_NAMES = ["Alpha note", "beta", "咖啡 笔记", "Gamma ray"]
_FOLDERS = ["", "Memory/", "sub/"]
_WORDS = ["see", "alpha note", "gamma ray", "咖啡 笔记", "beta", "Delta", "the"]


def _same(a: nx.MultiDiGraph, b: nx.MultiDiGraph) -> bool:
    """Same nodes with the same attributes, same edges with the same keys and attributes."""
    return dict(a.nodes(data=True)) == dict(b.nodes(data=True)) and sorted(
        (u, v, json.dumps(k), json.dumps(d, sort_keys=True))
        for u, v, k, d in a.edges(keys=True, data=True)) == sorted(
        (u, v, json.dumps(k), json.dumps(d, sort_keys=True))
        for u, v, k, d in b.edges(keys=True, data=True))


def _keyless(graph: nx.MultiDiGraph) -> tuple[object, object]:
    """Nodes with attributes (an unresolved target's spelling aside) and edges as a multiset,
    link edges' numeric keys aside (they count links added, not what they are)."""
    nodes = sorted((n, sorted((k, str(v)) for k, v in d.items() if k != "target"))
                   for n, d in graph.nodes(data=True))
    edges = sorted((u, v, k if isinstance(k, str) else "", str(sorted(d.items())))
                   for u, v, k, d in graph.edges(keys=True, data=True))
    return nodes, edges


@st.composite
def _file(draw: st.DrawFn) -> tuple[GraphFileRow, list[LinkRecord], str | None]:
    folder = draw(st.sampled_from(_FOLDERS))
    name = draw(st.sampled_from(_NAMES))
    path = f"{folder}{name}.md"
    memory = folder == "Memory/" and draw(st.booleans())
    props: dict[str, object] = {}
    text = None
    if draw(st.booleans()):
        props["aliases"] = draw(st.lists(st.sampled_from(["Delta", "kiln firing", "x"]),
                                         max_size=2))
    if memory:
        props["subject"] = draw(st.sampled_from(["kiln.date", "Kiln Date", "coffee", ""]))
        props["description"] = " ".join(draw(st.lists(st.sampled_from(_WORDS), max_size=3)))
        if draw(st.booleans()):
            props["derived_from"] = [f"[[{draw(st.sampled_from(_NAMES))}]]"]
        text = " ".join(draw(st.lists(st.sampled_from(_WORDS), max_size=4)))
    tags = tuple(draw(st.lists(st.sampled_from(["kiln", "咖啡"]), max_size=1)))
    links = [LinkRecord(path, draw(st.sampled_from([*_NAMES, "ghost"])), "wikilink", None,
                        None, i) for i in range(draw(st.integers(0, 2)))]
    return GraphFileRow(path, "note", name, tags, "project" if memory else None, props), \
        links, text


@given(st.lists(st.tuples(st.booleans(), _file()), min_size=1, max_size=25))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_rows_written_per_change_equal_the_rows_of_a_fresh_build(
    steps: list[tuple[bool, tuple[GraphFileRow, list[LinkRecord], str | None]]],
) -> None:
    held = VaultGraph()
    table: dict[str, EdgeRow] = {}
    now: dict[str, tuple[GraphFileRow, list[LinkRecord], str | None]] = {}
    for delete, (row, links, text) in steps:
        if delete:
            held.remove(row.path)
            now.pop(row.path, None)
        else:
            held.upsert(row, links, text)
            now[row.path] = (row, links, text)
        changed = held.take_changed()  # what the keeper writes after each batch
        table = {k: r for k, r in table.items() if r["src"] not in changed}
        table.update({r["edge_id"]: r for r in graph_rows(held.graph, changed)})
    fresh = VaultGraph.build([r for r, _, _ in now.values()],
                             [link for _, links, _ in now.values() for link in links],
                             {r.path: t for r, _, t in now.values() if t is not None})
    assert _keyless(held.graph) == _keyless(fresh.graph)
    assert table == {r["edge_id"]: r for r in graph_rows(held.graph)}
    assert _same(graph_of(table.values()), held.graph)


def test_mentions_and_subjects_are_edges() -> None:
    files = [
        GraphFileRow("Kiln schedule.md", "note", "Kiln schedule", (), None,
                     {"aliases": ["Firing plan"]}),
        GraphFileRow("Memory/a.md", "note", "First firing", (), "project",
                     {"subject": "Kiln.Date", "description": "see the firing plan"}),
        GraphFileRow("Memory/b.md", "note", "Second firing", (), "project",
                     {"subject": "kiln date"}),
        GraphFileRow("AI.md", "note", "AI", (), None, {}),
    ]
    graph = VaultGraph.build(files, [], {"Memory/b.md": "The kiln schedule moved. AI too."})
    relations = {(u, v, d["relation"]) for u, v, d in graph.graph.edges(data=True)}
    assert relations == {
        ("note:Memory/a.md", "note:Kiln schedule.md", "mentions"),  # an alias
        ("note:Memory/b.md", "note:Kiln schedule.md", "mentions"),  # a title, any case
        ("note:Memory/a.md", "subject:kiln date", "same_subject"),
        ("note:Memory/b.md", "subject:kiln date", "same_subject"),
    }  # "AI" is shorter than a name looked for
    assert graph.graph.nodes["subject:kiln date"] == {"kind": "subject", "name": "kiln date"}


def test_the_subject_key_is_the_judgements() -> None:
    for subject in ["JS.Package_Manager", " kiln  date ", "咖啡/偏好", "Ｆｕｌｌ:width", ""]:
        assert subject_key(subject) == judgement_subject_key(subject)


def test_the_edges_table_round_trip_is_exact(
    tmp_path: Path, store: MagmaStore, record_of: Callable[..., NoteRecord]
) -> None:
    texts = {
        "Memory/old.md": "---\nname: Old\ntype: project\nsubject: kiln.date\n---\nKiln in May.\n",
        "Memory/新.md": ("---\nname: 新\ntype: project\nsubject: Kiln Date\n"
                        "supersedes: \"[[old]]\"\n---\nKiln in June, see the Project note.\n"),
        "Project note.md": "---\ntags: [kiln]\naliases: [Plan]\n---\nSee [[新]] and "
                           "![[Old#Top]] and [[Old]] again and [[ghost]].\n",
    }
    for path, text in texts.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    store.apply(upserts=[record_of(parse_note(p, (tmp_path / p).read_bytes())) for p in texts])
    keeper = GraphKeeper(store)
    update = keeper.follow()
    assert update.built and read_fingerprint(store) is not None
    graph = keeper.graph()
    relations = {(u, v, d["relation"]) for u, v, d in graph.edges(data=True)}
    assert {("note:Memory/新.md", "note:Project note.md", "mentions"),
            ("note:Memory/新.md", "subject:kiln date", "same_subject"),
            ("note:Memory/新.md", "note:Memory/old.md", "supersedes")} <= relations
    assert _same(read_graph(store), graph)  # LanceDB gives the graph back as it was
    assert GraphKeeper(store).follow().built is False  # in step: a new process builds nothing

    edited = texts["Memory/新.md"].replace("see the Project note", "see the plan")
    (tmp_path / "Memory/新.md").write_text(edited, encoding="utf-8")
    store.apply(upserts=[record_of(parse_note("Memory/新.md", edited.encode()))],
                deletes=["Memory/old.md"])
    step = keeper.follow()
    assert not step.built and step.upserted == 1 and step.removed == 1
    assert _same(read_graph(store), keeper.graph())
    assert ("note:Memory/新.md", "note:Project note.md", "mentions") in {
        (u, v, d["relation"]) for u, v, d in read_graph(store).edges(data=True)}  # alias
    assert "note:Memory/old.md" not in read_graph(store)
    assert GraphKeeper(store).follow().built is False


def test_an_empty_write_keeps_the_table(store: MagmaStore) -> None:
    write_rows(store, [], None, "1:0")
    assert read_fingerprint(store) == "1:0"
    assert read_graph(store).number_of_nodes() == 0


def _snippet(path: str, first: int, body: str, origin: str = "diary") -> Snippet:
    return Snippet(snippet_key(path, "Log", body), path, date(2026, 11, 23), (first, first),
                   "Log", body, ("kiln",), None, origin)  # type: ignore[arg-type]


def test_diary_snippets_are_nodes_cut_from_their_note() -> None:
    daily = GraphFileRow("Daily/2026-11-23.md", "note", "2026-11-23", (), None, {})
    a, b = _snippet(daily.path, 3, "Kiln fired."), _snippet(daily.path, 5, "Glaze ran.")
    loose = _snippet("Daily/gone.md", 2, "A note no longer in the vault.")
    held = VaultGraph.build([daily], [], None, [a, b, loose])
    cut = {(u, v) for u, v, d in held.graph.edges(data=True) if d["relation"] == "cut_from"}
    assert cut == {(f"snippet:{a.key}", "note:Daily/2026-11-23.md"),
                   (f"snippet:{b.key}", "note:Daily/2026-11-23.md")}  # the loose one: a node
    assert held.graph.nodes[f"snippet:{loose.key}"] == {
        "kind": "snippet", "path": "Daily/gone.md", "day": "2026-11-23",
        "evidence": "Daily/gone.md:2", "heading": "Log", "origin": "diary", "statement": None}
    held.take_changed()

    held.set_snippets(daily.path, [b])  # light sleep cut again: the first line went
    assert held.take_changed() == {f"snippet:{a.key}", f"snippet:{b.key}"}
    assert f"snippet:{a.key}" not in held.graph
    held.remove(daily.path)  # the note goes: its snippets stay until light sleep drops them
    assert held.graph.out_degree(f"snippet:{b.key}") == 0
    held.upsert(daily, [])  # and it comes back: they are tied to it again
    assert held.graph.has_edge(f"snippet:{b.key}", "note:Daily/2026-11-23.md", "cut_from")
    fresh = VaultGraph.build([daily], [], None, [b, loose])
    assert _same(held.graph, fresh.graph)
    assert _same(graph_of(graph_rows(held.graph)), held.graph)


def test_the_keeper_follows_the_snippet_table(
    tmp_path: Path, store: MagmaStore, record_of: Callable[..., NoteRecord]
) -> None:
    path = "Daily/2026-11-23.md"
    (tmp_path / "Daily").mkdir()
    (tmp_path / path).write_text("## Log\n- Kiln fired.\n- Glaze ran.\n", encoding="utf-8")
    store.apply(upserts=[record_of(parse_note(path, (tmp_path / path).read_bytes()))])
    snippets = SnippetStore.open(store.uri)
    a, b = _snippet(path, 2, "Kiln fired."), _snippet(path, 3, "Glaze ran.")
    said = _snippet("transcripts/s1.jsonl", 4, "We fire on Monday.", origin="transcript")
    snippets.replace_notes({path: [a, b], said.path: [said]})
    keeper = GraphKeeper(store, snippets=lambda: snippets)
    assert keeper.follow().built
    graph = keeper.graph()
    assert {n for n, d in graph.nodes(data=True) if d["kind"] == "snippet"} == {
        f"snippet:{a.key}", f"snippet:{b.key}"}  # transcript statements are not nodes
    assert _same(read_graph(store), graph)
    assert GraphKeeper(store, snippets=lambda: snippets).follow().built is False  # in step

    snippets.replace_notes({path: [b]})  # no file changed: the snippet table alone moved
    step = keeper.follow()
    assert not step.built and step.nodes == 2  # its note's snippets: a gone, b rewritten
    assert f"snippet:{a.key}" not in keeper.graph()
    assert _same(read_graph(store), keeper.graph())
    snippets.replace_notes({path: [a, b]})  # and while no keeper was running
    assert GraphKeeper(store, snippets=lambda: snippets).follow().built is True
    assert f"snippet:{a.key}" in read_graph(store)
