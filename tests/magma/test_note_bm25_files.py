"""The note-level BM25 index saved in a folder and read back memory-mapped
(:mod:`magma.note_bm25_files`): a start that finds the index of the same notes reads it
instead of building it, a changed vault is built from the saved chunk tokens (only the new
chunks read), a forget empties the folder, and a damaged file is logged and built again.
Real files in ``tmp_path``; the chunk bodies come from a dict (the store is not the subject:
``tests/daemon/test_note_index_saved.py`` runs the same with LanceDB)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection, Mapping
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from magma.note_bm25 import NoteBm25, NoteBm25Builder, NoteSpec, spec_fingerprint
from magma.note_bm25_files import ABANDONED_AFTER_S, NoteBm25Files

BODIES = {"h1": "sourdough starter feeding schedule", "h2": "rye loaf with caraway",
          "h3": "kiln firing of stoneware", "h4": "续签护照 at the consulate"}
NOTES: NoteSpec = {"bread.md": ("Bread", ["h1", "h2"]), "pottery.md": ("Pottery", ["h3"]),
                   "passport.md": ("Passport 护照", ["h4"])}


class Reads:
    """The chunk bodies of ``BODIES``, counting which were asked for."""

    def __init__(self, bodies: Mapping[str, str] = BODIES) -> None:
        self.bodies = dict(bodies)
        self.asked: list[set[str]] = []

    def __call__(self, hashes: Collection[str] | None) -> dict[str, str]:
        wanted = set(self.bodies) if hashes is None else set(hashes)
        self.asked.append(wanted)
        return {h: b for h, b in self.bodies.items() if h in wanted}


def built(folder: Path, notes: NoteSpec, reads: Reads | None = None) -> NoteBm25:
    """The index a process starting on ``folder`` serves for ``notes``."""
    builder = NoteBm25Builder(reads or Reads(), NoteBm25Files(folder))
    try:
        index = builder._build(lambda: notes, builder.generation())
        assert index is not None
        return index
    finally:
        builder.close()


def top(index: NoteBm25, query: str) -> list[str]:
    return [p for p, _ in index.top(query, 5, lambda _: True)]


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_a_second_start_reads_the_saved_index_instead_of_building_it(tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    first = built(folder, NOTES)
    assert top(first, "caraway starter") == ["bread.md"]
    saved = list(folder.glob("index-*"))
    assert [p.name for p in saved] == [f"index-{spec_fingerprint(NOTES)}"]
    reads = Reads()
    with capture_logs() as logs:
        second = built(folder, NOTES, reads)
    assert reads.asked == []  # not one chunk read: the saved index serves
    assert {"event": "search.note_bm25_loaded", "notes": 3, "same": True,
            "log_level": "info"} in logs
    assert isinstance(second._index.scores["data"], np.memmap)  # type: ignore[union-attr]
    for query in ("caraway starter", "stoneware", "护照", "consulate passport"):
        assert first.top(query, 5, lambda _: True) == second.top(query, 5, lambda _: True)


def test_a_changed_vault_reads_only_its_new_chunks_and_replaces_the_saved_index(
        tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    bodies = {**BODIES, "h5": "glaze recipes: celadon and tenmoku"}
    reads = Reads(bodies)
    changed: NoteSpec = {**NOTES, "pottery.md": ("Pottery", ["h3", "h5"])}
    index = built(folder, changed, reads)
    assert reads.asked == [{"h5"}]  # the other chunks' tokens came from the saved files
    assert top(index, "tenmoku stoneware") == ["pottery.md"]
    assert [p.name for p in folder.glob("index-*")] == [f"index-{spec_fingerprint(changed)}"]
    # a note deleted: its words leave the disk with the next index saved
    gone: NoteSpec = {p: v for p, v in changed.items() if p != "passport.md"}
    assert b"consulate" in every_byte(folder)
    assert "护照".encode() in every_byte(folder)
    index = built(folder, gone, Reads(bodies))
    assert top(index, "consulate") == []
    assert b"consulate" not in every_byte(folder)
    assert "护照".encode() not in every_byte(folder)
    assert top(built(folder, gone, Reads({})), "tenmoku") == ["pottery.md"]


def test_a_forget_empties_the_folder_and_an_older_snapshot_is_not_saved(
        tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    files = NoteBm25Files(folder)
    built(folder, NOTES)
    assert b"caraway" in every_byte(folder)
    before = files.generation()
    files.discard()
    assert b"caraway" not in every_byte(folder) and files.generation() == before + 1
    # a build of a snapshot read before the forget serves, but is not saved
    builder = NoteBm25Builder(Reads(), files)
    try:
        stale = builder._build(lambda: NOTES, before)
        assert stale is not None and top(stale, "caraway") == ["bread.md"]
    finally:
        builder.close()
    assert b"caraway" not in every_byte(folder)
    assert list(folder.glob("index-*")) == []
    # a forget before any index was saved still counts: a build under way does not save
    fresh = NoteBm25Files(tmp_path / "other")
    fresh.discard()
    assert fresh.generation() == 1


@pytest.mark.parametrize("damage", [
    "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy",
    "vocab.index.json", "params.index.json", "notes.json", "manifest.json",
    "chunks-*.npy", "tokens-*.npy"])
def test_a_truncated_saved_file_is_logged_and_the_index_built_again(
        tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    (saved,) = folder.glob("index-*")
    damaged = next(saved.glob(damage))
    data = damaged.read_bytes()
    damaged.write_bytes(data[: len(data) // 2])
    reads = Reads()
    with capture_logs() as logs:
        index = built(folder, NOTES, reads)
    assert [e for e in logs if e["event"] == "search.note_bm25_unreadable"]
    assert reads.asked  # built again, from the bodies
    assert top(index, "caraway starter") == ["bread.md"]
    assert top(built(folder, NOTES, Reads({})), "kiln") == ["pottery.md"]  # saved anew


def test_a_save_cut_short_by_a_crash_leaves_nothing_at_the_next_start(tmp_path: Path) -> None:
    import os

    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    (saved,) = folder.glob("index-*")
    crashed = folder / ".saving-crashed"
    shutil.copytree(saved, crashed)
    (crashed / "manifest.json").unlink()  # cut short before its manifest
    under_way = folder / ".saving-under-way"  # another process's save, just begun
    under_way.mkdir()
    old = crashed.stat().st_mtime - 2 * ABANDONED_AFTER_S
    os.utime(crashed, (old, old))
    assert top(built(folder, NOTES, Reads({})), "kiln") == ["pottery.md"]
    assert not crashed.exists() and under_way.exists()


def test_a_saved_index_whose_manifest_lies_is_built_again(tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    (saved,) = folder.glob("index-*")
    manifest = json.loads((saved / "manifest.json").read_text(encoding="utf-8"))
    (saved / "manifest.json").write_text(json.dumps({**manifest, "notes": 2}),
                                         encoding="utf-8")
    next(saved.glob("tokens-*.npy")).unlink()
    with capture_logs() as logs:
        index = built(folder, NOTES)
    assert [e for e in logs if e["event"] == "search.note_bm25_unreadable"]
    assert top(index, "stoneware") == ["pottery.md"]


def overwrite(path: Path, value: int) -> None:
    """Every value of the saved array at ``path`` set to ``value``, in place (same size)."""
    array = np.load(path, mmap_mode="r+")
    array[:] = value
    array.flush()
    del array


def test_saved_scores_damaged_in_place_answer_nothing_then_are_built_again(
        tmp_path: Path) -> None:
    """Values no size check sees (indices of documents that do not exist): the search that
    meets them answers nothing from this list, logs it, and the index is built again."""
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    (saved,) = folder.glob("index-*")
    overwrite(saved / "indices.csc.index.npy", 10**6)
    reads = Reads()
    builder = NoteBm25Builder(reads, NoteBm25Files(folder))
    try:
        damaged = builder.index_for("v1", lambda: NOTES, 10)
        assert reads.asked == []  # read back, sizes right
        with capture_logs() as logs:
            assert damaged.top("caraway", 5, lambda _: True) == []
        assert [e for e in logs if e["event"] == "search.note_bm25_unreadable"]
        assert not saved.exists()  # never read again
        again = builder.index_for("v1", lambda: NOTES, 10)
        assert reads.asked and top(again, "caraway") == ["bread.md"]
    finally:
        builder.close()
    assert top(built(folder, NOTES, Reads({})), "kiln") == ["pottery.md"]  # saved anew


def test_saved_chunk_tokens_damaged_in_place_fail_one_build_then_are_built_again(
        tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    (saved,) = folder.glob("index-*")
    overwrite(next(saved.glob("tokens-*.npy")), 10**6)  # ids of no token
    changed: NoteSpec = {**NOTES, "pottery.md": ("Kilns", ["h3"])}  # a rebuild seeded by them
    builder = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        with capture_logs() as logs:
            assert builder._build(lambda: changed) is None
        assert [e for e in logs if e["event"] == "search.note_bm25_failed"]
        assert not saved.exists()
        again = builder._build(lambda: changed)
        assert again is not None and top(again, "kilns") == ["pottery.md"]
        assert top(again, "caraway") == ["bread.md"]
    finally:
        builder.close()


def test_the_index_of_a_snapshot_the_store_has_moved_past_is_not_saved(tmp_path: Path) -> None:
    """A search holding a snapshot read before a forget asks for its index after it: the
    index serves that search, but is not saved (it may hold the forgotten note)."""
    folder = tmp_path / "note-bm25"
    builder = NoteBm25Builder(Reads(), NoteBm25Files(folder), current=lambda: "v2")
    try:
        stale = builder.index_for("v1", lambda: NOTES, 10)
        assert top(stale, "caraway") == ["bread.md"]
        assert list(folder.glob("index-*")) == []
        fresh = builder.index_for("v2", lambda: NOTES, 10, fresh=True)
        assert top(fresh, "caraway") == ["bread.md"]
        assert len(list(folder.glob("index-*"))) == 1
    finally:
        builder.close()


def test_an_index_that_cannot_be_saved_serves_from_the_heap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    files = NoteBm25Files(tmp_path / "note-bm25")
    monkeypatch.setattr(files, "save", refuse)
    builder = NoteBm25Builder(Reads(), files)
    try:
        with capture_logs() as logs:
            index = builder._build(lambda: NOTES)
        assert index is not None and top(index, "kiln") == ["pottery.md"]
        assert [e for e in logs if e["event"] == "search.note_bm25_not_saved"]
    finally:
        builder.close()


def test_a_forget_that_cannot_empty_the_folder_fails_naming_it(tmp_path: Path) -> None:
    from config.errors import StoreError

    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StoreError, match="saved note index"):
        NoteBm25Files(blocked / "note-bm25").discard()


def stats(folder: Path) -> dict[str, tuple[int, int]]:
    """``{file name: (inode, mtime ns)}`` of every file of the indexes saved in ``folder``."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("index-*/*")}


def test_a_rebuild_soon_after_a_save_writes_nothing_and_the_stop_saves_it_linking_tokens(
        tmp_path: Path) -> None:
    """Within SAVE_GAP_S of a save, rebuilds serve from the heap and leave the saved folder
    as it is (no file written, none replaced); the stop saves the newest, the chunk token
    files that did not change linked from the index saved before, not written again."""
    folder = tmp_path / "note-bm25"
    builder = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        builder._build(lambda: NOTES)
        first = stats(folder)
        assert any(name.startswith("tokens-") for name in first)
        for n in (1, 2):  # two rebuilds after edits, one soon after the other
            edited: NoteSpec = {**NOTES, "pottery.md": (f"Kilns {n}", ["h3"])}
            index = builder._build(lambda e=edited: e)  # type: ignore[misc]
            assert index is not None and top(index, f"kilns {n}") == ["pottery.md"]
            assert stats(folder) == first
    finally:
        builder.close()
    (saved,) = folder.glob("index-*")
    assert saved.name == f"index-{spec_fingerprint(edited)}"
    after = stats(folder)
    tokens = [name for name in after if name.startswith(("tokens-", "chunks-"))]
    assert tokens and all(after[name][0] == first[name][0] for name in tokens)  # linked
    assert after["data.csc.index.npy"] != first["data.csc.index.npy"]  # written anew
    assert top(built(folder, edited, Reads({})), "kilns 2") == ["pottery.md"]  # read back


def test_an_index_held_is_saved_once_the_gap_passed_and_served_mapped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from magma import note_bm25

    monkeypatch.setattr(note_bm25, "SAVE_GAP_S", 0.5)
    folder = tmp_path / "note-bm25"
    edited: NoteSpec = {**NOTES, "pottery.md": ("Kilns", ["h3"])}
    builder = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        builder.index_for("v1", lambda: NOTES, 10)
        held = builder.index_for("v2", lambda: edited, 10, fresh=True)
        assert held._index is not None and held._broken is None  # from the heap
        deadline = time.monotonic() + 20
        while not (folder / f"index-{spec_fingerprint(edited)}").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.2)
        served = builder.index_for("v2", lambda: edited, 10)
        assert served._broken is not None  # the saved one, mapped
        assert top(served, "kilns") == ["pottery.md"]
        assert len(list(folder.glob("index-*"))) == 1
    finally:
        builder.close()


def test_a_forget_while_an_index_is_held_leaves_nothing_for_the_stop_to_save(
        tmp_path: Path) -> None:
    folder = tmp_path / "note-bm25"
    files = NoteBm25Files(folder)
    builder = NoteBm25Builder(Reads(), files)
    try:
        builder._build(lambda: NOTES, files.generation())
        held = builder._build(lambda: {**NOTES, "pottery.md": ("Kilns", ["h3"])},
                              files.generation())
        assert held is not None and top(held, "caraway") == ["bread.md"]
        files.discard()
    finally:
        builder.close()
    assert list(folder.glob("index-*")) == []
    assert b"caraway" not in every_byte(folder)


def test_the_stop_does_not_save_when_the_last_save_took_too_long(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from magma import note_bm25

    folder = tmp_path / "note-bm25"
    builder = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        builder._build(lambda: NOTES)
        took = NoteBm25Files(folder).save_seconds()
        assert took is not None and took >= 0
        monkeypatch.setattr(note_bm25, "STOP_SAVE_MAX_S", took - 1)
        builder._build(lambda: {**NOTES, "pottery.md": ("Kilns", ["h3"])})
        first = stats(folder)
        with capture_logs() as logs:
            builder.close()
    finally:
        builder.close()
    assert [e for e in logs if e["event"] == "search.note_bm25_not_saved"]
    assert stats(folder) == first
    assert top(built(folder, NOTES, Reads({})), "caraway") == ["bread.md"]  # still read back


def test_a_file_system_without_hard_links_writes_the_token_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from magma import note_bm25

    def refuse(*args: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(note_bm25, "SAVE_GAP_S", 0.0)  # every build saved
    folder = tmp_path / "note-bm25"
    built(folder, NOTES)
    first = stats(folder)
    monkeypatch.setattr(os, "link", refuse)
    edited: NoteSpec = {**NOTES, "pottery.md": ("Kilns", ["h3"])}
    assert top(built(folder, edited, Reads({})), "kilns") == ["pottery.md"]
    after = stats(folder)
    tokens = [name for name in after if name.startswith(("tokens-", "chunks-"))]
    assert tokens and all(after[name][0] != first[name][0] for name in tokens)  # written
    assert top(built(folder, edited, Reads({})), "caraway") == ["bread.md"]  # read back


def test_a_start_that_finds_the_saved_index_stale_saves_its_rebuild_at_once(
        tmp_path: Path) -> None:
    """A start after an edit rebuilds the index: saved at once and served mapped, even
    within SAVE_GAP_S of the last save (else the rebuilt score matrix and lexicon stay in
    the heap for up to half an hour); the next rebuild of that process waits for the gap."""
    folder = tmp_path / "note-bm25"
    first = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        first._build(lambda: NOTES)  # the last process's save, moments ago
    finally:
        first.close()
    edited: NoteSpec = {**NOTES, "pottery.md": ("Kilns", ["h3"])}
    again: NoteSpec = {**NOTES, "pottery.md": ("Kilns again", ["h3"])}
    start = NoteBm25Builder(Reads(), NoteBm25Files(folder))
    try:
        served = start._build(lambda: edited)
        assert served is not None and served._broken is not None  # mapped, not the heap
        assert top(served, "kilns") == ["pottery.md"]
        assert [p.name for p in folder.glob("index-*")] == [
            f"index-{spec_fingerprint(edited)}"]
        saved = stats(folder)
        held = start._build(lambda: again)
        assert held is not None and held._broken is None  # from the heap, saved later
        assert stats(folder) == saved
    finally:
        start.close(save=False)


def test_a_save_that_fails_is_tried_again_after_the_gap_not_at_every_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk or a read-only data folder: the index serves from the heap, and the next
    builds (each edit) do not write it again (≈400 MB at 100,000 notes) until SAVE_GAP_S has
    passed since the save that failed."""
    import errno

    import magma.note_bm25 as note_bm25

    tried: list[str] = []

    def full(self: NoteBm25Files, fingerprint: str, *args: object) -> None:
        tried.append(fingerprint)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(NoteBm25Files, "save", full)
    builder = NoteBm25Builder(Reads(), NoteBm25Files(tmp_path / "note-bm25"))
    try:
        with capture_logs() as logs:
            for n in range(3):  # a start, then two edits
                notes: NoteSpec = {**NOTES, "pottery.md": (f"Kilns {n}", ["h3"])}
                served = builder._build(lambda notes=notes: notes)  # type: ignore[misc]
                assert served is not None and top(served, "kilns") == ["pottery.md"]
        assert len(tried) == 1
        assert [e["event"] for e in logs].count("search.note_bm25_not_saved") == 1
        monkeypatch.setattr(note_bm25.time, "time", lambda: 4e9)  # the gap has passed
        builder._build(lambda: {**NOTES, "pottery.md": ("Kilns 4", ["h3"])})
        assert len(tried) == 2
    finally:
        builder.close(save=False)
