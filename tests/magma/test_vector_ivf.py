"""``magma.vector_ivf``: the IVF over the in-memory int8 rows, on real vectors of the product's
model (paragraphs of the English and Chinese Obsidian help, ``../shared/corpora``): a batch
answers what one call per vector answers, every partition probed is the exact scan of the
rows, rows appended and left follow, and the partitions saved beside the codes serve a
restart without training again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magma import vector_ivf
from magma.embedder import UniversalSentenceEncoder
from magma.ivf_keeper import IvfWork, rows_key, saved_partitions
from magma.vector_file import (
    PARTITIONS_FILE_NAME,
    SavedPartitions,
    load_partitions,
    save_partitions,
)
from magma.vector_index import Int8Vectors
from magma.vector_ivf import (
    RowPartitions,
    assign_rows,
    followed,
    nearest_rows,
    train_centroids,
    trained,
)

#: Paragraphs taken from each language's notes (path order).
PARAGRAPHS = 260


def _paragraphs(folder: Path, count: int) -> list[str]:
    found: list[str] = []
    for note in sorted(folder.rglob("*.md")):
        for block in note.read_text("utf-8").split("\n\n"):
            text = block.strip()
            if len(text) > 40 and not text.startswith(("---", "![", "```")):
                found.append(text[:400])
                if len(found) == count:
                    return found
    return found


@pytest.fixture(scope="module")
def real(corpora_dir: Path) -> tuple[Int8Vectors, np.ndarray]:
    """The int8 rows of ~520 real paragraphs (English then Chinese) and 24 real queries."""
    model = UniversalSentenceEncoder(threads=2)
    help_dir = corpora_dir / "obsidian-help"
    texts = _paragraphs(help_dir / "en", PARAGRAPHS) + _paragraphs(help_dir / "zh", PARAGRAPHS)
    rows = np.asarray(model.embed(texts), dtype=np.float32)
    queries = np.asarray(model.embed([
        "how do I link to a heading in another note", "sync my vault between devices",
        "keyboard shortcut for the command palette", "embed an image in a note",
        "create a new note from a template", "search for a tag", "graph view filters",
        "daily notes folder", "publish my notes on a website", "canvas cards",
        "install a community plugin", "change the theme", "如何链接到另一个笔记的标题",
        "在设备之间同步库", "命令面板的快捷键", "在笔记中嵌入图片", "从模板创建新笔记",
        "搜索标签", "关系图谱视图", "日记文件夹", "发布笔记到网站", "白板卡片",
        "安装第三方插件", "更换主题"]), dtype=np.float32)
    return Int8Vectors.of(rows), queries


def _ivf(rows: Int8Vectors, partitions: int = 24) -> RowPartitions:
    sample = rows.rows(np.arange(len(rows)))
    centroids = train_centroids(sample, partitions)
    return RowPartitions.of(centroids, assign_rows(rows, centroids), len(rows))


def _scan(rows: Int8Vectors, query: np.ndarray, limit: int,
          allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The exact int8 scan, best first, equal cosines in row order."""
    sims = rows.scores(query)
    index = np.arange(len(rows)) if allowed is None else np.flatnonzero(allowed)
    order = index[np.argsort(-sims[index], kind="stable")][:limit]
    return order, sims[order]


def _same_rows(found: np.ndarray, want: np.ndarray, sims: np.ndarray, limit: int) -> None:
    """``found`` (cosines ``sims``, best first) holds ``want``'s rows in its order but where
    two cosines are within a float32 rounding (1e-6) of each other, or of the cut at
    ``limit`` rows: a matrix product of several queries rounds otherwise than of one."""
    assert len(found) == len(want)
    clear = np.ones(len(sims), dtype=bool)
    clear[:-1] &= np.diff(sims) < -1e-6
    clear[1:] &= np.diff(sims) < -1e-6
    if len(found) == limit:
        clear &= sims > sims[-1] + 1e-6
    assert np.array_equal(found[clear], want[clear])


