"""Dreams, expiration and restore on real files and a real store (LanceDB in a temp folder).

The embedder is the token-hash fake (conftest): consolidation decides by content hash,
character bigrams, type, subject and negation, not by meaning.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import snapshot, write_memory

from ccb.parse import parse_note
from config.errors import DreamGuardError, LockError
from consistency.dream import MergeDuplicate
from daemon.app import App
from daemon.dream import DreamLock, SessionLog

Builder = Callable[..., tuple[App, object]]
NOW = datetime.now(UTC)


@pytest.fixture
def planted(vault: Path, make_app: Builder) -> tuple[App, dict[str, str]]:
    paths = {
        "exact_old": write_memory(vault, "uses-pnpm", "Use pnpm for installs.",
                                  subject="tools.pm", days_old=10),
        "exact_new": write_memory(vault, "pnpm-again", "use **pnpm** for installs",
                                  subject="tools.pm", days_old=2),
        "near_old": write_memory(vault, "linter", "Run the linter before every commit.",
                                 type="project", subject="lint", days_old=9),
        "near_new": write_memory(vault, "linter-why",
                                 "Run the linter before every commit. It catches typos.",
                                 type="project", subject="lint", days_old=3),
        "old_value": write_memory(vault, "api-timeout", "The payments API timeout is 30s.",
                                  type="project", subject="api.timeout", days_old=8),
        "new_value": write_memory(vault, "api-timeout-now", "The payments API timeout is 60s.",
                                  type="project", subject="api.timeout", days_old=1),
        "look_editor": write_memory(vault, "dark-editor", "Prefers dark mode in the editor.",
                                    subject="editor.theme"),
        "look_term": write_memory(vault, "dark-terminal", "Prefers dark mode in the terminal.",
                                  subject="terminal.theme"),
        "stale_project": write_memory(vault, "old-launch", "The spring launch plan.",
                                      type="project", subject="launch", days_old=200),
        "reference": write_memory(vault, "design-doc", "The design lives in [[Nowhere Note]].",
                                  type="reference", subject="design.doc"),
    }
    application, _ = make_app(vault)
    application.sync()
    return application, paths


def test_dry_run_shows_the_plan_as_a_diff_and_changes_nothing(
    planted: tuple[App, dict[str, str]], vault: Path,
) -> None:
    app, paths = planted
    before = snapshot(vault)
    report = app.dreamer().dream(dry_run=True)
    assert snapshot(vault) == before
    assert not report.applied
    text = "\n".join(report.plan.changes)
    assert "Archived [[pnpm-again]]: exact duplicate of [[uses-pnpm]]" in text
    assert "[[api-timeout]] superseded by [[api-timeout-now]]" in text
    assert "Archived [[old-launch]]: project inactive" in text
    assert "Marked links of [[design-doc]] broken: `Nowhere Note`" in text
    assert "+status: archived" in report.plan.diff
    assert f"--- a/{paths['exact_new']}" in report.plan.diff
    assert "+++ b/Memory/MEMORY.md" in report.plan.diff  # the index it would rebuild too


def test_dream_consolidates_loses_nothing_and_writes_the_diary_once(
    planted: tuple[App, dict[str, str]], vault: Path,
) -> None:
    app, paths = planted
    before = snapshot(vault)
    report = app.dreamer().dream()
    after = snapshot(vault)
    assert set(before) <= set(after)  # a dream never deletes a file

    def status(key: str) -> str | None:
        return parse_note(paths[key], after[paths[key]]).memory.status  # type: ignore[union-attr]

    assert status("exact_new") == "archived" and status("exact_old") is None
    assert status("near_new") == "archived"
    keeper = parse_note(paths["near_old"], after[paths["near_old"]])
    assert "It catches typos." in keeper.body  # the newer sentence is kept in the keeper
    assert keeper.memory.version == 2  # type: ignore[union-attr]
    assert status("old_value") == "archived" and status("new_value") is None
    new_value = parse_note(paths["new_value"], after[paths["new_value"]])
    assert new_value.memory.supersedes == ("api-timeout",)  # type: ignore[union-attr]
    assert status("look_editor") is None and status("look_term") is None
    assert status("stale_project") == "archived"
    reference = parse_note(paths["reference"], after[paths["reference"]])
    assert reference.properties["broken_links"] == ["Nowhere Note"]
    # Outside the keys it changes, a file is byte for byte what it was.
    assert after[paths["exact_new"]].startswith(before[paths["exact_new"]][:30])
    assert before[paths["exact_new"]].split(b"---\n", 2)[2] == \
        after[paths["exact_new"]].split(b"---\n", 2)[2]

    diary = after["Memory/DREAMS.md"].decode()
    assert diary.startswith("# Dream diary")
    assert "[[pnpm-again]]" in diary and "[[uses-pnpm]]" in diary
    index = after["Memory/MEMORY.md"].decode()
    assert "pnpm-again.md" not in index and "uses-pnpm.md" in index
    assert index.count("\n") <= 200 and len(index.encode()) <= 25_000
    assert report.plan.counts["added"] == report.plan.counts["memories"]

    # Every change is a version with origin "dream".
    history = app.history().history(paths["exact_new"])
    assert history[-1].origin == "dream"

    # A second dream with nothing changed: nothing written, no new diary entry.
    again = app.dreamer().dream()
    assert again.plan.empty and again.written == () and not again.diary
    assert again.plan.counts["skipped"] == again.plan.counts["memories"]
    assert snapshot(vault) == after


def test_restore_brings_an_archived_memory_back(
    planted: tuple[App, dict[str, str]], vault: Path,
) -> None:
    app, paths = planted
    app.dreamer().dream()
    rel = paths["exact_new"]
    assert app.dreamer().restore(rel)
    note = parse_note(rel, (vault / rel).read_bytes())
    assert note.memory.status is None  # type: ignore[union-attr]
    assert not {"archived", "archived_reason", "merged_into"} & set(note.properties)
    assert not app.dreamer().restore(rel)  # not archived any more
    # The user's choice holds: the next dream does not merge it again (until it is edited).
    assert not [a for a in app.dreamer().plan().consolidation
                if rel in (getattr(a, "duplicate_path", None), getattr(a, "old_path", None))]
    # Restoring a superseded memory takes it out of its successor's `supersedes`.
    assert app.dreamer().restore(paths["old_value"])
    successor = parse_note(paths["new_value"], (vault / paths["new_value"]).read_bytes())
    assert successor.memory.supersedes == ()  # type: ignore[union-attr]
    old = parse_note(paths["old_value"], (vault / paths["old_value"]).read_bytes())
    assert old.memory.valid_to is None and "superseded_by" not in old.properties  # type: ignore[union-attr]
    assert not app.dreamer().plan().consolidation


def test_a_dream_that_changes_too_much_asks_first(
    planted: tuple[App, dict[str, str]], vault: Path, make_app: Builder,
) -> None:
    app, _ = make_app(vault, **{"dream.max_change_share": 0.05, "dream.max_change_free": 2})
    before = snapshot(vault)
    with pytest.raises(DreamGuardError, match="--force"):
        app.dreamer().dream()
    assert snapshot(vault) == before
    assert app.dreamer().dream(force=True).written


def test_expire_applies_the_lifecycle_only(
    planted: tuple[App, dict[str, str]], vault: Path,
) -> None:
    app, paths = planted
    report = app.dreamer().dream(consolidate=False)
    assert not report.plan.consolidation
    after = snapshot(vault)
    assert b"status: archived" in after[paths["stale_project"]]
    assert b"status: archived" not in after[paths["exact_new"]]
    # The next dream still sees the duplicates as new (an expiry is not a dream).
    assert app.dreamer().plan().consolidation


def test_search_hides_archived_and_expired_memories_and_counts_recalls(
    planted: tuple[App, dict[str, str]], vault: Path,
) -> None:
    app, paths = planted
    write_memory(vault, "old-promo", "The winter promo code banner.", type="project",
                 subject="promo", expires=(NOW - timedelta(days=3)).date())
    app.sync()
    app.dreamer().dream()
    hits = {h.path for h in app.search("pnpm installs", limit=10)}
    assert paths["exact_old"] in hits and paths["exact_new"] not in hits
    shown = {h.path: h for h in app.search("pnpm installs", limit=10, include_hidden=True)}
    assert "archived" in shown[paths["exact_new"]].why  # shown, and marked
    assert "archived" not in shown[paths["exact_old"]].why
    assert "Memory/old-promo.md" not in {h.path for h in app.search("winter promo banner")}
    assert (vault / "Memory/old-promo.md").exists()  # expired: hidden, kept on disk
    keeper_id = parse_note(paths["near_old"], (vault / paths["near_old"]).read_bytes()
                           ).memory.id  # type: ignore[union-attr]
    for query in ("linter before commit", "run the linter", "typos before a commit"):
        app.search(query, limit=10)
    first = app.recalls.stats()[keeper_id]
    app.search("Run the  LINTER", limit=10)  # the same query again (case, spacing)
    second = app.recalls.stats()[keeper_id]
    assert second.count == first.count + 1
    assert second.distinct_queries == first.distinct_queries >= 3
    plan = app.dreamer().plan()
    assert any(type(t).__name__ == "Promote" and t.id == keeper_id for t in plan.lifecycle)


# --------------------------------------------------------------------------- lock, sessions


def test_dream_lock_refuses_a_live_holder_and_takes_over_a_stale_one(tmp_path: Path) -> None:
    held = DreamLock(tmp_path, timedelta(hours=1))
    held.acquire()
    with pytest.raises(LockError, match=f"pid {os.getpid()}"):
        DreamLock(tmp_path, timedelta(hours=1)).acquire()
    held.release()
    # A dead holder's lock: taken over.
    (tmp_path / "dream.lock").write_text(
        json.dumps({"pid": 999999999, "host": socket.gethostname(), "token": "x",
                    "started": "2026-11-30T00:00:00+00:00",
                    "expires": "2999-01-01T00:00:00+00:00"}))
    DreamLock(tmp_path, timedelta(hours=1)).acquire()
    # An expired lock from another host: taken over.
    (tmp_path / "dream.lock").write_text(
        '{"pid": 1, "host": "elsewhere", "token": "x", "started": "2020-01-01T00:00:00+00:00",'
        ' "expires": "2020-01-01T01:00:00+00:00"}')
    DreamLock(tmp_path, timedelta(hours=1)).acquire()


def test_sessions_come_from_mcp_edit_bursts_and_transcripts(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    start = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    log.record("mcp", start)
    log.record("mcp", start + timedelta(hours=1))
    for minutes in (0, 5, 10, 120, 125, 400):  # three bursts with a 30-minute idle gap
        log.record("edit", start + timedelta(minutes=minutes))
    transcripts = tmp_path / "claude" / "projects" / "p1"
    transcripts.mkdir(parents=True)
    (transcripts / "old.jsonl").write_text("{}\n")
    os.utime(transcripts / "old.jsonl", (0, start.timestamp() - 3600))
    (transcripts / "new.jsonl").write_text("{}\n")
    count = log.count(start - timedelta(minutes=1),
                      transcripts=str(tmp_path / "claude/projects/*/*.jsonl"),
                      idle_gap=timedelta(minutes=30))
    assert (count.mcp, count.edit_bursts, count.transcripts, count.total) == (2, 3, 1, 6)
    later = log.count(start + timedelta(minutes=200), transcripts="", idle_gap=timedelta(30))
    assert later.total == 1


# --------------------------------------------------------------------------- URL checks


@pytest.fixture
def link_server() -> Iterator[str]:
    """A loopback HTTP server: 200 for /ok, 404 for anything else (stands in for the web)."""

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(200 if self.path == "/ok" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_reference_urls_are_checked_with_head_only_when_enabled(
    vault: Path, make_app: Builder, link_server: str,
) -> None:
    rel = write_memory(vault, "api-docs", f"Docs: {link_server}/ok and {link_server}/gone",
                       type="reference", subject="api.docs")
    off, _ = make_app(vault)
    off.sync()
    assert not off.dreamer().plan(consolidate=False).lifecycle  # URLs not checked by default
    on, _ = make_app(vault, **{"lifecycle.check_urls": True})
    on.dreamer().dream(consolidate=False)
    note = parse_note(rel, (vault / rel).read_bytes())
    assert note.properties["broken_links"] == [f"{link_server}/gone"]


# --------------------------------------------------------------------------- the daemon


def test_the_daemon_catches_up_on_a_missed_dream_at_start_up(
    vault: Path, daemons: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No dream ever ran: the time gate is past its maximum, so ``dreamd run`` dreams right
    after its start-up reconcile; the next scan finds the gate closed again."""
    import daemon_harness as h

    monkeypatch.setenv("DREAMD_AUTO_DREAM__SESSION_GATE__SCAN_INTERVAL_MS", "500")
    keeper = write_memory(vault, "pnpm-a", "Use pnpm for installs.", subject="pm", days_old=3)
    dup = write_memory(vault, "pnpm-b", "use pnpm for installs", subject="pm", days_old=2)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    h.wait_until(lambda: (vault / "Memory/DREAMS.md").exists(), bool, timeout_s=90,
                 what="a dream diary")
    assert b"status: archived" in (vault / dup).read_bytes()
    assert b"status: archived" not in (vault / keeper).read_bytes()
    # The demo's MEMORY.md is dreamd's own output for the memories it lists: rebuilt in
    # place, not kept aside as a hand edit.
    assert not list((vault / "Memory").glob("MEMORY.conflict-*"))
    assert "pnpm-a.md" in (vault / "Memory/MEMORY.md").read_text()
    status = h.wait_until(process.status, lambda s: (s.get("dream") or {}).get("last"),
                          timeout_s=30, what="the dream in daemon.json")
    assert status["dream"]["last"]["outcome"] == "done"
    h.wait_until(process.status, lambda s: "since the last dream" in
                 str((s.get("dream") or {}).get("reason")), timeout_s=30,
                 what="a later scan with the gate closed")
    assert process.stop() == 0, process.log_tail()
    events = [e.get("event") for e in process.events()]
    assert events.count("dream.done") == 1


