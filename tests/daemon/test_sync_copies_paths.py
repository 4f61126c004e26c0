"""Copies whose meaning depends on their path, in a large reconcile that reads copies together
and remembers what it parsed, withheld, cut and embedded (:mod:`daemon.sync_memo`).

Equal bytes at two paths are two notes: the file name is the title (and a daily note's date),
the folder decides whether ``<!--m:`` comments make an entry file and where ``[[../x]]`` or
``![[x]]`` lead, a name may differ from another only by case or by its Unicode form, an
attached folder prefixes its paths, a body longer than ``sync.max_note_chars`` is cut with
its links. Each family (English and Chinese, with and without frontmatter) is indexed with
every file read first (nothing remembered across files) and with small batches of several
sizes; the tables must be the same row for row. The embedder is the token-hash FAKE.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from store_reads import index_rows

import daemon.sync
import daemon.sync_memo
from daemon.app import App

Builder = Callable[..., tuple[App, Any]]
NO_CACHE = {"embedding.cache_mb": 0}
MTIME = 1_700_000_000_000_000_000
#: Short enough that the long notes below are cut (and their links past the cut dropped).
MAX_NOTE_CHARS = 1200

LONG_EN = ("# Firing notes\n\nSee [[Schedule]] first.\n\n"
           + "The kiln cooled slowly overnight with the damper half open.\n" * 30
           + "Past the cut: [[Glaze recipes]] and ![[Schedule]].\n")
LONG_ZH = ("# 烧窑笔记\n\n先看[[日程]]。\n\n" + "窑炉在夜里缓慢冷却，风门半开。\n" * 90
           + "截断之后：[[釉料配方]] 与 ![[日程]]。\n")
ENTRY = ("# Facts\n\n- Prefers the kiln at cone six <!--m:subj=kiln.cone-->\n"
         "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n")
LINKS = ("---\naliases: [Firing index]\nup: \"[[../Schedule]]\"\n---\n"
         "Up: [[../Schedule]], here: [[Schedule]], embedded: ![[Schedule]], "
         "by alias: [[Glaze book]], 上级：[[../日程]]，别名：[[釉书]]。\n")
DAILY = "# Today\n\n- fired the kiln\n- 整理了釉料\n"
MEMORY = ("---\ntype: project\ndescription: The kiln project\n---\n"
          "The kiln project ships in spring. 窑炉项目春天完工。\n")

#: ``{vault path: text}``: each content at several paths that give it another meaning.
FILES: dict[str, str] = {
    "Schedule.md": "Monday: bisque.\n",
    "日程.md": "星期一：素烧。\n",
    "Glaze recipes.md": "---\naliases: [Glaze book]\n---\nCeladon.\n",
    "釉料配方.md": "---\naliases: [釉书]\n---\n青瓷。\n",
    "A/Schedule.md": "Tuesday: glaze.\n",
    "A/B/Index.md": LINKS,
    "A/Index.md": LINKS,
    "Index.md": LINKS,
    "C/B/Index.md": LINKS,
    "Long.md": LONG_EN,
    "A/Long.md": LONG_EN,
    "长文.md": LONG_ZH,
    "A/长文.md": LONG_ZH,
    "Memory/Facts.md": ENTRY,
    "Facts.md": ENTRY,
    "Memory/Sub/Facts.md": ENTRY,
    "Memory/Kiln project.md": MEMORY,
    "Kiln project.md": MEMORY,
    "Projects/Kiln project.md": MEMORY,
    "Daily/2026-12-07.md": DAILY,
    "Daily/2026-12-08.md": DAILY,
    "Journal/2026-12-07.md": DAILY,
    # a title is the file name: equal bytes, equal size, another name
    "Alpha.md": "---\ntags: [greek]\n---\n",
    "Gamma.md": "---\ntags: [greek]\n---\n",
    "甲.md": "---\ntags: [greek]\n---\n",
    # names that differ by case only, and by their Unicode form only
    "Case/Note.md": "Same bytes, other case.\n",
    "Case/note.md": "Same bytes, other case.\n",
    "Case/NOTE.md": "Same bytes, other case.\n",
    unicodedata.normalize("NFC", "Forms/Café.md"): "Un café noir. 一杯黑咖啡。\n",
    unicodedata.normalize("NFD", "Other/Café.md"): "Un café noir. 一杯黑咖啡。\n",
    # empty and one-byte notes under several names
    "Tiny/Empty.md": "",
    "Tiny/Blank.md": "",
    "Tiny/空.md": "",
    "Tiny/x.md": "x",
    "Tiny/y.md": "x",
    "Tiny/Sub/x.md": "x",
    "Tiny/新.md": "\n",
    "Tiny/Sub/新.md": "\n",
    # a hand-written credential, at each of its paths
    "Servers/Staging.md": "password: S3cr3t-Passw0rd-xyz\n",
    "Servers/Old/Staging.md": "password: S3cr3t-Passw0rd-xyz\n",
    "服务器/Staging.md": "password: S3cr3t-Passw0rd-xyz\n",
}
#: Files of an attached folder (``extra:``): equal bytes to vault files.
EXTRA: dict[str, str] = {
    "Facts.md": ENTRY,
    "Index.md": LINKS,
    "Kiln project.md": MEMORY,
    "Long.md": LONG_EN,
    "Sub/Facts.md": ENTRY,
}
SYMLINKS = {"Linked/Long.md": "Long.md", "Linked/Facts.md": "Facts.md"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        os.utime(path, ns=(MTIME, MTIME))


def _vault(base: Path) -> tuple[Path, Path]:
    vault, extra = base / "vault", base / "extra"
    _write(vault, FILES)
    _write(extra, EXTRA)
    for link, target in SYMLINKS.items():
        (vault / link).parent.mkdir(parents=True, exist_ok=True)
        (vault / link).symlink_to(vault / target)
    return vault, extra


def _rows(app: App) -> dict[str, Any]:
    return index_rows(app.store, app.state_dir)


def _indexed(base: Path, make_app: Builder, batch: int) -> dict[str, Any]:
    vault, extra = _vault(base)
    app, _ = make_app(vault, **{
        "sync.write_batch_files": batch, "sync.max_note_chars": MAX_NOTE_CHARS,
        "vault.extra_roots": [{"path": str(extra), "name": "extra"}], **NO_CACHE})
    app.sync()
    rows = _rows(app)
    app.close()
    return rows


def test_copies_whose_meaning_depends_on_the_path_index_as_each_file_alone(
        tmp_path: Path, make_app: Builder) -> None:
    alone = _indexed(tmp_path / "alone", make_app, 10_000)
    paths = {row["path"] for row in alone["files"]}
    # the family is there as meant: entry lines in the memory folder and the attached folder
    assert any(p.startswith("Memory/Facts.md#") for p in paths)
    assert any(p.startswith("extra:Facts.md#") for p in paths)
    assert not any(p.startswith("Facts.md#") for p in paths)
    # a link past the cut is left out at every path of the long note
    targets = {(row["src"], row["target"]) for row in alone["links"]}
    assert ("A/Long.md", "Schedule") in targets
    for src in ("Long.md", "A/Long.md", "extra:Long.md", "长文.md", "A/长文.md"):
        assert not {(src, "Glaze recipes"), (src, "釉料配方")} & targets
    for batch in (1, 2, 3, 7):
        together = _indexed(tmp_path / f"batch {batch}", make_app, batch)
        for table in ("files", "chunks", "links", "credentials"):
            assert together[table] == alone[table], (batch, table)


def test_a_copy_changed_after_its_first_copy_was_read_is_indexed_as_read(
        tmp_path: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second copy is rewritten (same size and mtime, other bytes) once the first one is
    parsed: the index holds what was read at each path, as an index of the changed vault."""
    changed = "password: S3cr3t-Passw0rd-xyw\n"  # (one letter: the same size)
    assert len(changed) == len(FILES["Servers/Staging.md"])
    vault, extra = _vault(tmp_path / "raced")
    parse = daemon.sync_memo.ContentMemo.parse

    def racing(memo: Any, path: str, data: bytes) -> Any:
        if path == "Servers/Old/Staging.md":
            _write(vault, {"服务器/Staging.md": changed})
        return parse(memo, path, data)

    monkeypatch.setattr(daemon.sync_memo.ContentMemo, "parse", racing)
    settings = {"sync.write_batch_files": 2, "sync.max_note_chars": MAX_NOTE_CHARS,
                "vault.extra_roots": [{"path": str(extra), "name": "extra"}], **NO_CACHE}
    app, _ = make_app(vault, **settings)
    app.sync()
    raced = _rows(app)
    app.close()
    monkeypatch.setattr(daemon.sync_memo.ContentMemo, "parse", parse)
    reference, extra2 = _vault(tmp_path / "reference")
    _write(reference, {"服务器/Staging.md": changed})
    app, _ = make_app(reference, **{**settings, "sync.write_batch_files": 10_000,
                                    "vault.extra_roots": [{"path": str(extra2),
                                                           "name": "extra"}]})
    app.sync()
    expected = _rows(app)
    app.close()
    for table in ("files", "chunks", "links", "credentials"):
        assert raced[table] == expected[table], table


