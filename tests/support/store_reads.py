"""Whole-table reads of a :class:`magma.store.MagmaStore` that only tests make.

The product asks the store for what it needs (a file index, vectors by hash, the memory
properties); these read every row of a table, to check what a sync or a batch wrote.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ccb.model import Problem
from daemon.credential_ledger import read_credentials
from magma.store import FileRecord, LinkRecord, MagmaStore, _file_record, sql_str

__all__ = ["all_files", "all_links", "get_file", "index_rows", "problems"]


def get_file(store: MagmaStore, path: str) -> FileRecord | None:
    """The stored record of ``path``, or ``None``."""
    rows = store._t.read(store._t.files, None, f"path = {sql_str(path)}").to_pylist()
    return _file_record(rows[0]) if rows else None


def all_files(store: MagmaStore) -> list[FileRecord]:
    """Every stored file, sorted by path."""
    rows = store._t.read(store._t.files, None).to_pylist()
    return sorted((_file_record(r) for r in rows), key=lambda r: r.path)


def all_links(store: MagmaStore) -> list[LinkRecord]:
    """Every stored link, by source path then position."""
    rows = store._t.read(
        store._t.links, ["src", "target", "kind", "subpath", "resolved", "line"]).to_pylist()
    records = [LinkRecord(**row) for row in rows]
    return sorted(records, key=lambda r: (r.src, r.line, r.target))


def problems(store: MagmaStore) -> list[Problem]:
    """Every parse problem recorded for a stored file, by path."""
    rows = store._t.read(store._t.files, ["path", "problems_json"],
                       "problems_json != '[]'").to_pylist()
    found: list[Problem] = []
    for row in sorted(rows, key=lambda r: r["path"]):
        found.extend(Problem(**p) for p in json.loads(row["problems_json"]))
    return found


def index_rows(store: MagmaStore, state_dir: Any) -> dict[str, Any]:
    """The files, chunks and links tables (sorted by key) and the credential ledger of
    ``state_dir``, each new note's random id replaced by its path: two indexes of one vault
    compare equal when they hold the same."""
    tables = store._t
    files = sorted(tables.read(tables.files, None).to_pylist(), key=lambda r: r["path"])
    ids = {row["note_id"]: row["path"] for row in files if row["memory_id"] is None}
    found: dict[str, Any] = {}
    for name, key in (("files", "path"), ("chunks", "chunk_id"), ("links", "link_id")):
        rows = sorted(tables.read(getattr(tables, name), None).to_pylist(), key=lambda r: r[key])
        for row in rows:
            row.pop("indexed_at", None)
            if "note_id" in row:
                row["note_id"] = ids.get(row["note_id"], row["note_id"])
            if row.get("vector") is not None:
                row["vector"] = np.asarray(row["vector"], dtype=np.float32).tobytes()
        found[name] = rows
    found["credentials"] = read_credentials(state_dir)
    return found
