"""The watcher's change handler, fed watchfiles-shaped batches over real files and a real store.

Each test does to the files what an editor, a sync tool or git does, then hands the handler
the batch watchfiles reports for it (unordered, event kinds unreliable: cases 11 and 12), and
checks that the index equals the disk. The embedder is the token-hash fake (conftest).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from watchfiles import Change

from daemon.app import App
from daemon.watch import ChangeHandler, relative_paths

Builder = Callable[..., tuple[App, object]]
A, M, D = Change.added, Change.modified, Change.deleted


@pytest.fixture
def synced(vault: Path, make_app: Builder) -> tuple[App, ChangeHandler, object]:
    app, fake = make_app(vault)
    app.sync()
    return app, ChangeHandler(vault, app.make_syncer(), settle_s=0.0), fake


def batch(root: Path, *events: tuple[Change, str]) -> set[tuple[Change, str]]:
    return {(change, str(root / rel)) for change, rel in events}


def indexed(app: App) -> set[str]:
    return set(app.store.file_index())


def on_disk(app: App) -> set[str]:
    from ccb.scan import scan_vault

    return {e.path for e in scan_vault(app.vault_root, app.vault_filter).entries}


def test_atomic_save_is_a_modify_and_the_temp_file_is_never_indexed(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    before = app.store.file_index()["Welcome.md"]
    tmp = vault / ".goutputstream-ABC123"
    tmp.write_text("# Welcome\n\nversion 5\n", encoding="utf-8")
    tmp.replace(vault / "Welcome.md")
    result = handler.apply_changes(batch(vault, (A, "Welcome.md"), (A, tmp.name), (D, tmp.name)))
    assert result.report is not None and result.error is None
    assert result.report.modified == 1 and result.report.added == 0
    after = app.store.file_index()["Welcome.md"]
    assert after.note_id == before.note_id and after.content_hash != before.content_hash
    assert indexed(app) == on_disk(app)
    assert app.search("version 5", limit=1)[0].path == "Welcome.md"


@pytest.mark.parametrize("name", ["Welcome.md~", "4913", "Welcome.md.new", ".Welcome.md.swp",
                                  "Welcome.md.tmp", ".syncthing.Welcome.md.tmp",
                                  "Welcome.sync-conflict-20240305-184500-ABCDEF1.md",
                                  ".Welcome.md.icloud", "x.dreamd-tmp"])
def test_temp_conflict_and_placeholder_files_are_ignored(
    synced: tuple[App, ChangeHandler, object], vault: Path, name: str
) -> None:
    app, handler, _ = synced
    (vault / name).write_text("# noise\n", encoding="utf-8")
    result = handler.apply_changes(batch(vault, (A, name)))
    assert name not in indexed(app)
    assert result.report is None or result.report.added == 0


def test_added_and_deleted_in_one_batch_follows_the_disk_when_the_file_exists(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    (vault / "Flicker.md").write_text("# Flicker\n\nstill here\n", encoding="utf-8")
    handler.apply_changes(batch(vault, (A, "Flicker.md"), (D, "Flicker.md")))
    assert "Flicker.md" in indexed(app)


def test_deleted_and_modified_in_one_batch_follows_the_disk_when_the_file_is_gone(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    (vault / "Flicker.md").write_text("# Flicker\n", encoding="utf-8")
    handler.apply_changes(batch(vault, (A, "Flicker.md")))
    (vault / "Flicker.md").unlink()
    handler.apply_changes(batch(vault, (D, "Flicker.md"), (M, "Flicker.md")))
    assert "Flicker.md" not in indexed(app)
    assert indexed(app) == on_disk(app)


def test_folder_rename_moves_children_that_sent_no_events(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, fake = synced
    old = {p: f.note_id for p, f in app.store.file_index().items() if p.startswith("Baking/")}
    assert len(old) >= 2
    (vault / "Baking").rename(vault / "Kitchen")
    calls = len(fake.calls)  # type: ignore[attr-defined]
    result = handler.apply_changes(batch(vault, (D, "Baking"), (A, "Kitchen")))
    assert result.report is not None
    assert len(result.report.renamed) == len(old)
    new = app.store.file_index()
    for path, note_id in old.items():
        assert new["Kitchen/" + path.removeprefix("Baking/")].note_id == note_id
    assert not any(p.startswith("Baking/") for p in new)
    assert len(fake.calls) == calls  # type: ignore[attr-defined]  # same titles: no re-embed
    assert indexed(app) == on_disk(app)


def test_folder_delete_removes_every_child(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    import shutil

    shutil.rmtree(vault / "Daily")
    handler.apply_changes(batch(vault, (D, "Daily")))
    assert not any(p.startswith("Daily/") for p in indexed(app))
    assert indexed(app) == on_disk(app)


def test_case_only_rename_keeps_the_note(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    note_id = app.store.file_index()["Welcome.md"].note_id
    (vault / "Welcome.md").rename(vault / "welcome.md")
    result = handler.apply_changes(batch(vault, (D, "Welcome.md"), (A, "welcome.md")))
    assert result.report is not None and result.report.renamed == (("Welcome.md", "welcome.md"),)
    assert app.store.file_index()["welcome.md"].note_id == note_id


def test_a_momentarily_empty_file_is_rechecked_before_good_content_is_replaced(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    note = vault / "Welcome.md"
    note.write_bytes(b"")  # truncate-then-write: the watcher fires between the two

    def finish() -> None:
        time.sleep(0.05)
        note.write_text("# Welcome\n\nrewritten in place\n", encoding="utf-8")

    writer = threading.Thread(target=finish)
    writer.start()
    handler.apply_changes(batch(vault, (M, "Welcome.md")))
    writer.join()
    assert app.store.file_index()["Welcome.md"].size == note.stat().st_size > 0


def test_git_pull_of_hundreds_of_files_in_one_batch(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    events: list[tuple[Change, str]] = []
    (vault / "Imported").mkdir()
    for i in range(300):
        rel = f"Imported/Note {i:03d}.md"
        (vault / rel).write_text(f"# Note {i}\n\nimported body {i}\n", encoding="utf-8")
        events.append((A, rel))
    for path in list((vault / "Daily").glob("*.md")):
        path.write_text(path.read_text(encoding="utf-8") + "\npulled\n", encoding="utf-8")
        events.append((M, path.relative_to(vault).as_posix()))
    result = handler.apply_changes(batch(vault, *events))
    assert result.report is not None and result.report.added == 300
    assert indexed(app) == on_disk(app)


def test_one_bad_file_never_stops_the_batch(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    app, handler, _ = synced
    (vault / "Latin1.md").write_bytes(b"# Caf\xe9\n\nna\xefve bytes\n")
    (vault / "Broken.md").write_bytes(b"---\nkey: [unclosed\n---\nbody\n")
    (vault / "Good.md").write_text("# Good\n\nfine\n", encoding="utf-8")
    result = handler.apply_changes(
        batch(vault, (A, "Latin1.md"), (A, "Broken.md"), (A, "Good.md")))
    assert result.report is not None
    assert {"Latin1.md", "Broken.md", "Good.md"} <= indexed(app)
    assert {p.path for p in result.report.problems} >= {"Latin1.md", "Broken.md"}


def test_a_batch_that_would_empty_the_index_is_refused_and_kept_pending(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    for i in range(30):
        (vault / f"extra {i}.md").write_text(f"# extra {i}\n", encoding="utf-8")
    app.sync()
    handler = ChangeHandler(vault, app.make_syncer(), settle_s=0.0)
    events = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if not rel.startswith((".", "Archive/Ignored")):
            path.unlink()
            events.append((D, rel))
    before = indexed(app)
    result = handler.apply_changes(batch(vault, *events))
    assert result.error and "max_delete_share" in result.error
    assert indexed(app) == before
    assert handler.pending


def test_a_path_applied_moments_ago_waits_until_it_settles(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault)
    app.sync()
    handler = ChangeHandler(vault, app.make_syncer(), settle_s=10.0)
    note = vault / "Ticker.md"
    note.write_text("tick 1\n", encoding="utf-8")
    handler.apply_changes(batch(vault, (A, "Ticker.md")), now=100.0)
    for i in range(2, 31):
        note.write_text(f"tick {i}\n", encoding="utf-8")
        result = handler.apply_changes(batch(vault, (M, "Ticker.md")), now=100.0 + i * 0.04)
        assert result.report is None  # deferred
    assert handler.pending == {"Ticker.md"} and not handler.due(105.0) and handler.due(111.0)
    result = handler.apply_changes(set(), now=111.0)
    assert result.report is not None and result.report.modified == 1
    assert app.search("tick 30", limit=1)[0].path == "Ticker.md"


def test_echo_of_our_own_write_is_a_touch_not_a_reindex(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    _, handler, fake = synced
    note = vault / "Welcome.md"
    data = note.read_bytes()
    note.write_bytes(data)  # same bytes, new mtime: what an echo of a write we made looks like
    calls = len(fake.calls)  # type: ignore[attr-defined]
    result = handler.apply_changes(batch(vault, (M, "Welcome.md")))
    assert result.report is not None and result.report.touched == 1
    assert result.report.modified == 0 and len(fake.calls) == calls  # type: ignore[attr-defined]


def test_paths_outside_the_vault_are_dropped(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    changes = {(A, str(root / "a.md")), (A, str(tmp_path / "elsewhere.md")),
               (M, str(root / "sub" / "b.md")), (D, str(root))}
    assert relative_paths(root, changes) == {"a.md", "sub/b.md"}


def test_vault_reached_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert relative_paths(link, {(A, str(real / "x.md"))}) == {"x.md"}
    assert relative_paths(link, {(A, str(link / "x.md"))}) == {"x.md"}


def test_a_refused_batch_retried_while_waiting_is_logged_once(
    synced: tuple[App, ChangeHandler, object], vault: Path
) -> None:
    """The daemon retries a refused mass delete on every tick while it waits: the log says
    so once, not once a second for as long as a drive stays unmounted."""
    import shutil

    from structlog.testing import capture_logs

    _app, handler, _ = synced
    gone = [child for child in vault.iterdir() if child.name != ".obsidian"]
    for child in gone:
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    with capture_logs() as logs:
        first = handler.apply_changes(batch(vault, *((D, c.name) for c in gone)))
        for _ in range(5):
            handler.apply_changes(set())
    assert first.failure is not None
    refused = [e for e in logs if e["event"] == "batch.refused"]
    assert [e["log_level"] for e in refused] == ["error"] + ["debug"] * 5
