"""The search pipeline's in-memory index of one store version: the catalogue of notes, the
postings of their names and words, the memory matrix and the chunk vector matrix, and the link
graph (the daemon's retrieval pipeline reads it once per table version)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Any

import numpy as np

from ccb.dates import day_in
from ccb.names import nfc_key
from magma.graph_step import NoteGraph
from magma.layers import is_salient, note_date, note_layer, type_prior
from magma.store import INDEX_FILE_NAMES, MagmaStore
from magma.text import CJK_CHAR

WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "did", "for",
    "from", "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "so", "that", "the",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with",
    "you", "your", "about", "into", "have", "has", "had", "should", "would", "could", "we",
    "our", "us",
})


def tokens(text: str) -> list[str]:
    """Lower-cased words of ``text`` in NFC (a decomposed ``é`` is one letter of its word, not
    a break); CJK runs also as their 2-character pieces."""
    out: list[str] = []
    for word in WORD.findall(nfc_key(text).casefold()):
        if CJK_CHAR.search(word):
            out.append(word)
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.append(word)
    return out


def norm(text: str) -> str:
    """The name index's key of a title, alias, name or query: its words in NFC, case-folded,
    one space apart (``"Café_Notes"`` → ``"café notes"``)."""
    return " ".join(WORD.findall(nfc_key(text).casefold().replace("_", " ")))


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One indexed note as the pipeline sees it (from the store's ``files`` table).

    ``dated`` is the day the note itself names (a date property or file name,
    :func:`magma.layers.note_date`; a memory's ``updated``/``created``), what time
    expressions match; ``day`` is that, else the file's modification day (for recency: a
    copied or synced vault resets modification times, so they never place a note in a time
    range); ``layer`` 1–5; ``prior`` its importance prior; ``salient``
    whether its name or description carries a salience word.
    """

    path: str
    note_id: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    memory_type: str | None
    memory_id: str | None
    name: str | None
    description: str | None
    owner: str | None
    properties: Mapping[str, Any]
    dated: date | None
    day: date | None
    layer: int
    prior: float
    salient: bool


@dataclass(slots=True)
class Snapshot:
    """What the pipeline keeps in memory of one store version (:func:`read_snapshot`)."""

    versions: dict[str, int]
    entries: dict[str, CatalogueEntry]
    postings: dict[str, set[str]]
    names: dict[str, set[str]]  # normalised name/title/alias -> paths
    memory_paths: list[str]
    memory_matrix: np.ndarray  # float32[n, dims], unit rows
    memory_text: dict[str, str]
    chunk_ids: list[str]
    chunk_paths: list[str]
    chunk_matrix: np.ndarray  # float32[chunks, dims], unit rows: the in-memory vector index
    chunk_hashes: list[str]  # content hash of each row
    rows_by_path: dict[str, list[int]]
    neighbours: dict[str, set[str]] | None = None
    graph: NoteGraph | None = None  # the graph step's (magma.graph_step), built on first use
    link_targets: dict[str, dict[str, str]] | None = None  # src -> {target as written: path}


def read_snapshot(store: MagmaStore, versions: dict[str, int], zone: tzinfo) -> Snapshot:
    """The catalogue, the name and word postings and the in-memory vector index of ``store``
    at table ``versions`` (days counted in ``zone``). Raises :class:`StoreError`."""
    rows = store.catalogue_rows().to_pylist()
    chunks = store.memory_chunks()
    memory_paths: list[str] = chunks.column("path").to_pylist()
    bodies: list[str] = chunks.column("body").to_pylist()
    memory_text: dict[str, str] = {}
    for path, body in zip(memory_paths, bodies, strict=True):
        memory_text[path] = memory_text.get(path, "") + "\n" + body
    entries: dict[str, CatalogueEntry] = {}
    postings: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    for row in rows:
        props = json.loads(row["properties_json"] or "{}")
        path = row["path"]
        memory_type = row["memory_type"]
        text = " ".join(filter(None, [row["memory_name"], row["memory_description"],
                                      memory_text.get(path, "")]))
        layer = note_layer(path=path, title=row["title"], memory_type=memory_type,
                           properties=props, tags=row["tags"] or (), text=text)
        dated = note_date(props, path) if memory_type is None else (
            day_in(props.get("updated"), zone)
            or day_in(props.get("created"), zone))
        day = dated
        if day is None and row["mtime_ns"]:
            day = datetime.fromtimestamp(row["mtime_ns"] / 1e9, zone).date()
        entry = CatalogueEntry(
            path=path, note_id=row["note_id"], title=row["title"],
            aliases=tuple(row["aliases"] or ()), tags=tuple(row["tags"] or ()),
            memory_type=memory_type, memory_id=row["memory_id"], name=row["memory_name"],
            description=row["memory_description"], owner=row["owner"], properties=props,
            dated=dated, day=day, layer=layer, prior=type_prior(layer, memory_type, text),
            salient=is_salient(text))
        entries[path] = entry
        labels = [entry.title, *entry.aliases, *(filter(None, [entry.name]))]
        for label in labels:
            key = norm(label)
            if key:
                names.setdefault(key, set()).add(path)
        searchable = " ".join([*labels, entry.description or "", *entry.tags,
                               (entry.name or "").replace("-", " ")])
        for token in set(tokens(searchable)):
            if token not in STOPWORDS:
                postings.setdefault(token, set()).add(path)
    every = store.chunk_vectors()
    chunk_paths: list[str] = every.column("path").to_pylist()
    rows_by_path: dict[str, list[int]] = {}
    for row, path in enumerate(chunk_paths):
        rows_by_path.setdefault(path, []).append(row)
    chunk_matrix = matrix_of(every)
    # the memories' rows of the one in-memory index (no second read of their vectors)
    memory_rows = [r for p in memory_text if p in entries for r in rows_by_path.get(p, ())]
    memory_paths = [chunk_paths[r] for r in memory_rows]
    matrix = (chunk_matrix[memory_rows] if memory_rows
              else np.zeros((0, 1), dtype=np.float32))
    return Snapshot(versions=versions, entries=entries, postings=postings, names=names,
                     memory_paths=memory_paths, memory_matrix=matrix,
                     memory_text=memory_text, chunk_ids=every.column("chunk_id").to_pylist(),
                     chunk_paths=chunk_paths, chunk_matrix=chunk_matrix,
                     chunk_hashes=every.column("content_hash").to_pylist(),
                     rows_by_path=rows_by_path)


def matrix_of(table: Any) -> np.ndarray:
    """The ``vector`` column of ``table`` as ``float32[rows, dims]`` (``(0, 1)`` when empty)."""
    if table.num_rows == 0:
        return np.zeros((0, 1), dtype=np.float32)
    column = table.column("vector").combine_chunks()
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False),
                      dtype=np.float32).reshape(table.num_rows, -1)


def linked(sources: Sequence[str], targets: Sequence[str | None],
            entries: Mapping[str, CatalogueEntry]) -> dict[str, set[str]]:
    """Notes linked either way from the store's ``(src, resolved)`` link pairs: both ends
    indexed notes (attachments and unindexed files are not notes to return), index files
    left out."""
    near: dict[str, set[str]] = {}
    for src, dst in zip(sources, targets, strict=True):
        if dst is None or src == dst or src not in entries or dst not in entries:
            continue
        near.setdefault(src, set()).add(dst)
        near.setdefault(dst, set()).add(src)
    for index in [p for p in near if p.rsplit("/", 1)[-1] in INDEX_FILE_NAMES]:
        for other in near.pop(index):
            near.get(other, set()).discard(index)
    return near
