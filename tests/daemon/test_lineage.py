"""``dreamd lineage``, the lineage checks of ``dreamd check``, the canvases and ``dreamd graph
export`` on a copy of the demo vault with memories that supersede, merge and derive.

Real LanceDB store and version archive in tmp_path, real files. The in-process tests use the
token-hash fake embedder (conftest; nothing here is about meaning); the CLI test runs the real
``dreamd`` in subprocesses with the real model, as a user does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest
from lineage_files import checked_canvas, write_memory

from ccb.parse import parse_note
from config.errors import MemoryNotFoundError
from daemon.app import App
from daemon.lineage import LineageService, dream_picture
from magma.canvas import canvas_bytes

Builder = Callable[..., tuple[App, object]]
DREAMD = Path(sys.executable).with_name("dreamd")


def _lineage_vault(vault: Path) -> None:
    """Memories with every kind of lineage, and every kind of lineage drift."""
    write_memory(vault, "kiln-date-december", "Kiln firing in December", status="archived",
                 archived_reason="superseded", superseded_by="kiln-first-firing-in-january")
    kiln = vault / "Memory" / "kiln-first-firing-in-january.md"
    kiln.write_bytes(kiln.read_bytes().replace(
        b"source: assistant\n", b'source: assistant\nsupersedes: "[[kiln-date-december]]"\n'))
    write_memory(vault, "kiln-date-twice", "Kiln date noted twice", status="archived",
                 archived_reason="exact duplicate", merged_into="kiln-first-firing-in-january")
    write_memory(vault, "咖啡偏好", "咖啡偏好", derived_from=["kiln-first-firing-in-january",
                                                          "kiln-date-december", "被遗忘的"])
    write_memory(vault, "loop-a", "Loop A", supersedes="loop-b")
    write_memory(vault, "loop-b", "Loop B", supersedes="loop-a")
    write_memory(vault, "other-successor", "Other successor",
                 supersedes="kiln-date-december")


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    _lineage_vault(vault)
    application, _ = make_app(vault)
    application.sync()
    return application


def _service(app: App) -> LineageService:
    memories = app.memories()
    return LineageService(memories=memories.memories, find=memories.find,
                          versions=app.versions, writer=app.writer,
                          memory_folder=app.settings.vault.memory_folder)


def test_check_reports_lineage_drift_with_the_chain_and_each_link_once(app: App) -> None:
    report = app.consistency().check()
    found = {(f.kind, getattr(f.drift, "path", "")): f for f in report.findings}
    assert ("supersedes_cycle", "Memory/loop-a.md") in found
    twice = found[("superseded_twice", "Memory/kiln-date-december.md")]
    assert twice.drift.by == ("Memory/kiln-first-firing-in-january.md",  # type: ignore[union-attr]
                              "Memory/other-successor.md")
    changed = [f.drift for f in report.findings if f.kind == "derived_from_changed_source"]
    assert [(d.chain, d.change) for d in changed] == [  # type: ignore[union-attr]
        (("Memory/咖啡偏好.md", "Memory/kiln-date-december.md"),
         "superseded by Memory/kiln-first-firing-in-january.md and "
         "Memory/other-successor.md"),
        (("Memory/咖啡偏好.md", "[[被遗忘的]]"), "not found (forgotten or renamed)")]
    # the link to a forgotten memory is that finding, not a broken link besides
    assert not [f for f in report.findings if f.kind == "broken_link"
                and f.drift.path == "Memory/咖啡偏好.md"]  # type: ignore[union-attr]


def test_lineage_of_a_memory_with_dates_and_versions(app: App) -> None:
    report = _service(app).lineage("Kiln first firing in January")
    root = "note:Memory/kiln-first-firing-in-january.md"
    assert report.root == root
    assert report.relations == {
        "supersedes": ["note:Memory/kiln-date-december.md"],
        "merged into it": ["note:Memory/kiln-date-twice.md"],
        "derives from it": ["note:Memory/咖啡偏好.md"]}
    assert report.versions[root].count == 1 and report.versions[root].origin == "user-edit"
    assert report.memories[root].created == "2026-11-27T17:45:09+00:00"
    chinese = _service(app).lineage("咖啡偏好")
    assert "unresolved:被遗忘的" in chinese.chain.nodes
    assert chinese.relations["derived from"][-1] == "unresolved:被遗忘的"
    with pytest.raises(MemoryNotFoundError):
        _service(app).lineage("no such memory at all")


def test_the_lineage_canvas_is_valid_and_kept_when_rearranged_by_hand(app: App,
                                                                      vault: Path) -> None:
    service = _service(app)
    report = service.lineage("咖啡偏好")
    written = service.write_canvas(report)
    assert written.path == "Memory/咖啡偏好 lineage.canvas" and written.status == "created"
    canvas = checked_canvas(vault, written.path)
    files = {n["file"] for n in canvas["nodes"] if n["type"] == "file"}
    assert "Memory/kiln-first-firing-in-january.md" in files
    assert sorted(e["label"] for e in canvas["edges"]) == [
        "derived from", "derived from", "derived from", "merged into", "supersedes",
        "supersedes"]
    assert service.write_canvas(report).status == "unchanged"
    # the user drags a card: their canvas is theirs now, left where it is; dreamd draws
    # beside it, and redraws that one in place next time
    moved = json.loads((vault / written.path).read_text(encoding="utf-8"))
    moved["nodes"][0]["x"] += 40
    (vault / written.path).write_text(json.dumps(moved), encoding="utf-8")
    theirs = (vault / written.path).read_bytes()
    again = service.write_canvas(report)
    assert (again.path, again.left) == ("Memory/咖啡偏好 lineage 2.canvas", written.path)
    assert again.outcome.conflict_path is None and "is yours" in again.said()
    assert (vault / written.path).read_bytes() == theirs
    assert service.write_canvas(report).path == again.path  # its own, redrawn in place
    assert sorted(p.name for p in (vault / "Memory").glob("咖啡偏好*")) == [
        "咖啡偏好 lineage 2.canvas", "咖啡偏好 lineage.canvas", "咖啡偏好.md"]
    # forget deletes dreamd's numbered canvas; the user's stays (without the forgotten card)
    app.memories().forget("咖啡偏好")
    assert not (vault / again.path).exists()
    assert (vault / written.path).is_file()


def test_a_dream_is_drawn_from_its_plan(app: App, vault: Path) -> None:
    for stem, day in (("uses-pnpm", "21"), ("uses-pnpm-again", "22")):
        (vault / "Memory" / f"{stem}.md").write_text(
            f"---\nname: Uses pnpm\ndescription: uses pnpm\ntype: user\n"
            f"created: 2026-11-{day}T10:00:00Z\nversion: 1\n---\nThe user uses pnpm.\n",
            encoding="utf-8")
    app.sync()
    report = app.dreamer().dream(dry_run=False, force=True, consolidate=True)
    assert report.applied
    now = app.clock()
    # a note of the user's that happens to bear the canvas's name stays as it is
    mine = vault / "Memory" / f"dream {now:%Y-%m-%d %H%M}.canvas"
    mine.write_bytes(b'{"nodes":[],"edges":[]}\n')
    drawn = _service(app).write_dream_canvas(report.plan.consolidation, report.plan.lifecycle,
                                             now)
    assert drawn is not None and drawn.path == f"Memory/dream {now:%Y-%m-%d %H%M} 2.canvas"
    assert drawn.left == f"Memory/{mine.name}"
    assert mine.read_bytes() == b'{"nodes":[],"edges":[]}\n'
    canvas = checked_canvas(vault, drawn.path)
    assert any(e["label"] == "merged into (exact)" for e in canvas["edges"])
    assert dream_picture((), ()) == ([], [])
    assert _service(app).write_dream_canvas((), (), app.clock()) is None
    assert canvas_bytes(*dream_picture(report.plan.consolidation, report.plan.lifecycle)) \
        == (vault / drawn.path).read_bytes()


def test_lineage_canvas_and_graph_export_from_the_command_line(vault: Path,
                                                                tmp_path: Path) -> None:
    """The CLI as a user runs it (real subprocesses, the real embedding model)."""
    _lineage_vault(vault)
    env = {**os.environ, "DREAMD_VAULT__PATH": str(vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    assert run("sync").returncode == 0
    shown = run("lineage", "Kiln first firing in January")
    assert shown.returncode == 0, shown.stderr
    assert "supersedes: Memory/kiln-date-december.md (Kiln firing in December)" in shown.stdout
    assert "merged into it: Memory/kiln-date-twice.md" in shown.stdout
    assert "version 1 of 1" in shown.stdout
    drawn = run("lineage", "咖啡偏好", "--canvas", "--json")
    assert drawn.returncode == 0, drawn.stderr
    data = json.loads(drawn.stdout)
    assert data["canvas"] == "Memory/咖啡偏好 lineage.canvas"
    assert data["relations"]["derived from"][-1] == "[[被遗忘的]]"
    checked_canvas(vault, data["canvas"])
    missing = run("lineage", "nothing by that name")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines()[-1].startswith("dreamd: memory")
    checked = run("check", "--json")
    assert "lineage.canvas" not in checked.stdout  # the canvas drawn is indexed, in step
    kinds = json.loads(checked.stdout)["counts"]
    assert kinds["supersedes_cycle"] == 1 and kinds["derived_from_changed_source"] == 2

    graphml = run("graph", "export", "--format", "graphml")
    assert graphml.returncode == 0, graphml.stderr
    ET.fromstring(graphml.stdout)  # well-formed XML
    target = tmp_path / "vault.json"
    exported = run("graph", "export", "--format", "json", "--output", str(target))
    assert exported.returncode == 0, exported.stderr
    graph = nx.node_link_graph(json.loads(target.read_text(encoding="utf-8")), edges="edges")
    relations = {d["relation"] for _, _, d in graph.edges(data=True)}
    assert relations == {"links_to", "embeds", "tagged", "supersedes", "merged_into",
                         "derived_from", "mentions", "same_subject"}
    bad = run("graph", "export", "--format", "dot")
    assert bad.returncode == 2 and "graphml or json" in bad.stderr
    unwritable = run("graph", "export", "--output", str(tmp_path / "no" / "such" / "dir.xml"))
    assert unwritable.returncode == 2 and "cannot write" in unwritable.stderr
    note = vault / "Welcome.md"
    before = note.read_bytes()  # (break-it input: a mistyped path names a note)
    into_vault = run("graph", "export", "--format", "json", "-o", str(note), "--force")
    assert into_vault.returncode == 2 and "inside the vault" in into_vault.stderr
    assert note.read_bytes() == before
    again = run("graph", "export", "--format", "json", "--output", str(target))
    assert again.returncode == 2 and "--force" in again.stderr
    assert run("graph", "export", "--output", str(target), "--force").returncode == 0

    dreamed = run("dream", "--canvas", "--force")
    assert dreamed.returncode == 0, dreamed.stderr
    assert "drew Memory/dream " in dreamed.stdout or "nothing drawn" in dreamed.stdout
    note = parse_note("Memory/咖啡偏好.md", (vault / "Memory" / "咖啡偏好.md").read_bytes())
    assert note.memory is not None


def test_forget_takes_the_memory_out_of_every_canvas(app: App, vault: Path) -> None:
    """A canvas names memories by file (the name is often the memory's text): after
    ``forget`` its own lineage canvas is gone and its card is out of the others."""
    service = _service(app)
    other = service.write_canvas(service.lineage("咖啡偏好")).path
    own = service.write_canvas(service.lineage("kiln-date-december")).path
    assert "kiln-date-december" in (vault / other).read_text(encoding="utf-8")
    app.memories().forget("kiln-date-december")
    assert not (vault / own).exists()
    text = (vault / other).read_text(encoding="utf-8")
    assert "kiln-date-december" not in text
    canvas = checked_canvas(vault, other)
    files = {n["file"] for n in canvas["nodes"] if n["type"] == "file"}
    assert "Memory/咖啡偏好.md" in files and "Memory/kiln-first-firing-in-january.md" in files
    assert not any(other.endswith(".conflict") for other in files)
    assert [p.name for p in (vault / "Memory").glob("*.canvas")] == [Path(other).name]


def test_a_superseded_memory_is_never_called_active() -> None:
    """A memory a newer one superseded (``superseded_by``, no status, as ``remember`` leaves a
    user memory) reads "superseded" in the chain, not "active"."""
    from types import SimpleNamespace

    from daemon.lineage import _facts
    from magma.lineage import LineageMemory

    node = "note:Memory/old.md"
    old = LineageMemory(path="Memory/old.md", name="old", valid_to="2026-12-04",
                        links=(("superseded_by", "[[new]]"),))
    report = SimpleNamespace(memories={node: old}, versions={})
    assert _facts(report, node).startswith("superseded")  # type: ignore[arg-type]
    live = LineageMemory(path="Memory/new.md", name="new", links=(("supersedes", "[[old]]"),))
    report.memories[node] = live
    assert _facts(report, node).startswith("active")  # type: ignore[arg-type]


def test_forget_leaves_what_the_user_drew_on_a_canvas(app: App, vault: Path) -> None:
    """A canvas the user made in the memory folder (modelled on a break-it report, on this
    test's vault): forget
    takes out the card of the memory's own file and its arrows, never the user's text card,
    the card of another note with the same file name, or a lineage canvas the user wrote."""
    (vault / "Notes").mkdir(exist_ok=True)
    (vault / "Notes" / "kiln-date-december.md").write_text("# A note that shares the stem\n",
                                                           encoding="utf-8")
    board = vault / "Memory" / "My board.canvas"
    board.write_text(json.dumps({"nodes": [
        {"id": "n1", "type": "file", "file": "Memory/kiln-date-december.md",
         "x": 0, "y": 0, "width": 300, "height": 100},
        {"id": "n2", "type": "text", "text": "My own reflection: the kiln was fired in the "
         "**kiln-date-december** week, at the shelter on Elm road.",
         "x": 400, "y": 0, "width": 300, "height": 100},
        {"id": "n3", "type": "file", "file": "Notes/kiln-date-december.md",
         "x": 0, "y": 300, "width": 300, "height": 100}],
        "edges": [{"id": "e1", "fromNode": "n2", "toNode": "n1", "label": "about"}]}),
        encoding="utf-8")
    hand = vault / "Memory" / "kiln-date-december lineage.canvas"
    hand.write_text('{"nodes": [{"id": "t", "type": "text", "text": "mine", "x": 0, "y": 0, '
                    '"width": 10, "height": 10}], "edges": []}', encoding="utf-8")
    app.memories().forget("kiln-date-december")
    canvas = checked_canvas(vault, "Memory/My board.canvas")
    assert {n["id"] for n in canvas["nodes"]} == {"n2", "n3"}
    assert "Elm road" in board.read_text(encoding="utf-8") and canvas["edges"] == []
    assert hand.read_text(encoding="utf-8").startswith('{"nodes": [{"id": "t"')


def test_a_users_file_at_the_canvas_name_is_left_where_it_is(vault: Path) -> None:
    """``dreamd lineage NAME --canvas`` as a user runs it, with their own canvas already at
    ``<name> lineage.canvas`` (real subprocesses, the real model): their file keeps its place
    and its bytes, no conflict copy appears, the picture goes beside it and the output says
    where."""
    _lineage_vault(vault)
    theirs = vault / "Memory" / "咖啡偏好 lineage.canvas"
    data = ('{"nodes":[{"id":"mine","type":"text","text":"我的咖啡笔记: oat milk, no sugar",'
            '"x":0,"y":0,"width":250,"height":60}],"edges":[]}\n').encode()
    theirs.write_bytes(data)
    env = {**os.environ, "DREAMD_VAULT__PATH": str(vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    assert run("sync").returncode == 0
    drawn = run("lineage", "咖啡偏好", "--canvas")
    assert drawn.returncode == 0, drawn.stderr
    assert "drew Memory/咖啡偏好 lineage 2.canvas (created)" in drawn.stdout
    assert "Memory/咖啡偏好 lineage.canvas is yours" in " ".join(drawn.stdout.split())
    again = json.loads(run("lineage", "咖啡偏好", "--canvas", "--json").stdout)
    assert (again["canvas"], again["canvas_left"]) == ("Memory/咖啡偏好 lineage 2.canvas",
                                                       "Memory/咖啡偏好 lineage.canvas")
    assert theirs.read_bytes() == data
    assert not [p for p in (vault / "Memory").glob("*.canvas") if ".conflict" in p.name]
    checked_canvas(vault, again["canvas"])
