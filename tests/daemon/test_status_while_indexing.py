"""``dreamd status`` while the daemon is in the middle of a large batch says what it is doing
(which phase, how many of how many files, how many to go), not "watching, queue 0"; and the
words for the status file's ``work`` (pure).

The daemon runs as a subprocess with the FAKE embedder slowed down per text
(``daemon_harness.EMBED_DELAY_VAR``): the test is about what status says while a batch is
under way, not about meaning, and the batch has to last long enough to be asked about."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import daemon_harness as harness
import pytest

from daemon.work_progress import WorkProgress, describe_work, local_stamp

NOTES = 240
#: ``dreamd ARGS`` as the console script runs it, with the daemon's FAKE embedder (the
#: store was built with it; see the module docstring).
_CLI = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "import daemon.app as app_module\n"
    "from daemon_harness import load_fake_embedder\n"
    "app_module.make_embedder = lambda loaded: load_fake_embedder()  # FAKE\n"
    "from daemon.cli import main\n"
    "sys.argv = ['dreamd', *sys.argv[2:]]\n"
    "main()\n"
)


def _status(vault: Path, *args: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    support = Path(__file__).resolve().parents[1] / "support"
    env = {k: v for k, v in os.environ.items() if k != harness.EMBED_DELAY_VAR} | env_vars
    done = subprocess.run([sys.executable, "-c", _CLI, str(support), "status", "--vault",
                           str(vault), *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_status_says_which_batch_is_under_way(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemons: list[Any],
) -> None:
    # 240 notes: 36 s of embedding, longer than a status command takes to start on two
    # busy cores (at load 15 one took over 12 s, and the batch was done before it read)
    monkeypatch.setenv(harness.EMBED_DELAY_VAR, "0.15")
    daemon = harness.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(daemon)
    daemon.wait_state("watching", timeout_s=120)
    # warmed up (the local API open) and past the watcher's catch-up walk: what comes now
    # arrives as a watcher batch
    harness.wait_until(daemon.status, lambda s: bool(s.get("api")) and str(
        s.get("last_rescan") or "") > str(s.get("ready_at")), timeout_s=120,
        what="the catch-up walk done")
    # a folder of notes dropped into the vault (one rename: one batch walks it)
    folder = tmp_path / "Imported"
    folder.mkdir()
    for n in range(NOTES):
        (folder / f"Clipping {n:03}.md").write_text(
            f"# Clipping {n}\n\nA page kept for later, number {n} of the pile.\n", "utf-8")
    folder.rename(vault / "Imported")
    busy = harness.wait_until(
        daemon.status, lambda s: bool(s.get("work")) and s["work"]["kind"] == "batch"
        and s["work"]["done"] < s["work"]["total"], timeout_s=120, what="a batch under way")
    assert busy["state"] == "watching" and busy["work"]["files"] >= NOTES
    # the command, as a user types it, while the batch goes on (the daemon is busy: the
    # command answers from the status file)
    said = _status(vault, DREAMD_TIME__ZONE="Asia/Kolkata").stdout  # the user's, UTC+05:30
    line = next(ln for ln in said.splitlines() if ln.startswith("daemon"))
    assert f"indexing a batch of {busy['work']['files']} changed files: " in line, said
    since = datetime.fromisoformat(busy["work"]["started_at"]).astimezone(
        ZoneInfo("Asia/Kolkata"))
    assert f" to go (since {since:%H:%M:%S} IST)" in line and "watching" not in line, said
    report = json.loads(_status(vault, "--json").stdout)
    assert report["daemon"]["work"] is None or report["daemon"]["work"]["kind"] == "batch"
    # once it is done: watching again, and no work left in the file
    done = harness.wait_until(daemon.status, lambda s: s.get("work") is None and
                              (s.get("last_batch") or {}).get("added", 0) >= NOTES,
                              timeout_s=300, what="the batch applied")
    assert done["state"] == "watching"
    after = _status(vault).stdout
    assert "indexing a batch" not in after and ", watching, " in after


def test_the_status_file_follows_the_work_and_is_cleared_after() -> None:
    class State:
        work: dict[str, Any] | None = None

    state, written, now = State(), [], [0.0]
    with WorkProgress(state, lambda: written.append(dict(state.work or {})), "batch",
                      clock=lambda: now[0]) as progress:
        progress.phase("reading", 1)  # a small phase is not written when it starts,
        progress.advance(1)  # and work that ends within WRITE_EVERY_S writes nothing more
        assert written == []
        progress.phase("reading", 480)  # a large one is written at once
        assert written[-1] == {**written[-1], "phase": "reading", "done": 0, "total": 480}
        progress.advance(10)
        assert len(written) == 1
        now[0] = 0.6
        progress.advance(110)
        assert written[-1]["done"] == 120 and written[-1]["phase"] == "reading"
        progress.phase("embedding", 470)
        now[0] = 1.2
        progress.advance(70)
        assert written[-1] == {**written[-1], "phase": "embedding", "done": 70, "total": 470,
                               "files": 480, "kind": "batch"}
    assert state.work is None


BATCH = {"kind": "batch", "phase": "embedding", "done": 120, "total": 480, "files": 480}
SAID = "indexing a batch of 480 changed files: 120 of 480 embedded, 360 to go"


@pytest.mark.parametrize(("work", "zone", "said"), [
    ({**BATCH, "started_at": "2026-12-07T02:01:33+00:00"}, "UTC", f"{SAID} (since 02:01:33 UTC)"),
    # the user's zone: a day later, a day earlier, a half-hour offset, summer and winter time
    ({**BATCH, "started_at": "2026-12-07T20:01:33+00:00"}, "Asia/Shanghai",
     f"{SAID} (since 04:01:33 CST)"),
    ({**BATCH, "started_at": "2026-12-07T02:01:33+00:00"}, "America/New_York",
     f"{SAID} (since 21:01:33 EST)"),
    ({**BATCH, "started_at": "2026-07-07T02:01:33+00:00"}, "America/New_York",
     f"{SAID} (since 22:01:33 EDT)"),
    ({**BATCH, "started_at": "2026-12-07T02:01:33+00:00"}, "Asia/Kolkata",
     f"{SAID} (since 07:31:33 IST)"),
    # a time written with another offset, or with none (UTC)
    ({**BATCH, "started_at": "2026-12-07T10:01:33+08:00"}, "Europe/Berlin",
     f"{SAID} (since 03:01:33 CET)"),
    ({**BATCH, "started_at": "2026-12-07T02:01:33"}, "Europe/Berlin",
     f"{SAID} (since 03:01:33 CET)"),
    ({"kind": "reconcile", "phase": "reading", "done": 7, "total": 7, "files": 7}, "UTC",
     "reconciling the vault (7 files new or changed): 7 of 7 read"),
    # one file is one file
    ({"kind": "reconcile", "phase": "reading", "done": 0, "total": 1, "files": 1}, "UTC",
     "reconciling the vault (1 file new or changed): 0 of 1 read, 1 to go"),
    ({"kind": "batch", "phase": "embedding", "done": 1, "total": 1, "files": 1}, "UTC",
     "indexing a batch of 1 changed file: 1 of 1 embedded"),
    ({"kind": "sync", "phase": "indexing", "done": 0, "total": 3, "files": 3,
      "started_at": "bad"}, "Asia/Shanghai",
     "running dreamd sync (3 files new or changed): 0 of 3 indexed, 3 to go"),
    # a +05:45 zone, and the hour New York's clocks turn back said twice, told apart
    ({**BATCH, "started_at": "2026-12-07T02:01:33+00:00"}, "Asia/Kathmandu",
     f"{SAID} (since 07:46:33 +0545)"),
    ({**BATCH, "started_at": "2026-11-01T05:30:00+00:00"}, "America/New_York",
     f"{SAID} (since 01:30:00 EDT)"),
    ({**BATCH, "started_at": "2026-11-01T06:30:00+00:00"}, "America/New_York",
     f"{SAID} (since 01:30:00 EST)"),
    # a status file with a time the zone's offset moves off the calendar: said without it
    ({**BATCH, "started_at": "0001-01-01T00:00:00"}, "America/New_York", SAID),
    ({**BATCH, "started_at": "9999-12-31T23:59:59+00:00"}, "Asia/Kathmandu", SAID),
    ({**BATCH, "started_at": 1765072893}, "UTC", SAID),
    ({"kind": "later", "phase": "sorting", "done": "x"}, "UTC",
     "working (? files): x of None sorting"),
])
def test_the_work_in_words(work: dict[str, Any], zone: str, said: str) -> None:
    assert describe_work(work, ZoneInfo(zone)) == said


@pytest.mark.parametrize(("value", "zone", "said"), [
    ("2026-12-07T05:06:06+00:00", "Asia/Tokyo", "2026-12-07 14:06:06 JST"),
    # the day before in the user's zone, summer time, a +05:45 zone, another offset, none
    ("2026-12-07T02:06:06.123456+00:00", "America/Los_Angeles", "2026-12-06 18:06:06 PST"),
    ("2026-07-07T02:06:06+00:00", "Europe/Berlin", "2026-07-07 04:06:06 CEST"),
    ("2026-12-07T02:06:06+00:00", "Asia/Kathmandu", "2026-12-07 07:51:06 +0545"),
    ("2026-12-07T10:06:06+08:00", "UTC", "2026-12-07 02:06:06 UTC"),
    ("2026-12-07T02:06:06", "Asia/Shanghai", "2026-12-07 10:06:06 CST"),
    # not a time: said as it is
    ("never", "UTC", "never"), ("", "UTC", ""), (None, "UTC", "None"),
    # off the calendar in the user's zone (a damaged status file): said as written
    ("0001-01-01T00:00:00+00:00", "America/New_York", "0001-01-01T00:00:00+00:00"),
    ("9999-12-31T23:59:59+00:00", "Asia/Kathmandu", "9999-12-31T23:59:59+00:00"),
])
def test_a_status_time_in_the_users_zone(value: object, zone: str, said: str) -> None:
    assert local_stamp(value, ZoneInfo(zone)) == said


def test_status_says_each_time_of_the_daemons_work_in_the_users_zone() -> None:
    """``dreamd status`` said ``last sync: 2026-12-07T05:06:06+00:00`` (and likewise the last
    check, batch and dream) in UTC's ISO form while its "since" was in the user's zone."""
    import io

    from rich.console import Console

    from daemon import render
    from daemon.status import StatusReport

    buffer = io.StringIO()
    render.print_status(Console(file=buffer, width=200), StatusReport(
        vault="/v", store="/s/lancedb", state_dir="/s", last_sync="2026-12-07T05:06:06+00:00",
        last_sync_duration_s=0.4, counts={},
        daemon={"pid": 7, "state": "watching", "watcher": "watchfiles", "queue_depth": 0,
                "last_check": {"at": "2026-12-07T05:10:00+00:00", "drift": {}, "fixed": 0},
                "last_batch": {"at": "2026-12-07T05:11:00+00:00", "paths": 2,
                               "duration_ms": 80}},
        dream={"last": "2026-12-06T18:30:00.250000+00:00", "due": False, "reason": "gates",
               "auto": True, "sessions": {}}), ZoneInfo("Asia/Tokyo"))
    lines = buffer.getvalue().splitlines()
    assert "last sync: 2026-12-07 14:06:06 JST" in lines
    assert "last check: 2026-12-07 14:10:00 JST: clean; 0 repaired" in lines
    assert "last batch: 2026-12-07 14:11:00 JST: 2 files in 80 ms" in lines
    assert "last dream: 2026-12-07 03:30:00 JST" in lines


@pytest.mark.parametrize("vault", ["/home/me/notes", "/Users/王/笔记 库"])
def test_status_of_a_vault_never_synced_says_how_to_index_it(vault: str) -> None:
    """``last sync: never`` (a new vault, or one whose older index an upgrade of dreamd
    dropped) said nothing of what to do; it names the command, with the vault's path as a
    shell reads it (a space in it quoted)."""
    import io
    import shlex

    from rich.console import Console

    from daemon import render
    from daemon.status import StatusReport

    buffer = io.StringIO()
    render.print_status(Console(file=buffer, width=200), StatusReport(
        vault=vault, store="/s/lancedb", state_dir="/s", last_sync=None,
        last_sync_duration_s=None, counts={}), ZoneInfo("UTC"))
    lines = buffer.getvalue().splitlines()
    assert f"last sync: never (index it: dreamd sync {shlex.quote(vault)})" in lines