def test_the_centroids_are_unit_rows_and_each_row_goes_to_its_nearest(
        real: tuple[Int8Vectors, np.ndarray]) -> None:
    rows, _ = real
    ivf = _ivf(rows)
    assert ivf.centroids.shape == (24, rows.codes.shape[1])
    assert np.allclose(np.linalg.norm(ivf.centroids, axis=1), 1.0, atol=1e-5)
    best = np.argmax(rows.rows(np.arange(len(rows))) @ ivf.centroids.T, axis=1)
    assert (ivf.parts == best).all()
    assert sorted(ivf.order.tolist()) == list(range(len(rows)))
    # the same seed, the same centroids
    again = train_centroids(rows.rows(np.arange(len(rows))), 24)
    assert np.array_equal(again, ivf.centroids)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.integers(0, 23), min_size=1, max_size=6),
       share=st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.0]), limit=st.integers(1, 80),
       partitions=st.sampled_from([16, 24, 40]))
def test_a_batch_answers_what_one_call_per_vector_answers(
        real: tuple[Int8Vectors, np.ndarray], picked: list[int], share: float, limit: int,
        partitions: int) -> None:
    rows, queries = real
    ivf = _ivf(rows, partitions)
    batch = queries[picked]
    together = nearest_rows(ivf, rows, batch, limit, share)
    for query, (found, sims) in zip(batch, together, strict=True):
        alone, alone_sims = nearest_rows(ivf, rows, query[None, :], limit, share)[0]
        # one matrix product for the batch: the same cosines to a float32 rounding, so the
        # same rows but where two cosines are that close (at the cut, or in their order)
        assert np.allclose(sims, alone_sims, atol=1e-6)
        _same_rows(found, alone, sims, limit)
        assert len(found) <= limit and (np.diff(sims) <= 0).all()


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.integers(0, 23), min_size=1, max_size=4), limit=st.integers(1, 120),
       allow=st.none() | st.integers(0, 2**32 - 1))
def test_every_partition_probed_is_the_exact_scan(
        real: tuple[Int8Vectors, np.ndarray], picked: list[int], limit: int,
        allow: int | None) -> None:
    rows, queries = real
    ivf = _ivf(rows)
    allowed = None if allow is None else \
        np.random.default_rng(allow).random(len(rows)) < 0.3
    for query, (found, sims) in zip(queries[picked],
                                    nearest_rows(ivf, rows, queries[picked], limit, 1.0,
                                                 allowed), strict=True):
        want, want_sims = _scan(rows, query, limit, allowed)
        assert np.allclose(sims, want_sims, atol=1e-6)
        _same_rows(found, want, sims, limit)


def test_a_small_share_keeps_most_of_the_exact_top_ten(
        real: tuple[Int8Vectors, np.ndarray]) -> None:
    rows, queries = real
    ivf = _ivf(rows, 40)
    shares = []
    for query, (found, _) in zip(queries, nearest_rows(ivf, rows, queries, 10, 0.5),
                                 strict=True):
        want, _ = _scan(rows, query, 10)
        shares.append(len(set(found.tolist()) & set(want.tolist())) / 10)
    assert np.mean(shares) >= 0.9


def test_rows_appended_are_found_and_rows_left_never(
        real: tuple[Int8Vectors, np.ndarray]) -> None:
    rows, queries = real
    ivf = _ivf(rows)
    # the first query's best row is written again (a note saved: its old row left, a new
    # one appended with the same vector)
    best = int(nearest_rows(ivf, rows, queries[:1], 1, 1.0)[0][0][0])
    grown = Int8Vectors(codes=np.concatenate([rows.codes, rows.codes[[best]]]),
                        scales=np.concatenate([rows.scales, rows.scales[[best]]]))
    after = followed(ivf, grown, len(rows), np.asarray([best]))
    assert after is not None and len(after) == len(rows) + 1
    assert after.parts[best] == -1 and after.parts[-1] == ivf.parts[best]
    for share in (0.05, 1.0):
        found, _ = nearest_rows(after, grown, queries[:1], 5, share)[0]
        assert found[0] == len(rows) and best not in found.tolist()
    # stacked again: every row assigned again, none left
    again = followed(ivf, rows)
    assert again is not None and (again.parts == ivf.parts).all()


