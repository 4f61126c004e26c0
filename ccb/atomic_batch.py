"""Many atomic swaps made durable together: a dream's thousands of writes without two fsyncs each.

:func:`ccb.atomic.swap_bytes_atomic` fsyncs the temp file before its rename and the folder
after it: two waits for the disk per file, about 40 s of a dream that writes 3,300 memory files
(``bench/dream_bench.py``, 10,000 memories, cProfile). :class:`StagedSwaps` keeps every
guarantee of that order and pays for it once per batch:

1. **Stage** (:meth:`StagedSwaps.stage`): each file's new bytes go to a temp file beside it
   (``.<name>.<random>.staged.dreamd-tmp``: a name the vault scan and the watcher ignore), and
   then every temp file is made durable at once — one ``syncfs`` per file system on Linux,
   else an fsync of each.
2. **Swap** (:meth:`StagedSwaps.swap`): the writer's compare-before-write runs as for any
   write, and the staged temp file is swapped in (:func:`ccb.atomic.swap_in`) without an fsync
   of its own. Bytes that were not staged (a merge with an edit made meanwhile) take the
   ordinary path: :func:`~ccb.atomic.swap_bytes_atomic`.
3. **Finish** (:meth:`StagedSwaps.finish`, before the caller's commit point): each folder whose
   entries changed is fsynced once; only then are the displaced files and the temp files never
   used removed.

Crash safety, step by step. A rename only ever publishes a temp file whose bytes are durable
(step 1 finished before the first swap), so after a power cut every file is its old bytes or
its new bytes, whole — never empty or half written, the same as one write at a time. A rename
not yet durable when the power goes is undone by the file system: the file is back to its old
bytes, which were durable all along; the dream's journal (written before the first write)
makes the next dream do it again (:mod:`daemon.dream`), which is why the dream clears its
journal only after :meth:`finish`. The bytes a swap displaces stay on disk under the temp name
until the folder's fsync, so nothing is removed before what replaced it is durable. A process
killed part-way leaves staged temp files behind: only batches make them, under the writer lock,
so the next holder of the lock removes them (:func:`sweep_staged`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import re
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ccb.atomic import TEMP_SUFFIX, _fsync_folder, _write_temp, swap_bytes_atomic, swap_in

__all__ = ["STAGED_SUFFIX", "StagedSwaps", "sweep_staged"]

#: Suffix of a staged temp file (ends in :data:`ccb.atomic.TEMP_SUFFIX`, so ignored by the
#: vault scan and the watcher).
STAGED_SUFFIX = ".staged" + TEMP_SUFFIX

#: Threads that remove the displaced files at :meth:`StagedSwaps.finish`: freeing a file's
#: blocks waits on the disk (≈1–3 ms a file on the team's 2-core test machine, measured with
#: ``time.perf_counter`` around ``os.unlink``), not on the CPU, and 4 at once took a third of
#: the time of one.
UNLINK_THREADS = 4


def _load_syncfs() -> Any:
    """``syncfs`` of the C library on Linux 5.8 or later (before 5.8 it does not report a
    failed write-back: a temp file whose write failed could be swapped in), else ``None``."""
    if not sys.platform.startswith("linux") or _kernel() < (5, 8):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function


def _kernel() -> tuple[int, int]:
    """The running kernel's ``(major, minor)`` (``(0, 0)`` when it does not read)."""
    found = re.match(r"(\d+)\.(\d+)", platform.release())
    return (int(found[1]), int(found[2])) if found else (0, 0)


_SYNCFS = _load_syncfs()


