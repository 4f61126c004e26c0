"""``dreamd run`` end to end: a real daemon subprocess, real files written by this process.

Every wait is bounded (``daemon_harness.wait_until`` polls a condition until a generous
deadline, then fails saying what it last saw); nothing asserts on timings. "Index equals
disk" means: the store's file paths equal a scan of the vault, and each note's stored
content hash is the SHA-256 of the file's bytes (``daemon_harness.index_vs_disk``); after
the daemon stopped, the raw tables are checked too (``daemon_harness.store_integrity``).

The tests marked ``slow`` run the real ``dreamd`` console script with the real model; the
others run the daemon through ``daemon_harness.py`` with the token-hash FAKE embedder, since
they are about files, signals and rows, not meaning.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest

DREAMD = Path(sys.executable).with_name("dreamd")


def start(daemons: list[Any], vault: Path, tmp_path: Path, *, fake: bool = True) -> Any:
    process = h.DaemonProcess.start(vault, tmp_path / f"daemon-{len(daemons)}.log", fake=fake)
    daemons.append(process)
    return process


def settle(vault: Path, *, fake: bool = True, timeout_s: float = 60.0,
           daemon: Any = None) -> None:
    """Wait until the index matches the disk; on a time-out, say so with ``daemon``'s log."""
    try:
        h.wait_until(lambda: h.index_vs_disk(h.fresh_app(vault, fake=fake)), lambda p: not p,
                     timeout_s=timeout_s, what="index == disk", every_s=0.3)
    except AssertionError as error:
        if daemon is None:
            raise
        raise AssertionError(f"{error}\n--- the daemon's log:\n{daemon.log_tail(80)}") from None


def stop_and_check(process: Any, vault: Path, *, fake: bool = True) -> None:
    assert process.stop() == 0, process.log_tail()
    assert process.status().get("state") == "stopped", process.status()
    app = h.fresh_app(vault, fake=fake)
    assert h.index_vs_disk(app) == []
    assert h.store_integrity(app) == []


def dreamd_search(vault: Path, query: str) -> list[str]:
    done = subprocess.run(
        [str(DREAMD), "search", "--json", "--limit", "5", "--vault", str(vault), query],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)]


# --------------------------------------------------------------------------- real model


