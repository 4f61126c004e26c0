"""The version archive: a real LanceDB table in tmp_path and real plain-text files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config.errors import VersionNotFoundError
from magma import versions as versions_module
from magma.versions import (
    NewVersion,
    Version,
    VersionArchive,
    VersionFiles,
    current,
    is_local_uri,
    prunable,
)

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _archive(tmp_path: Path, device: str | None = None) -> VersionArchive:
    return VersionArchive.open(str(tmp_path / "store"), archive_dir=tmp_path / f"arch-{device}",
                               device=device)


def _edit(key: str, text: str, origin: str = "user-edit") -> NewVersion:
    return NewVersion(key, f"Memory/{key}.md", text.encode(), origin, memory_type="feedback")


def test_versions_are_numbered_unchanged_content_is_skipped(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    assert [v.n for v in archive.record([_edit("a", "one"), _edit("b", "uno")], now=T0)] == [1, 1]
    assert archive.record([_edit("a", "one")], now=T0) == []  # same bytes: no version
    (made,) = archive.record([_edit("a", "two", "api")], now=T0 + timedelta(minutes=1))
    assert (made.n, made.prev, made.origin) == (2, 1, "api")
    assert archive.content("a", 1) == b"one" and archive.content("a", 2) == b"two"
    assert archive.heads()["a"].n == 2


def test_every_version_is_a_plain_file_outside_the_table(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("01HZX", "line one\n")], now=T0)
    folder = archive.archive_dir / "01HZX"
    assert (folder / "1.md").read_bytes() == b"line one\n"
    meta = json.loads((folder / "1.json").read_text(encoding="utf-8"))
    assert meta["origin"] == "user-edit" and meta["n"] == 1
    # an id that is not a safe file name gets a hashed folder, and still reads back
    archive.record([_edit("id with/slash ../", "x")], now=T0)
    assert archive.content("id with/slash ../", 1) == b"x"
    assert not any(p.name.startswith("id") for p in archive.archive_dir.iterdir())


def test_unknown_version_is_a_clear_error(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one")], now=T0)
    with pytest.raises(VersionNotFoundError, match=r"no version 7 \(versions 1-1"):
        archive.get("a", 7)
    with pytest.raises(VersionNotFoundError, match="no versions yet"):
        archive.content("nothing", 1)


def test_tombstone_and_kept_versions_never_become_current_wrongly(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one")], now=T0)
    archive.record([NewVersion("a", "Memory/a.md", b"side", "arbiter", kind="kept")], now=T0)
    assert archive.heads()["a"].n == 1  # a kept side version is history, not the current
    (tomb,) = archive.record([NewVersion("a", "Memory/a.md", b"", "user-edit",
                                         kind="tombstone")], now=T0)
    assert tomb.n == 3 and archive.heads()["a"].kind == "tombstone"
    assert archive.record([NewVersion("a", "Memory/a.md", b"", "user-edit",
                                      kind="tombstone")], now=T0) == []
    assert archive.record([NewVersion("new", "Memory/new.md", b"", "user-edit",
                                      kind="tombstone")], now=T0) == []


def test_a_crash_between_file_and_row_is_repaired(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one"), _edit("a2", "x")], now=T0)
    archive.record([_edit("a", "two")], now=T0)
    archive._table.delete("memory_id = 'a' AND n = 2")  # the row never landed
    assert archive.needs_repair()
    report = archive.repair()
    assert report.rows_added == 1 and not archive.needs_repair()
    assert archive.content("a", 2) == b"two"


def test_two_devices_share_the_table_and_mirror_each_others_versions(tmp_path: Path) -> None:
    laptop, desktop = _archive(tmp_path, "laptop"), _archive(tmp_path, "desktop")
    laptop.record([_edit("a", "from the laptop")], now=T0)
    (second,) = desktop.record([_edit("a", "from the desktop")], now=T0)
    assert (second.n, second.device) == (2, "desktop")
    # the desktop's version is not in the laptop's files yet: not drift, copied on repair
    assert not laptop.needs_repair()
    assert laptop.repair().files_mirrored == 1
    assert (laptop.archive_dir / "a" / "2.md").read_bytes() == b"from the desktop"


def test_one_number_given_twice_is_renumbered_and_duplicates_dropped(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one")], now=T0)
    # what two writers without a lease (object storage) can leave: n=2 twice, one row twice
    rows = [
        {"memory_id": "a", "n": 2, "kind": "edit", "path": "Memory/a.md", "content": c,
         "content_hash": hashlib.sha256(c).hexdigest(), "created_at": T0 + timedelta(seconds=s),
         "origin": "user-edit", "change_log": "", "prev": 1, "device": d, "memory_type": None,
         "name": None}
        for c, s, d in ((b"laptop", 1, "laptop"), (b"desktop", 2, "desktop"),
                        (b"desktop", 2, "desktop"))
    ]
    archive._add(rows)
    # before the repair, a content recorded twice under one number reads once
    assert [(v.n, v.device) for v in archive.history("a")] == [
        (1, None), (2, "laptop"), (2, "desktop")]
    report = archive.repair()
    assert (report.duplicates_dropped, report.renumbered) == (1, 1)
    versions = archive.history("a")
    assert [(v.n, archive.content("a", v.n)) for v in versions] == [
        (1, b"one"), (2, b"laptop"), (3, b"desktop")]
    assert not archive.needs_repair()


def test_forget_removes_rows_files_and_old_table_versions(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    archive.record([_edit("a", "secret plan"), _edit("b", "keep")], now=T0)
    assert archive.forget("a") == 1
    archive.compact()
    assert archive.history("a") == [] and not (archive.archive_dir / "a").exists()
    data = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert b"secret plan" not in data
    assert archive.content("b", 1) == b"keep"


def _v(n: int, days: float, kind: str = "edit", prev: int | None = None) -> Version:
    return Version("a", n, kind, "Memory/a.md", f"h{n}", T0 + timedelta(days=days),  # type: ignore[arg-type]
                   "user-edit", "", prev, None, None, None)


def test_pruning_keeps_the_current_version_and_what_a_deleted_memory_said() -> None:
    history = {"a": [_v(1, 0), _v(2, 1), _v(3, 2), _v(4, 3, "tombstone", prev=3)]}
    assert prunable(history, keep_last=1, keep_days=0, now=T0) == {"a": {1, 2}}
    assert prunable(history, keep_last=0, keep_days=0, now=T0) == {}
    assert prunable(history, keep_last=0, keep_days=1.5, now=T0 + timedelta(days=3)) == {
        "a": {1, 2}}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["edit", "kept", "tombstone"]), min_size=1, max_size=12),
       st.integers(0, 5), st.floats(0, 10))
def test_pruning_never_drops_the_current_version(
    kinds: list[str], keep_last: int, keep_days: float
) -> None:
    versions = [_v(n, n, kind) for n, kind in enumerate(kinds, start=1)]
    doomed = prunable({"a": versions}, keep_last=keep_last, keep_days=keep_days,
                      now=T0 + timedelta(days=30)).get("a", set())
    head = current(versions)
    assert head is None or head.n not in doomed
    assert doomed <= {v.n for v in versions}


def test_uri_kinds() -> None:
    assert is_local_uri("/data/lancedb") and is_local_uri("file:///data/lancedb")
    assert not is_local_uri("s3://bucket/dreamd") and not is_local_uri("gs://b/x")


def test_pruning_never_drops_the_losing_side_of_a_conflict() -> None:
    history = {"a": [_v(1, 0), _v(2, 1, "kept"), _v(3, 2), _v(4, 3)]}
    assert prunable(history, keep_last=1, keep_days=0, now=T0) == {"a": {1, 3}}


def _age(folder: Path, seconds: int) -> None:
    """Set the folder's times ``seconds`` back: a listing of it is then kept."""
    stamp = T0.timestamp() - seconds
    os.utime(folder, (stamp, stamp))


