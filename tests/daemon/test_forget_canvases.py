"""``dreamd forget`` and the canvases of the memory folder: a link to a canvas outside the
vault never stops a forget half-way, and the canvases it edits are named in its report and
indexed (check finds them in step).

Real files, real LanceDB; the token-hash fake embedder (conftest). The files are the inputs
of break-it reports, kept as given (their ``mem`` helper writes ``name``, ``description:
<name> described``, ``type: project``, the extra lines, then the body).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lineage_files import report_memory

from daemon.app import App

Builder = Callable[..., tuple[App, object]]


_mem = report_memory


def test_a_link_to_a_canvas_outside_the_vault_never_stops_a_forget(
    tmp_path: Path, make_app: Builder,
) -> None:
    vault = tmp_path / "vault"
    _mem(vault, "a.md", "Alpha", body="My bank PIN reminder: the blue notebook")
    outside = tmp_path / "out" / "outside.canvas"
    outside.parent.mkdir()
    board = ('{"nodes":[{"id":"t1","type":"text","text":"unrelated board","x":0,"y":0,'
             '"width":300,"height":100}],"edges":[]}\n')
    outside.write_text(board, encoding="utf-8")
    (vault / "Memory/linked.canvas").symlink_to(outside)
    app, _ = make_app(vault)
    app.sync()
    app.memories().forget("Alpha")
    assert not (vault / "Memory/a.md").exists()
    assert outside.read_text(encoding="utf-8") == board  # never read, let alone written
    assert app.search("bank PIN blue notebook", limit=2, count_recall=False) == []
    assert app.versions.all_versions(["path:Memory/a.md"]).get("path:Memory/a.md") in (None, [])


def test_forget_names_the_memory_and_the_canvases_it_edited(
    tmp_path: Path, make_app: Builder,
) -> None:
    vault = tmp_path / "vault"
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "b.md", "Beta", 'supersedes: "[[a]]"')
    (vault / "Memory/my board.canvas").write_text(
        '{\n\t"nodes":[\n\t\t{"id":"t1","type":"text","text":"my plan","x":0,"y":0,'
        '"width":300,"height":100},\n\t\t{"id":"f1","type":"file","file":"Memory/a.md",'
        '"x":400,"y":0,"width":300,"height":200}\n\t],\n\t"edges":[{"id":"e1",'
        '"fromNode":"t1","toNode":"f1"}]\n}\n', encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    report = app.memories().forget("Alpha")
    assert report.name == "Alpha"
    assert "its cards in the canvases: Memory/my board.canvas" in report.removed
    board = (vault / "Memory/my board.canvas").read_text(encoding="utf-8")
    assert "my plan" in board and "Memory/a.md" not in board
    stale = [f for f in app.consistency().check().findings
             if f.drift.path == "Memory/my board.canvas"]
    assert stale == []


#: A board in Obsidian's own layout (tabs, one card or edge a line), English and Chinese.
BOARD = (
    '{\n'
    '\t"nodes":[\n'
    '\t\t{"id":"t1","type":"text","text":"本周计划 — plan for the week","x":-400,"y":-240,'
    '"width":250,"height":60},\n'
    '\t\t{"id":"f1","type":"file","file":"Memory/a.md","x":0,"y":0,"width":400,"height":300},\n'
    '\t\t{"id":"f2","type":"file","file":"Memory/b.md","x":500,"y":0,"width":400,"height":300}\n'
    '\t],\n'
    '\t"edges":[\n'
    '\t\t{"id":"e1","fromNode":"t1","fromSide":"right","toNode":"f1","toSide":"left"},\n'
    '\t\t{"id":"e2","fromNode":"t1","fromSide":"bottom","toNode":"f2","toSide":"top"}\n'
    '\t]\n'
    '}')


def test_forget_takes_out_only_the_lines_of_its_card_from_a_board_in_obsidians_layout(
    tmp_path: Path, make_app: Builder,
) -> None:
    """The card of the forgotten memory and its edge go; every other byte of the user's
    board stays (before: the board was written again with two-space indents)."""
    vault = tmp_path / "vault"
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "b.md", "Beta")
    (vault / "Memory/my board.canvas").write_text(BOARD, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    app.memories().forget("Alpha")
    expected = "".join(line for line in BOARD.splitlines(keepends=True)
                       if '"f1"' not in line)
    assert (vault / "Memory/my board.canvas").read_text(encoding="utf-8") == expected
