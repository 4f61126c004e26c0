"""A running daemon whose store a newer dreamd upgrades under it stops cleanly, saying why.

A real daemon subprocess (``daemon_harness.py``, the token-hash FAKE embedder: these tests are
about the store and the process, not meaning) on a copy of kepano's vault
(``../shared/corpora/kepano-obsidian``), a real LanceDB store. The "newer dreamd" is this
dreamd in another process with a schema version one above its own: its open of the store
drops the index tables and makes them anew, stamping the meta row, as an upgrade does
(:mod:`magma.store_tables`). Every wait is bounded; nothing asserts on timings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest

from config.errors import StoreMismatchError, exit_code_for

#: A newer dreamd opening the store of the vault named by argv[1] (the daemon's lock stops
#: no open: a hook, an MCP server or a status of the newer dreamd opens it so).
NEWER = """
import sys
import magma.store_tables as tables
tables.SCHEMA_VERSION += 1
from daemon.app import App, load
from daemon_harness import load_fake_embedder
app = App.create(load(None, None, {"vault.path": sys.argv[1]}), embedder=load_fake_embedder())
print(app.store.counts().files)
app.close()
"""


@pytest.fixture
def kepano(tmp_path: Path, corpora_dir: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(corpora_dir / "kepano-obsidian", vault, symlinks=True)
    return vault


def _upgrade(vault: Path) -> None:
    """Run the newer dreamd's open of the store; it leaves the index tables empty."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(h.REPO), str(h.SUPPORT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", NEWER, str(vault)], capture_output=True,
                          text=True, timeout=120, check=False, env=env, cwd=h.REPO)
    assert done.returncode == 0, done.stderr
    # upgraded: the index tables made anew, empty (its log goes to stdout before)
    assert done.stdout.strip().splitlines()[-1] == "0", done.stdout


def _stopped_for_the_store(daemon: Any) -> None:
    """The daemon exited with the store's exit code, one log line saying why, no
    traceback, its status file saying it stopped."""
    code = h.wait_until(lambda: daemon.proc.poll(), lambda c: c is not None, timeout_s=60,
                        what="the daemon exits")
    assert code == exit_code_for(StoreMismatchError("")), daemon.log_tail()
    said = [e for e in daemon.events() if e.get("event") == "daemon.store_changed"]
    assert len(said) == 1, daemon.log_tail()
    assert "a newer dreamd upgraded the index" in said[0]["reason"]
    assert "Traceback" not in daemon.log_path.read_text(encoding="utf-8")
    assert daemon.status().get("state") == "stopped", daemon.status()


def test_a_save_after_an_upgrade_under_the_daemon_stops_it_saying_why(
        kepano: Path, tmp_path: Path, daemons: list[Any]) -> None:
    """Before, each save failed with LanceDB's "Not found" on a data file of the dropped
    tables, again and again, and the daemon went on holding the vault's lock."""
    daemon = h.DaemonProcess.start(kepano, tmp_path / "daemon.log")
    daemons.append(daemon)
    daemon.wait_state("watching", timeout_s=120)
    _upgrade(kepano)
    with (kepano / "References" / "Kyoto.md").open("a", encoding="utf-8") as note:
        note.write("\nTemples to see again: Fushimi Inari at dawn.\n")
    _stopped_for_the_store(daemon)


def test_a_search_after_an_upgrade_under_the_daemon_is_answered_in_process(
        kepano: Path, tmp_path: Path, daemons: list[Any]) -> None:
    """A client's search reaches the daemon (its local API, as ``dreamd search`` sends it),
    which stops instead of answering with LanceDB's "Not found": the client is told why and
    answers in-process (where this dreamd refuses the newer store in one line, and a newer
    dreamd reads it)."""
    from daemon.app import App, load
    from daemon.client import PROTOCOL, ApiError, call
    from daemon.local_api import STOPPING

    daemon = h.DaemonProcess.start(kepano, tmp_path / "daemon.log")
    daemons.append(daemon)
    daemon.wait_state("watching", timeout_s=120)
    h.wait_until(daemon.events, lambda events: any(e.get("event") == "api.listening"
                                                   for e in events),
                 timeout_s=120, what="the daemon's local API")
    settings = App(load(None, None, {"vault.path": str(kepano)}), kepano).settings_fingerprint
    params = {"protocol": PROTOCOL, "settings": settings, "argv": ["search", "Kyoto"],
              "stdin": None, "terminal": {}}
    assert call(daemon.state_dir, "cli", params, timeout=60)["exit_code"] == 0
    _upgrade(kepano)
    with pytest.raises(ApiError) as refused:
        call(daemon.state_dir, "cli", params, timeout=60)
    assert refused.value.code == STOPPING
    assert "the daemon is stopping: a newer dreamd upgraded the index (index schema" in \
        str(refused.value)
    _stopped_for_the_store(daemon)
