"""The in-memory chunk vector index in one of three forms: exact ``float32`` rows while the
vault is small, compact rows (``int8`` with one scale per row, or ``float16``) above
configurable sizes.

Every form answers the questions the search pipeline asks: the cosine of every chunk with a
query (:meth:`ChunkVectors.scores`), of some rows only (:meth:`ChunkVectors.scores_at`), the
vectors of some rows (:meth:`ChunkVectors.rows`), and the index carried over a batch
(:meth:`ChunkVectors.followed`, without a float32 copy of the rows kept), or new rows put
after the ones kept (:meth:`ChunkVectors.appended`: written into room kept spare after the
arrays, no copy of the rows held, while the index appended to is the last one of its arrays).
``int8`` keeps a
quarter of the bytes (512 codes plus a 4-byte scale per chunk, against 2,048 bytes) and
agrees with the exact top 10 on real vectors (recall@10 0.98–0.995), but its scan runs
without BLAS, ≈5× slower (``bench/vector_forms_bench.py``; the figures are given at
:data:`config.settings.COMPACT_VECTORS_ABOVE`); ``float16`` keeps half the bytes and the
exact order of candidates, but numpy up-casts it slower still (the figures are given at
:data:`config.settings.ANN_VECTOR_FORM`). Above ``retrieval.ann_vectors_above`` the store's
IVF index finds the nearest chunks with their exact cosines (:mod:`magma.vector_ann`), and
the in-memory rows only serve filtered searches of a few rows and the later stages, so they
are kept compact there (``retrieval.ann_vector_form``), and ``int8`` codes in a file mapped
read-only instead of the heap (:mod:`magma.vector_file`; :meth:`VectorLimits.file_folder`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from config.settings import ANN_INDEX, ANN_VECTOR_FORM, COMPACT_VECTORS_ABOVE, FILTERED_SCAN_ROWS
from magma.vector_file import RowFile, codes_in_file

__all__ = [
    "BLOCK_ROWS",
    "DEFAULT_ANN_FORM",
    "DEFAULT_COMPACT_ABOVE",
    "DEFAULT_LIMITS",
    "AnnIndex",
    "ChunkVectors",
    "ExactVectors",
    "Float16Vectors",
    "Int8Vectors",
    "VectorForm",
    "VectorLimits",
    "chunk_vectors",
    "compact_scores",
    "filled",
    "in_form",
    "vector_form",
]

VectorForm = Literal["float32", "float16", "int8"]
#: Which IVF index answers above ``retrieval.ann_vectors_above`` (``retrieval.ann_index``).
AnnIndex = Literal["memory", "store"]

#: Chunks above which the index is kept as ``int8`` by default: the setting's default
#: (:data:`config.settings.COMPACT_VECTORS_ABOVE`, where its measurement is given).
DEFAULT_COMPACT_ABOVE = COMPACT_VECTORS_ABOVE
#: Form of the rows while the store's IVF index answers: the setting's default
#: (:data:`config.settings.ANN_VECTOR_FORM`, where its measurement is given).
DEFAULT_ANN_FORM: VectorForm = ANN_VECTOR_FORM
#: Rows taken at once when rows are quantised, converted between forms or gathered from the
#: exact form: 32,768 × 512 × 4 bytes = 64 MB of float32, small against a 700,000-row index
#: (358 MB in int8) and large enough that numpy's per-call overhead is negligible. A search
#: scores compact rows in :data:`SCRATCH_ROWS` instead.
BLOCK_ROWS = 32_768
#: Rows up-cast to float32 at once when a search scores compact rows: 256 × 512 × 4 bytes =
#: 512 KB of scratch, written once a call and kept in a core's 1 MB L2 cache between the
#: up-cast and the product. ``bench/scratch_rows_bench.py`` on this 2-core machine (load 2.6–
#: 2.9, one BLAS thread): a scan of 200,000 int8 rows 33 ms against 128–135 ms in fresh
#: blocks of :data:`BLOCK_ROWS`; 120,000 gathered rows against 4 questions 24–36 ms against
#: 60–81 ms in fresh blocks of 4,096 (1,024 rows: scan 16–26 ms, gather 45–53 ms).
SCRATCH_ROWS = 256
#: Largest code of a row (its largest absolute value maps here).
_CODE_MAX = 127.0
#: Spare rows kept after an index's arrays when they are copied to grow
#: (:meth:`ChunkVectors.appended`): an eighth of the rows, at least this many (our choice: at
#: 928,312 int8 rows, 116,000 spare rows are 60 MB and a save of a note of ten chunks copies
#: the rows once in ≈11,000 saves instead of at every save).
_ROOM_MIN_ROWS = 1_024


class _Room:
    """The arrays an index's arrays are the first ``filled`` rows of (views), with spare rows
    after them: the index whose rows end at ``filled`` may write new rows there; any other
    index sharing the arrays reads only its own first rows, which are never written again."""

    __slots__ = ("buffers", "filled")

    def __init__(self, buffers: tuple[np.ndarray, ...], filled: int) -> None:
        self.buffers = buffers
        self.filled = filled


def _grown(arrays: tuple[np.ndarray, ...], room: _Room | None, fresh: tuple[np.ndarray, ...]
           ) -> tuple[tuple[np.ndarray, ...], _Room]:
    """``arrays`` with the rows of ``fresh`` after them (each ``fresh[i]`` of
    ``arrays[i]``'s dtype and row shape) -> the new arrays (views of the room's) and their
    room: written into ``room`` when ``arrays`` end where it is filled and it has space (no
    copy of ``arrays``), else into new arrays of an eighth more rows (one copy)."""
    rows, need = len(arrays[0]), len(arrays[0]) + len(fresh[0])
    if room is None or room.filled != rows or len(room.buffers[0]) < need:
        capacity = need + max(need // 8, _ROOM_MIN_ROWS)
        buffers = tuple(np.empty((capacity, *a.shape[1:]), dtype=a.dtype) for a in arrays)
        for buffer, kept in zip(buffers, arrays, strict=True):
            buffer[:rows] = kept
        room = _Room(buffers, rows)
    for buffer, part in zip(room.buffers, fresh, strict=True):
        buffer[rows:need] = part
    room.filled = need
    return tuple(buffer[:need] for buffer in room.buffers), room


class ChunkVectors(Protocol):
    """Unit chunk vectors, one row per chunk, in the order of the snapshot's chunk lists."""

    @property
    def form(self) -> VectorForm:
        """``"float32"``, ``"float16"`` or ``"int8"``."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes of the rows (in the heap, or mapped from a file: :attr:`mapped`)."""
        ...

    @property
    def mapped(self) -> bool:
        """Are the rows mapped from a file (:mod:`magma.vector_file`) instead of held in the
        heap?"""
        ...

    def __len__(self) -> int: ...

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Cosine of every row with the unit ``vector`` -> ``float32[rows]``."""
        ...

    def rows(self, index: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors at ``index`` -> ``float32[dims]`` for one int, else ``float32[k, dims]``."""
        ...

    def scores_at(self, index: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """Cosine of the rows at ``index`` (``int64[k]``) with the unit ``vector`` ->
        ``float32[k]`` (compact rows up-cast :data:`SCRATCH_ROWS` at a time)."""
        ...

    def followed(self, keep: np.ndarray, fresh: np.ndarray) -> ChunkVectors:
        """A new index of the rows at ``keep`` (``int64[k]``, in that order) then the rows of
        ``fresh`` (``float32[m, dims]``, unit rows), in this form; ``self`` is unchanged."""
        ...

    def appended(self, fresh: np.ndarray) -> ChunkVectors:
        """A new index of every row of this one then the rows of ``fresh`` (``float32[m,
        dims]``, unit rows), in this form, written into the spare room after this index's
        arrays when it is the last one appended there (module docstring; amortised O(m));
        the rows of ``self`` are unchanged."""
        ...


@dataclass(frozen=True, slots=True)
class ExactVectors:
    """``float32[rows, dims]`` unit rows: the exact form."""

    matrix: np.ndarray
    room: _Room | None = field(default=None, compare=False, repr=False)

    @property
    def form(self) -> VectorForm:
        return "float32"

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    @property
    def mapped(self) -> bool:
        return False

    def __len__(self) -> int:
        return len(self.matrix)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix @ vector, dtype=np.float32)

    def rows(self, index: int | Sequence[int] | np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix[index], dtype=np.float32)

    def scores_at(self, index: np.ndarray, vector: np.ndarray) -> np.ndarray:
        return _blocks(index, lambda part: self.matrix[part] @ vector)

    def followed(self, keep: np.ndarray, fresh: np.ndarray) -> ChunkVectors:
        return ExactVectors(_stacked(self.matrix[keep], fresh.astype(np.float32)))

    def appended(self, fresh: np.ndarray) -> ChunkVectors:
        if len(fresh) == 0:
            return self  # nothing to add (a note deleted): the same rows
        if len(self.matrix) == 0:
            return self.followed(np.arange(0), fresh)
        (matrix,), room = _grown((self.matrix,), self.room, (fresh.astype(np.float32),))
        return ExactVectors(matrix, room)


