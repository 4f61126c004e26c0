"""Every answer the vault graph gives on a real vault stays the one recorded before the graph's
memory was made compact: the English Obsidian help vault (``../shared/corpora/obsidian-help/en``,
173 notes, 135 attachments, aliases, embeds, links to headings and blocks) with memories that
mention its notes by title and alias, share subjects and supersede one another, indexed into a
real LanceDB store and read back as the daemon reads it (``magma.store.graph_reads``).

Recorded (``data/help_en_graph_answers.json``, as sha256 digests of canonical JSON, with
counts): the graph itself (nodes, edges, keys, attributes, each in the graph's own order), the
``edges`` table rows (:func:`magma.edge_table.graph_rows`), the graph step's view
(:func:`magma.graph_step.step_graph`: nodes, rows, weights), personalized PageRank from seeds
and the one-hop neighbours of notes, and which memories have a subject; then the same after
each of a series of edits applied one at a time (:meth:`VaultGraph.upsert` / ``remove`` /
``set_snippets``), with the nodes each edit changed (``take_changed``: what the ``edges`` table
rewrites) and the view patched from the one before (:func:`magma.graph_step.patched_step_graph`).
The fake embedder of the MAGMA tests: nothing here is about meaning.

Regenerate the recording only for a change of what the graph answers:
``RECORD_GRAPH_ANSWERS=1 pytest tests/magma/test_vault_graph_answers.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import networkx as nx
from vault_index import store_folder

from magma.edge_table import graph_rows
from magma.graph_keeper import memory_texts
from magma.graph_step import (
    NoteGraph,
    has_subject,
    patched_step_graph,
    personalized_pagerank,
    step_graph,
)
from magma.snippets import Snippet
from magma.store import (
    GraphFileRow,
    LinkRecord,
    MagmaStore,
    NoteRecord,
    graph_reads,
)
from magma.vault_graph import VaultGraph

RECORDED = Path(__file__).parent / "data" / "help_en_graph_answers.json"

#: Memories written into the vault copy: (stem, subject, supersedes, body). Their bodies name
#: notes by title ("Internal links"), by alias ("Internal link"), inside code (no mention), and
#: one subject is shared by more memories than the graph step's band.
_MEMORIES: list[tuple[str, str | None, str | None, str]] = [
    ("links-habit", "linking", None,
     "I use Internal links and Embed files daily; Aliases help too."),
    ("links-habit-2", "Linking", "links-habit",
     "Internal link syntax with the Graph view open. `Canvas` in code is no mention."),
    ("sync-plan", "sync", None, "Set up Obsidian Sync and Sync regions before the trip."),
    ("publish-note", None, None, "Custom domains for Obsidian Publish; see Analytics."),
    *[(f"subject-{i}", "Vault layout", None, f"Workspace note {i} about Tabs and Sidebar.")
      for i in range(11)],
]


def _memory_file(stem: str, subject: str | None, supersedes: str | None, body: str) -> str:
    lines = [f"name: {json.dumps(stem)}", f"description: {json.dumps(body[:40])}",
             "type: project", "created: 2026-11-20T10:00:00Z",
             "updated: 2026-11-20T10:00:00Z", "version: 1"]
    if subject is not None:
        lines.append(f"subject: {json.dumps(subject)}")
    if supersedes is not None:
        lines.append(f'supersedes:\n  - "[[{supersedes}]]"')
    return "---\n" + "\n".join(lines) + f"\n---\n{body}\n"


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _form(graph: nx.MultiDiGraph) -> dict[str, Any]:
    return {"nodes": [[n, dict(d)] for n, d in graph.nodes(data=True)],
            "edges": [[u, v, k, dict(d)] for u, v, k, d in graph.edges(keys=True, data=True)]}


def _view(view: NoteGraph) -> dict[str, Any]:
    return {"nodes": list(view.nodes), "index": sorted(view.index.items()),
            "offsets": view.offsets.tolist(), "targets": view.targets.tolist(),
            "weights": view.weights.tolist(), "degree": view.degree.tolist(),
            "edges": view.edges}


#: Seeds of the walks and notes whose neighbours are asked (present in the vault or not).
_SEEDS = [
    {"Linking notes and files/Internal links.md": 1.0},
    {"Home.md": 0.7, "Memory/sync-plan.md": 0.3},
    {"Memory/subject-3.md": 1.0},
    {"Plugins/Graph view.md": 1.0, "Editing and formatting/Callouts.md": 2.0},
    {"Nowhere.md": 1.0},
]


def _answers(graph: nx.MultiDiGraph, view: NoteGraph) -> dict[str, Any]:
    pageranks = [sorted((p, round(s, 12)) for p, s in
                        personalized_pagerank(view, seeds).items()) for seeds in _SEEDS]
    asked = sorted({p for seeds in _SEEDS for p in seeds} | set(view.nodes[::17]))
    return {
        "counts": [graph.number_of_nodes(), graph.number_of_edges(), len(view.nodes),
                   view.edges],
        "graph": _digest(_form(graph)),
        "rows": _digest(graph_rows(graph)),
        "view": _digest(_view(view)),
        "pagerank": _digest(pageranks),
        "neighbours": _digest([[p, view.neighbours(p)] for p in asked]),
        "subjects": _digest([[p, has_subject(graph, p)] for p in asked]),
    }


def _snippet(path: str, n: int) -> Snippet:
    return Snippet(key=f"{path}#{n}", path=path, day=date(2026, 11, 20), lines=(n, n),
                   heading="Log", body=f"line {n}", tags=(), kind=None, origin="diary")


#: One edit: ``("upsert", row, links, text)``, ``("remove", path)`` or ``("snippets", path,
#: snippets)``.
_Edit = tuple[Any, ...]


def _edits(rows: list[GraphFileRow], links: list[LinkRecord]) -> list[tuple[str, _Edit]]:
    """The edits applied in turn, each ``(name, edit)``."""
    by_path = {row.path: row for row in rows}
    by_src: dict[str, list[LinkRecord]] = {}
    for link in links:
        by_src.setdefault(link.src, []).append(link)
    home = "Home.md"
    new = "Brand new note.md"
    new_row = dataclasses.replace(by_path[home], path=new, title="Brand new note",
                                  tags=("fresh",), properties={"aliases": ["Newest note"]})
    relinked = [*by_src[home][::2],
                LinkRecord(home, "Brand new note", "wikilink", None, None, 1),
                LinkRecord(home, "Internal links", "wikilink", "#Link to a heading", None, 2),
                LinkRecord(home, "Internal links", "wikilink", "#Link to a heading", None, 3)]
    memory = "Memory/links-habit-2.md"
    properties = {**by_path[memory].properties, "subject": "sync"}
    return [
        ("relink", ("upsert", by_path[home], relinked, None)),
        ("add a note the links name", ("upsert", new_row, [], None)),
        ("rewrite a memory", ("upsert", dataclasses.replace(by_path[memory],
                                                            properties=properties),
                              by_src.get(memory, []),
                              "Newest note and Sync regions, no Internal links.")),
        ("retitle", ("upsert", dataclasses.replace(new_row, title="Renamed note",
                                                   properties={"aliases": "Aliases"}), [],
                     None)),
        ("remove a linked note", ("remove", "Linking notes and files/Internal links.md")),
        ("remove a memory", ("remove", "Memory/subject-4.md")),
        ("add snippets", ("snippets", home, [_snippet(home, 1), _snippet(home, 2)])),
        ("remove the note of snippets", ("remove", home)),
        ("bring it back", ("upsert", by_path[home], by_src[home], None)),
        ("drop snippets", ("snippets", home, [])),
        ("remove an attachment", ("remove", next(r.path for r in rows
                                                 if r.kind == "attachment"))),
        ("a memory becomes a note", ("upsert", dataclasses.replace(
            by_path["Memory/sync-plan.md"], memory_type=None, properties={}), [], None)),
    ]


def _apply(held: VaultGraph, edit: _Edit, files: dict[str, GraphFileRow],
           links: dict[str, list[LinkRecord]], texts: dict[str, str]) -> None:
    """Apply ``edit`` to ``held`` and to the ``files``, ``links`` and ``texts`` a fresh build
    would read."""
    if edit[0] == "upsert":
        _, row, its_links, text = edit
        held.upsert(row, its_links, text if text is not None else texts.get(row.path))
        files[row.path], links[row.path] = row, its_links
        if text is not None:
            texts[row.path] = text
    elif edit[0] == "remove":
        held.remove(edit[1])
        files.pop(edit[1], None)
        links.pop(edit[1], None)
    else:
        held.set_snippets(edit[1], edit[2])


def test_the_graph_answers_as_recorded_at_build_and_after_each_edit(
    tmp_path: Path, corpora_dir: Path, store: MagmaStore,
    record_of: Callable[..., NoteRecord]
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(corpora_dir / "obsidian-help" / "en", vault)
    (vault / "Memory").mkdir()
    for stem, subject, supersedes, body in _MEMORIES:
        (vault / "Memory" / f"{stem}.md").write_text(
            _memory_file(stem, subject, supersedes, body), encoding="utf-8")
    store_folder(store, vault, record_of)
    rows, links = graph_reads(store)
    texts = memory_texts(store)
    held = VaultGraph.build(rows, links, texts)
    held.take_changed()
    view = step_graph(held.graph)
    got: dict[str, Any] = {"build": _answers(held.graph, view)}
    files = {row.path: row for row in rows}
    by_src: dict[str, list[LinkRecord]] = {}
    for link in links:
        by_src.setdefault(link.src, []).append(link)
    for name, edit in _edits(rows, links):
        subjects = {n for n in held.graph if n.startswith("note:") and has_subject(
            held.graph, n.removeprefix("note:"))}
        _apply(held, edit, files, by_src, texts)
        changed = held.take_changed()
        # (the keeper derives the view again when a memory that had a subject changed)
        patched = None if changed & subjects else patched_step_graph(view, held.graph, changed)
        view = step_graph(held.graph)
        got[name] = {**_answers(held.graph, view), "changed": _digest(sorted(changed)),
                     "patched": None if patched is None else _digest(_view(patched))}
        if patched is not None:
            assert _view(patched) == _view(view), name
    fresh = VaultGraph.build([files[p] for p in sorted(files)],
                             [link for p in sorted(files) for link in by_src.get(p, [])], texts)
    assert sorted(map(str, _form(fresh.graph)["edges"])) == \
        sorted(map(str, _form(held.graph)["edges"]))
    assert sorted(map(str, _form(fresh.graph)["nodes"])) == \
        sorted(map(str, _form(held.graph)["nodes"]))
    if os.environ.get("RECORD_GRAPH_ANSWERS"):
        RECORDED.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n",
                            encoding="utf-8")
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    for step, answers in got.items():
        assert answers == recorded[step], step
    assert got["build"]["counts"][1] >= 1000