def test_a_memory_whose_frontmatter_cannot_be_edited_is_left_alone(
    vault: Path, make_app: Builder,
) -> None:
    write_memory(vault, "tabs", "Indent with tabs.", subject="indent", days_old=5)
    flow = vault / "Memory/tabs-again.md"
    flow.write_bytes(b'---\n{name: tabs again, type: user, subject: indent, id: FLOW1}\n---\n'
                     b"Indent with tabs.\n")
    before = flow.read_bytes()
    app, _ = make_app(vault)
    app.sync()
    report = app.dreamer().dream()
    assert flow.read_bytes() == before
    assert any("as they are" in line and "flow mapping" in line
               for line in report.plan.changes), report.plan.changes


def test_a_hand_written_memory_index_is_left_alone_and_the_dry_run_says_so(
    vault: Path, make_app: Builder,
) -> None:
    index = vault / "Memory/MEMORY.md"
    index.write_text("# My memory notes\n\n- [Tests](tests-hit-a-real-database.md) — mine\n")
    before = index.read_bytes()
    write_memory(vault, "tabs", "Indent with tabs.", subject="indent", days_old=5)
    write_memory(vault, "tabs-again", "indent with TABS", subject="indent", days_old=2)
    app, _ = make_app(vault)
    app.sync()
    plan = app.dreamer().plan()
    assert plan.memory_index is not None and "not dreamd's" in plan.memory_index[1]
    report = app.dreamer().dream()
    assert index.read_bytes() == before
    assert not list((vault / "Memory").glob("MEMORY.conflict-*"))
    assert "not dreamd's" in (report.memory_index or "")
    assert "not dreamd's" in (vault / "Memory/DREAMS.md").read_text()