@dataclass(frozen=True, slots=True)
class Float16Vectors:
    """``float16[rows, dims]`` unit rows: half the bytes, each component within 2^-11 of
    its value (relative), so cosines within ≈ 0.001 of the exact ones."""

    half: np.ndarray
    room: _Room | None = field(default=None, compare=False, repr=False)

    @property
    def form(self) -> VectorForm:
        return "float16"

    @property
    def nbytes(self) -> int:
        return int(self.half.nbytes)

    @property
    def mapped(self) -> bool:
        return False

    def __len__(self) -> int:
        return len(self.half)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        return compact_scores(self.half, np.asarray(vector, dtype=np.float32))

    def rows(self, index: int | Sequence[int] | np.ndarray) -> np.ndarray:
        return np.asarray(self.half[index], dtype=np.float32)

    def scores_at(self, index: np.ndarray, vector: np.ndarray) -> np.ndarray:
        return compact_scores(self.half, np.asarray(vector, dtype=np.float32),
                              np.asarray(index, dtype=np.int64))

    def followed(self, keep: np.ndarray, fresh: np.ndarray) -> ChunkVectors:
        return Float16Vectors(_stacked(self.half[keep], fresh.astype(np.float16)))

    def appended(self, fresh: np.ndarray) -> ChunkVectors:
        if len(fresh) == 0:
            return self  # nothing to add (a note deleted): the same rows
        if len(self.half) == 0:
            return self.followed(np.arange(0), fresh)
        (half,), room = _grown((self.half,), self.room, (fresh.astype(np.float16),))
        return Float16Vectors(half, room)


