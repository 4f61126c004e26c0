"""The reconcile behind `dreamd sync`, on real files and a real LanceDB store.

The embedder is the token-hash fake (see conftest): these tests are about what gets read,
embedded, renamed and deleted, not about meaning.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from rich.console import Console
from structlog.testing import capture_logs

from ccb.parse import parse_note
from ccb.scan import read_note
from config.errors import MassDeleteError
from daemon.app import App
from daemon.memory_pool import first_chunk_hash
from daemon.render import print_sync_report
from magma.chunking import chunk_note
from magma.edge_table import read_graph

Builder = Callable[..., tuple[App, object]]


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


def test_first_sync_indexes_every_kept_file_and_changes_none(
    vault: Path, make_app: Builder
) -> None:
    before = _hashes(vault)
    app, fake = make_app(vault)
    report = app.sync()
    assert report.added == report.files_total > 10
    assert report.deleted == report.modified == 0
    assert report.chunks_embedded == fake.embedded > 0  # type: ignore[attr-defined]
    index = app.store.file_index()
    assert "Welcome.md" in index
    assert not any(p.startswith(".obsidian/") for p in index)
    assert not any(p.startswith("Archive/Ignored/") for p in index)
    assert any(entry.kind == "attachment" for entry in index.values())
    assert _hashes(vault) == before


def test_second_sync_with_nothing_changed_reads_and_embeds_nothing(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    first = app.sync()
    app2, fake2 = make_app(vault)
    again = app2.sync()
    assert again.unchanged == first.files_total
    assert (again.added, again.modified, again.deleted, again.touched) == (0, 0, 0, 0)
    assert again.chunks_embedded == 0
    assert fake2.calls == []  # type: ignore[attr-defined]


def test_a_restart_with_nothing_changed_reads_no_chunk_row(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sync sweeps orphans (every chunk's path) and seals the tables; a new process
    finding them at the sealed versions reads the files table only (issue 24: a restart at
    100,000 notes read 928,312 chunk paths)."""
    from magma.store_tables import StoreTables

    app, _ = make_app(vault)
    app.sync()
    read: list[str] = []
    real_read = StoreTables.read

    def counting(self: StoreTables, table: object, *args: object, **kwargs: object) -> object:
        read.append(table.name)  # type: ignore[attr-defined]
        return real_read(self, table, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreTables, "read", counting)
    again, fake = make_app(vault)
    report = again.sync()
    assert report.unchanged == report.files_total and fake.calls == []  # type: ignore[attr-defined]
    assert [name for name in read if name.startswith(("chunks", "links", "edges"))] == []
    assert "files" in read


def test_mtime_only_change_is_a_touch_not_a_reindex(vault: Path, make_app: Builder) -> None:
    app, fake = make_app(vault)
    app.sync()
    note = vault / "Welcome.md"
    stat = note.stat()
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    calls = len(fake.calls)  # type: ignore[attr-defined]
    report = app.sync()
    assert report.touched == 1 and report.modified == 0 and report.chunks_embedded == 0
    assert len(fake.calls) == calls  # type: ignore[attr-defined]
    assert app.store.file_index()["Welcome.md"].mtime_ns == stat.st_mtime_ns + 5_000_000_000


