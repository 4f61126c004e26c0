"""Int8 rows kept in an unnamed file and mapped (magma.vector_file) against the same rows in
the heap: the same bytes, so the same scores; followed and appended alike; a file that
cannot be made or written leaves the rows in the heap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from magma import vector_file
from magma.vector_file import RowFile
from magma.vector_index import Int8Vectors, VectorLimits, filled


def _rows(n: int, dims: int = 48, seed: int = 5) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dims)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _batches(matrix: np.ndarray, size: int = 37) -> list[np.ndarray]:
    return [matrix[i : i + size] for i in range(0, len(matrix), size)]


def _same(a: Int8Vectors, b: Int8Vectors) -> None:
    assert np.array_equal(np.asarray(a.codes), np.asarray(b.codes))
    assert np.array_equal(a.scales, b.scales)
    query = _rows(1, a.codes.shape[1], seed=11)[0]
    index = np.arange(len(a))[::3]
    assert np.array_equal(a.scores(query), b.scores(query))
    assert np.array_equal(a.scores_at(index, query), b.scores_at(index, query))
    assert np.array_equal(a.rows(index), b.rows(index))


def test_rows_in_a_file_are_the_rows_in_the_heap(tmp_path: Path) -> None:
    matrix = _rows(300)
    mapped = filled("int8", 300, _batches(matrix), tmp_path)
    assert isinstance(mapped, Int8Vectors) and mapped.mapped and mapped.form == "int8"
    assert isinstance(mapped.codes.base, np.memmap)  # not a copy in the heap
    _same(mapped, Int8Vectors.of(matrix))
    assert list(tmp_path.iterdir()) == []  # the file has no name: nothing left behind
    assert not filled("int8", 300, _batches(matrix)).mapped  # no folder: the heap


def test_the_limits_keep_rows_in_a_file_beside_the_store_index_only(tmp_path: Path) -> None:
    limits = VectorLimits(ann_above=100, folder=tmp_path)
    assert limits.file_folder(101) == tmp_path
    assert limits.file_folder(100) is None  # every row scanned: the heap
    assert limits.file_folder(101, indexed=False) is None  # float32 until the index is built
    assert VectorLimits(ann_above=100, ann_form="float16", folder=tmp_path).file_folder(101) \
        is None
    assert VectorLimits(ann_above=100).file_folder(101) is None


def test_appended_and_followed_rows_in_a_file_equal_those_in_the_heap(tmp_path: Path) -> None:
    matrix, more, again = _rows(200), _rows(30, seed=6), _rows(12, seed=7)
    mapped = Int8Vectors.in_file(tmp_path, _batches(matrix))
    heap = Int8Vectors.of(matrix)
    grown, grown_heap = mapped.appended(more), heap.appended(more)
    assert isinstance(grown, Int8Vectors) and isinstance(grown_heap, Int8Vectors)
    assert grown.file is mapped.file  # appended to the same file
    _same(grown, grown_heap)
    _same(mapped, heap)  # the older index still reads its own rows
    # the older index appended to again: its rows are no longer the file's last ones
    other = mapped.appended(again)
    assert isinstance(other, Int8Vectors) and other.file is not mapped.file
    _same(other, Int8Vectors.of(np.concatenate([matrix, again])))
    _same(grown, grown_heap)
    keep = np.arange(0, 230, 2)
    followed, followed_heap = grown.followed(keep, again), grown_heap.followed(keep, again)
    assert isinstance(followed, Int8Vectors) and isinstance(followed_heap, Int8Vectors)
    assert followed.mapped and followed.file is not grown.file  # stacked into a new file
    _same(followed, followed_heap)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_cannot_be_made_leaves_the_rows_in_the_heap(tmp_path: Path) -> None:
    matrix = _rows(120)
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder", encoding="utf-8")
    rows = Int8Vectors.in_file(blocked / "vectors", _batches(matrix))
    assert not rows.mapped
    _same(rows, Int8Vectors.of(matrix))


def test_a_file_that_fills_up_leaves_the_rows_in_the_heap(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    matrix = _rows(150)
    written = RowFile.append
    calls = {"n": 0}

    def full(self: RowFile, codes: np.ndarray) -> None:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise OSError(28, "No space left on device")
        written(self, codes)

    monkeypatch.setattr(vector_file.RowFile, "append", full)
    rows = Int8Vectors.in_file(tmp_path, _batches(matrix))
    assert not rows.mapped  # the two batches written read back, the rest in the heap
    _same(rows, Int8Vectors.of(matrix))
    monkeypatch.setattr(vector_file.RowFile, "append", written)
    mapped = Int8Vectors.in_file(tmp_path, _batches(matrix))
    monkeypatch.setattr(vector_file.RowFile, "append", full)
    calls["n"] = 5
    grown = mapped.appended(_rows(9, seed=8))  # the save's rows cannot be written
    assert isinstance(grown, Int8Vectors) and not grown.mapped
    _same(grown, Int8Vectors.of(np.concatenate([matrix, _rows(9, seed=8)])))


def _damaged(good: bytes) -> dict[str, bytes]:
    """A saved partitions file cut or changed as a crash, a full disk or a bad sector leave
    it: empty (renamed before its bytes reached the disk), cut short at several places, one
    byte flipped in its data, text in its place."""
    return {"empty": b"", "first byte": good[:1], "half": good[: len(good) // 2],
            "last byte gone": good[:-1], "flipped": good[:300] + bytes([good[300] ^ 0xFF])
            + good[301:], "text": b"not a numpy file"}


def test_a_damaged_partitions_file_reads_as_none(tmp_path: Path) -> None:
    saved = vector_file.SavedPartitions(centroids=_rows(4), parts=np.arange(100) % 4,
                                        trained_rows=100, rows_key="rows")
    assert vector_file.save_partitions(tmp_path, saved)
    path = tmp_path / vector_file.PARTITIONS_FILE_NAME
    good = path.read_bytes()
    read = vector_file.load_partitions(tmp_path)
    assert read is not None and np.array_equal(read.parts, saved.parts)
    for name, data in _damaged(good).items():
        path.write_bytes(data)
        assert vector_file.load_partitions(tmp_path) is None, name


@pytest.mark.parametrize(("parts", "centroids"), [
    (np.arange(100) % 5, _rows(4)),  # a partition past the centroids
    (np.arange(100) % 4 - 2, _rows(4)),  # below -1
    (np.arange(100) % 4, np.full((4, 48), np.nan, dtype=np.float32)),
    (np.arange(100) % 4, np.vstack([_rows(3), np.full((1, 48), np.inf)]).astype(np.float32)),
])
def test_partitions_that_do_not_hold_together_read_as_none(
        tmp_path: Path, parts: np.ndarray, centroids: np.ndarray) -> None:
    # (a row of a partition no centroid has would never be probed: never found)
    assert vector_file.save_partitions(tmp_path, vector_file.SavedPartitions(
        centroids=centroids, parts=parts, trained_rows=100, rows_key="rows"))
    assert vector_file.load_partitions(tmp_path) is None


@pytest.mark.parametrize("arrays", [
    {"meta": np.zeros(0, dtype=np.int64)},
    {"meta": np.zeros((0, 2), dtype=np.int64)},
    {"centroids": _rows(4)[0]},
    {"centroids": _rows(4)[None]},
    {"centroids": np.asarray(["a", "b"])},
    {"parts": (np.arange(100) % 4).reshape(10, 10)},
])
def test_partitions_of_another_shape_read_as_none(tmp_path: Path,
                                                   arrays: dict[str, np.ndarray]) -> None:
    whole = {"centroids": _rows(4), "parts": np.arange(100) % 4,
             "meta": np.asarray([100, -1]), "rows_key": np.asarray("rows"),
             "model": np.asarray("model")}
    np.savez(tmp_path / vector_file.PARTITIONS_FILE_NAME, **{**whole, **arrays})
    assert vector_file.load_partitions(tmp_path) is None