def test_rows_grown_past_twice_the_trained_ones_train_again(
        real: tuple[Int8Vectors, np.ndarray]) -> None:
    rows, _ = real
    half = Int8Vectors(codes=rows.codes[: len(rows) // 3], scales=rows.scales[: len(rows) // 3])
    ivf = trained(half)
    assert ivf.trained_rows == len(half)
    assert followed(ivf, rows) is None  # three times the rows: trained again by the caller


def test_saved_partitions_serve_a_restart_without_training(
        real: tuple[Int8Vectors, np.ndarray], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows, queries = real
    hashes = [f"{row:032x}" for row in range(len(rows))]  # (the rows' content hashes)
    first = trained(rows)
    assert save_partitions(tmp_path, SavedPartitions(
        centroids=first.centroids, parts=first.parts, trained_rows=first.trained_rows,
        rows_key=rows_key(hashes), model="use"))
    saved = load_partitions(tmp_path)
    assert saved is not None and (saved.rows_key, saved.model) == (rows_key(hashes), "use")
    assert np.array_equal(saved.parts, first.parts)

    def no_training(*_: object, **__: object) -> None:
        raise AssertionError("trained again")

    monkeypatch.setattr(vector_ivf, "trained", no_training)
    monkeypatch.setattr(vector_ivf, "train_centroids", no_training)
    same = saved_partitions(rows, tmp_path, hashes, "use")
    assert isinstance(same, RowPartitions)
    assert np.array_equal(same.parts, first.parts)
    assert np.array_equal(same.centroids, first.centroids)
    # as many rows in another order (a store indexed again): its centroids, not its rows
    reordered = saved_partitions(rows, tmp_path, [*hashes[1:], hashes[0]], "use")
    assert isinstance(reordered, IvfWork) and reordered.centroids is not None
    # other rows: the saved centroids, every row to be assigned again
    fewer = Int8Vectors(codes=rows.codes[1:], scales=rows.scales[1:])
    work = saved_partitions(fewer, tmp_path, hashes[1:], "use")
    assert isinstance(work, IvfWork) and work.centroids is not None
    assert np.array_equal(work.centroids, first.centroids)
    moved = RowPartitions.of(work.centroids, assign_rows(fewer, work.centroids),
                             work.trained_rows)
    assert np.array_equal(moved.parts, first.parts[1:])
    assert nearest_rows(moved, fewer, queries[:2], 5, 1.0)[1][0].tolist() == \
        _scan(fewer, queries[1], 5)[0].tolist()
    # the same rows of another model: its centroids would group them by chance
    assert saved_partitions(rows, tmp_path, hashes, "other model") == IvfWork()
    # a file saved before the rows and the model were: its centroids serve, not its rows
    np.savez(tmp_path / PARTITIONS_FILE_NAME, centroids=first.centroids, parts=first.parts,
             meta=np.asarray([first.trained_rows, 7]))
    old = saved_partitions(rows, tmp_path, hashes, "use")
    assert isinstance(old, IvfWork) and old.centroids is not None
    assert old.trained_rows == first.trained_rows


def test_a_damaged_file_is_trained_again(real: tuple[Int8Vectors, np.ndarray],
                                         tmp_path: Path) -> None:
    rows, _ = real
    (tmp_path / PARTITIONS_FILE_NAME).write_bytes(b"not a numpy file")
    assert load_partitions(tmp_path) is None
    assert saved_partitions(rows, tmp_path, [], "use") == IvfWork()
