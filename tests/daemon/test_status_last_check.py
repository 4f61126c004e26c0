"""``dreamd status`` says what the last check found, whoever ran it: it said ``last check: …
clean`` (the daemon's own earlier check) right after ``dreamd check`` reported drift and
exited 1, and nothing at all without a running daemon. The real CLI on real files.
"""

from __future__ import annotations

import io
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from dreamd_cli import dreamd_on
from rich.console import Console

from daemon import render
from daemon.status import StatusReport, newest_check


def _last_check_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("last check"))


@pytest.mark.slow
def test_status_says_what_dreamd_check_found(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    run = dreamd_on(vault)
    assert run("sync").returncode == 0
    names = []
    for text in ("Deploy to eu-west-1", "周会在周二上午十点"):
        done = run("remember", text)
        assert done.returncode == 0, done.stderr
        names.append(done.stdout.split("remembered as ", 1)[1].split()[0].rstrip(";"))
    clean = run("check")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert _last_check_line(run("status").stdout).endswith("(dreamd check): clean; 0 repaired")
    for edited in names:  # an English and a Chinese memory edited behind the index's back
        with (vault / edited).open("a", encoding="utf-8") as file:
            file.write("Also on Fridays. 周五也是。\n")
        drift = run("check")
        assert drift.returncode == 1 and "stale" in drift.stdout, drift.stdout
        line = _last_check_line(run("status").stdout)
        assert "clean" not in line, line
        assert "(dreamd check): stale 1; 0 repaired, left for you" in line, line
        fixed = run("check", "--fix")
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        line = _last_check_line(run("status").stdout)
        assert "stale 1; 1 repaired" in line and "left for you" not in line, line


def test_the_newest_check_is_shown_the_daemons_or_dreamd_checks() -> None:
    daemons = {"at": "2026-12-07T05:10:00+00:00", "reason": "interval", "drift": {},
               "fixed": 0, "left": []}
    users = {"at": "2026-12-07T05:12:00.250+00:00", "reason": "dreamd check",
             "drift": {"divergent": 1}, "fixed": 0, "left": ["divergent"]}
    assert newest_check(daemons, users) is users
    assert newest_check(users, daemons) is users
    assert newest_check(None, {"at": "yesterday"}, daemons) is daemons
    assert newest_check(None, {}) is None
    for daemon_record, shown in ((daemons, users), ({**daemons, "at": "2026-12-07T06:00:00Z"},
                                                     None)):
        buffer = io.StringIO()
        report = StatusReport(
            vault="/v", store="/s/lancedb", state_dir="/s", last_sync=None,
            last_sync_duration_s=None,
            daemon={"pid": 7, "state": "watching", "watcher": "inotify", "queue_depth": 0,
                    "last_check": daemon_record},
            last_check=newest_check(daemon_record, users))
        render.print_status(Console(file=buffer, width=200), report, ZoneInfo("UTC"))
        line = _last_check_line(buffer.getvalue())
        if shown is users:
            assert line == ("last check: 2026-12-07 05:12:00 UTC (dreamd check): divergent 1; "
                            "0 repaired, left for you (dreamd check says how): divergent"), line
        else:
            assert line == "last check: 2026-12-07 06:00:00 UTC: clean; 0 repaired", line
