"""The session-start context as a plain file: the user's rules reach the assistant even when
no daemon runs, without loading LanceDB or the model.

A ``SessionStart`` hook has no prompt: its context is the resident memories (identity,
preferences, rules; pinned first) and the catalogue of how-to notes, the same for every
session until a memory changes. Whoever builds it (the daemon after each change, or a hook
answered in-process) keeps it in ``<state_dir>/session-start/<key>.json`` with the *mark*
of the folders it was read from: the names, sizes and modification times of every markdown
file in the memory folder and the extra roots. :func:`read` hands the text back only while
the mark is unchanged — an edited, added or deleted memory file makes it stale, and the hook
builds the context anew — and while it is of this dreamd's :data:`FORMAT`. Forgetting a
memory removes every snapshot (:func:`clear`): no copy of a forgotten memory stays in the
state folder.

Standard library only: :mod:`daemon.client` reads snapshots before anything heavy loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["FOLDER", "FORMAT", "clear", "folders_mark", "read", "snapshot_key", "stale", "write"]

#: Folder of the snapshots in the state folder.
FOLDER = "session-start"
#: What a snapshot's text is built by: a snapshot of another format (kept by an earlier
#: dreamd, which left out feedback memories without a rule word) is never handed back, and
#: the daemon builds it anew. Raise it when what a session-start context holds changes.
FORMAT = 2
#: Most markdown files a mark reads per folder (a memory folder holds hundreds to a few
#: thousand); past it the snapshot is not used (the hook builds the context itself).
MAX_FILES = 20_000


def snapshot_key(budget: int | None, owner: str | None) -> str:
    """File stem of the snapshot for a hook's ``--budget`` and ``--owner``."""
    text = json.dumps([budget, owner])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def folders_mark(folders: Iterable[str]) -> str | None:
    """Digest of every ``*.md`` file's relative path, size and mtime under ``folders``
    (missing folders count as empty); ``None`` past :data:`MAX_FILES` or on a read error."""
    digest = hashlib.sha256()
    for folder in sorted(set(folders)):
        digest.update(f"\0{folder}\0".encode("utf-8", "surrogateescape"))
        rows: list[str] = []
        stack = [folder]
        try:
            while stack:
                with os.scandir(stack.pop()) as entries:
                    for entry in entries:
                        if entry.name.startswith("."):
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.name.endswith(".md"):
                            st = entry.stat(follow_symlinks=False)
                            # ctime and inode too: a restore that keeps size and mtime
                            # (cp -p, rsync -t) still changes them
                            rows.append(f"{os.path.relpath(entry.path, folder)}\0{st.st_size}"
                                        f"\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}")
                            if len(rows) > MAX_FILES:
                                return None
        except FileNotFoundError:
            if Path(folder).exists():
                return None  # a file went while we looked: no mark this time
            rows = []  # a missing folder holds no memories
        except OSError:
            return None
        for row in sorted(rows):
            digest.update(row.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def write(state_dir: Path, key: str, text: str, folders: list[str], *,
          asked: dict[str, Any]) -> None:
    """Keep ``text`` as the snapshot ``key``, marked with ``folders`` as they are now;
    ``asked`` is what the hook asked for (its budget and owner), so the daemon can build it
    again (:func:`stale`).

    Never raises: without a snapshot the hook only takes longer."""
    mark = folders_mark(folders)
    if mark is None:
        return
    from ccb.atomic import write_json_atomic  # here: reading stays standard library only

    target = state_dir / FOLDER
    with contextlib.suppress(OSError, ValueError):  # ValueError: text that is not UTF-8
        target.mkdir(mode=0o700, exist_ok=True)
        write_json_atomic(target / f"{key}.json",
                          {"format": FORMAT, "folders": folders, "mark": mark, "text": text,
                           "asked": asked})


def stale(state_dir: Path, *, every: bool = False) -> list[dict[str, Any]]:
    """What each snapshot that no longer matches its folders was asked for (``every``: each
    snapshot; after the index changed, its how-to catalogue may have too). The daemon
    rebuilds those."""
    found: list[dict[str, Any]] = []
    with contextlib.suppress(OSError):
        for path in sorted((state_dir / FOLDER).glob("*.json")):
            try:
                record = json.loads(path.read_text("utf-8"))
                if not isinstance(record.get("asked"), dict):
                    continue
                if every or record.get("format") != FORMAT \
                        or folders_mark(str(f) for f in record["folders"]) != record["mark"]:
                    found.append(record["asked"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
                continue
    return found


def read(state_dir: Path, key: str) -> str | None:
    """The snapshot ``key`` if its folders are as they were when it was written."""
    try:
        record = json.loads((state_dir / FOLDER / f"{key}.json").read_text("utf-8"))
        folders, text = record["folders"], record["text"]
        if not isinstance(text, str) or not isinstance(folders, list) \
                or record.get("format") != FORMAT:
            return None
        mark = folders_mark(str(f) for f in folders)
        return text if mark is not None and mark == record["mark"] else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def clear(state_dir: Path) -> None:
    """Remove every snapshot (a memory was forgotten)."""
    folder = state_dir / FOLDER
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            path.unlink(missing_ok=True)
