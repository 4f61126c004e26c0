"""``dreamd run`` at a terminal tells the person who started it, in one plain line, that it
watches the vault and how to stop it, and that it stopped; a service's log gets no such line.
A real ``dreamd run`` (the real model) on a copy of the demo vault, its stderr a
pseudo-terminal, stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal import read_until

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")]

REPO = Path(__file__).resolve().parents[2]


def test_run_says_it_watches_and_that_it_stopped(vault: Path, tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path / "home"), NO_COLOR="1", TERM="dumb",
               COLUMNS="200", DREAMD_STORAGE__DATA_DIR=str(tmp_path / "data"))
    main_fd, sub_fd = os.openpty()
    process = subprocess.Popen([sys.executable, "-m", "daemon", "run", str(vault)], cwd=REPO,
                               env=env, stdin=subprocess.DEVNULL, stdout=sub_fd,
                               stderr=sub_fd, close_fds=True)
    os.close(sub_fd)
    try:
        started = read_until(main_fd, process, "Ctrl-C stops it", 120)
        assert f"dreamd: watching {vault.resolve()}: notes are indexed as they are saved" \
            in " ".join(started.split()), started
        process.send_signal(signal.SIGTERM)
        stopped = read_until(main_fd, process, "dreamd: stopped", 60)
        assert "dreamd: stopped" in stopped, stopped
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)


def test_a_service_log_gets_no_such_line(vault: Path, tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path / "home"),
               DREAMD_STORAGE__DATA_DIR=str(tmp_path / "data"))
    log_path = tmp_path / "daemon.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "daemon", "run", str(vault)],
                                   cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=log)
    try:
        deadline = time.monotonic() + 120
        while b"daemon.ready" not in log_path.read_bytes():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    text = log_path.read_text(encoding="utf-8")
    assert "Ctrl-C stops it" not in text and "dreamd: stopped" not in text
