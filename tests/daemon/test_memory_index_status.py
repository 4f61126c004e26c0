"""``dreamd status`` says how many memories ``MEMORY.md`` left out to fit Claude Code's limits,
and ``dreamd status --json`` names them.

Four hundred memory files on a copy of the demo vault; ``MEMORY.md`` is rebuilt by the real
memory service (the FAKE token-hash embedder of conftest is loaded, never used: nothing here
is about meaning); ``dreamd status`` runs as the user runs it, a subprocess.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

from fakes import TokenHashEmbedder
from rich.console import Console

from daemon import render
from daemon.app import MEMORY_INDEX_RECORD, App

DREAMD = Path(sys.executable).with_name("dreamd")
MakeApp = Callable[..., tuple[App, TokenHashEmbedder]]


def many_memories(vault: Path, count: int) -> set[str]:
    paths = set()
    for n in range(count):
        stem = f"deploy-note-{n:03d}"
        (vault / "Memory" / f"{stem}.md").write_text(
            f"---\nname: Deploy note {n}\ndescription: Service {n} deploys from the release "
            f"branch after the smoke tests pass on staging.\ntype: project\n---\nService {n} "
            "deploys from the release branch.\n", encoding="utf-8")
        paths.add(f"Memory/{stem}.md")
    return paths


def status(vault: Path, *extra: str) -> str:
    done = subprocess.run([str(DREAMD), "status", "--vault", str(vault), *extra],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_status_counts_and_names_the_memories_memory_md_left_out(
        vault: Path, make_app: MakeApp) -> None:
    written = many_memories(vault, 400)
    app, _ = make_app(vault)
    try:
        app.memories().rebuild_index()
        live = {stored.path for stored in app.memories().memories()}
    finally:
        app.close()
    assert written <= live
    text = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    listed = {"Memory/" + urllib.parse.unquote(target)
              for target in re.findall(r"^- \[.*\]\(([^)\s]+)\)", text, re.MULTILINE)}
    left = int(re.search(r"… (\d+) more memories not listed", text)[1])  # type: ignore[index]
    assert left > 200

    report = json.loads(status(vault, "--json"))["memory_index"]
    assert report["path"] == "Memory/MEMORY.md" and report["generated"] is True
    assert report["listed"] == len(listed) and report["left_out"] == left
    named = set(report["left_out_paths"])
    assert len(named) == left and not named & listed and named | listed == live
    lines = status(vault).splitlines()
    assert (f"memory index: Memory/MEMORY.md lists {len(listed)} memories; {left} more left "
            "out to fit what Claude Code loads (200 lines, 25 KB): dreamd status --json names "
            "them (memory_index.left_out_paths)") in lines


def test_a_memory_md_of_an_earlier_build_is_still_counted(vault: Path, make_app: MakeApp
                                                         ) -> None:
    from daemon.memory_index_keeper import index_listing
    from daemon.render import memory_index_line

    many_memories(vault, 300)
    app, _ = make_app(vault)
    try:
        app.memories().rebuild_index()
        record = app.state_dir / MEMORY_INDEX_RECORD
    finally:
        app.close()
    built = json.loads(record.read_text("utf-8"))
    left = len(built.pop("left_out"))  # as an earlier dreamd recorded it
    record.write_text(json.dumps(built), encoding="utf-8")
    listing = index_listing(vault, "Memory", record)
    assert listing is not None and listing["left_out"] == left > 0
    assert listing["left_out_paths"] is None
    assert memory_index_line(listing).endswith("names them (memory_index.left_out_paths) once "
                                               "it is rebuilt")
    mine = vault / "Memory" / "MEMORY.md"
    mine.write_text("# My index\n\n- [Deploys](deploy-note-001.md)\n", encoding="utf-8")
    edited = index_listing(vault, "Memory", record)
    assert edited is not None and (edited["listed"], edited["left_out"]) == (1, 0)
    assert memory_index_line(edited) == ("Memory/MEMORY.md lists 1 memory (not as dreamd "
                                         "last wrote it)")
    mine.unlink()
    assert index_listing(vault, "Memory", record) is None


SUPERSEDED = ("---\nname: Prefers imperial units\ndescription: Used cups and ounces until the "
              "move to Berlin\ntype: user\nid: 01M83T8CHRJ08VQRXNY5QM93AA\n"
              "valid_to: 2026-01-10\nstatus: superseded\n---\nCups and ounces.\n")
ARCHIVED = ("---\nname: 旧的烤箱温度\ndescription: 旧烤箱偏高十度\ntype: project\n"
            "status: archived\n---\n旧烤箱偏高十度。\n")
ENTRIES = ("# 关于我\n\n- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
           "- Drinks oolong tea every afternoon\n")


def test_status_counts_the_memories_memory_md_lists(vault: Path, make_app: MakeApp) -> None:
    """``memories: 5`` where ``MEMORY.md`` listed 4 on the demo vault: a note outside the
    memory folder with ``type: feedback`` was counted; so were a superseded or archived
    memory, kept for its history, and the entries of an entry file. ``memories`` is what
    ``MEMORY.md`` lists (and what the memory service calls live); the others are counted
    apart, by name."""
    for extra in ({}, {"Memory/prefers-imperial-units.md": SUPERSEDED,
                       "Memory/旧的烤箱温度.md": ARCHIVED, "Memory/facts.md": ENTRIES}):
        for path, text in extra.items():
            (vault / path).write_text(text, encoding="utf-8")
        app, _ = make_app(vault)
        try:
            app.sync()
            app.memories().rebuild_index()
            live = {s.path for s in app.memories().memories()
                    if s.note.memory and s.note.memory.status not in {"superseded", "archived"}}
            report = app.status()  # (``dreamd status`` of this store: its embedder is FAKE)
        finally:
            app.close()
        text = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
        listed = re.findall(r"^- \[.*\]\(([^)\s]+)\)", text, re.MULTILINE)
        counts = render.status_json(report)["counts"]
        assert counts["memories"] == len(listed) == len(live) == 4, (counts, listed)
        assert counts["memory_typed_notes_elsewhere"] == 1  # edge-cases/…/memory/feedback_split
        assert counts["memories_superseded_or_archived"] == (2 if extra else 0), counts
        shown = io.StringIO()
        render.print_status(Console(file=shown, width=200), report, ZoneInfo("UTC"))
        lines = shown.getvalue().splitlines()
        assert "memories: 4" in lines and "memory typed notes elsewhere: 1" in lines, lines
        assert ("memories superseded or archived: 2" in lines) is bool(extra), lines
    assert counts["memory_entries"] == 2, counts
