"""Atomic file replacement: the one way dreamd writes a file, inside the vault or out of it.

Write to a temp file in the same folder (a name the vault scan and the watcher ignore:
``.<name>.<random>.dreamd-tmp``), fsync it, ``os.replace`` it over the target, then fsync the
folder so the rename itself survives a power cut. A reader sees the old file or the new one,
never half of either; a crash leaves at most a stray temp file that nothing indexes.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["TEMP_SUFFIX", "write_bytes_atomic", "write_json_atomic"]

#: Suffix of dreamd's temp files; ``ccb.scan`` ignores every file that ends with it.
TEMP_SUFFIX = ".dreamd-tmp"


def write_bytes_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; creates missing parent folders.

    ``mode`` sets the permission bits of the new file (default: those of the file it replaces,
    else 0o644 less the umask). Raises ``OSError`` on failure, leaving the old file intact.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # noqa: PTH101  (tmp is a str from mkstemp)
        os.replace(tmp, path)  # noqa: PTH105
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as indented UTF-8 JSON, atomically."""
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


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
