"""Whether the index answers from part of the vault: the daemon is at its first index.

A first index of a large vault takes most of an hour, and the index answers meanwhile
(searches from a client, from an assistant, in-process or through the daemon's socket): a
search then finds only what was indexed so far, and a check finds the rest "missing". Both
say so instead (:class:`PartialIndex`): how many files of how many are indexed, and that the
daemon is at it.

The index is partial when the daemon of the vault runs and reconciles (its status file,
:data:`daemon.status.DAEMON_STATUS_FILE`) and no reconcile ever finished for this state
folder (no :data:`daemon.status.LAST_SYNC_FILE`). A later reconcile (the periodic rescan, a
restart with changes) leaves an index that was whole once: it is not called partial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccb.atomic import read_json_object
from ccb.entry_notes import is_entry_path
from daemon.client import pid_alive
from daemon.status import DAEMON_STATUS_FILE, LAST_SYNC_FILE
from daemon.terminal_text import counted

__all__ = ["PartialIndex", "indexed_files", "partial_index"]

#: Phases whose ``done`` counts files written to the index (``reading`` writes nothing).
_WRITING = frozenset({"indexing", "embedding"})


@dataclass(frozen=True, slots=True)
class PartialIndex:
    """The daemon (``pid``) is at the first index: ``indexed`` files are in the index,
    of ``files`` (``None``: not known yet, the daemon has not listed the vault)."""

    pid: int
    indexed: int
    files: int | None

    @property
    def how_far(self) -> str:
        """``1,024 of 5,914 files indexed so far``."""
        if self.files is None:
            return f"{counted(self.indexed, 'file')} indexed so far"
        return f"{self.indexed:,} of {counted(self.files, 'file')} indexed so far"

    @property
    def note(self) -> str:
        """One line for a search's answer."""
        return (f"the index is partial: the daemon (pid {self.pid}) is at the vault's first "
                f"index, {self.how_far}; notes not indexed yet are not searched")

    def as_json(self) -> dict[str, Any]:
        return {"partial": True, "indexed": self.indexed, "files": self.files,
                "pid": self.pid, "note": self.note}


def indexed_files(paths: Iterable[str]) -> int:
    """How many of the index's ``paths`` are files (an entry row ``file.md#key`` is not)."""
    return sum(1 for path in paths if not is_entry_path(path))


def _files(indexed: int, work: object) -> int | None:
    """The vault's files by the daemon's ``work`` (:mod:`daemon.work_progress`): those the
    index held at the reconcile's start (``indexed_before``, :func:`daemon.runner`'s) and
    those it takes on; from a daemon that does not say the first, those ``indexed`` and
    those the reconcile has still to write."""
    if not isinstance(work, Mapping) or work.get("kind") != "reconcile":
        return None
    done, total, before = work.get("done"), work.get("total"), work.get("indexed_before")
    if type(total) is int and type(before) is int:
        return max(before + total, indexed)  # (what the index held, and what it takes on)
    if type(done) is not int or type(total) is not int:
        return None
    if work.get("phase") in _WRITING:
        return indexed + max(total - done, 0)
    return indexed + total  # read, not written yet


def partial_index(state_dir: Path, indexed: Callable[[], int]) -> PartialIndex | None:
    """:class:`PartialIndex` when the daemon of ``state_dir`` is at the first index (module
    docstring), else ``None``; ``indexed()`` counts the files in the index (called only
    then: :func:`indexed_files` of the index's paths)."""
    if (state_dir / LAST_SYNC_FILE).exists():
        return None
    status = read_json_object(state_dir / DAEMON_STATUS_FILE)
    pid = status.get("pid")
    if status.get("state") not in {"starting", "reconciling"} or type(pid) is not int \
            or not pid_alive(pid):
        return None
    count = indexed()
    return PartialIndex(pid=pid, indexed=count, files=_files(count, status.get("work")))
