"""``dreamd status`` after a daemon was killed in the middle of a batch (SIGKILL, the OOM
killer): the status file it left ("indexing a batch of 480 changed files: 120 of 480
embedded") is shown for no other holder of the vault's lock — a one-shot ``dreamd sync`` is
no daemon, and a daemon starting since is "starting" until it writes its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon.app import App
from daemon.status import DAEMON_STATUS_FILE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

_HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from daemon.lock import DaemonLock
    with DaemonLock(Path(sys.argv[1]), role=sys.argv[2]):
        print("locked", flush=True)
        sys.stdin.readline()
""")


def _held(state_dir: Path, role: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(state_dir), role],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _released(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    proc.wait(timeout=60)


def test_a_killed_daemons_batch_is_not_shown_for_another_holder(
        vault: Path, make_app: Callable[..., tuple[App, object]]) -> None:
    app, _ = make_app(vault)
    try:
        app.sync()
        dead = {"pid": 2**22 + 17, "state": "indexing", "watcher": "native", "queue_depth": 0,
                "work": {"kind": "batch", "phase": "embedding", "done": 120, "total": 480,
                         "files": 480, "started_at": "2026-12-07T02:19:35+00:00"}}
        (app.state_dir / DAEMON_STATUS_FILE).write_text(json.dumps(dead), "utf-8")
        assert app.status().daemon is None  # no holder: not running

        one_shot = _held(app.state_dir, "sync")
        try:
            assert app.status().daemon is None
        finally:
            _released(one_shot)

        starting = _held(app.state_dir, "daemon")
        try:
            assert app.status().daemon == {"state": "starting"}
            # ... until it writes its own status file
            own = {**dead, "pid": starting.pid, "state": "watching", "work": None}
            (app.state_dir / DAEMON_STATUS_FILE).write_text(json.dumps(own), "utf-8")
            assert app.status().daemon == own
        finally:
            _released(starting)
        assert (app.state_dir / DAEMON_STATUS_FILE).exists()
    finally:
        app.close()


def test_status_says_its_rows_in_words_and_one_of_a_thing_singular(vault: Path) -> None:
    """``dreamd status`` printed the store's column names (``fts_unindexed_rows 0``,
    ``unresolved_links 3``, ``state dir``, ``last sync duration s``) and a count of one with
    a plural (``last batch: …: 1 paths in 80 ms``). The commands, as a user runs them, while
    a daemon holds the vault; ``--json`` keeps its keys."""
    from dreamd_cli import DREAMD

    def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(DREAMD), *args], capture_output=True, text=True,
                              timeout=300, check=False,
                              env={**os.environ, "DREAMD_TIME__ZONE": "UTC"})
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return done

    dreamd("sync", str(vault))
    state_dir = Path(json.loads(dreamd("status", str(vault), "--json").stdout)["state_dir"])
    holder = _held(state_dir, "daemon")
    try:
        own = {"pid": holder.pid, "state": "watching", "watcher": "native", "queue_depth": 0,
               "last_batch": {"at": "2026-12-07T05:11:00+00:00", "paths": 1,
                              "duration_ms": 80}}
        (state_dir / DAEMON_STATUS_FILE).write_text(json.dumps(own), "utf-8")
        said, as_json = (dreamd("status", str(vault), *more) for more in ((), ("--json",)))
    finally:
        _released(holder)
    lines = [" ".join(line.split()) for line in said.stdout.splitlines()]
    assert "last batch: 2026-12-07 05:11:00 UTC: 1 file in 80 ms" in lines, said.stdout
    assert any(line.startswith("unresolved links: ") for line in lines), said.stdout
    assert any(line.startswith("state folder: ") for line in lines), said.stdout
    assert any(line.startswith("last sync took: ") and line.endswith(" s") for line in lines)
    for code_word in ("fts_unindexed_rows", "unresolved_links", "state dir", "duration s",
                      "paths"):
        assert code_word not in said.stdout, said.stdout
    report = json.loads(as_json.stdout)
    assert {"fts_unindexed_rows", "unresolved_links"} <= set(report["counts"])
    assert report["daemon"]["last_batch"]["paths"] == 1 and "state_dir" in report
