"""Atomic file replacement: the one way dreamd writes a file, inside the vault or out of it.

Write to a temp file in the same folder (a name the vault scan and the watcher ignore:
``.<name>.<random>.dreamd-tmp``), fsync it, ``os.replace`` it over the target, then fsync the
folder so the rename itself survives a power cut. A reader sees the old file or the new one,
never half of either; a crash leaves at most a stray temp file that nothing indexes.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "TEMP_SUFFIX",
    "AfterSwap",
    "read_json_object",
    "replace_bytes_in_place",
    "swap_bytes_atomic",
    "swap_in",
    "write_bytes_atomic",
    "write_json_atomic",
]

#: Suffix of dreamd's temp files; ``ccb.scan`` ignores every file that ends with it.
TEMP_SUFFIX = ".dreamd-tmp"
#: Bytes of the target's name kept in a temp file's name (255 less the marks and the random
#: part, with room to spare).
_TEMP_NAME_BYTES = 200


def _write_temp(path: Path, data: bytes, mode: int | None, durable: bool,
                suffix: str = TEMP_SUFFIX) -> str:
    """Write ``data`` to a new temp file beside ``path`` (fsynced when ``durable``), its name
    ending in ``suffix``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    # (the name cut: a file name near the 255-byte limit has no room for the temp's marks)
    name = path.name.encode()[:_TEMP_NAME_BYTES].decode("utf-8", errors="ignore")
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # noqa: PTH101  (tmp is a str from mkstemp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_bytes_atomic(
    path: Path, data: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically; creates missing parent folders.

    ``mode`` sets the permission bits of the new file (default: those of the file it replaces,
    else 0o644 less the umask). ``durable=False`` skips both fsyncs (still atomic, but a power
    cut may lose the write: for dreamd's own scratch state only, never a note). Raises
    ``OSError`` on failure, leaving the old file intact.
    """
    tmp = _write_temp(path, data, mode, durable)
    try:
        os.replace(tmp, path)  # noqa: PTH105
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_folder(path.parent)


class FileBeingWrittenError(OSError):
    """:func:`swap_bytes_atomic` found the target empty — the moment between an editor's
    truncate and its write — and put it back untouched."""


def swap_bytes_atomic(path: Path, data: bytes) -> bytes | None:
    """Put ``data`` at ``path`` atomically and return the bytes it displaced (``None``: there
    was no file), so that a caller who compared the file a moment ago can tell whether someone
    wrote in between — and still has what they wrote.

    On Linux this is exact: ``renameat2`` with ``RENAME_NOREPLACE`` (no file yet) or
    ``RENAME_EXCHANGE`` swaps the temp file and the target in one step, and the displaced file
    is read back from the temp name (ext4, btrfs, xfs, tmpfs support both since Linux 3.15).
    Elsewhere, or on a file system that refuses the flags, the target is re-read just before
    ``os.replace``: a write landing in the microseconds between is not seen. Raises
    :class:`FileBeingWrittenError` (the target is left as it was) when the displaced file is
    empty and ``data`` is not, ``OSError`` on failure, leaving the old file intact.
    """
    return swap_in(path, _write_temp(path, data, None, True), data, _AT_ONCE)


class AfterSwap(Protocol):
    """What :func:`swap_in` leaves to its caller once a temp file is in place: the folder
    whose entries changed (to fsync) and the displaced file's temp name (to remove)."""

    def folder(self, folder: Path) -> None: ...

    def discard(self, tmp: str) -> None: ...


class _AtOnce:
    """One write on its own: the folder fsynced and the displaced file removed at once."""

    def folder(self, folder: Path) -> None:
        _fsync_folder(folder)

    def discard(self, tmp: str) -> None:
        Path(tmp).unlink(missing_ok=True)


_AT_ONCE = _AtOnce()


def swap_in(path: Path, tmp: str, data: bytes, after: AfterSwap) -> bytes | None:
    """:func:`swap_bytes_atomic` of a temp file ``tmp`` already holding ``data``, durable
    (fsynced), beside ``path``; ``after`` is told the folder to fsync and the displaced file
    to remove (:class:`AfterSwap`). Returns and raises as :func:`swap_bytes_atomic`; ``tmp``
    is gone or displaced afterwards, whatever happens."""
    try:
        for _ in range(5):
            outcome = _rename2(tmp, path, _RENAME_NOREPLACE)
            if outcome == 0:
                after.folder(path.parent)
                return None
            if outcome == errno.EEXIST:
                outcome = _rename2(tmp, path, _RENAME_EXCHANGE)
                if outcome == 0:
                    displaced = Path(tmp).read_bytes()
                    if not displaced and data:
                        # An empty file is an editor's save caught between truncate and
                        # write: put its inode back, so the write it is about to make lands
                        # in the visible file, not in one we are about to delete.
                        _rename2(tmp, path, _RENAME_EXCHANGE)
                        Path(tmp).unlink(missing_ok=True)
                        raise FileBeingWrittenError(errno.EBUSY, "the file is being written "
                                                    "(found empty)", str(path))
                    after.discard(tmp)
                    after.folder(path.parent)
                    return displaced
                if outcome == errno.ENOENT:
                    continue  # deleted between the two calls: try to create again
            if outcome is not None:
                raise OSError(outcome, os.strerror(outcome), str(path))
            break  # no renameat2 here, or the file system refuses it
        try:
            displaced_now: bytes | None = path.read_bytes()
        except FileNotFoundError:
            displaced_now = None
        os.replace(tmp, path)  # noqa: PTH105
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    after.folder(path.parent)
    return displaced_now


def replace_bytes_in_place(path: Path, data: bytes) -> bytes | None:
    """Write ``data`` into ``path`` itself — no temp file, no rename — and return the bytes it
    displaced (``None``: there was no file). For file systems where a rename over a file is a
    problem (``obsidian.direct.atomic_writes = false``).

    The file is opened (created if missing, with 0o666 less the umask), read, overwritten
    from the start, truncated to the new length and fsynced; a new file's folder is fsynced
    too. Writing before truncating means a reader never finds the file empty, though one may
    see the new start with the old tail for a moment, and a crash mid-write can leave that
    mix: this is not atomic. Raises :class:`FileBeingWrittenError` (nothing written) when the
    file is empty and ``data`` is not — an editor's own in-place save caught between its
    truncate and its write — and ``OSError`` on failure.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    binary = getattr(os, "O_BINARY", 0)
    for _ in range(5):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | binary, 0o666)
            created = True
        except FileExistsError:
            try:
                fd = os.open(path, os.O_RDWR | binary)
            except FileNotFoundError:
                continue  # deleted between the two calls: try to create it again
            created = False
        with os.fdopen(fd, "r+b") as handle:
            displaced = None if created else handle.read()
            if displaced == b"" and data:
                raise FileBeingWrittenError(errno.EBUSY, "the file is being written "
                                            "(found empty)", str(path))
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        if created:
            _fsync_folder(path.parent)
        return displaced
    raise OSError(errno.EAGAIN, "the file kept appearing and vanishing", str(path))


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}


def _load_renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _load_renameat2()


def _rename2(src: str, dst: Path, flags: int) -> int | None:
    """``renameat2(src, dst, flags)``: 0 on success, the errno on failure, ``None`` when the
    call or the flag is not available here."""
    if _RENAMEAT2 is None:
        return None
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return 0
    error = ctypes.get_errno()
    return None if error in _UNSUPPORTED else error


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object a state file holds; ``{}`` when it is absent, unreadable, not UTF-8,
    not JSON, nested too deep to parse, or not an object. State files are derived and
    advisory: a damaged one reads as empty and is rewritten by its owner, never a crash."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json_atomic(path: Path, data: dict[str, Any], *, durable: bool = True,
                      indent: int | None = 2) -> None:
    """Replace ``path`` with ``data`` as indented UTF-8 JSON, atomically (``durable``: as
    :func:`write_bytes_atomic`; ``False`` only for a record a loss of which costs work,
    never a fact). ``indent=None``: on one line, for a large record no one reads by hand
    (the standard library's C encoder writes only that: the 10 MB of a dream's records over
    10,000 memories in 0.08 s instead of 0.25 s)."""
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"), durable=durable)


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some platforms cannot open folders; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