@pytest.mark.parametrize("change", [
    "delete a version", "add a version", "put a version aside", "a folder in its place",
    "remove the folder", "a new folder", "a version renamed", "nothing"])
def test_a_folder_listing_kept_between_checks_follows_every_change(
        tmp_path: Path, change: str) -> None:
    """The archive listing a check compares with the table is kept per memory folder while
    the folder's inode and time hold: every change of its entries shows in the next check,
    whether the folder's time had settled (kept) or was fresh (listed again)."""
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one"), _edit("b", "uno")], now=T0)
    archive.record([_edit("a", "two")], now=T0)
    root = archive.archive_dir
    for step, settled in enumerate((True, False, True)):
        if settled:
            for folder in root.iterdir():
                _age(folder, 3600 + step)
        assert not archive.needs_repair()
        assert archive.needs_repair() is False  # kept listing, same answer
        folder = root / "a"
        match change:
            case "delete a version":
                (folder / "2.json").unlink()
            case "add a version":
                (folder / "9.json").write_text("{}")
            case "put a version aside":
                (folder / "1.json").rename(folder / "1.json.unreadable")
            case "a folder in its place":
                (folder / "2.json").unlink()
                (folder / "2.json").mkdir()
            case "remove the folder":
                shutil.rmtree(root / "b")
            case "a new folder":
                (root / "c").mkdir()
                (root / "c" / "1.json").write_text("{}")
            case "a version renamed":
                (folder / "2.json").rename(folder / "3.json")
        if settled and change != "nothing":
            _age(folder, 60 + step)  # (a later time than the kept one: a real change's)
        fresh = VersionFiles(root).keys()
        assert archive._files.keys() == fresh
        assert archive.needs_repair() is (change != "nothing")
        if change != "nothing":
            shutil.rmtree(root)
            archive.repair()  # every file mirrored again from the table
            assert not archive.needs_repair(), change


@pytest.mark.parametrize("tick_s", [0.004, 1, 2])  # ext4, HFS+, FAT32
@pytest.mark.parametrize("into_tick", [0.1, 0.5, 0.9])  # how far the tick had run, in ticks
def test_a_version_added_in_the_tick_of_a_listing_shows_in_the_next_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tick_s: float, into_tick: float) -> None:
    """A file system with a coarse clock stamps the folder with the start of its tick: an
    entry added in the same tick as a listing leaves the folder's time (and inode) as they
    were. The listing is kept only when no later entry can stamp the same time."""
    archive = _archive(tmp_path)
    archive.record([_edit("a", "one")], now=T0)
    folder = archive.archive_dir / "a"
    now_ns = time.time_ns()
    tick_start_ns = now_ns - int(into_tick * tick_s * 1_000_000_000)
    os.utime(folder, ns=(tick_start_ns, tick_start_ns))
    monkeypatch.setattr(versions_module.time, "time_ns", lambda: now_ns)
    assert archive._files.keys() == {("a", 1)}
    (folder / "2.json").write_text("{}")
    os.utime(folder, ns=(tick_start_ns, tick_start_ns))  # (the same tick: the same time)
    now_ns += 2_000_000_000  # the next check, seconds later
    assert archive._files.keys() == {("a", 1), ("a", 2)}