def test_editing_one_section_re_embeds_only_that_sections_chunks(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    app.sync()
    # the longest note has several heading sections, hence several chunks
    notes = sorted(vault.rglob("*.md"), key=lambda p: p.stat().st_size)
    target = next(p for p in reversed(notes) if not p.is_relative_to(vault / "edge-cases"))
    rel = target.relative_to(vault).as_posix()
    chunks = chunk_note(read_note(vault, rel))
    assert len(chunks) >= 2
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\nOne more line at the very end of the last section.\n")
    report = app.sync()
    assert report.modified == 1
    assert report.chunks_embedded == 1
    assert report.chunks_reused == len(chunk_note(read_note(vault, rel))) - 1


def test_rename_keeps_note_id_and_re_embeds_only_that_note(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    app.sync()
    before = app.store.file_index()["Welcome.md"]
    (vault / "Welcome.md").rename(vault / "Start here.md")
    report = app.sync()
    assert report.renamed == (("Welcome.md", "Start here.md"),)
    assert report.added == report.deleted == 0
    # the title heads every chunk's embedded text, so a new name means new vectors for this
    # note's chunks, and for no other note's
    assert report.chunks_embedded == len(chunk_note(read_note(vault, "Start here.md")))
    index = app.store.file_index()
    assert "Welcome.md" not in index
    assert index["Start here.md"].note_id == before.note_id


def test_move_to_another_folder_keeps_note_id_and_vectors(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    before = app.store.file_index()["Welcome.md"]
    (vault / "Inbox").mkdir()
    (vault / "Welcome.md").rename(vault / "Inbox" / "Welcome.md")
    report = app.sync()
    assert report.renamed == (("Welcome.md", "Inbox/Welcome.md"),)
    assert report.chunks_embedded == 0
    assert app.store.file_index()["Inbox/Welcome.md"].note_id == before.note_id


def test_memory_moved_and_edited_is_followed_by_its_id(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    memory = next(p for p in (vault / "Memory").glob("*.md") if p.name != "MEMORY.md"
                  and "type: feedback" in p.read_text(encoding="utf-8"))
    rel = memory.relative_to(vault).as_posix()
    old = app.store.file_index()[rel]
    assert old.memory_id
    moved = vault / "Memory" / "archive" / "moved.md"
    moved.parent.mkdir()
    memory.rename(moved)
    with moved.open("a", encoding="utf-8") as handle:
        handle.write("\nAlso applies to the staging environment.\n")
    report = app.sync()
    assert report.renamed == ((rel, "Memory/archive/moved.md"),)
    assert app.store.file_index()["Memory/archive/moved.md"].note_id == old.note_id


def test_deleted_note_leaves_the_index(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    app.sync()
    (vault / "Welcome.md").unlink()
    report = app.sync()
    assert report.deleted == 1
    assert "Welcome.md" not in app.store.file_index()
    assert all(hit.path != "Welcome.md" for hit in app.search("welcome demo vault", limit=50))


def test_mass_delete_is_refused_and_the_index_kept(tmp_path: Path, make_app: Builder) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for i in range(40):
        (root / f"note {i}.md").write_text(f"# Note {i}\n\nbody {i}\n", encoding="utf-8")
    app, _ = make_app(root)
    app.sync()
    for i in range(30):
        (root / f"note {i}.md").unlink()
    with pytest.raises(MassDeleteError, match="30 of 40"):
        app.sync()
    assert len(app.store.file_index()) == 40
    report = app.sync(allow_mass_delete=True)
    assert report.deleted == 30
    assert len(app.store.file_index()) == 10


def _folders_of_notes(root: Path, folders: int = 8, each: int = 5) -> list[Path]:
    """``folders`` folders of ``each`` distinct notes: the vault of a user who files by topic."""
    made = []
    for f in range(folders):
        folder = root / f"Topic {f}"
        folder.mkdir(parents=True)
        for n in range(each):
            (folder / f"note {n}.md").write_text(f"# Topic {f} note {n}\n\nbody {f}.{n}\n",
                                                  encoding="utf-8")
        made.append(folder)
    return made


def test_folders_moved_into_a_new_folder_are_renames_not_a_mass_delete(
    tmp_path: Path, make_app: Builder
) -> None:
    """``mkdir Notes && mv Topic* Notes/``: 35 of 40 paths are gone, all at new paths. The
    guard refused it ("35 of 40 indexed files (88%) are gone"); it is a move, applied."""
    root = tmp_path / "vault"
    folders = _folders_of_notes(root)
    app, _ = make_app(root)
    app.sync()
    ids = {p: r.note_id for p, r in app.store.file_index().items()}
    (root / "Notes").mkdir()
    for folder in folders[:7]:
        folder.rename(root / "Notes" / folder.name)
    report = app.sync()
    assert (len(report.renamed), report.deleted, report.added) == (35, 0, 0)
    after = app.store.file_index()
    assert {after[new].note_id for _old, new in report.renamed} == \
        {ids[old] for old, _new in report.renamed}


def test_a_moved_folder_of_identical_notes_is_renamed_note_for_note(
    tmp_path: Path, make_app: Builder
) -> None:
    """30 notes with the same bytes (a template not filled in yet) and their attachments,
    moved with their folder: each note keeps its id under its own name; none counts as
    deleted by the guard (before, one note of the 30 was paired and 59 files of 61 were
    "gone", refused as a mass delete)."""
    root = tmp_path / "vault"
    (root / "Inbox").mkdir(parents=True)
    for n in range(30):
        (root / "Inbox" / f"Untitled {n}.md").write_text("# \n\n- [ ] \n", encoding="utf-8")
        (root / "Inbox" / f"scan {n}.png").write_bytes(bytes([n]) * (100 + n))
    (root / "Kept.md").write_text("# Kept\n\nstays\n", encoding="utf-8")
    app, _ = make_app(root)
    app.sync()
    ids = {p: r.note_id for p, r in app.store.file_index().items()}
    (root / "Archive").mkdir()
    (root / "Inbox").rename(root / "Archive" / "Inbox")
    report = app.sync()  # not refused
    # attachments are not paired by a rename (they are never hashed): removed and added
    assert (report.deleted, report.added) == (30, 30)
    assert sorted(report.renamed) == sorted(
        (f"Inbox/Untitled {n}.md", f"Archive/Inbox/Untitled {n}.md") for n in range(30))
    after = app.store.file_index()
    assert all(after[f"Archive/{old}"].note_id == ids[old] for old, _ in report.renamed)


def test_half_moved_half_deleted_counts_only_the_deletions(
    tmp_path: Path, make_app: Builder
) -> None:
    """Moves do not hide deletions: 21 deleted next to 10 moved is 21 of 40 gone, refused;
    10 deleted next to 20 moved is 10 of 40, applied."""
    root = tmp_path / "vault"
    folders = _folders_of_notes(root)
    app, _ = make_app(root)
    app.sync()
    (root / "Notes").mkdir()
    for folder in folders[:2]:
        folder.rename(root / "Notes" / folder.name)
    for folder in folders[2:6]:
        shutil.rmtree(folder)
    (root / "Topic 6" / "note 0.md").unlink()
    with pytest.raises(MassDeleteError, match=r"21 of 40 indexed files \(52%\)"):
        app.sync()
    assert len(app.store.file_index()) == 40
    for name in ("Topic 6", "Topic 7"):
        (root / name).rename(root / "Notes" / name)
    report = app.sync(allow_mass_delete=True)
    assert (report.deleted, len(report.renamed)) == (21, 19)

    root2 = tmp_path / "vault2"
    folders = _folders_of_notes(root2)
    app2, _ = make_app(root2)
    app2.sync()
    (root2 / "Notes").mkdir()
    for folder in folders[:4]:
        folder.rename(root2 / "Notes" / folder.name)
    for folder in folders[4:6]:
        shutil.rmtree(folder)
    report = app2.sync()
    assert (report.deleted, len(report.renamed)) == (10, 20)


def test_moved_folders_in_a_watcher_batch_are_renames(tmp_path: Path, make_app: Builder) -> None:
    """The daemon's path: the batch names the old folders and the new one."""
    root = tmp_path / "vault"
    folders = _folders_of_notes(root)
    app, _ = make_app(root)
    syncer = app.make_syncer()
    syncer.reconcile()
    (root / "Notes").mkdir()
    for folder in folders[:6]:
        folder.rename(root / "Notes" / folder.name)
    report = syncer.sync_paths([f.name for f in folders[:6]] + ["Notes"])
    assert (len(report.renamed), report.deleted) == (30, 0)


def test_attachments_moved_while_watched_never_add_up_to_a_mass_delete(
    tmp_path: Path, make_app: Builder
) -> None:
    """A folder of 20 images moved twice, then 12 of 40 notes deleted: the moves are no
    deletions in the guard's 10-minute window (before, 40 moved images and 12 notes made
    52% of the index, refused)."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(40):
        (root / f"note{i:02}.md").write_text(f"# Note {i}\n\nbody {i}\n", encoding="utf-8")
    (root / "Scans").mkdir()
    for i in range(20):
        (root / "Scans" / f"scan {i}.png").write_bytes(bytes([i]) * (64 + i))
    app, _ = make_app(root)
    syncer = app.make_syncer()
    syncer.reconcile()
    for old, new in (("Scans", "Images"), ("Images", "Scans")):
        (root / old).rename(root / new)
        syncer.sync_paths([old, new])
    paths = [f"note{i:02}.md" for i in range(12)]
    for path in paths:
        (root / path).unlink()
    assert syncer.sync_paths(paths).deleted == 12


def test_deletions_in_watcher_sized_pieces_count_together(
    tmp_path: Path, make_app: Builder
) -> None:
    """A drive going away while the daemon watches arrives as many small batches: each is
    below ``max_delete_share`` alone, together they are refused, and the user's word lets
    them through."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(40):
        (root / f"note{i:02}.md").write_text(f"# Note {i}\n\nbody {i}\n", encoding="utf-8")
    app, _ = make_app(root)
    syncer = app.make_syncer()  # one syncer for the daemon's life, as the runner keeps it
    syncer.reconcile()
    for piece in range(2):  # 2 × 6 files: 30% of the index, below the share of 50%
        paths = [f"note{i:02}.md" for i in range(piece * 6, piece * 6 + 6)]
        for path in paths:
            (root / path).unlink()
        syncer.sync_paths(paths)
    paths = [f"note{i:02}.md" for i in range(12, 21)]  # 9 more: 21 of 40 within minutes
    for path in paths:
        (root / path).unlink()
    with pytest.raises(MassDeleteError, match="with 12 deleted in the last 10 minutes"):
        syncer.sync_paths(paths)
    assert len(app.store.file_index()) == 28  # the refused batch removed nothing
    syncer.sync_paths(paths, allow_mass_delete=True)
    assert len(app.store.file_index()) == 19


def test_vanished_vault_root_never_wipes_the_index(tmp_path: Path, make_app: Builder) -> None:
    root = tmp_path / "mounted"
    shutil.copytree(Path(__file__).resolve().parents[2] / "vault_example", root)
    app, _ = make_app(root)
    first = app.sync()
    for child in root.iterdir():  # an emptied mount point: the folder is there, its files not
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    with pytest.raises(MassDeleteError, match="holds no file at all"):
        app.sync()
    assert len(app.store.file_index()) == first.files_total


def test_the_mass_delete_guard_counts_files_not_entry_lines(tmp_path: Path,
                                                            make_app: Builder) -> None:
    """A vault whose only file is an entry file of three lines: deleting it is one file of
    one, the empty folder is why it is refused (it read "1 of 4 indexed files (25%) …, more
    than 50%")."""
    root = tmp_path / "tiny"
    (root / "Memory").mkdir(parents=True)
    (root / "Memory" / "facts.md").write_text(
        "- Prefers tea <!--m:subj=drink-->\n- Lives in Porto <!--m:subj=city-->\n"
        "- 我在余杭区 <!--m:subj=所在地-->\n", encoding="utf-8")
    app, _ = make_app(root)
    app.sync()
    (root / "Memory" / "facts.md").unlink()
    with pytest.raises(MassDeleteError) as refused:
        app.sync()
    assert "holds no file at all" in str(refused.value) and "25%" not in str(refused.value)


def test_unparseable_note_is_indexed_as_text_reported_and_untouched(
    vault: Path, make_app: Builder
) -> None:
    bad = vault / "Broken yaml.md"
    raw = b"---\ntitle: [unclosed\nkey: {{date}}\n---\nThe zebra-finch protocol still applies.\n"
    bad.write_bytes(raw)
    app, _ = make_app(vault)
    report = app.sync()
    assert any(
        p.path == "Broken yaml.md" and p.kind == "yaml" and p.reason for p in report.problems
    )
    assert bad.read_bytes() == raw
    hits = app.search("zebra-finch", limit=5)
    assert hits and hits[0].path == "Broken yaml.md"
    status = app.status()
    assert any(p["path"] == "Broken yaml.md" for p in status.problems)


def test_sync_conflict_copies_are_reported_not_indexed(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    report = app.sync()
    index = app.store.file_index()
    assert report.conflict_copies
    copies = {copy.path for copy in report.conflict_copies}
    assert len(copies) >= 2
    assert not copies & index.keys()
    assert {copy.conflict_of for copy in report.conflict_copies} <= index.keys()


def test_status_before_any_sync_works(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    status = app.status()
    assert status.last_sync is None
    assert status.vault == str(vault.resolve())


def test_sync_refuses_while_a_daemon_holds_the_vault(vault: Path, make_app: Builder) -> None:
    from config.errors import LockError
    from daemon.lock import DaemonLock

    app, _ = make_app(vault)
    with DaemonLock(app.state_dir), pytest.raises(LockError, match="no sync is needed"):
        app.sync()
    assert app.sync().added > 0  # the lock is free again


def test_chunks_left_by_a_crash_before_the_file_row_are_swept(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between the chunk and file commits of a new note, then the note deleted."""
    from magma.store import MagmaStore

    app, _ = make_app(vault)
    app.sync()
    ghost = vault / "Ghost.md"
    ghost.write_text("# Ghost\n\nthe ghost note of a crashed write\n", encoding="utf-8")

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the process dies between the commits

    with monkeypatch.context() as patched:  # (not undo(): that drops the test isolation too)
        patched.setattr(MagmaStore, "_write_files", crash)
        with pytest.raises(KeyboardInterrupt):
            app.make_syncer().sync_paths({"Ghost.md"})
    ghost.unlink()
    assert "Ghost.md" in app.store.orphaned_paths()

    fresh, _ = make_app(vault)
    fresh.sync()
    assert fresh.store.orphaned_paths() == set()
    assert all(hit.path != "Ghost.md" for hit in fresh.search("ghost note crashed", limit=20))


def test_a_very_long_note_is_cut_reported_and_untouched(vault: Path, make_app: Builder) -> None:
    huge = vault / "Pasted log.md"
    raw = ("# Pasted log\n\n" + "line of a very long log\n" * 2000).encode()
    huge.write_bytes(raw)
    app, _ = make_app(vault, **{"sync.max_note_chars": 5000})
    report = app.sync()
    assert any(p.path == "Pasted log.md" and p.kind == "size" for p in report.problems)
    chunks = app.store.chunk_hashes(["Pasted log.md"])
    assert 1 <= len(chunks) <= 6  # 5,000 characters at 1,500 per chunk, not 48,000
    assert huge.read_bytes() == raw



@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_links_past_where_a_long_note_is_cut_are_left_out_with_its_text(
        vault: Path, make_app: Builder, newline: str) -> None:
    """A note past ``sync.max_note_chars`` is indexed up to the cut, its links too: a 50 MB
    log with a link on each line stored 735,294 link rows (124 s of sync, 1.4 GB). The links
    of its properties and of the line cut through stay; the file is never changed."""
    huge = vault / "Link log.md"
    lines = [f"- {i:05d} seen by [[Early person {i}]] at the desk" for i in range(100)]
    lines += [f"- {i:05d} seen by [[Late person {i}]] at the desk" for i in range(100, 3000)]
    raw = newline.join(["---", 'related: "[[Property target]]"', "---", "# Link log", "",
                        *lines, ""]).encode()
    huge.write_bytes(raw)
    body = parse_note("Link log.md", raw).body  # (as the index reads it)
    cut = body.index("[[Late person 100]]") + 4  # (inside the first late link)
    app, _ = make_app(vault, **{"sync.max_note_chars": cut})
    report = app.sync()
    assert any(p.path == "Link log.md" and p.kind == "size" for p in report.problems)
    targets = {link.target for link in app.store.unresolved_links(["Link log.md"])}
    assert {f"Early person {i}" for i in range(100)} <= targets
    assert "Property target" in targets and "Late person 100" in targets  # (line cut through)
    assert not {t for t in targets if t.startswith("Late person") and t != "Late person 100"}
    assert huge.read_bytes() == raw

def test_a_clipped_page_with_an_inline_image_is_indexed_as_its_text(
        vault: Path, make_app: Builder) -> None:
    """A web clip's 2 MB base64 photo is not text: it becomes ``[image data]`` in the index
    (a few chunks, not hundreds), and the text after it is indexed whole and found, however
    small ``sync.max_note_chars`` is. The file is never changed."""
    clipped = vault / "Clipped page.md"
    photo = base64.b64encode(random.Random(3).randbytes(1_500_000)).decode()
    raw = ("# Sourdough at altitude\n\nClipped from a baking blog.\n\n"
           f"![photo](data:image/png;base64,{photo})\n\n## Method\n\n"
           "Feed the starter at 1:5:5; the zanzibar quokka trick keeps the crumb open.\n"
           ).encode()
    clipped.write_bytes(raw)
    app, _ = make_app(vault, **{"sync.max_note_chars": 5000})
    report = app.sync()
    assert not [p for p in report.problems if p.path == "Clipped page.md"]  # nothing cut
    chunks = app.store.chunks_of(["Clipped page.md"])
    assert len(chunks) == 1
    assert "zanzibar quokka" in chunks[0].body and "[image data]" in chunks[0].body
    hits = app.search("zanzibar quokka", limit=3)
    assert hits and hits[0].path == "Clipped page.md"
    assert clipped.read_bytes() == raw


def test_a_memory_with_an_inline_image_keeps_its_stored_vector_key(
        vault: Path, make_app: Builder) -> None:
    """The memories' judgement looks a memory's vector up by its first chunk's hash: that
    chunk is cut the way the index cut it, without the image data."""
    path = "Memory/kiln-photo.md"
    photo = base64.b64encode(random.Random(5).randbytes(30_000)).decode()
    (vault / path).write_text(
        "---\nname: Kiln photo\ndescription: the kiln after the glaze firing\ntype: project\n"
        f"---\n![kiln](data:image/jpeg;base64,{photo})\nThe shelf cracked at cone 6.\n",
        encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    stored = next(s for s in app.memory_pool.memories() if s.path == path)
    assert first_chunk_hash(stored.note) in app.store.chunk_hashes([path]).values()


def test_a_problem_file_stays_listed_until_it_is_fixed(vault: Path, make_app: Builder) -> None:
    """The next sync reads only what changed: a note whose frontmatter does not parse was
    listed after the first sync and gone from ``status`` after the second (a new user)."""
    broken = vault / "Notes" / "broken front.md"
    broken.parent.mkdir(exist_ok=True)
    broken.write_text("---\ntags: [unclosed\n---\nThe heron log.\n", encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    listed = {p["path"] for p in app.status().problems}
    assert "Notes/broken front.md" in listed
    other = vault / "Notes" / "other.md"
    other.write_text("Another note.\n", encoding="utf-8")
    app.sync()  # reads other.md only
    assert "Notes/broken front.md" in {p["path"] for p in app.status().problems}
    broken.write_text("---\ntags: [fixed]\n---\nThe heron log.\n", encoding="utf-8")
    app.sync()
    assert "Notes/broken front.md" not in {p["path"] for p in app.status().problems}
    app.sync()
    assert listed - {"Notes/broken front.md"} <= {p["path"] for p in app.status().problems}


def _crash_between_link_and_file_commits(app: App, monkeypatch: pytest.MonkeyPatch,
                                         path: str) -> None:
    """Sync ``path`` and let the process die between the batch's link and file commits."""
    from magma.store import MagmaStore

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(MagmaStore, "_write_files", crash)
        with pytest.raises(KeyboardInterrupt):
            app.make_syncer().sync_paths({path})


def test_links_resolved_to_a_note_a_crash_left_without_a_file_row_are_resolved_again(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between the link and file commits of a batch that adds ``Ghost.md`` leaves
    another note's ``[[Ghost]]`` resolved to it; the note is deleted before the next start.
    The start's sweep resolves that link again: a broken link, as a fresh index has it, and
    ``dreamd check`` lists it (not a link to a note that is not there)."""
    app, _ = make_app(vault)
    app.sync()
    (vault / "Haunted.md").write_text("# Haunted\n\nSee [[Ghost]].\n", encoding="utf-8")
    assert app.indexing.index_now(["Haunted.md"])
    ghost = vault / "Ghost.md"
    ghost.write_text("# Ghost\n\nthe ghost note of a crashed write\n", encoding="utf-8")
    _crash_between_link_and_file_commits(app, monkeypatch, "Ghost.md")
    assert app.store.link_pairs(["Haunted.md"]).column("resolved").to_pylist() == ["Ghost.md"]
    ghost.unlink()

    fresh, _ = make_app(vault)
    fresh.sync()
    assert fresh.store.link_pairs(["Haunted.md"]).num_rows == 0  # resolves to no file
    assert fresh.store.orphaned_paths() == set()
    assert [(link.src, link.target) for link in fresh.store.unresolved_links(["Haunted.md"])] \
        == [("Haunted.md", "Ghost")]


def test_links_left_unresolved_by_a_crash_are_resolved_again_when_their_note_comes_back(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``P/b.md`` is moved out of the vault and the batch that removes it crashes between
    its link and file commits: ``[[b]]`` in ``P/a.md`` is written unresolved, ``b``'s file
    row stays. ``b`` is moved back, its mtime unchanged, so no walk sees a change. The next
    start's sweep resolves the link again: ``[[b]]`` points at ``P/b.md``, as a fresh index
    has it, and ``dreamd check`` lists no broken link."""
    app, _ = make_app(vault)
    app.sync()
    (vault / "P").mkdir()
    (vault / "P/a.md").write_text("# a\n\nsee [[b]]\n", encoding="utf-8")
    (vault / "P/b.md").write_text("# b\n\nhello\n", encoding="utf-8")
    assert app.indexing.index_now(["P/a.md", "P/b.md"])
    away = tmp_path / "b.md"
    (vault / "P/b.md").rename(away)
    _crash_between_link_and_file_commits(app, monkeypatch, "P/b.md")
    away.rename(vault / "P/b.md")

    fresh, _ = make_app(vault)
    fresh.sync()
    assert fresh.store.link_pairs(["P/a.md"]).column("resolved").to_pylist() == ["P/b.md"]
    assert fresh.store.unresolved_links(["P/a.md"]) == []
    edges = {(u, v, d["relation"]) for u, v, d in read_graph(fresh.store).edges(data=True)}
    assert ("note:P/a.md", "note:P/b.md", "links_to") in edges  # backlinks, dreamd graph


def test_an_older_store_says_to_sync_until_a_sync_rebuilds_it(
    vault: Path, make_app: Callable[..., tuple[App, object]],
) -> None:
    """After an upgrade of dreamd, the first open of the store drops its index tables: search
    says to run a sync (not "no results"), in that process and the next, and the sync that
    rebuilds the index takes the unchanged chunks' vectors from the embedding cache."""
    import lancedb

    from config.errors import VaultError
    from magma.store_tables import SCHEMA_VERSION

    first, _ = make_app(vault)
    report = first.sync()
    found = [h.path for h in first.search("kiln", limit=3)]
    assert found
    lancedb.connect(first.store_uri).open_table("meta").update(
        values={"schema_version": SCHEMA_VERSION - 1})
    for _ in range(2):  # the process that drops the tables, and the next one
        upgraded, _ = make_app(vault)
        status = upgraded.status()  # first: no last sync, nothing counted, no old problems
        assert (status.last_sync, status.counts, status.problems) == (None, {}, ())
        with pytest.raises(VaultError, match="not been indexed yet; run: dreamd sync"):
            upgraded.search("kiln", limit=3)
    again, fake = make_app(vault)
    with capture_logs() as logs:
        rebuilt = again.sync()
    assert rebuilt.added == report.added
    assert fake.embedded == 0  # type: ignore[attr-defined]  # every vector from the cache
    assert [h.path for h in again.search("kiln", limit=3)] == found
    # and the sync says so: it had said "47 chunks embedded, 0 reused"
    assert (rebuilt.chunks_embedded, rebuilt.chunks_cached) == (0, report.chunks_embedded)
    (applied,) = [e for e in logs if e["event"] == "sync.applied"]
    assert (applied["chunks_embedded"], applied["chunks_cached"]) == (0, rebuilt.chunks_cached)
    line = io.StringIO()
    print_sync_report(Console(file=line, width=400), rebuilt)
    assert f"; 0 chunks embedded, {rebuilt.chunks_cached} from the embedding cache, 0 reused" \
        in line.getvalue()


def test_an_attachment_named_like_an_entry_line_leaves_the_index_when_deleted(
        tmp_path: Path, make_app: Builder) -> None:
    """An entry line's row is ``file.md#key`` (eight hex digits) and follows its file; a file
    of the vault may be named so too (``scan.md#0123abcd``: no note, an attachment). Deleted,
    it stayed in the index through every sync."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Note.md").write_text("# Note\n\nbody\n", encoding="utf-8")
    for name in ("scan.md#0123abcd", "log.md#deadbeef-2"):
        (root / name).write_bytes(b"\x89PNG odd name")
    app, _ = make_app(root)
    app.sync()
    assert {"scan.md#0123abcd", "log.md#deadbeef-2"} <= app.store.file_index().keys()
    for name in ("scan.md#0123abcd", "log.md#deadbeef-2"):
        (root / name).unlink()
    assert app.sync().deleted == 2
    assert set(app.store.file_index()) == {"Note.md"}
    app.close()


def test_a_folder_of_many_notes_moved_is_paired_in_time_linear_in_its_notes(
        tmp_path: Path, make_app: Builder) -> None:
    """20,000 notes in one folder, the folder renamed: each deleted path was looked up in a
    set of every rename, made again for each path (quadratic: 28 s of CPU at 20,000 notes).
    12,000 renames here, the store's writes left out: 6.2 s of CPU before, 2 ms now."""
    import time

    from daemon.sync import Syncer, SyncPlan, _NoProgress, _Work
    from magma.store import IndexedFile

    root = tmp_path / "vault"
    (root / "Inbox").mkdir(parents=True)
    for n in range(3):
        (root / "Inbox" / f"n{n}.md").write_text(f"# n{n}\n\nbody {n}\n", encoding="utf-8")
    app, _ = make_app(root)
    app.sync()
    (root / "Inbox").rename(root / "Moved")
    assert len(app.make_syncer().sync_paths({"Inbox", "Moved"}).renamed) == 3
    app.close()

    old = [f"Inbox/n{n:05d}.md" for n in range(12_000)]
    index = {p: IndexedFile(p, "note", 10, 1, f"{n:032x}", f"id{n}", None)
             for n, p in enumerate(old)}
    written: list[list[str]] = []

    class Pairing(Syncer):  # the pairing only: the writes of the store left out
        def __init__(self) -> None:
            self.recorder = None

        def _write(self, work: _Work, deletes: Sequence[str], bar: object,
                   index: object) -> tuple[int, int, int]:
            written.append(list(deletes))
            return 0, 0, 0

    started = time.process_time()
    Pairing()._execute(SyncPlan((), (), tuple(old), 0), index, _Work(),
                       [(p, p.replace("Inbox/", "Moved/")) for p in old], _NoProgress())
    spent = time.process_time() - started
    assert sorted(written[0]) == old  # the old paths' rows go, as renames
    assert spent < 1.5, f"{spent:.1f} s of CPU to pair 12,000 renames"