@dataclass(frozen=True, slots=True)
class Int8Vectors:
    """``int8[rows, dims]`` codes and ``float32[rows]`` scales: row ``i`` is
    ``codes[i] * scales[i]`` (each row's largest absolute value maps to 127; the rounding
    error of a component is at most half a scale step, 1/254 of that value). With ``file``
    the codes are that file's rows, mapped (:mod:`magma.vector_file`; :meth:`in_file`), the
    scales in the heap; the rows kept follow in the file: a save's are appended to it, the
    rows stacked again go to a new one."""

    codes: np.ndarray
    scales: np.ndarray
    room: _Room | None = field(default=None, compare=False, repr=False)
    file: RowFile | None = field(default=None, compare=False, repr=False)

    @classmethod
    def in_file(cls, folder: Path, matrices: Iterable[np.ndarray]) -> Int8Vectors:
        """The rows of ``matrices`` (``float32[k, dims]`` each, unit rows) quantised as they
        come, their codes written into a file in ``folder`` and mapped (in the heap when it
        cannot be written: :func:`magma.vector_file.codes_in_file`)."""
        scales: list[np.ndarray] = []

        def parts() -> Iterator[np.ndarray]:
            for matrix in matrices:
                part = Int8Vectors.of(matrix)
                scales.append(part.scales)
                yield part.codes

        codes, file = codes_in_file(folder, parts())
        return cls(codes=codes, scales=np.concatenate(scales) if scales
                   else np.zeros(0, dtype=np.float32), file=file)

    @classmethod
    def of(cls, matrix: np.ndarray) -> Int8Vectors:
        """Quantise ``float32[rows, dims]`` block by block (no second full-size copy)."""
        rows = len(matrix)
        dims = matrix.shape[1] if matrix.ndim == 2 else 1
        codes = np.empty((rows, dims), dtype=np.int8)
        scales = np.empty(rows, dtype=np.float32)
        for start in range(0, rows, BLOCK_ROWS):
            block = np.asarray(matrix[start : start + BLOCK_ROWS], dtype=np.float32)
            peak = np.abs(block).max(axis=1) if dims else np.zeros(len(block), np.float32)
            scale = np.where(peak > 0, peak / _CODE_MAX, 1.0).astype(np.float32)
            codes[start : start + len(block)] = np.rint(block / scale[:, None])
            scales[start : start + len(block)] = scale
        return cls(codes=codes, scales=scales)

    @property
    def form(self) -> VectorForm:
        return "int8"

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes)

    @property
    def mapped(self) -> bool:
        return self.file is not None

    def __len__(self) -> int:
        return len(self.codes)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        out = compact_scores(self.codes, np.asarray(vector, dtype=np.float32))
        out *= self.scales
        return out

    def rows(self, index: int | Sequence[int] | np.ndarray) -> np.ndarray:
        codes = self.codes[index].astype(np.float32)
        scales = self.scales[index]
        return codes * (scales[..., None] if codes.ndim == 2 else scales)

    def scores_at(self, index: np.ndarray, vector: np.ndarray) -> np.ndarray:
        index = np.asarray(index, dtype=np.int64)
        out = compact_scores(self.codes, np.asarray(vector, dtype=np.float32), index)
        out *= self.scales[index]
        return out

    def followed(self, keep: np.ndarray, fresh: np.ndarray) -> ChunkVectors:
        added = Int8Vectors.of(fresh)
        scales = np.concatenate([self.scales[keep], added.scales])
        if self.file is None:
            return Int8Vectors(codes=_stacked(self.codes[keep], added.codes), scales=scales)
        keep = np.asarray(keep, dtype=np.int64)
        # a new file: the one mapped here keeps its bytes while an older index reads them
        parts = (self.codes[keep[start : start + BLOCK_ROWS]]
                 for start in range(0, len(keep), BLOCK_ROWS))
        codes, file = codes_in_file(self.file.folder, (*parts, added.codes))
        return Int8Vectors(codes=codes, scales=scales, file=file)

    def appended(self, fresh: np.ndarray) -> ChunkVectors:
        if len(fresh) == 0:
            return self  # nothing to add (a note deleted): the same rows
        if len(self.codes) == 0 or (self.file is not None and self.file.rows != len(self.codes)):
            # (an index mapping the file's first rows only: another was appended to it)
            return self.followed(np.arange(len(self.codes)), fresh)
        added = Int8Vectors.of(fresh)
        if self.file is not None:
            (scales,), room = _grown((self.scales,), self.room, (added.scales,))
            try:
                self.file.append(added.codes)
            except OSError:  # (a full disk: stacked again, in a new file or the heap)
                return self.followed(np.arange(len(self.codes)), fresh)
            return Int8Vectors(codes=self.file.view(), scales=scales, room=room,
                               file=self.file)
        (codes, scales), room = _grown((self.codes, self.scales), self.room,
                                       (added.codes, added.scales))
        return Int8Vectors(codes=codes, scales=scales, room=room)


