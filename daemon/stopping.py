"""``dreamd stop``: end the daemon of a vault as Ctrl-C or SIGTERM does, from another terminal.

The daemon named by the vault's lock (:mod:`daemon.lock`) gets SIGTERM: it finishes the commit
it is writing (a reconcile stops between two commits) and exits 0, so a service manager that
restarts it only after a failure (``Restart=on-failure``, launchd's ``SuccessfulExit =
false``) leaves it stopped. A one-shot command holding the lock (a ``dreamd sync``) is not a
daemon and is left alone; so is a daemon on another host of a shared state folder.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from daemon.lock import DAEMON_ROLE, LockHolder, current_holder

__all__ = ["STOP_WAIT_S", "StopOutcome", "stop_daemon"]

#: Seconds ``dreamd stop`` waits for the daemon to exit (``--wait``; our choice: a daemon
#: ends between two commits, which take seconds on a large vault; its first index is cut
#: between two slices of embedding).
STOP_WAIT_S = 60.0
#: Seconds between two looks at the lock while waiting.
_POLL_S = 0.1


@dataclass(frozen=True)
class StopOutcome:
    """What ``dreamd stop`` did: ``state`` is ``stopped``, ``not_running``, ``still_stopping``
    (asked, not gone within the wait), ``not_a_daemon`` (a one-shot command holds the lock),
    ``elsewhere`` (a daemon of another host), ``not_allowed`` (another user's process) or
    ``unnamed`` (the lock is held, its side file names no pid);
    ``holder`` the daemon (or command) found; ``seconds`` from the signal to its exit."""

    state: str
    holder: LockHolder | None = None
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 when no daemon runs for the vault afterwards, else 1."""
        return 0 if self.state in {"stopped", "not_running"} else 1

    def line(self, vault: Path) -> str:
        """One line for the terminal."""
        who = self.holder.describe() if self.holder is not None else ""
        return {
            "stopped": f"stopped the daemon of {vault} ({who}) in {self.seconds:.1f} s",
            "not_running": f"no daemon is running for {vault}",
            "still_stopping": f"the daemon of {vault} ({who}) was asked to stop and is still "
                              f"finishing after {self.seconds:.0f} s; it ends after the commit "
                              "it is writing (dreamd status shows it)",
            "not_a_daemon": f"no daemon is running for {vault}; a dreamd command ({who}, "
                            f"{self.holder.role if self.holder else ''}) is writing its index "
                            "and ends by itself",
            "elsewhere": f"the daemon of {vault} runs on another host ({who}): stop it there",
            "not_allowed": f"the daemon of {vault} ({who}) belongs to another user: stop it "
                           "as that user",
            "unnamed": f"the lock of {vault} is held by a process that did not write its "
                       "pid (daemon.pid.json): dreamd doctor shows the lock",
        }[self.state]


def stop_daemon(state_dir: Path, *, wait_s: float = STOP_WAIT_S) -> StopOutcome:
    """SIGTERM the daemon holding ``state_dir``'s lock and wait up to ``wait_s`` seconds for
    the lock to be free. Never raises for a daemon gone meanwhile."""
    holder = _holder(state_dir)
    if holder is None:
        return StopOutcome("not_running")
    if not holder.pid:
        return StopOutcome("unnamed", holder)
    if holder.role != DAEMON_ROLE:
        return StopOutcome("not_a_daemon", holder)
    if holder.hostname and holder.hostname != socket.gethostname():
        return StopOutcome("elsewhere", holder)
    started = time.monotonic()
    try:
        os.kill(holder.pid, signal.SIGTERM)
    except ProcessLookupError:  # (gone between the look and the signal)
        return StopOutcome("stopped", holder)
    except PermissionError:
        return StopOutcome("not_allowed", holder)
    while time.monotonic() - started < wait_s:
        now = current_holder(state_dir)
        if now is None or now.pid != holder.pid:
            return StopOutcome("stopped", holder, time.monotonic() - started)
        time.sleep(_POLL_S)
    return StopOutcome("still_stopping", holder, time.monotonic() - started)


def _holder(state_dir: Path) -> LockHolder | None:
    """The lock's holder; a holder that has just taken the lock and not yet written its side
    file (pid 0) is looked at again for up to a second."""
    deadline = time.monotonic() + 1.0
    holder = current_holder(state_dir)
    while holder is not None and holder.pid == 0 and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        holder = current_holder(state_dir)
    return holder