def test_links_fifos_pins_and_an_empty_vault_are_respected(
    vault: Path, make_app: Builder, tmp_path: Path,
) -> None:
    import os as _os

    note = vault / "Notes" / "Plan.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\nname: plan\ntype: project\nsubject: garden\n---\nGarden plan.\n")
    write_memory(vault, "garden-old", "Garden plan.", type="project", subject="garden",
                 days_old=9)
    (vault / "Memory/garden.md").symlink_to("../Notes/Plan.md")  # a link: never written
    _os.mkfifo(vault / "Memory/pipe.md")  # never opened (it would block)
    write_memory(vault, "lang", "Write commit messages in English.", subject="commits",
                 days_old=10)
    pinned = write_memory(vault, "lang-pinned", "Write commit messages in English.",
                          subject="commits", days_old=3, pinned=True)
    app, _ = make_app(vault)
    app.sync()
    before_note = note.read_bytes()
    report = app.dreamer().dream()
    assert note.read_bytes() == before_note
    assert b"status: archived" not in (vault / pinned).read_bytes()  # the pin is kept
    assert b"status: archived" in (vault / "Memory/lang.md").read_bytes()
    assert "Memory/garden.md" not in report.written

    empty = tmp_path / "empty-vault"
    empty.mkdir()
    (empty / "note.md").write_text("just a note\n")
    app2, _ = make_app(empty)
    app2.sync()
    app2.dreamer().dream()
    assert sorted(p.name for p in empty.rglob("*")) == ["note.md"]  # nothing created


