"""Writes a folder refuses — no permission, a read-only mount, a full disk — as one line.

:func:`not_writable` turns the ``OSError`` of a refused write into a
``VaultNotWritableError`` naming the folder and what to do (the writer raises it in place of
a traceback); :func:`require_writable` asks a folder first, with a real write, so that work
made of many writes (a dream) refuses before its first one instead of stopping half-way.
"""

from __future__ import annotations

import errno
import os
import shlex
import tempfile
from pathlib import Path

from ccb.atomic import TEMP_SUFFIX
from config.errors import VaultNotWritableError

__all__ = ["file_in_the_way", "not_writable", "require_writable"]

#: Errors that say a folder refuses writes, and what the user can do about each.
_REFUSED: dict[int, tuple[str, str]] = {
    errno.EACCES: ("is not writable (permission denied)",
                   "give your user write access to it (chmod u+w {path})"),
    errno.EPERM: ("is not writable (operation not permitted)",
                  "give your user write access to it (chmod u+w {path})"),
    errno.EROFS: ("is on a read-only file system", "mount it read-write"),
    errno.ENOSPC: ("is on a full disk (no space left)", "free some space on it"),
    errno.EDQUOT: ("is over your disk quota", "free some space or raise the quota"),
}

#: Ask ``access`` with the effective ids (and capabilities) that made the write, where the
#: platform can.
_EFFECTIVE = os.access in os.supports_effective_ids


def file_in_the_way(path: Path) -> Path | None:
    """``path`` or the nearest of its folders that exists, when that is no folder (a file
    named as a folder dreamd writes into, such as the memory folder); else ``None``."""
    for place in (path, *path.parents):
        if place.exists() or place.is_symlink():
            return None if place.is_dir() else place
    return None


def not_writable(error: OSError) -> VaultNotWritableError | None:
    """The one-line error for ``error`` when it says a write was refused (permission,
    read-only file system, full disk or quota: :data:`_REFUSED`; or a file stands where a
    folder of the path must be: ``ENOTDIR``, or ``EEXIST`` from making that folder), else
    ``None``.

    It names the folder that refused — the folder of the file the error names when that
    file is one of dreamd's temp files, does not exist (it could not be made there) or is in
    a folder this process may not change (a delete, a rename) — else the file itself (a
    read-only file written in place)."""
    if error.errno in (errno.ENOTDIR, errno.EEXIST) and error.filename is not None:
        blocking = file_in_the_way(Path(os.fsdecode(error.filename)))
        if blocking is not None and (error.errno == errno.ENOTDIR or
                                     blocking == Path(os.fsdecode(error.filename))):
            return VaultNotWritableError(
                f"ccb: write: {blocking} is a file, not a folder [errno {error.errno}]; "
                "rename or move that file (dreamd writes into a folder of that name), or "
                "choose another folder in the settings; nothing was written")
    refused = _REFUSED.get(error.errno or 0)
    if refused is None:
        return None
    what, todo = refused
    named = Path(os.fsdecode(error.filename)) if error.filename is not None else None
    if named is None:
        place = "a folder of the vault"
    elif named.name.endswith(TEMP_SUFFIX) or not named.exists() \
            or not os.access(named.parent, os.W_OK, effective_ids=_EFFECTIVE):
        place = str(named.parent)
    else:
        place = str(named)
    return VaultNotWritableError(
        f"ccb: write: {place} {what} [errno {error.errno}]; "
        f"{todo.format(path=shlex.quote(place))}; nothing was written")


def require_writable(folder: Path) -> None:
    """Raise ``VaultNotWritableError`` unless a file can be made in ``folder`` (or in the
    nearest folder above it that exists): a real write, since permission bits do not tell of
    read-only mounts, ACLs or a full disk. The probe is an empty temp file under a name the
    scan and the watcher ignore (``.<random>.dreamd-tmp``), removed at once. Other
    ``OSError`` propagate."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".", suffix=TEMP_SUFFIX, dir=folder)
    except OSError as error:
        refusal = not_writable(error)
        if refusal is None:
            raise
        raise refusal from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)
