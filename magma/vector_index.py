"""The in-memory chunk vector index in one of two forms: exact ``float32`` rows while the vault
is small, ``int8`` rows with one scale per row above a configurable size.

Both forms answer the same two questions the search pipeline asks: the cosine of every chunk
with a query (:meth:`scores`) and the vectors of some rows (:meth:`rows`). ``int8`` keeps a
quarter of the bytes (512 codes plus a 4-byte scale per chunk, against 2,048 bytes) and
agrees with the exact top 10 on real vectors (recall@10 0.98–0.995), but its scan runs
without BLAS, ≈5× slower (``bench/vector_forms_bench.py``; the figures are given at
:data:`config.settings.COMPACT_VECTORS_ABOVE`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from config.settings import COMPACT_VECTORS_ABOVE

__all__ = [
    "BLOCK_ROWS",
    "DEFAULT_COMPACT_ABOVE",
    "ChunkVectors",
    "ExactVectors",
    "Int8Vectors",
    "VectorForm",
    "chunk_vectors",
    "vector_form",
]

VectorForm = Literal["float32", "int8"]

#: Chunks above which the index is kept as ``int8`` by default: the setting's default
#: (:data:`config.settings.COMPACT_VECTORS_ABOVE`, where its measurement is given).
DEFAULT_COMPACT_ABOVE = COMPACT_VECTORS_ABOVE
#: Rows up-cast to float32 at once when scoring ``int8`` rows: 32,768 × 512 × 4 bytes = 64 MB
#: of scratch, small against the 700,000-row index it scores (358 MB) and large enough that
#: numpy's per-call overhead is negligible.
BLOCK_ROWS = 32_768
#: Largest code of a row (its largest absolute value maps here).
_CODE_MAX = 127.0


class ChunkVectors(Protocol):
    """Unit chunk vectors, one row per chunk, in the order of the snapshot's chunk lists."""

    @property
    def form(self) -> VectorForm:
        """``"float32"`` or ``"int8"``."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes held in memory."""
        ...

    def __len__(self) -> int: ...

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Cosine of every row with the unit ``vector`` -> ``float32[rows]``."""
        ...

    def rows(self, index: int | list[int] | np.ndarray) -> np.ndarray:
        """The vectors at ``index`` -> ``float32[dims]`` for one int, else ``float32[k, dims]``."""
        ...


@dataclass(frozen=True, slots=True)
class ExactVectors:
    """``float32[rows, dims]`` unit rows: the exact form."""

    matrix: np.ndarray

    @property
    def form(self) -> VectorForm:
        return "float32"

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def __len__(self) -> int:
        return len(self.matrix)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix @ vector, dtype=np.float32)

    def rows(self, index: int | list[int] | np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix[index], dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Int8Vectors:
    """``int8[rows, dims]`` codes and ``float32[rows]`` scales: row ``i`` is
    ``codes[i] * scales[i]`` (each row's largest absolute value maps to 127; the rounding
    error of a component is at most half a scale step, 1/254 of that value)."""

    codes: np.ndarray
    scales: np.ndarray

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

    def __len__(self) -> int:
        return len(self.codes)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        query = np.asarray(vector, dtype=np.float32)
        out = np.empty(len(self.codes), dtype=np.float32)
        for start in range(0, len(self.codes), BLOCK_ROWS):
            block = self.codes[start : start + BLOCK_ROWS].astype(np.float32)
            out[start : start + len(block)] = block @ query
        out *= self.scales
        return out

    def rows(self, index: int | list[int] | np.ndarray) -> np.ndarray:
        codes = self.codes[index].astype(np.float32)
        scales = self.scales[index]
        return codes * (scales[..., None] if codes.ndim == 2 else scales)


def vector_form(rows: int, compact_above: int) -> VectorForm:
    """The form of an index of ``rows`` chunks: ``"int8"`` when ``rows > compact_above``."""
    return "int8" if rows > compact_above else "float32"


def chunk_vectors(matrix: np.ndarray, compact_above: int) -> ChunkVectors:
    """``matrix`` (``float32[rows, dims]``, unit rows) in the form :func:`vector_form` picks."""
    if vector_form(len(matrix), compact_above) == "int8":
        return Int8Vectors.of(matrix)
    return ExactVectors(np.ascontiguousarray(matrix, dtype=np.float32))