def test_guard_counts_live_memories_and_holds_after_an_interrupted_dream(
    vault: Path, make_app: Builder,
) -> None:
    for i in range(30):
        rel = write_memory(vault, f"old-{i}", f"An old archived fact number {i}.",
                           type="project", subject=f"old.{i}")
        (vault / rel).write_bytes((vault / rel).read_bytes().replace(
            b"pinned: false", b"pinned: false\nstatus: archived"))
    for i in range(12):
        write_memory(vault, f"stale-{i}", f"A stale project fact {i}.", type="project",
                     subject=f"stale.{i}", days_old=200)
    app, _ = make_app(vault)
    app.sync()
    with pytest.raises(DreamGuardError, match="live memories"):
        app.dreamer().dream()
    with pytest.raises(DreamGuardError):
        app.dreamer().dream(consolidate=False)  # `dreamd expire` asks too
    # A journal left by a killed dream does not switch the guard off for a new plan.
    (Path(app.state_dir) / "dream-journal.json").write_text(
        json.dumps({"id": "01JOURNALLEFTBYAKILLEDDREAM", "lines": [], "actions": []}))
    with pytest.raises(DreamGuardError):
        app.dreamer().dream()
    assert app.dreamer().dream(force=True).written


def test_restore_undoes_a_supersession_made_by_remember(app_vault: tuple[App, Path]) -> None:
    app, vault = app_vault
    service = app.memories()
    old = service.remember("Deploys go out on Tuesday.", type="project", subject="deploy.day")
    new = service.remember("Deploys go out on Thursday.", type="project", subject="deploy.day")
    assert new.action == "superseded"
    assert app.dreamer().restore(old.path)
    restored = parse_note(old.path, (vault / old.path).read_bytes())
    assert restored.memory.valid_to is None  # type: ignore[union-attr]
    successor = parse_note(new.path, (vault / new.path).read_bytes())
    assert successor.memory.supersedes == ()  # type: ignore[union-attr]


