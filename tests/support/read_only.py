"""Folders that refuse writes, for real: permission bits, and root's override taken away.

Root ignores permission bits (``CAP_DAC_OVERRIDE``), so a ``chmod a-w`` alone stops nothing
when the suite runs as root (containers, CI). :func:`unwritable` also drops that capability
from the calling thread's effective set for the duration (it stays permitted and is raised
again after); :func:`drop_override` is a ``preexec_fn`` that drops it from a child's bounding
set, so a ``dreamd`` subprocess run as root cannot write there either. Linux capabilities
through ``capget``/``capset``/``prctl`` (man 7 capabilities); elsewhere only the bits.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["drop_override", "unwritable", "unwritable_for_children"]

#: man 7 capabilities: bypass file read, write and execute permission checks; bypass
#: checks that need the file's owner (chmod of another user's file).
CAP_DAC_OVERRIDE, CAP_FOWNER = 1, 3
_CAP_VERSION_3 = 0x20080522  # linux/capability.h: _LINUX_CAPABILITY_VERSION_3
_PR_CAPBSET_DROP = 24  # linux/prctl.h
_DROPPED = (1 << CAP_DAC_OVERRIDE) | (1 << CAP_FOWNER)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _set_effective(dropped: bool) -> bool:
    """Drop (or raise again) the override bits in this thread's effective set."""
    libc = _libc()
    if libc is None or not hasattr(libc, "capget"):
        return False
    header, data = _Header(_CAP_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return False
    if dropped:
        data[0].effective &= ~_DROPPED
    else:
        data[0].effective |= data[0].permitted & _DROPPED
    return bool(libc.capset(ctypes.byref(header), data) == 0)


def drop_override() -> None:
    """``preexec_fn`` of a subprocess run as root: drop the override capabilities from its
    bounding set, so the program it executes never holds them."""
    libc = _libc()
    if libc is not None and os.geteuid() == 0:
        for cap in (CAP_DAC_OVERRIDE, CAP_FOWNER):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def _takes_a_file(folder: Path) -> bool:
    try:
        fd, probe = tempfile.mkstemp(dir=folder)
    except OSError:
        return False
    os.close(fd)
    Path(probe).unlink()
    return True


@contextmanager
def unwritable(*folders: Path) -> Iterator[None]:
    """``folders`` refuse new files, renames and deletes in this thread (``chmod a-w``, and
    root's override dropped); both undone after. Skips the test, saying why, when a folder
    still takes a file (a platform where neither works)."""
    modes = {folder: folder.stat().st_mode for folder in folders}
    for folder in folders:
        folder.chmod(stat.S_IMODE(modes[folder]) & ~0o222)
    dropped = os.geteuid() == 0 and _set_effective(True)
    try:
        writable = [str(f) for f in folders if _takes_a_file(f)]
        if writable:
            pytest.skip(f"cannot make {', '.join(writable)} read-only here (root without "
                        "capset?)")
        yield
    finally:
        if dropped:
            _set_effective(False)
        for folder, mode in modes.items():
            folder.chmod(stat.S_IMODE(mode))


@contextmanager
def unwritable_for_children(*folders: Path) -> Iterator[None]:
    """``folders`` refuse writes from subprocesses started with ``preexec_fn=drop_override``
    (``chmod a-w``; undone after). Skips the test, saying why, when such a child can still
    make a file there."""
    modes = {folder: folder.stat().st_mode for folder in folders}
    for folder in folders:
        folder.chmod(stat.S_IMODE(modes[folder]) & ~0o222)
    try:
        for folder in folders:
            probe = subprocess.run(
                [sys.executable, "-c", "import sys, tempfile; tempfile.mkstemp(dir=sys.argv[1])",
                 str(folder)], preexec_fn=drop_override, capture_output=True, check=False)
            if probe.returncode == 0:
                pytest.skip(f"cannot make {folder} read-only for a child process here")
        yield
    finally:
        for folder, mode in modes.items():
            folder.chmod(stat.S_IMODE(mode))