def _blocks(index: np.ndarray, score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``score`` of ``index`` taken :data:`BLOCK_ROWS` at a time -> ``float32[len(index)]``."""
    index = np.asarray(index, dtype=np.int64)
    out = np.empty(len(index), dtype=np.float32)
    for start in range(0, len(index), BLOCK_ROWS):
        part = index[start : start + BLOCK_ROWS]
        out[start : start + len(part)] = score(part)
    return out


def compact_scores(rows: np.ndarray, queries: np.ndarray, index: np.ndarray | None = None
                   ) -> np.ndarray:
    """The products of compact ``rows`` (``int8`` or ``float16[n, dims]``; of those at
    ``index``, ``int64[k]``, when given) with ``queries`` (``float32[dims]`` or
    ``float32[dims, q]``) -> ``float32[k]`` or ``float32[k, q]``, unscaled. The rows are
    up-cast :data:`SCRATCH_ROWS` at a time into one scratch block reused for the call."""
    count = len(rows) if index is None else len(index)
    out = np.empty((count, *queries.shape[1:]), dtype=np.float32)
    block = np.empty((min(SCRATCH_ROWS, count), rows.shape[1]), dtype=np.float32)
    for start in range(0, count, SCRATCH_ROWS):
        part = rows[start : start + SCRATCH_ROWS] if index is None \
            else rows[index[start : start + SCRATCH_ROWS]]
        scratch = block[: len(part)]
        np.copyto(scratch, part, casting="unsafe")
        np.matmul(scratch, queries, out=out[start : start + len(part)])
    return out


def _stacked(kept: np.ndarray, fresh: np.ndarray) -> np.ndarray:
    """``kept`` then ``fresh`` rows (either may be empty; an empty ``fresh`` may be
    ``(0, 1)``)."""
    if len(fresh) == 0:
        return kept
    if len(kept) == 0:
        return fresh
    return np.concatenate([kept, fresh])


@dataclass(frozen=True, slots=True)
class VectorLimits:
    """Which form the in-memory index takes and how the vector stage searches it: the
    ``retrieval`` settings of these names (``ann_above`` ``None``: no IVF index is ever
    asked; ``ann_index``: which one is, :data:`config.settings.ANN_INDEX`); ``folder``: where
    int8 rows beside that index are kept in a file instead of the heap
    (:mod:`magma.vector_file`; ``None``: in the heap), and the in-memory IVF's partitions
    (:mod:`magma.vector_ivf`)."""

    compact_above: int = DEFAULT_COMPACT_ABOVE
    ann_above: int | None = None
    ann_form: VectorForm = DEFAULT_ANN_FORM
    filtered_scan_rows: int = FILTERED_SCAN_ROWS
    folder: Path | None = None
    ann_index: AnnIndex = ANN_INDEX

    @classmethod
    def of(cls, retrieval: Any, folder: Path | None = None) -> VectorLimits:
        """The limits of a ``config.settings.RetrievalSettings``, rows kept in ``folder``."""
        return cls(compact_above=retrieval.compact_vectors_above,
                   ann_above=retrieval.ann_vectors_above, ann_form=retrieval.ann_vector_form,
                   filtered_scan_rows=retrieval.filtered_scan_rows, folder=folder,
                   ann_index=retrieval.ann_index)

    def file_folder(self, rows: int, indexed: bool = True) -> Path | None:
        """The folder of the file an index of ``rows`` chunks keeps its rows in: ``folder``
        when they are ``int8`` and the store's IVF index, built (``indexed``), answers the
        unfiltered searches (a search then reads few rows); else ``None`` (the heap: every
        row is scanned)."""
        if self.folder is None or not self.asks_index(rows) or not indexed:
            return None
        return self.folder if self.form(rows, indexed) == "int8" else None

    def form(self, rows: int, indexed: bool = True) -> VectorForm:
        """The form of an index of ``rows`` chunks, ``indexed`` or not by the store
        (:func:`vector_form`)."""
        return vector_form(rows, self.compact_above, self.ann_above, self.ann_form, indexed)

    def asks_index(self, rows: int) -> bool:
        """Does a vault of ``rows`` chunks search an IVF index (the store's once built, or
        the in-memory rows' own: :meth:`in_memory`)?"""
        return self.ann_above is not None and rows > self.ann_above

    def in_memory(self, rows: int) -> bool:
        """Does a vault of ``rows`` chunks search the IVF over its in-memory rows
        (:mod:`magma.vector_ivf`) rather than the store's?"""
        return self.asks_index(rows) and self.ann_index == "memory"


#: The limits of the default settings, but the store's IVF index never asked (as
#: ``ann_above=None`` said before the limits were one value).
DEFAULT_LIMITS = VectorLimits()


def vector_form(rows: int, compact_above: int, ann_above: int | None = None,
                ann_form: VectorForm = DEFAULT_ANN_FORM, indexed: bool = True) -> VectorForm:
    """The form of an index of ``rows`` chunks: ``"int8"`` when ``rows > compact_above``,
    else ``ann_form`` when ``rows > ann_above`` (the store's IVF index answers the
    unfiltered searches there; ``None``: never) and the store has built that index
    (``indexed``: until it has, every row is scanned, and float32 rows are scanned ≈ 5×
    faster), else ``"float32"``."""
    if rows > compact_above:
        return "int8"
    if ann_above is not None and rows > ann_above and indexed:
        return ann_form
    return "float32"


def in_form(matrix: np.ndarray, form: VectorForm) -> ChunkVectors:
    """``matrix`` (``float32[rows, dims]``, unit rows) as an index of ``form``."""
    if form == "int8":
        return Int8Vectors.of(matrix)
    if form == "float16":
        return Float16Vectors(np.asarray(matrix, dtype=np.float16))
    return ExactVectors(np.ascontiguousarray(matrix, dtype=np.float32))


def filled(form: VectorForm, rows: int, matrices: Iterable[np.ndarray],
           folder: Path | None = None) -> ChunkVectors:
    """An index of ``form`` holding the rows of ``matrices`` (``float32[k, dims]`` each, unit
    rows) one after another, about ``rows`` in all: each matrix is converted as it comes
    into arrays of the final size, so that the float32 rows are never held all at once.
    More or fewer rows than ``rows`` are taken too (the arrays are then copied once).
    ``folder`` (``int8`` only): the codes written into a file there and mapped
    (:meth:`Int8Vectors.in_file`)."""
    if folder is not None and form == "int8":
        return Int8Vectors.in_file(folder, matrices)
    parts: list[ChunkVectors] = []
    whole: ChunkVectors | None = None
    done = 0
    for matrix in matrices:
        part = in_form(matrix, form)
        if whole is None and not parts and len(part) < rows:
            whole = _empty(form, rows, matrix.shape[1])
        if whole is not None and done + len(part) <= len(whole):
            _put(whole, part, done)
        else:
            parts.append(part)
        done += len(part)
    if whole is None:
        whole = parts.pop(0) if parts else in_form(np.zeros((0, 1), dtype=np.float32), form)
    elif done < len(whole):
        whole = whole.followed(np.arange(done), np.zeros((0, 1), dtype=np.float32))
    for part in parts:
        whole = whole.followed(np.arange(len(whole)), part.rows(np.arange(len(part))))
    return whole


def _empty(form: VectorForm, rows: int, dims: int) -> ChunkVectors:
    """An index of ``form`` with room for ``rows`` rows of ``dims`` (contents undefined)."""
    if form == "int8":
        return Int8Vectors(codes=np.empty((rows, dims), dtype=np.int8),
                           scales=np.empty(rows, dtype=np.float32))
    if form == "float16":
        return Float16Vectors(np.empty((rows, dims), dtype=np.float16))
    return ExactVectors(np.empty((rows, dims), dtype=np.float32))


def _put(whole: ChunkVectors, part: ChunkVectors, start: int) -> None:
    """Write ``part``'s rows into ``whole`` (of the same form) from row ``start``."""
    end = start + len(part)
    if isinstance(whole, Int8Vectors) and isinstance(part, Int8Vectors):
        whole.codes[start:end] = part.codes
        whole.scales[start:end] = part.scales
    elif isinstance(whole, Float16Vectors) and isinstance(part, Float16Vectors):
        whole.half[start:end] = part.half
    elif isinstance(whole, ExactVectors) and isinstance(part, ExactVectors):
        whole.matrix[start:end] = part.matrix
    else:
        raise TypeError(f"rows of {part.form} into an index of {whole.form}")


def chunk_vectors(matrix: np.ndarray, compact_above: int, ann_above: int | None = None,
                  ann_form: VectorForm = DEFAULT_ANN_FORM) -> ChunkVectors:
    """``matrix`` (``float32[rows, dims]``, unit rows) in the form :func:`vector_form` picks."""
    return in_form(matrix, vector_form(len(matrix), compact_above, ann_above, ann_form))
