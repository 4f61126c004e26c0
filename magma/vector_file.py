"""The int8 codes of the in-memory chunk vector index kept in a file instead of the heap, while
the store's IVF index answers the unfiltered vector searches.

Beside that index (more than ``retrieval.ann_vectors_above`` chunks, once the store has built
it) a search reads few rows of the in-memory index: the candidates' vectors for re-ranking,
each candidate note's best chunk, the rows of a filtered search allowing up to
``retrieval.filtered_scan_rows`` chunks, the memories' rows. Yet the codes of every chunk were
kept in the process's heap (at 100,000 notes, 928,739 chunks: 453 MB of anonymous memory).
:class:`RowFile` writes them into a temporary file in the vault's state folder and maps it
read-only (``numpy.memmap``): only the pages of the rows a search touches are resident, clean
page cache the kernel takes back under pressure, and the values are the same bytes, so every
score is the same.

The file has no name: it is created unlinked (``tempfile.TemporaryFile``), so no other
process sees it, and it is gone, with every vector in it, once the last index mapping it is
let go, or when the process ends, however it ends (a crash leaves nothing to clean). A save's
rows are appended to it (the old mappings never see bytes they map change); the rows stacked
again (:func:`magma.catalogue.follow_snapshot`) go to a new file; a forget lets go of the
search's snapshot (:meth:`daemon.retrieval.Retriever.forget_snapshot`), so the file holding
the forgotten notes' rows is gone once no search reads it. A file that cannot be written (a
full disk, a folder that cannot be made) is logged and the codes kept in the heap: searches
answer the same.

Beside the codes, the in-memory IVF's partitions (:mod:`magma.vector_ivf`) are kept in a named
file of the same folder (:data:`PARTITIONS_FILE_NAME`: the centroids, each row's partition, the
rows they were trained for, a digest of the rows' content hashes in row order and the
embedding model), so that a restart reads them instead of training again (:func:`save_partitions`,
:func:`load_partitions`). They are derived: a lost or damaged file costs a training, never a
wrong answer; they hold no text, but a centroid is the mean of a partition's rows (of a
partition of one row, that chunk's vector), so a forget deletes them (:func:`drop_partitions`)
and the IVF is trained again on the rows left.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import structlog

from ccb.atomic import write_bytes_atomic

__all__ = ["PARTITIONS_FILE_NAME", "RowFile", "SavedPartitions", "codes_in_file",
           "drop_partitions", "load_partitions", "save_partitions"]

log = structlog.get_logger("dreamd.vectors")

#: The in-memory IVF's partitions in the vault's state folder.
PARTITIONS_FILE_NAME = "vector-ivf.npz"


class RowFile:
    """``int8[rows, dims]`` codes in an unnamed temporary file in ``folder``, appended to and
    mapped read-only (the module docstring). Raises :class:`OSError` when the file cannot be
    made."""

    __slots__ = ("_file", "dims", "folder", "rows")

    def __init__(self, folder: Path, dims: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        # (kept open as long as the rows are mapped: no context to close it in)
        self._file: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115
            dir=folder, prefix=".vectors-")
        self.folder, self.dims = folder, dims
        self.rows = 0

    def append(self, codes: np.ndarray) -> None:
        """Write ``codes`` (``int8[k, dims]``) after the rows written. Raises
        :class:`OSError` (a full disk: the rows written stay as they were)."""
        data = np.ascontiguousarray(codes, dtype=np.int8)
        if len(data) == 0:
            return
        self._file.seek(self.rows * self.dims)
        self._file.write(data.data.cast("B"))
        self._file.flush()
        self.rows += len(data)

    def view(self) -> np.ndarray:
        """The rows written, mapped read-only (``int8[rows, dims]``; a plain ``ndarray`` whose
        base keeps the mapping open)."""
        if self.rows == 0:
            return np.zeros((0, self.dims), dtype=np.int8)
        mapped = np.memmap(self._file, dtype=np.int8, mode="r", shape=(self.rows, self.dims))
        return mapped.view(np.ndarray)


def codes_in_file(folder: Path, parts: Iterable[np.ndarray]) -> tuple[np.ndarray, RowFile | None]:
    """The codes of ``parts`` (``int8[k, dims]`` each) one after another, written into a
    :class:`RowFile` in ``folder`` and mapped -> ``(codes, file)``; when the file cannot be
    made or written (logged: ``search.vectors_in_heap``), the codes in the heap and ``None``
    (those written so far read back)."""
    file: RowFile | None = None
    heap: list[np.ndarray] = []
    dims = 0
    for part in parts:
        if len(part) == 0:
            continue
        dims = part.shape[1]
        if file is not None or not heap:
            try:
                file = file if file is not None else RowFile(folder, dims)
                file.append(part)
                continue
            except OSError as error:
                log.warning("search.vectors_in_heap", folder=str(folder), error=str(error))
                if file is not None:
                    heap.append(np.array(file.view()))
                file = None
        heap.append(np.asarray(part, dtype=np.int8))
    if file is not None:
        return file.view(), file
    if not heap:
        return np.zeros((0, dims or 1), dtype=np.int8), None
    return (heap[0] if len(heap) == 1 else np.concatenate(heap)), None


@dataclass(frozen=True, slots=True)
class SavedPartitions:
    """The in-memory IVF as last saved: ``centroids`` (``float32[k, dims]``), each row's
    partition (``parts``, ``int32[rows]``, ``-1`` for a row no chunk held), the rows the
    centroids were trained for, which rows they are (``rows_key``: a digest of the rows'
    content hashes in row order, :func:`magma.ivf_keeper.rows_key`; ``""``: unknown) and the
    embedding model whose vectors they are (``model``; ``""``: unknown)."""

    centroids: np.ndarray
    parts: np.ndarray
    trained_rows: int
    rows_key: str = ""
    model: str = ""


def save_partitions(folder: Path, saved: SavedPartitions) -> bool:
    """Write ``saved`` into :data:`PARTITIONS_FILE_NAME` in ``folder`` (atomically) ->
    whether it was written (a failure is logged: ``search.partitions_unsaved``)."""
    data = io.BytesIO()
    np.savez(data, centroids=np.asarray(saved.centroids, dtype=np.float32),
             parts=np.asarray(saved.parts, dtype=np.int32),
             meta=np.asarray([saved.trained_rows, -1], dtype=np.int64),
             rows_key=np.asarray(saved.rows_key), model=np.asarray(saved.model))
    try:
        write_bytes_atomic(folder / PARTITIONS_FILE_NAME, data.getvalue(), durable=False)
    except OSError as error:
        log.warning("search.partitions_unsaved", folder=str(folder), error=str(error))
        return False
    return True


def drop_partitions(folder: Path) -> None:
    """Delete the partitions saved in ``folder`` (a forget: a centroid is the mean of its
    partition's rows, of a partition of one row that row's vector; a failure is logged:
    ``search.partitions_kept``)."""
    try:
        (folder / PARTITIONS_FILE_NAME).unlink(missing_ok=True)
    except OSError as error:
        log.warning("search.partitions_kept", folder=str(folder), error=str(error))


def load_partitions(folder: Path) -> SavedPartitions | None:
    """The partitions :func:`save_partitions` wrote into ``folder``; ``None`` when there are
    none, or the file cannot be read or does not hold together (a partition no centroid has,
    a centroid not finite; logged: ``search.partitions_unread``)."""
    path = folder / PARTITIONS_FILE_NAME
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            centroids = np.asarray(data["centroids"], dtype=np.float32)
            parts = np.asarray(data["parts"], dtype=np.int32)
            trained_rows = int(data["meta"][0])
            # (a file saved before these were: other rows, any model's centroids)
            rows_key = str(data["rows_key"]) if "rows_key" in data.files else ""
            model = str(data["model"]) if "model" in data.files else ""
    except (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile) as error:
        # (a file cut short or empty, as a crash leaves a rename not yet on the disk)
        log.warning("search.partitions_unread", path=str(path), error=str(error))
        return None
    if centroids.ndim != 2 or parts.ndim != 1 or len(centroids) == 0 \
            or not np.isfinite(centroids).all() \
            or (len(parts) and not -1 <= int(parts.min()) <= int(parts.max()) < len(centroids)):
        # (a row of a partition no centroid has would never be probed: never found)
        log.warning("search.partitions_unread", path=str(path), error="partitions out of range")
        return None
    return SavedPartitions(centroids=centroids, parts=parts, trained_rows=trained_rows,
                           rows_key=rows_key, model=model)
