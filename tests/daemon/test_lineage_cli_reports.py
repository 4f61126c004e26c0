"""``dreamd lineage --canvas`` and ``dreamd graph export`` as a user runs them (real
subprocesses, real files, real LanceDB, the real embedding model), on the inputs of break-it
reports, kept as given (their ``mem`` helper writes ``name``, ``description: <name>
described``, ``type: project``, the extra lines, then the body).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from lineage_files import report_memory

DREAMD = Path(sys.executable).with_name("dreamd")
Run = Callable[..., subprocess.CompletedProcess[str]]


_mem = report_memory


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """``dreamd ARGS`` in the vault's folder, with a state folder of its own."""
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    env = {**os.environ, "DREAMD_STORAGE__DATA_DIR": str(tmp_path / "state"),
           "NO_COLOR": "1"}

    def call(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              cwd=cwd or tmp_path / "vault", timeout=300, check=False)

    return call


def test_lineage_canvas_leaves_a_memory_index_the_user_wrote_alone(
    run: Run, tmp_path: Path,
) -> None:
    """Asked to draw one canvas, ``lineage --canvas`` writes that canvas only: a MEMORY.md
    the user wrote keeps its bytes, and no conflict copy of it appears."""
    vault = tmp_path / "vault"
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "b.md", "Beta", 'supersedes: "[[a]]"')
    index = b"# My own memory index\n\n- my handwritten line I care about\n"
    (vault / "Memory/MEMORY.md").write_bytes(index)
    assert run("sync", ".").returncode == 0
    drawn = run("lineage", "--vault", ".", "Beta", "--canvas")
    assert drawn.returncode == 0, drawn.stderr
    assert "drew Memory/b lineage.canvas (created)" in drawn.stdout
    assert (vault / "Memory/MEMORY.md").read_bytes() == index
    assert not [p.name for p in (vault / "Memory").iterdir() if "conflict" in p.name]


def test_a_lineage_canvas_saved_again_in_another_layout_is_redrawn_in_place(
    run: Run, tmp_path: Path,
) -> None:
    """Obsidian re-saves a canvas with tabs: the same nodes and edges are no hand edit, so a
    rerun redraws it where it is, with no second canvas and no conflict copy."""
    vault = tmp_path / "vault"
    _mem(vault, "a.md", "Alpha")
    _mem(vault, "b.md", "Beta", 'supersedes: "[[a]]"')
    assert run("sync", ".").returncode == 0
    assert run("lineage", "--vault", ".", "Beta", "--canvas").returncode == 0
    canvas = vault / "Memory/b lineage.canvas"
    drawn = canvas.read_bytes()
    canvas.write_text(json.dumps(json.loads(drawn), indent="\t"), encoding="utf-8")
    again = run("lineage", "--vault", ".", "Beta", "--canvas")
    assert again.returncode == 0, again.stderr
    assert "drew Memory/b lineage.canvas (written)" in again.stdout
    assert "is yours" not in again.stdout
    assert canvas.read_bytes() == drawn
    assert sorted(p.name for p in (vault / "Memory").iterdir()) == [
        "a.md", "b lineage.canvas", "b.md"]


def test_lineage_canvases_of_a_long_name_and_of_one_name_in_two_subfolders(
    run: Run, tmp_path: Path,
) -> None:
    """A memory file of 249 bytes (82 Chinese characters) gets a canvas whose name fits the
    file system (no traceback); ``work/lunch`` and ``home/lunch`` get a canvas each, beside
    their memories."""
    vault = tmp_path / "vault"
    long = "关于睡眠的笔记" * 11 + "好好好好好"
    _mem(vault, f"{long}.md", "睡眠", body="睡眠笔记内容")
    _mem(vault, "work/lunch.md", "Work lunch", body="Lunch at work is at noon.")
    _mem(vault, "home/lunch.md", "Home lunch", body="Lunch at home is at one.")
    assert run("sync", ".").returncode == 0
    drawn = run("lineage", "--vault", ".", "睡眠", "--canvas", "--json")
    assert drawn.returncode == 0, drawn.stderr
    name = json.loads(drawn.stdout)["canvas"].rsplit("/", 1)[-1]
    assert len(name.encode()) <= 255 and (vault / "Memory" / name).is_file()
    for who in ("Work lunch", "Home lunch"):
        assert run("lineage", "--vault", ".", who, "--canvas").returncode == 0
    assert (vault / "Memory/work/lunch lineage.canvas").is_file()
    assert (vault / "Memory/home/lunch lineage.canvas").is_file()
    shown = json.loads((vault / "Memory/work/lunch lineage.canvas").read_text("utf-8"))
    assert [n.get("file") for n in shown["nodes"]] == ["Memory/work/lunch.md"]


def test_graph_export_to_dash_writes_standard_output(run: Run, tmp_path: Path) -> None:
    """``-o -`` is standard output, as for every command-line tool, not a file named '-'."""
    _mem(tmp_path / "vault", "a.md", "Alpha")
    assert run("sync", ".").returncode == 0
    done = run("graph", "export", "--vault", str(tmp_path / "vault"), "--format", "json",
               "-o", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["directed"] is True
    assert not (tmp_path / "-").exists()
