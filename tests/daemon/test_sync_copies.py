"""Copies of a note (the same bytes at another path) in a large reconcile: each content is
parsed, searched for credentials and cut into chunks once, and the vectors of its chunks are
taken from memory (:mod:`daemon.sync_memo`), yet every copy is indexed as its own note.

A family of notes, English and Chinese, with and without frontmatter, memories with and
without an id, links that resolve by the folder they are written in, a hand-written
credential, a frontmatter that does not parse, an inline image, an entry file: each is
written in one folder, copied byte for byte under other folders, copied under another name
(another title), copied with another frontmatter, and copied into the memory folder (where
``<!--m:`` comments make an entry file). The vault is indexed twice into two stores: with
``sync.write_batch_files`` above its file count (every file read first, nothing remembered
across files) and with a small batch (read ahead, copies read together, contents
remembered). Both indexes must hold the same rows (the ids a new note draws at random left
out), and each copy's chunks must carry its own path, title and properties. The embedder is
the token-hash FAKE: these tests are about which rows are written, not about meaning.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_reads import index_rows

import magma.store
from ccb.model import FileEntry
from daemon.app import App
from daemon.sync_memo import _Kept, copies_together
from magma.store_memo import RecentVectors

Builder = Callable[..., tuple[App, Any]]
SMALL_BATCH = 5
FOLDERS = ("Projects", "Archive/2025", "Backup copy", "归档")
#: The user's embedding cache off: every chunk the index does not hold reaches the model.
NO_CACHE = {"embedding.cache_mb": 0}

NOTES: dict[str, str] = {
    "Kiln log.md": (
        "---\ntags: [pottery, kiln]\naliases: [Firing log]\n---\n# Kiln log\n\n"
        "The kiln reached cone six after nine hours. See [[Glaze recipes]] and "
        "[the schedule](Schedule.md).\n\n## Cooling\n\n"
        + "The kiln cooled slowly overnight with the damper half open. " * 40
        + "\n\n## Results\n\nThe celadon crazed on the north shelf.\n"),
    "Glaze recipes.md": (
        "# Glaze recipes\n\nCeladon: 40 feldspar, 30 silica, 20 whiting, 10 kaolin.\n\n"
        "Back to [[Kiln log#Cooling]].\n"),
    "Schedule.md": "Monday: bisque. Thursday: glaze firing.\n",
    "窑炉记录.md": (
        "---\n标签: 陶艺\n---\n# 窑炉记录\n\n窑温在九小时后达到六号测温锥。参见[[釉料配方]]。\n\n"
        "## 冷却\n\n" + "窑炉在夜里缓慢冷却，风门半开。" * 60 + "\n"),
    "釉料配方.md": "# 釉料配方\n\n青瓷：长石四十，石英三十，石灰石二十，高岭土十。\n",
    "Tea preference.md": (
        "---\ntype: user\nname: Tea preference\ndescription: What the user drinks\n---\n"
        "Drinks oolong tea every afternoon, never after six.\n"),
    "Studio address.md": (
        "---\ntype: reference\nid: 01JTESTSTUDIOADDRESS0000001\n"
        "description: Where the studio is\n---\nThe studio is at 12 Clay Lane.\n"),
    "Staging server.md": (
        "# Staging server\n\nThe staging server is staging.example.org, user deploy.\n\n"
        "password: S3cr3t-Passw0rd-xyz\n"),
    "Broken frontmatter.md": "---\ntags: [unclosed\n---\nThe body is still indexed.\n",
    "Clipped page.md": (
        "# Clipped page\n\n![chart](data:image/png;base64," + "iVBORw0KGgo" * 300
        + ")\n\nThe chart shows sales by month.\n"),
    "Facts.md": (
        "# Facts\n\n- Prefers the kiln at cone six <!--m:subj=kiln.cone-->\n"
        "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"),
    "Empty.md": "",
    "Only properties.md": "---\ntags: [idea]\nstatus: draft\n---\n",
}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _vault(root: Path) -> Path:
    """The family of notes in :data:`FOLDERS` (byte for byte), each also under another name,
    with another frontmatter, and in the memory folder; one mtime for all (two vaults
    built so are the same to a stat walk)."""
    for folder in FOLDERS:
        for name, text in NOTES.items():
            _write(root / folder / name, text)
    for name, text in NOTES.items():
        stem = name[:-3]
        _write(root / "Renamed" / f"{stem} (copy).md", text)
        _write(root / "Other frontmatter" / name, "---\ntags: [elsewhere]\nstatus: copied\n---\n"
               + text.split("\n---\n", 1)[-1])
        _write(root / "Memory" / name, text)
    for path in root.rglob("*.md"):
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return root


def _rows(app: App) -> dict[str, Any]:
    return index_rows(app.store, app.state_dir)


@pytest.fixture
def indexed(tmp_path: Path, make_app: Builder) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The family's vault indexed reading every file first, and reading ahead: their rows,
    and the reading-ahead run's report and fake embedder."""
    first = _vault(tmp_path / "first")
    ahead = _vault(tmp_path / "ahead")
    files = sum(1 for _ in first.rglob("*.md"))
    one, _ = make_app(first, **{"sync.write_batch_files": 10 * files, **NO_CACHE})
    batched, fake = make_app(ahead, **{"sync.write_batch_files": SMALL_BATCH, **NO_CACHE})
    one.sync()
    report = batched.sync()
    rows = (_rows(one), _rows(batched))
    one.close()
    batched.close()
    return rows[0], rows[1], (report, fake)