def make_durable(temps: Iterable[str]) -> None:
    """Flush ``temps`` (file paths) to the disk: one ``syncfs(2)`` per file system they are on
    (Linux 5.8 or later: :func:`_load_syncfs`), else — elsewhere, or when ``syncfs`` fails —
    an fsync of each (an fsync of each after a ``syncfs`` costs as much as without it: a
    flush of the disk's cache each, ≈1.5 ms here). Raises ``OSError`` when a file cannot be
    flushed."""
    by_device: dict[int, list[str]] = {}
    devices: dict[str, int] = {}  # by folder: one stat for a folder's many files
    for tmp in temps:
        folder = os.path.dirname(tmp)  # noqa: PTH120  (a str from mkstemp)
        if folder not in devices:
            devices[folder] = Path(folder).stat().st_dev
        by_device.setdefault(devices[folder], []).append(tmp)
    for files in by_device.values():
        if _SYNCFS is not None:
            fd = os.open(files[0], os.O_RDONLY)
            try:
                if _SYNCFS(fd) == 0:
                    continue
            finally:
                os.close(fd)
        for tmp in files:
            fd = os.open(tmp, os.O_RDWR)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


class StagedSwaps:
    """The staged swaps of one batch (module docstring). Use from one thread, under the
    writer lock, and always call :meth:`finish` (a ``finally``)."""

    def __init__(self) -> None:
        self._staged: dict[Path, tuple[str, bytes]] = {}
        self._folders: set[Path] = set()
        self._discarded: list[str] = []

    def stage(self, files: Mapping[Path, bytes]) -> None:
        """Write each ``{target: bytes}`` to a staged temp file beside its target and make
        them all durable (:func:`make_durable`). A target staged already is staged again (the
        older temp file goes at :meth:`finish`). Raises ``OSError`` (the temp files written
        so far are removed at :meth:`finish`)."""
        temps: list[str] = []
        try:
            for target, data in files.items():
                temps.append(_write_temp(target, data, None, False, STAGED_SUFFIX))
            make_durable(temps)
        except BaseException:
            self._discarded += temps  # never swapped in: not known to be durable
            raise
        for (target, data), tmp in zip(files.items(), temps, strict=True):
            old = self._staged.get(target)
            if old is not None:
                self._discarded.append(old[0])
            self._staged[target] = (tmp, data)

    def swap(self, target: Path, data: bytes) -> bytes | None:
        """:func:`ccb.atomic.swap_bytes_atomic` of ``data`` at ``target``: with the staged
        temp file when it holds exactly ``data``, its folder fsynced and the displaced file
        removed at :meth:`finish`; else as one write on its own. Returns the displaced bytes
        and raises as :func:`~ccb.atomic.swap_bytes_atomic`."""
        staged = self._staged.get(target)
        if staged is None or staged[1] != data:
            return swap_bytes_atomic(target, data)
        del self._staged[target]
        return swap_in(target, staged[0], data, self)

    # :class:`ccb.atomic.AfterSwap`
    def folder(self, folder: Path) -> None:
        self._folders.add(folder)

    def discard(self, tmp: str) -> None:
        self._discarded.append(tmp)

    def finish(self) -> None:
        """Fsync every folder a swap changed, then remove the displaced files and the staged
        temp files no swap used. Never raises: a folder that cannot be fsynced is passed over
        as by :func:`ccb.atomic.swap_bytes_atomic`, a temp file that cannot be removed is
        swept by the next batch (:func:`sweep_staged`)."""
        folders, self._folders = sorted(self._folders), set()
        for folder in folders:
            _fsync_folder(folder)
        doomed = self._discarded + [tmp for tmp, _ in self._staged.values()]
        self._discarded, self._staged = [], {}
        if len(doomed) < 2 * UNLINK_THREADS:
            for tmp in doomed:
                _remove(tmp)
            return
        with ThreadPoolExecutor(UNLINK_THREADS) as pool:
            list(pool.map(_remove, doomed))


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):  # left: swept by the next batch (:func:`sweep_staged`)
        Path(tmp).unlink(missing_ok=True)


def sweep_staged(folder: Path) -> int:
    """Remove the staged temp files (:data:`STAGED_SUFFIX`) under ``folder``, subfolders too,
    left by a batch that was killed; how many went. Call with the writer lock held: only
    batches make them, under that lock, so none belongs to a write under way."""
    removed = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(STAGED_SUFFIX) and entry.is_file(follow_symlinks=False):
                _remove(entry.path)
                removed += 1
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return removed
