"""``dreamd stop``: a user ends the daemon of a vault from another terminal (there was no
command for it: find the pid, send a signal). Real daemon subprocesses, the real CLI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import pytest
from dreamd_cli import dreamd_on

from daemon.lock import DaemonLock
from daemon.stopping import stop_daemon

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGTERM and flock are POSIX")


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Kiln.md").write_text("# Kiln\n\nThe kiln fires at cone 6.\n",
                                             encoding="utf-8")
    (vault / "Notes" / "窑炉.md").write_text("# 窑炉\n\n窑炉烧到六号锥。\n", encoding="utf-8")
    return vault


def test_stop_ends_the_running_daemon_cleanly_and_says_so(
        tmp_path: Path, daemons: list[Any]) -> None:
    vault = _vault(tmp_path)
    process = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(process)
    process.wait_state("watching")
    run = dreamd_on(vault)
    done = run("stop", str(vault))
    assert done.returncode == 0, done.stderr
    assert f"stopped the daemon of {vault.resolve()} (pid {process.pid}" in done.stdout
    assert process.proc.wait(timeout=30) == 0  # a clean exit: no service restarts it
    again = run("stop")  # (the vault from the settings) nothing left to stop
    assert again.returncode == 0 and "no daemon is running for" in again.stdout, again


def test_stop_leaves_a_one_shot_command_holding_the_lock_alone(tmp_path: Path) -> None:
    """A ``dreamd sync`` writing the index is not a daemon: it is neither signalled nor
    called one; the exit code says a process still holds the vault."""
    vault = _vault(tmp_path)
    state_dir = h.fresh_app(vault).state_dir
    with DaemonLock(state_dir, role="sync"):
        outcome = stop_daemon(state_dir, wait_s=1.0)
        assert outcome.state == "not_a_daemon" and outcome.exit_code == 1
        assert outcome.holder is not None and outcome.holder.pid == os.getpid()
        assert "a dreamd command (pid" in outcome.line(vault) and "sync" in outcome.line(vault)
    assert stop_daemon(state_dir, wait_s=1.0).state == "not_running"


def test_stop_of_a_vault_never_indexed_says_nothing_runs(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    done = dreamd_on(vault)("stop", "--vault", str(vault))
    assert done.returncode == 0 and "no daemon is running for" in done.stdout, done
    assert not (h.fresh_app(vault).state_dir / "daemon.lock").exists()  # nothing created
