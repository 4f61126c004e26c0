"""One rule for what a lineage link names (:class:`magma.lineage.LineageResolver`), read the
same way by check, ``dreamd lineage``, the dream, search's marks and the graph export: a
path in a subfolder (``[[work/lunch]]``), a memory's name (``[[Alpha]]``), several links in
one text (``"[[a]], [[b]]"``).

Real files, real LanceDB, the real dream; the token-hash fake embedder (conftest; nothing
here is about meaning). The memory files are the inputs of break-it reports, kept as given
(their ``mem`` helper writes ``name``, ``description: <name> described``, ``type: project``,
the extra lines, then the body).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from lineage_files import report_memory

from ccb.parse import parse_note
from consistency.checker import BrokenLink
from consistency.graph_checks import ChangedSource, DanglingLineage
from daemon.app import App
from daemon.derived_marks import MARK
from daemon.lineage import LineageService, export_graph
from magma.graph import node_id

Builder = Callable[..., tuple[App, object]]


_mem = report_memory


@pytest.fixture
def empty_vault(tmp_path: Path) -> Path:
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    return tmp_path / "vault"


def _lineage(app: App, name: str) -> dict[str, list[str]]:
    memories = app.memories()
    service = LineageService(memories=memories.memories, find=memories.find,
                             versions=app.versions, writer=app.writer,
                             memory_folder=app.settings.vault.memory_folder)
    return {k: list(v) for k, v in service.lineage(name).relations.items()}


def _lineage_findings(app: App) -> list[object]:
    return [f.drift for f in app.consistency().check().findings
            if isinstance(f.drift, ChangedSource | DanglingLineage | BrokenLink)]


def test_two_links_in_one_text_are_two_sources(empty_vault: Path, make_app: Builder) -> None:
    vault = empty_vault
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "b.md", "Beta")
    _mem(vault, "s.md", "Synth", 'derived_from: "[[a]], [[b]]"')
    app, _ = make_app(vault)
    app.sync()
    assert _lineage(app, "Synth") == {"derived from": [node_id("note", "Memory/a.md"),
                                                       node_id("note", "Memory/b.md")]}
    assert _lineage_findings(app) == []


def test_a_link_by_a_memorys_name_is_one_link_for_lineage_and_check(
    empty_vault: Path, make_app: Builder,
) -> None:
    vault = empty_vault
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "n.md", "Newer", 'supersedes: "[[Alpha]]"')
    app, _ = make_app(vault)
    app.sync()
    assert _lineage(app, "Newer") == {"supersedes": [node_id("note", "Memory/a.md")]}
    assert _lineage_findings(app) == []


def test_a_path_in_a_subfolder_names_that_file_not_another_of_its_name(
    empty_vault: Path, make_app: Builder,
) -> None:
    """[[work/lunch]] is Memory/work/lunch.md though Memory/home/lunch.md (superseded) has
    the same file name: the synthesis derived from work/lunch is not flagged by check,
    marked by search, archived by the dream, or given a wrong edge in the graph export."""
    vault = empty_vault
    _mem(vault, "work/lunch.md", "Work lunch", body="Lunch at work is at noon.")
    _mem(vault, "home/lunch.md", "Home lunch", body="Lunch at home is at one.")
    _mem(vault, "new.md", "New home lunch", 'supersedes: "[[home/lunch]]"',
         body="Lunch at home is at two now.")
    (vault / "Memory/s.md").write_text(
        "---\nname: Work day\ndescription: the work day\ntype: project\n"
        'derived_from: ["[[work/lunch]]"]\n---\nLunch at work is at noon.\n',
        encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    assert _lineage(app, "Work day") == {
        "derived from": [node_id("note", "Memory/work/lunch.md")]}
    assert _lineage(app, "New home lunch") == {
        "supersedes": [node_id("note", "Memory/home/lunch.md")]}
    assert [d for d in _lineage_findings(app) if isinstance(d, ChangedSource)] == []
    for hit in app.search("work lunch noon", limit=5, count_recall=False):
        assert not any(w.startswith(MARK) for w in hit.why), hit
    graph = json.loads(export_graph(app.store, "json"))
    derived = [(e["source"], e["target"]) for e in graph.get("links") or graph["edges"]
               if e.get("relation") == "derived_from"]
    assert derived == [("note:Memory/s.md", "note:Memory/work/lunch.md")]
    app.dreamer().dream()
    note = parse_note("Memory/s.md", (vault / "Memory/s.md").read_bytes())
    assert note.memory is not None and note.memory.status != "archived"


def test_forgetting_one_of_two_memories_of_one_file_name_keeps_the_link_to_the_other(
    empty_vault: Path, make_app: Builder,
) -> None:
    """Forgetting home/lunch takes [[home/lunch]] out of the synthesis and leaves
    [[work/lunch]] (it names another memory): the lineage to work/lunch is not lost."""
    vault = empty_vault
    _mem(vault, "work/lunch.md", "Work lunch", body="Lunch at work is at noon.")
    _mem(vault, "home/lunch.md", "Home lunch", body="Lunch at home is at one.")
    (vault / "Memory/s.md").write_text(
        "---\nname: Work day\ndescription: the work day\ntype: project\n"
        'derived_from: ["[[work/lunch]]", "[[home/lunch]]"]\n---\nLunch at work is at noon.\n',
        encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    app.memories().forget("Home lunch")
    note = parse_note("Memory/s.md", (vault / "Memory/s.md").read_bytes())
    assert note.properties["derived_from"] == ["[[work/lunch]]"]
    assert note.properties["forgotten_sources"] == 1