@pytest.mark.slow
def test_dreamd_run_indexes_new_and_edited_notes_and_stops_on_sigterm(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    daemon = start(daemons, vault, tmp_path, fake=False)
    daemon.wait_state("watching", timeout_s=180)

    (vault / "Field notes").mkdir()
    (vault / "Field notes" / "Quokka.md").write_text(
        "# Quokka census\n\nThe quokka lighthouse keeper counts marmalade jars at dawn.\n",
        encoding="utf-8")
    with (vault / "Welcome.md").open("a", encoding="utf-8") as handle:
        handle.write("\nThe zeppelin hangar smells of cardamom and engine grease.\n")
    settle(vault, fake=False, timeout_s=120)

    hits = h.wait_until(lambda: dreamd_search(vault, "quokka lighthouse marmalade"),
                        lambda paths: bool(paths) and paths[0] == "Field notes/Quokka.md",
                        timeout_s=180, what="dreamd search finds the new note", every_s=1.0)
    assert hits[0] == "Field notes/Quokka.md"
    assert "Welcome.md" in dreamd_search(vault, "zeppelin hangar cardamom")
    stop_and_check(daemon, vault, fake=False)


@pytest.mark.slow
def test_a_second_dreamd_run_on_the_same_vault_exits_7_naming_the_first(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    first = start(daemons, vault, tmp_path, fake=False)
    first.wait_state("watching", timeout_s=180)
    second = subprocess.run([str(DREAMD), "run", str(vault)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert second.returncode == 7, second.stderr
    assert re.search(rf"\bpid {first.pid}\b", second.stderr), second.stderr
    assert first.proc.poll() is None and first.status().get("state") == "watching"
    assert first.stop() == 0


# --------------------------------------------------------------------------- fake embedder


def test_sighup_with_an_invalid_config_keeps_running_then_reloads_when_fixed(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    config = Path(os.environ["DREAMD_CONFIG"])
    daemon = start(daemons, vault, tmp_path)
    daemon.wait_state("watching")

    config.write_text("[sync]\ndebounce_ms = -5\n", encoding="utf-8")
    daemon.proc.send_signal(signal.SIGHUP)
    failed = h.wait_until(
        lambda: [e for e in daemon.events() if e.get("event") == "config.reload_failed"],
        bool, timeout_s=30, what="config.reload_failed in the log")
    assert "debounce_ms" in failed[0]["error"]
    assert daemon.proc.poll() is None

    config.write_text("[sync]\ndebounce_ms = 60\n", encoding="utf-8")
    daemon.proc.send_signal(signal.SIGHUP)
    h.wait_until(lambda: [e for e in daemon.events() if e.get("event") == "config.reloaded"],
                 bool, timeout_s=30, what="config.reloaded in the log")
    # the watch loop was rebuilt with the new settings and still indexes
    (vault / "After reload.md").write_text("written after SIGHUP\n", encoding="utf-8")
    settle(vault)
    stop_and_check(daemon, vault)


def test_an_idle_daemon_does_no_work_once_its_start_is_done(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    """Once the daemon is watching, its warm-up has opened the local API and the watcher's
    catch-up walk is done, a quiet vault costs nothing: over a few seconds no walk, check,
    dream or graph build is logged, no table is committed and the status file is not
    written (issue 24: an idle daemon under 1% of a core; counted work, not a timing)."""
    daemon = start(daemons, vault, tmp_path)
    h.wait_until(daemon.status, lambda s: bool(s.get("api")), timeout_s=60,
                 what="the local API open (the warm-up done)")

    def walks() -> int:
        return sum(1 for e in daemon.events() if e.get("event") == "sync.applied")

    h.wait_until(walks, lambda n: n >= 2, timeout_s=30,
                 what="the start's walk and the watcher's catch-up walk")

    def work() -> tuple[object, ...]:
        tables = h.fresh_app(vault).store._t
        versions = tuple(t.version for t in (tables.files, tables.chunks, tables.links,
                                             tables.edges))
        logged = [(e.get("event"), e.get("timestamp")) for e in daemon.events()]
        return versions, logged, (daemon.state_dir / "daemon.json").stat().st_mtime_ns

    before = work()
    time.sleep(3.0)  # a quiet window (what happens in it is counted, not timed)
    after = work()
    assert after[0] == before[0], "a table was committed while idle"
    assert after[1] == before[1], f"logged while idle: {after[1][len(before[1]):]}"
    assert after[2] == before[2], "daemon.json was written while idle"
    stop_and_check(daemon, vault)


def test_mass_delete_guard_keeps_the_index_while_the_vault_is_gone(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    (vault / "Bulk").mkdir()
    for n in range(20):
        (vault / "Bulk" / f"Bulk {n:02}.md").write_text(f"# Bulk {n}\n\nfiller {n}\n",
                                                       encoding="utf-8")
    daemon = start(daemons, vault, tmp_path)
    status = daemon.wait_state("watching")
    assert status["counts"]["notes"] >= 40, status["counts"]
    before = set(h.fresh_app(vault).store.file_index())

    away = tmp_path / "away"
    away.mkdir()
    children = [c for c in vault.iterdir() if c.name != ".obsidian"]
    for child in children:  # one tight loop: the watcher sees one batch
        child.rename(away / child.name)

    def refused(s: dict[str, Any]) -> bool:
        return s.get("state") == "waiting" or bool((s.get("last_batch") or {}).get("error"))

    status = daemon.wait_state("watching", "waiting", timeout_s=5)
    status = h.wait_until(daemon.status, refused, timeout_s=30,
                          what="daemon.json reports the refused mass delete")
    # Which guard speaks depends on how the watcher saw the moves: a batch of deletions
    # (the share) or a full walk that found the vault empty (an unmounted drive). Both
    # refuse and keep the index.
    error = status.get("last_error") or ""
    assert "max_delete_share" in error or "holds no file at all" in error, status
    assert set(h.fresh_app(vault).store.file_index()) == before, "the index lost files"

    for child in children:
        (away / child.name).rename(vault / child.name)
    h.wait_until(daemon.status,
                 lambda s: s.get("state") == "watching"
                 and (s.get("last_batch") or {}).get("error") is None,
                 timeout_s=30, what="a clean batch after the vault came back")
    settle(vault)
    assert set(h.fresh_app(vault).store.file_index()) == before
    stop_and_check(daemon, vault)


def test_folders_moved_inside_the_vault_are_followed_not_refused(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    """``mkdir Notes && mv * Notes/`` while the daemon watches: the notes move in the
    index and the daemon keeps watching (it went to ``waiting``, each later edit unindexed
    until the user ran --allow-mass-delete)."""
    topics = []
    for f in range(6):
        topics.append(vault / f"Topic {f}")
        topics[-1].mkdir()
        for n in range(5):
            (topics[-1] / f"note {n}.md").write_text(f"# Topic {f} note {n}\n\nbody {f}.{n}\n",
                                                     encoding="utf-8")
    daemon = start(daemons, vault, tmp_path)
    daemon.wait_state("watching")
    settle(vault)
    ids = {p: r.note_id for p, r in h.fresh_app(vault).store.file_index().items()}
    children = [c for c in vault.iterdir() if c.name != ".obsidian"]
    (vault / "Notes").mkdir()
    for child in children:  # one tight loop: the watcher sees one batch
        child.rename(vault / "Notes" / child.name)
    settle(vault, daemon=daemon)
    (vault / "Notes" / "Topic 0" / "note 0.md").write_text("# Edited after the move\n",
                                                          encoding="utf-8")
    settle(vault, daemon=daemon)
    status = daemon.status()
    assert status.get("state") == "watching" and not status.get("last_error"), status
    assert not [e for e in daemon.events() if e.get("event") == "batch.refused"]
    after = h.fresh_app(vault).store.file_index()
    assert all(after[f"Notes/{p}"].note_id == ids[p] for p in ids
               if p.endswith(".md") and "#" not in p and p != "Topic 0/note 0.md")
    stop_and_check(daemon, vault)


def test_deletions_it_waits_for_are_applied_by_dreamd_sync_allow_mass_delete(
    vault: Path, tmp_path: Path, daemons: list[Any]
) -> None:
    """Most of the vault deleted on purpose while the daemon runs: it waits for the user's
    word, and ``dreamd sync --allow-mass-delete`` (refused in-process while the daemon holds
    the store) is handed to the daemon, which applies it and watches again."""
    for n in range(30):
        (vault / f"Scratch {n:02}.md").write_text(f"# Scratch {n}\n\ntemp {n}\n",
                                                  encoding="utf-8")
    daemon = start(daemons, vault, tmp_path)
    daemon.wait_state("watching")
    for note in vault.rglob("*.md"):
        if ".obsidian" not in note.parts and not note.name.startswith("Welcome"):
            note.unlink()
    h.wait_until(daemon.status, lambda s: s.get("state") == "waiting", timeout_s=60,
                 what="the daemon waits for the user's word on the deletions")
    env = {**os.environ, "COLUMNS": "200"}
    for _ in range(2):  # the first run may answer in-process; it is handed on all the same
        done = subprocess.run(
            [sys.executable, "-m", "daemon", "sync", "--allow-mass-delete", str(vault)],
            capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert "deleted" in done.stdout, done.stdout
    status = h.wait_until(daemon.status, lambda s: s.get("state") == "watching",
                          timeout_s=30, what="watching again")
    # the refused batch's error is gone with the reconcile that applied it
    assert not status.get("last_error") and not (status.get("last_batch") or {}).get("error")
    # another vault named as the argument is never handed to this daemon (its index stays)
    other = tmp_path / "other vault"
    other.mkdir()
    (other / "Alone.md").write_text("# Alone\n\nin another vault\n", encoding="utf-8")
    before = set(h.fresh_app(vault).store.file_index())
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "daemon", "sync", "--allow-mass-delete", str(other)],
            capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert "synced 1 file " in done.stdout, done.stdout
    assert set(h.fresh_app(vault).store.file_index()) == before
    assert set(h.fresh_app(other, fake=False).store.file_index()) == {"Alone.md"}
    settle(vault)
    stop_and_check(daemon, vault)


def run_case(cases: Path, name: str, vault: Path) -> None:
    script = cases / name / "run.sh"
    done = subprocess.run(["bash", str(script), str(vault)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_atomic_saves_and_coalesced_batches_end_with_index_equal_to_disk(
    vault: Path, tmp_path: Path, daemons: list[Any], cases_dir: Path
) -> None:
    daemon = start(daemons, vault, tmp_path)
    daemon.wait_state("watching")

    # case 11: temp + rename, vim backup/probe files, GTK temp, truncate-then-write
    run_case(cases_dir, "11-atomic-save-temp-rename", vault)
    settle(vault)
    app = h.fresh_app(vault)
    assert "Atomic save.md" in app.store.file_index()
    assert any("version 5" in body for body in h.chunk_bodies(app, "Atomic save.md"))
    assert not [p for p in app.store.file_index() if "4913" in p or p.endswith(("~", ".new"))]

    # case 12: bulk create/delete, create/delete/create in one window, a 40 ms rewriter
    run_case(cases_dir, "12-coalesced-batch-events", vault)
    settle(vault)
    index = h.fresh_app(vault).store.file_index()
    assert not [p for p in index if p.startswith("Batch/")]
    assert "Flicker.md" not in index
    assert any("tick 30" in body for body in h.chunk_bodies(h.fresh_app(vault), "Ticker.md"))
    stop_and_check(daemon, vault)


@pytest.mark.parametrize(("pending", "quiet_s", "since_s", "behind", "due"), [
    (0, 3600.0, 3600.0, False, False),  # nothing written
    (1, 40.0, 60.0, False, False),  # one save, a minute after the last compaction
    (1, 40.0, 60.0, True, True),  # one batch left the full-text index behind: at the pause
    (1, 5.0, 60.0, True, False),  # ... not while the user is still writing
    (1, 40.0, 700.0, False, True),  # the interval has passed
    (50, 40.0, 60.0, False, True),  # enough batches
    (500, 0.0, 0.0, False, True),  # someone who never pauses
])
def test_the_store_is_compacted_at_a_pause_once_worth_it(
        pending: int, quiet_s: float, since_s: float, behind: bool, due: bool) -> None:
    from daemon.runner import maintain_now

    assert maintain_now(pending=pending, quiet_s=quiet_s, since_maintain_s=since_s,
                        text_index_behind=behind) is due


@pytest.mark.parametrize(("worked_at", "trimmed_at", "now", "due"), [
    (None, 0.0, 3600.0, False),  # no search, no batch
    (100.0, 0.0, 104.0, False),  # a search 4 s ago: more may follow
    (100.0, 0.0, 105.0, True),  # quiet for TRIM_QUIET_S since the last one
    (100.0, 0.0, 5000.0, True),  # ... or much longer
    (100.0, 106.0, 5000.0, False),  # trimmed since: nothing more to give back
    (107.0, 106.0, 112.5, True),  # a search after that trim, then quiet again
    (107.0, 106.0, 111.0, False),  # ... not yet quiet long enough
])
def test_the_heap_is_trimmed_once_searches_and_batches_pause(
        worked_at: float | None, trimmed_at: float, now: float, due: bool) -> None:
    from daemon.runner import TRIM_QUIET_S, trim_now

    assert TRIM_QUIET_S == 5.0
    assert trim_now(worked_at=worked_at, trimmed_at=trimmed_at, now=now) is due
