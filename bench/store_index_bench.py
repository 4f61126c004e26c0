"""Lookups by key in a store's tables, without and with their BTREE indexes.

    .venv/bin/python bench/store_index_bench.py [--chunks 127283] [--repeat 20] [--dir DIR]

Builds a store (:class:`magma.store_tables.StoreTables`, the real table layouts, 512-dim
vectors) of ``--chunks`` synthetic chunk rows (7 per note, so ``chunks / 7`` file rows and
3 link rows per note), compacted as ``maintain`` leaves it, then times (median of
``--repeat``) what the store asks by key: the chunks of one path, 64 content hashes (a
sync batch's ``known_vectors``), one file row by path, the links to one target key, and one
note's chunk write (``StoreTables.replace``: a ``merge_insert`` on ``chunk_id`` deleting the
path's other rows; the same ``merge_insert`` told not to use an index; and the same rows
deleted, then appended: ``StoreTables.rewrite_groups``, what a sync writes). First with the
indexes dropped, then with them made again (:func:`magma.store_tables.ensure_key_indexes`)
and folded in by ``optimize``; the third pass checks they survive a compaction. Never
fails on timings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [*(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p),
                str(REPO)]

from magma.store_tables import (  # noqa: E402
    _DERIVED_TABLES,
    KEY_COLUMNS,
    StoreTables,
    _chunks_schema,
    _files_schema,
    _in_list,
    _links_schema,
    ensure_key_indexes,
)

DIMS = 512
PER_NOTE = 7


def fill(tables: StoreTables, chunks: int, rng: np.random.Generator) -> None:
    """``chunks`` chunk rows in slices, their file rows and 3 links per note."""
    notes = chunks // PER_NOTE
    stamp = pa.scalar(0, pa.timestamp("us", tz="UTC"))
    for start in range(0, chunks, 20_000):
        ids = range(start, min(start + 20_000, chunks))
        vectors = rng.standard_normal((len(ids), DIMS), dtype=np.float32)
        tables.chunks.add(pa.Table.from_pydict({
            "chunk_id": [f"c{i:08d}" for i in ids], "path": [f"n/{i // PER_NOTE}.md" for i in ids],
            "note_id": [f"id{i // PER_NOTE}" for i in ids], "ordinal": [i % PER_NOTE for i in ids],
            "title": ["t"] * len(ids), "heading_path": [""] * len(ids),
            "text": [f"text {i}" for i in ids], "body": [f"text {i}" for i in ids],
            "content_hash": [f"{i * 2654435761 % 2**64:016x}" for i in ids],
            "memory_type": [None] * len(ids), "owner": [None] * len(ids),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIMS),
        }, schema=_chunks_schema(DIMS)))
    tables.files.add(pa.Table.from_pydict({
        "path": [f"n/{n}.md" for n in range(notes)], "note_id": [f"id{n}" for n in range(notes)],
        "kind": ["note"] * notes, "size": [1] * notes, "mtime_ns": [1] * notes,
        "content_hash": [f"h{n}" for n in range(notes)], "title": ["t"] * notes,
        "tags": [[]] * notes, "aliases": [[]] * notes, "memory_type": [None] * notes,
        "memory_id": [None] * notes, "memory_name": [None] * notes,
        "memory_description": [None] * notes, "owner": [None] * notes,
        "properties_json": ["{}"] * notes, "problems_json": ["[]"] * notes,
        "indexed_at": pa.array([stamp.value] * notes, pa.timestamp("us", tz="UTC")),
    }, schema=_files_schema()))
    links = notes * 3
    tables.links.add(pa.Table.from_pydict({
        "link_id": [f"l{i}" for i in range(links)], "src": [f"n/{i // 3}.md" for i in range(links)],
        "target": [f"n{i * 7 % notes}" for i in range(links)],
        "target_key": [f"n{i * 7 % notes}" for i in range(links)], "kind": ["wikilink"] * links,
        "subpath": [None] * links, "resolved": [None] * links, "line": [1] * links,
    }, schema=_links_schema()))


def median_ms(call: Callable[[int], Any], repeat: int) -> float:
    times = []
    for i in range(repeat):
        started = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000.0


def measure(tables: StoreTables, chunks: int, repeat: int, label: str) -> None:
    notes = chunks // PER_NOTE
    rng = np.random.default_rng(7)

    def one_path(i: int) -> None:
        tables.read(tables.chunks, ["chunk_id"], _in_list("path", [f"n/{i * 911 % notes}.md"]))

    def hashes(i: int) -> None:
        picked = [f"{(i * 64 + k) * 7919 % chunks * 2654435761 % 2**64:016x}" for k in range(64)]
        tables.read(tables.chunks, ["content_hash"], _in_list("content_hash", picked))

    def file_row(i: int) -> None:
        tables.read(tables.files, None, _in_list("path", [f"n/{i * 613 % notes}.md"]))

    def backlinks(i: int) -> None:
        tables.read(tables.links, None, _in_list("target_key", [f"n{i * 17 % notes}"]))

    def write_note(i: int, use_index: bool | None = True) -> None:
        path = f"n/{i * 373 % notes}.md"
        rows = tables.read(tables.chunks, None, _in_list("path", [path]))
        vectors = rng.standard_normal((rows.num_rows, DIMS), dtype=np.float32)
        rows = rows.set_column(rows.schema.get_field_index("vector"), "vector",
                               pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()),
                                                                 DIMS))
        data = rows.cast(_chunks_schema(DIMS))
        if use_index is None:
            StoreTables.rewrite_groups(tables.chunks, "path", data, [path])
            return
        if use_index:
            StoreTables.replace(tables.chunks, "chunk_id", "path", data, [path])
            return
        (tables.chunks.merge_insert("chunk_id").when_matched_update_all()
         .when_not_matched_insert_all().when_not_matched_by_source_delete(
             _in_list("path", [path])).use_index(False).execute(data))

    figures = [(name, median_ms(call, repeat)) for name, call in (
        ("chunks of one path", one_path), ("64 content hashes", hashes),
        ("one file row", file_row), ("links to one target", backlinks),
        ("one note's chunks written", write_note),
        ("the same, merge told no index", lambda i: write_note(i + repeat, use_index=False)),
        ("the same, delete + append", lambda i: write_note(i + 2 * repeat, use_index=None)))]
    indexes = sum(1 for t in tables.derived for i in t.list_indices() if i.name.endswith("_idx")
                  and i.name != "text_idx")
    print(f"{label} ({indexes} key indexes):", flush=True)
    for name, ms in figures:
        print(f"  {name:<28} {ms:8.1f} ms", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=127_283)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="store-index-", dir=args.dir))
    try:
        tables = StoreTables.open(str(folder / "store"), vault_path="/vault",
                                  model_id="bench", dims=DIMS, device=None)
        started = time.perf_counter()
        fill(tables, args.chunks, np.random.default_rng(1))
        tables.maintain(timedelta(0), purge=False)
        print(f"{args.chunks:,} chunks, {args.chunks // PER_NOTE:,} notes written and "
              f"compacted in {time.perf_counter() - started:.0f} s", flush=True)
        for table, base in zip(tables.derived, _DERIVED_TABLES, strict=True):
            for column in KEY_COLUMNS[base]:
                table.drop_index(f"{column}_idx")
        measure(tables, args.chunks, args.repeat, "without")
        started = time.perf_counter()
        for table, base in zip(tables.derived, _DERIVED_TABLES, strict=True):
            ensure_key_indexes(table, base)
            table.optimize()
        print(f"indexes made and folded in: {time.perf_counter() - started:.1f} s", flush=True)
        measure(tables, args.chunks, args.repeat, "with")
        tables.maintain(timedelta(0), purge=False)
        measure(tables, args.chunks, args.repeat, "with, after a compaction")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