def test_copies_read_together_index_as_every_file_read_alone(indexed: Any) -> None:
    alone, together, (report, fake) = indexed
    assert alone == together
    chunks = together["chunks"]
    distinct = {row["content_hash"] for row in chunks}
    # each distinct chunk text reached the model once, the copies' came from memory
    assert report.chunks_embedded == fake.embedded == len(distinct) < len(chunks)


def test_each_copy_keeps_its_own_path_title_properties_and_links(indexed: Any) -> None:
    _alone, rows, _ = indexed
    chunks: dict[str, list[dict[str, Any]]] = {}
    for row in rows["chunks"]:
        chunks.setdefault(row["path"], []).append(row)
    for path, own in chunks.items():
        assert [row["chunk_id"] for row in own] == [f"{path}#{n}" for n in range(len(own))]
    kiln = {folder: chunks[f"{folder}/Kiln log.md"] for folder in FOLDERS}
    hashes = {folder: [row["content_hash"] for row in own] for folder, own in kiln.items()}
    assert len({tuple(h) for h in hashes.values()}) == 1  # same bytes, same name: same chunks
    renamed = chunks["Renamed/Kiln log (copy).md"]
    assert all(row["text"].startswith("Kiln log (copy)") for row in renamed)
    assert {row["content_hash"] for row in renamed}.isdisjoint(hashes["Projects"])
    other = chunks["Other frontmatter/Kiln log.md"]
    assert "status: copied" in other[0]["text"]
    assert "status: copied" not in kiln["Projects"][0]["text"]
    # the memory folder makes the same bytes an entry file: its lines are memories
    assert [row["body"] for row in chunks["Memory/Facts.md"]] == [""]
    assert any(path.startswith("Memory/Facts.md#") for path in chunks)
    assert len(chunks["Projects/Facts.md"][0]["body"]) > 0
    # a link resolves from the folder it is written in
    links = {(row["src"], row["target"]): row["resolved"] for row in rows["links"]}
    for folder in FOLDERS:
        assert links[(f"{folder}/Kiln log.md", "Schedule.md")] == f"{folder}/Schedule.md"
    # the withheld credential of each copy is recorded at its own path
    withheld = set(rows["credentials"])  # (by path)
    assert {f"{folder}/Staging server.md" for folder in FOLDERS} <= withheld
    assert all("S3cr3t" not in row["text"] for row in rows["chunks"])
    # a frontmatter that does not parse is a problem of each copy, named by its path
    files = {row["path"]: row for row in rows["files"]}
    for folder in FOLDERS:
        assert folder + "/Broken frontmatter.md" in files[
            f"{folder}/Broken frontmatter.md"]["problems_json"]


def test_a_cold_index_reads_no_vector_back(tmp_path: Path, make_app: Builder,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    app, fake = make_app(_vault(tmp_path / "vault"),
                         **{"sync.write_batch_files": SMALL_BATCH, **NO_CACHE})
    asked: list[int] = []
    read = magma.store._stored_vectors

    def counted(*args: Any) -> Any:
        asked.append(len(args[1]))
        return read(*args)

    monkeypatch.setattr(magma.store, "_stored_vectors", counted)
    report = app.sync()
    assert report.chunks_reused > 0 and report.chunks_embedded == fake.embedded > 0
    assert asked == []
    app.close()


def test_copies_together_keeps_path_order_when_no_two_files_share_name_and_size() -> None:
    def entry(path: str, size: int) -> FileEntry:
        return FileEntry(path, size, 0, "note")

    plain = [entry("a/one.md", 10), entry("a/two.md", 10), entry("b/one.md", 11),
             entry("笔记/一.md", 10)]
    assert copies_together(plain) == plain
    mixed = [entry("a/one.md", 10), entry("a/two.md", 20), entry("b/one.md", 10),
             entry("b/two.md", 21), entry("c/two.md", 20)]
    assert [e.path for e in copies_together(mixed)] == [
        "a/one.md", "b/one.md", "a/two.md", "c/two.md", "b/two.md"]


def test_a_widened_recent_vectors_keeps_more_while_it_runs_and_names_what_was_added() -> None:
    recent = RecentVectors(size=2)
    vectors = np.arange(12, dtype=np.float32).reshape(6, 2)
    recent.add(["a", "b", "c"], vectors[:3])
    assert recent.split(["a", "b", "c"])[1] == ["a"]  # the last two kept
    with recent.widened(4) as added, recent.widened(3) as inner:
        recent.add(["d", "e", "f"], vectors[3:])
        found, missing = recent.split(["c", "d", "e", "f"])  # four kept
        assert missing == [] and found["f"].tolist() == [10.0, 11.0]
        assert added == inner == {"d", "e", "f"}
    assert recent.size == 2 and recent.split(["e", "f"])[1] == []
    assert recent.split(["d"])[1] == ["d"]
    vectors[5] = 0.0  # the caller's array is not what is kept
    assert recent.split(["f"])[0]["f"].tolist() == [10.0, 11.0]


def test_the_memory_of_a_run_is_bounded_by_count_and_weight() -> None:
    kept = _Kept(3, size=10)
    for n in range(5):
        kept.put(n, f"value {n}", weight=2)
    assert [kept.get(n) for n in range(5)] == [None, None, "value 2", "value 3", "value 4"]
    kept.put("big", "big", weight=9)  # the others let go to make room
    assert kept.get("big") == "big" and kept.get(4) is None