SECRET_PLAN = ("---\ntype: project\ndescription: 秘密计划 secret plan\n---\n"
               "The launch moves to March; 发布推迟到三月。\n")


@pytest.mark.parametrize("copy", [None, "Zed/Secret plan.md", "Zed/秘密/Secret plan.md"])
def test_a_memory_forgotten_during_a_large_reconcile_leaves_no_vector_behind(
        tmp_path: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch,
        copy: str | None) -> None:
    """A forget let in between two commits of a cold index (as the daemon lets its clients
    in; here its index steps, the App's lock being held by the sync): the run's vector
    memory no longer holds the forgotten chunks, and a copy read later in the same run has
    them embedded again, not taken from that memory."""
    vault = tmp_path / "vault"
    files = {"Memory/Secret plan.md": SECRET_PLAN, "Notes/Other.md": "Another note.\n"}
    if copy is not None:
        files[copy] = SECRET_PLAN
    _write(vault, files)
    app, fake = make_app(vault, **{"sync.write_batch_files": 1, **NO_CACHE})
    texts: list[str] = []
    embed = fake.embed

    def recorded(batch: Any) -> Any:
        texts.extend(batch)
        return embed(batch)

    monkeypatch.setattr(fake, "embed", recorded)
    store = app.store
    forgotten: list[str] = []
    memos: list[Any] = []  # the run's memory of contents (daemon.sync_memo.ContentMemo)
    between = daemon.sync.Syncer._between

    def forget_once(syncer: Any) -> None:
        between(syncer)
        if not forgotten and "Memory/Secret plan.md" in store.file_index():
            hashes = [row["content_hash"] for row in store._t.read(
                store._t.chunks, ["path", "content_hash"]).to_pylist()
                if row["path"] == "Memory/Secret plan.md"]
            forgotten.extend(hashes)
            # the index steps of a forget (daemon.indexing, sync_now with purge):
            # the file goes, its rows go, old versions are purged, its vectors dropped
            (vault / "Memory/Secret plan.md").unlink()
            store.apply(upserts=[], deletes=["Memory/Secret plan.md"])
            store.maintain(cleanup_older_than=timedelta(0), purge=True)
            store.stored_hashes(hashes)
            memos.append(syncer._memo)

    monkeypatch.setattr(daemon.sync.Syncer, "_between", forget_once)
    app.sync()
    assert forgotten
    found, _ = store.recent_vectors.split(forgotten)
    chunks = store._t.read(store._t.chunks, ["path", "content_hash"]).to_pylist()
    assert not any(row["path"] == "Memory/Secret plan.md" for row in chunks)
    if copy is None:  # nothing of the forgotten note is kept: vector, bytes, parse, chunks
        assert found == {}
        kept = [value for memo in memos for part in (memo._parsed, memo._chunked)
                for value in part._values.values()]
        assert kept and not any("March" in repr(value) for value in kept)
    else:  # the copy is indexed, its chunks embedded again after the forget
        assert {row["content_hash"] for row in chunks if row["path"] == copy} == set(forgotten)
        assert sum(1 for text in texts if "March" in text) == 2
    app.close()