@pytest.fixture
def app_vault(vault: Path, make_app: Builder) -> tuple[App, Path]:
    app, _ = make_app(vault)
    app.sync()
    return app, vault


def test_a_replayed_journal_never_archives_what_was_pinned_since(
    app_vault: tuple[App, Path],
) -> None:
    app, vault = app_vault
    rel = write_memory(vault, "launch", "The spring launch plan.", type="project",
                       subject="launch", days_old=1, pinned=True)
    app.sync()
    (Path(app.state_dir) / "dream-journal.json").write_text(json.dumps({
        "id": "01JOURNALLEFTBYAKILLEDDREAM", "lines": ["Archived [[launch]]: stale"],
        "actions": [{"kind": "Archive", "id": "x", "path": rel, "reason": "stale",
                     "code": "project inactive"}]}))
    app.dreamer().dream()
    assert b"status: archived" not in (vault / rel).read_bytes()
    assert not (Path(app.state_dir) / "dream-journal.json").exists()
    diary = (vault / "Memory/DREAMS.md").read_text()
    assert "Archived [[launch]]" not in diary and "Left [[launch]] as it is" in diary


def _atlas(vault: Path, spelling: str) -> None:
    """A handbook derived from an overview derived from "Atlas deploys to staging every
    Tuesday afternoon", each written by hand; the overview names its sources by memory name,
    the handbook names the overview as ``spelling``."""
    write_memory(vault, "atlas-tuesday", "Atlas deploys to staging every Tuesday afternoon.",
                 type="project", subject="atlas.deploys", days_old=30)
    write_memory(vault, "atlas-owner", "Priya runs the Atlas staging environment.",
                 type="project", subject="atlas.owner", days_old=30)
    (vault / "Memory/atlas-staging-overview.md").write_text(
        "---\nname: Atlas staging overview\ndescription: How Atlas staging works\n"
        "type: project\nsubject: atlas.staging\ncreated: 2026-11-20T10:00:00Z\n"
        "derived_from:\n  - atlas tuesday\n  - Memory/atlas-owner.md\n---\n"
        "Priya runs Atlas staging; it deploys every Tuesday afternoon.\n", encoding="utf-8")
    (vault / "Memory/atlas-team-handbook.md").write_text(
        "---\nname: Atlas team handbook\ndescription: Atlas deploys to staging every Tuesday "
        "afternoon\ntype: project\nsubject: atlas.deploys\ncreated: 2026-12-01T10:00:00Z\n"
        f"derived_from: {spelling}\n---\n"
        "Atlas deploys to staging every Tuesday afternoon, per the team handbook.\n",
        encoding="utf-8")


@pytest.mark.parametrize("spelling", [
    "[[atlas-staging-overview]]", "[[atlas-staging-overview.md]]",
    "[[atlas-staging-overview|the overview]]", "'[[Memory/atlas-staging-overview]]'",
    "Memory/atlas-staging-overview.md", "Atlas staging overview", "atlas-staging-overview",
    "\n  - [[atlas-staging-overview]]"])
