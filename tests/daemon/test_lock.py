"""DaemonLock with real processes: refusal names the holder, SIGKILL frees the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import filelock
import pytest

from config.errors import LockError
from daemon.lock import (
    HOLDER_FILE_NAME,
    LOCK_FILE_NAME,
    DaemonLock,
    LockHolder,
    current_holder,
    held,
    read_holder,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")

_HOLDER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from daemon.lock import DaemonLock
    with DaemonLock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(120)
    """
)


@pytest.fixture
def holder_process(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A real `python -c` process holding the lock of tmp_path/state until killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER_SCRIPT, str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_second_holder_is_refused_with_the_pid(
    tmp_path: Path, holder_process: subprocess.Popen[str]
) -> None:
    state = tmp_path / "state"
    with pytest.raises(LockError) as info:
        DaemonLock(state).acquire()
    message = str(info.value)
    assert f"another dreamd (pid {holder_process.pid}, started " in message
    assert "is already running for this vault; stop it or use dreamd status" in message
    holder = current_holder(state)
    assert holder is not None and holder.pid == holder_process.pid
    # the refused attempt left the holder's side file alone
    assert read_holder(state) == holder


def test_second_process_is_refused_too(
    tmp_path: Path, holder_process: subprocess.Popen[str]
) -> None:
    code = (
        "import sys; from pathlib import Path; from daemon.lock import DaemonLock\n"
        "from config.errors import LockError\n"
        "try:\n    DaemonLock(Path(sys.argv[1])).acquire()\n"
        "except LockError as e:\n    print(e); sys.exit(7)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 7, done.stderr
    assert f"pid {holder_process.pid}," in done.stdout


def test_sigkill_frees_the_lock_and_stale_side_file_is_overwritten(
    tmp_path: Path, holder_process: subprocess.Popen[str]
) -> None:
    state = tmp_path / "state"
    dead_pid = holder_process.pid
    os.kill(dead_pid, signal.SIGKILL)
    holder_process.wait(timeout=30)
    stale = read_holder(state)
    assert stale is not None and stale.pid == dead_pid  # killed: no clean-up ran
    assert current_holder(state) is None  # flock died with the process

    with DaemonLock(state) as lock:
        assert lock.holder is not None and lock.holder.pid == os.getpid()
        on_disk = json.loads((state / HOLDER_FILE_NAME).read_text(encoding="utf-8"))
        assert on_disk["pid"] == os.getpid()
        assert on_disk["started_at"].endswith("Z")
        assert on_disk["argv"] == sys.argv
    assert not (state / HOLDER_FILE_NAME).exists()
    assert (state / LOCK_FILE_NAME).exists()  # kept on purpose (see module docstring)


def test_two_locks_in_one_process_conflict_and_release_frees(tmp_path: Path) -> None:
    state = tmp_path / "deep" / "state"
    assert current_holder(state) is None
    assert not state.exists()  # probing never creates the folder
    first = DaemonLock(state)
    holder = first.acquire()
    assert holder.pid == os.getpid() and holder.argv == tuple(sys.argv)
    with pytest.raises(LockError, match=rf"pid {os.getpid()},"):
        DaemonLock(state).acquire()
    first.release()
    first.release()  # idempotent
    with DaemonLock(state) as again:
        assert current_holder(state) == again.holder


def test_refusal_without_side_file_says_pid_unknown(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with DaemonLock(state):
        (state / HOLDER_FILE_NAME).unlink()
        with pytest.raises(LockError, match=r"another dreamd \(pid unknown\)"):
            DaemonLock(state).acquire()
        assert current_holder(state) == LockHolder(0, "", "", ())


def test_unreadable_side_file_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / HOLDER_FILE_NAME).write_text("{not json", encoding="utf-8")
    assert read_holder(tmp_path) is None
    assert read_holder(tmp_path / "missing") is None


def test_a_state_file_lock_held_elsewhere_all_the_time_says_which_and_for_how_long(
        tmp_path: Path) -> None:
    """The history's and the forget journal's locks (:func:`daemon.lock.held`): a holder
    that keeps the lock past the wait gives a LockError naming what waited and the file."""
    path = tmp_path / "history.lock"
    other = filelock.FileLock(path)  # (another open of the file: another holder)
    said = r"^history: .*history\.lock held by another dreamd process for 0 s"
    with other, pytest.raises(LockError, match=said), \
            held(filelock.FileLock(path, timeout=0.05), "history", 0.05):
        pytest.fail("held while another holder had it")
    with held(filelock.FileLock(path, timeout=0.05), "forget", 0.05):
        assert path.exists()
