"""The user's embedding cache: vectors by chunk hash across vaults, bounded, forgettable, and
never in the way (a broken cache file only costs time)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
from fakes import TokenHashEmbedder

from daemon.app import App, load
from magma.chunking import chunk_hash
from magma.embedding_cache import ROW_OVERHEAD_BYTES, CachingEmbedder, EmbeddingCache

REPO = Path(__file__).resolve().parents[2]
DIMS = TokenHashEmbedder.dims


def _vector(seed: int) -> np.ndarray:
    row = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
    return row / np.linalg.norm(row)


def _cache(tmp_path: Path, rows: int = 1000) -> EmbeddingCache:
    return EmbeddingCache(tmp_path / "cache" / "m.sqlite", DIMS,
                          rows * (DIMS * 4 + ROW_OVERHEAD_BYTES))


def test_put_get_evict_round_trip(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    vectors = {f"h{i}": _vector(i) for i in range(5)}
    cache.put(vectors)
    got = cache.get(["h0", "h3", "absent"])
    assert set(got) == {"h0", "h3"}
    np.testing.assert_array_equal(got["h3"], vectors["h3"])
    assert cache.evict(["h3", "absent"]) == 1
    assert set(cache.get(vectors)) == {"h0", "h1", "h2", "h4"}
    reopened = _cache(tmp_path)  # another process: the same file
    assert set(reopened.get(vectors)) == {"h0", "h1", "h2", "h4"}
    assert reopened.stats()["rows"] == 4


def test_the_bound_evicts_the_least_recently_used(tmp_path: Path) -> None:
    cache = _cache(tmp_path, rows=10)
    cache.put({f"old{i}": _vector(i) for i in range(10)})
    with sqlite3.connect(cache.path) as db:  # make "old0" .. "old4" long unused
        db.execute("UPDATE vectors SET used = 1 WHERE hash < 'old5'")
    cache.put({"new": _vector(99)})
    held = set(cache.get([f"old{i}" for i in range(10)] + ["new"]))
    assert len(held) <= 9 and "new" in held
    assert {f"old{i}" for i in range(5, 10)} <= held


def test_a_damaged_file_turns_the_cache_off_and_nothing_raises(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "m.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"this is not a database" * 100)
    cache = EmbeddingCache(path, DIMS, 2**20)
    cache.put({"h": _vector(1)})
    assert cache.get(["h"]) == {} and cache.evict(["h"]) == 0
    assert not cache.enabled
    inner = TokenHashEmbedder()
    out = CachingEmbedder(inner, cache).embed(["a text"])
    np.testing.assert_array_equal(out, TokenHashEmbedder().embed(["a text"]))


def test_zero_bytes_is_off_and_writes_no_file(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache" / "m.sqlite", DIMS, 0)
    cache.put({"h": _vector(1)})
    assert not cache.enabled and not (tmp_path / "cache").exists()


def test_caching_embedder_embeds_each_text_once_in_input_order(tmp_path: Path) -> None:
    inner = TokenHashEmbedder()
    embedder = CachingEmbedder(inner, _cache(tmp_path))
    first = embedder.embed(["alpha beta", "gamma"])
    again = embedder.embed(["gamma", "delta", "alpha beta"])
    assert inner.calls == [2, 1]
    np.testing.assert_array_equal(again, TokenHashEmbedder().embed(["gamma", "delta",
                                                                      "alpha beta"]))
    np.testing.assert_array_equal(first[1], again[0])
    assert embedder.cache.get([chunk_hash("delta")])  # keyed by the chunk's own hash


def _app(vault: Path, data: Path, **overrides: object) -> tuple[App, TokenHashEmbedder]:
    fake = TokenHashEmbedder()
    app = App.create(load(None, None, {"vault.path": str(vault), "storage.data_dir": data,
                                       **overrides}), embedder=fake)
    return app, fake


def test_a_copied_vault_is_indexed_without_embedding_again(tmp_path: Path) -> None:
    first_vault, second_vault = tmp_path / "a", tmp_path / "b"
    shutil.copytree(REPO / "vault_example", first_vault, symlinks=True)
    shutil.copytree(REPO / "vault_example", second_vault, symlinks=True)
    first, first_fake = _app(first_vault, tmp_path / "data")
    report = first.sync()
    assert report.chunks_embedded > 0 and first_fake.embedded == report.chunks_embedded
    second, second_fake = _app(second_vault, tmp_path / "data")
    again = second.sync()
    # new to this vault's store, but the model was not asked: the report says so
    assert (again.chunks_embedded, again.chunks_cached) == (0, report.chunks_embedded)
    assert second_fake.embedded == 0
    hits = second.search("kiln", limit=3)
    assert [h.path for h in hits] == [h.path for h in first.search("kiln", limit=3)]


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    app, _ = _app(vault, tmp_path / "data", **{"embedding.cache_mb": 0})
    app.sync()
    assert not (tmp_path / "data" / "embedding-cache").exists()


def test_forget_takes_the_memory_out_of_the_cache(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    app, _ = _app(vault, tmp_path / "data")
    app.sync()
    service = app.memories()
    made = service.remember("The studio wifi is named zebracorn-quartz-7731.",
                            type="reference")
    hashes = set(app.store.chunk_hashes([made.path]).values())
    assert hashes and set(app.embedding_cache.get(hashes)) == hashes
    kept = set(app.store.chunk_hashes().values()) - hashes
    service.forget(made.memory_id)
    assert app.embedding_cache.get(hashes) == {}
    assert set(app.embedding_cache.get(kept)) == kept  # the rest of the vault stays cached
    folder = tmp_path / "data" / "embedding-cache"
    assert not any(b"zebracorn" in p.read_bytes() for p in folder.iterdir())  # never text