def test_a_memory_is_never_merged_into_a_source_of_its_source_however_it_is_named(
    vault: Path, make_app: Builder, spelling: str,
) -> None:
    """``derived_from`` as a user writes it by hand: a wikilink unquoted (YAML reads it as a
    list in a list), with ``.md``, an alias or a folder, a path, a memory name or a file stem.
    The handbook restates a source of its source: both stay, nothing is appended."""
    _atlas(vault, spelling)
    tuesday = (vault / "Memory/atlas-tuesday.md").read_bytes()
    app, _ = make_app(vault)
    app.sync()
    report = app.dreamer().dream()
    assert (vault / "Memory/atlas-tuesday.md").read_bytes() == tuesday, report.plan.changes
    note = parse_note("Memory/atlas-team-handbook.md",
                      (vault / "Memory/atlas-team-handbook.md").read_bytes())
    assert note.memory is not None and note.memory.status != "archived"


def test_a_merged_duplicate_brings_its_sources_to_the_keeper(
    vault: Path, make_app: Builder,
) -> None:
    """Two memories that say the same, each derived from a source of its own: merged, the
    keeper derives from the sources of both (its lineage is whole, and a later change of
    either source still reaches it)."""
    write_memory(vault, "kiln-log", "Kiln firing log for November.", type="project",
                 days_old=40)
    write_memory(vault, "glaze-log", "Glaze test tiles from the studio binder.",
                 type="project", days_old=40)
    write_memory(vault, "studio-summary", "The studio fires the test kiln to cone 6 on "
                 "Fridays.", type="project", days_old=5, derived_from=("kiln-log",))
    write_memory(vault, "studio-digest", "The studio fires the test kiln to cone 6 on "
                 "Fridays.", type="project", days_old=3, derived_from=("glaze-log",))
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    notes = {stem: parse_note(f"Memory/{stem}.md", (vault / f"Memory/{stem}.md").read_bytes())
             for stem in ("studio-summary", "studio-digest")}
    merged = [s for s, n in notes.items() if "merged_into" in n.properties]
    assert len(merged) == 1, {s: n.properties.get("merged_into") for s, n in notes.items()}
    keeper = notes[next(s for s in notes if s not in merged)]
    assert set(keeper.properties["derived_from"]) == {"[[kiln-log]]", "[[glaze-log]]"}


def test_an_exact_duplicate_is_never_merged_into_its_own_source_through_another_merge(
    vault: Path, make_app: Builder,
) -> None:
    """Two syntheses with the same text, one derived from both facts it states: the other
    is merged into the memory of one fact, and the exact duplicate followed it there — into
    its own source (a check of the merges found while verifying a fix). It stays."""
    write_memory(vault, "car-insurance", "The car insurance renews in March.", days_old=40)
    write_memory(vault, "car-parking", "The car parks in the office garage.", days_old=40)
    text = "The car insurance renews in March and the car parks in the office garage."
    write_memory(vault, "car-summary", text, days_old=34, derived_from=("car-insurance",))
    write_memory(vault, "car-overview", text, days_old=33,
                 derived_from=("car-insurance", "car-parking"))
    app, _ = make_app(vault)
    app.sync()
    plan = app.dreamer().dream(dry_run=True).plan
    assert not [s for s in plan.consolidation if isinstance(s, MergeDuplicate)
                and s.duplicate_path == "Memory/car-overview.md"
                and s.keeper_path in {"Memory/car-parking.md", "Memory/car-insurance.md"}]


def test_a_memory_written_by_hand_before_any_sync_is_judged_by_the_dream(
    app_vault: tuple[App, Path],
) -> None:
    """(a new user's trial) a memory file written by hand, no daemon, no sync: the dream
    indexes it before judging, so its near-duplicate is found now — not never, as when it
    was judged without a vector and then counted as seen."""
    app, vault = app_vault
    service = app.memories()
    service.remember("The team's deploy window is Tuesday at 14:00 UTC", type="project")
    app.dreamer().dream()
    (vault / "Memory/deploy-c.md").write_text(
        "---\nname: Deploy C\ndescription: Deploys on Tuesdays\ntype: project\n---\n"
        "The deploy window for the team is on Tuesdays at 14:00 UTC\n", encoding="utf-8")
    report = app.dreamer().dream()
    assert any(isinstance(step, MergeDuplicate) and step.duplicate_path == "Memory/deploy-c.md"
               for step in report.plan.consolidation), report.plan.changes
