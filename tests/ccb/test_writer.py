"""Compare-before-write: replace when unchanged, merge disjoint edits, fork a conflict copy."""

from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.merge import merge_note
from ccb.parse import detect_conflict_copy
from ccb.writer import NoteWriter, conflict_copy_path, sha256_hex
from config.errors import StaleWriteError, VaultError

BASE = (
    b"---\nname: Timeouts\ntype: feedback\nversion: 1\n---\n"
    b"# Rule\n\nAlways set a timeout.\n\n## Why\n\nThe API hangs.\n"
)


def fixed() -> datetime:
    return datetime(2026, 11, 30, 10, 15, 0, tzinfo=UTC)


def test_new_file_then_replace_when_unchanged(writer: NoteWriter) -> None:
    first = writer.write("Memory/t.md", BASE, base=None)
    assert first.status == "created" and first.content_hash == sha256_hex(BASE)
    new = BASE.replace(b"version: 1", b"version: 2")
    second = writer.write("Memory/t.md", new, base=BASE)
    assert second.status == "written" and writer.read("Memory/t.md") == new
    assert writer.write("Memory/t.md", new, base=BASE).status == "unchanged"


def test_user_edit_of_another_section_is_merged(writer: NoteWriter) -> None:
    writer.write("Memory/t.md", BASE, base=None)
    theirs = BASE.replace(b"The API hangs.", b"The API hangs under load.")
    (writer.root / "Memory/t.md").write_bytes(theirs)  # the user, in Obsidian
    ours = BASE.replace(b"version: 1", b"version: 2").replace(
        b"Always set a timeout.", b"Always set a 30 s timeout.")
    outcome = writer.write("Memory/t.md", ours, base=BASE)
    assert outcome.status == "merged"
    merged = writer.read("Memory/t.md")
    assert merged is not None
    assert b"version: 2" in merged and b"30 s timeout" in merged and b"under load" in merged


def test_same_section_edited_both_ways_forks_a_conflict_copy(writer: NoteWriter) -> None:
    writer.write("Memory/t.md", BASE, base=None)
    theirs = BASE.replace(b"Always set a timeout.", b"Always set a 10 s timeout.")
    (writer.root / "Memory/t.md").write_bytes(theirs)
    ours = BASE.replace(b"Always set a timeout.", b"Always set a 60 s timeout.")
    outcome = writer.write("Memory/t.md", ours, base=BASE)
    assert outcome.status == "conflict"
    assert outcome.conflict_path == "Memory/t.conflict-20261130-101500.md"
    assert writer.read("Memory/t.md") == theirs  # the user's file is untouched
    assert writer.read(outcome.conflict_path) == ours  # and ours is beside it
    assert detect_conflict_copy(outcome.conflict_path) == "Memory/t.md"
    again = writer.write("Memory/t.md", ours.replace(b"60 s", b"90 s"), base=BASE)
    assert again.conflict_path == "Memory/t.conflict2-20261130-101500.md"


def test_same_property_changed_both_ways_is_a_conflict() -> None:
    theirs = BASE.replace(b"type: feedback", b"type: project")
    ours = BASE.replace(b"type: feedback", b"type: user")
    assert merge_note(BASE, ours, theirs) is None


def test_merge_keeps_their_crlf_and_bom() -> None:
    base = BASE
    theirs = b"\xef\xbb\xbf" + BASE.replace(b"\n", b"\r\n").replace(b"hangs", b"stalls")
    base_crlf = b"\xef\xbb\xbf" + BASE.replace(b"\n", b"\r\n")
    ours = base_crlf.replace(b"type: feedback", b"type: feedback\r\npinned: true")
    merged = merge_note(base_crlf, ours, theirs)
    assert merged is not None and merged.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"pinned: true\r\n" in merged and b"stalls" in merged
    assert b"\n" not in merged.replace(b"\r\n", b"")
    assert merge_note(base, base, theirs) == theirs


def test_deleted_meanwhile_is_not_resurrected(writer: NoteWriter) -> None:
    writer.write("Memory/t.md", BASE, base=None)
    (writer.root / "Memory/t.md").unlink()
    with pytest.raises(StaleWriteError, match="deleted since it was read"):
        writer.write("Memory/t.md", BASE + b"more\n", base=BASE)


@pytest.mark.parametrize("path", ["../outside.md", "Memory/../../outside.md", "/etc/passwd"])
def test_paths_outside_the_vault_are_refused(writer: NoteWriter, path: str) -> None:
    with pytest.raises(VaultError, match="leaves the vault"):
        writer.write(path, b"x", base=None)


def test_conflict_copy_names() -> None:
    now = fixed()
    assert conflict_copy_path("a/b.md", now) == "a/b.conflict-20261130-101500.md"
    assert conflict_copy_path("a.b/c", now) == "a.b/c.conflict-20261130-101500"


lines = st.lists(st.text("abc xyz", min_size=1, max_size=8), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(ours_extra=lines, theirs_extra=lines)
def test_merge_never_loses_either_sides_new_section(
    ours_extra: list[str], theirs_extra: list[str]
) -> None:
    ours = BASE + b"\n## Ours\n\n" + "\n".join(ours_extra).encode() + b"\n"
    theirs = BASE.replace(b"The API hangs.", ("\n".join(theirs_extra)).encode())
    merged = merge_note(BASE, ours, theirs)
    assert merged is not None
    for line in ours_extra + theirs_extra:
        assert line.encode() in merged


def _hammer(vault: str, state: str, marker: str, count: int) -> None:
    writer = NoteWriter(Path(vault), Path(state))
    for i in range(count):
        current = writer.read("Memory/shared.md") or b""
        new = current + f"- {marker}-{i}\n".encode()
        writer.write("Memory/shared.md", new, base=current if current else None)


def test_writer_processes_queue_behind_each_other_and_lose_nothing(tmp_path: Path) -> None:
    vault, state = tmp_path / "vault", tmp_path / "state"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Memory" / "shared.md").write_bytes(b"# Shared\n\n")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(vault), str(state), f"p{n}", 15))
             for n in range(3)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    everything = b"".join(p.read_bytes() for p in (vault / "Memory").glob("*.md"))
    for n in range(3):
        for i in range(15):
            assert f"- p{n}-{i}\n".encode() in everything


STAMPED = (
    b"---\nname: Log\ntype: project\nupdated: 2026-11-30T10:00:00.000001Z\n---\n"
    b"# Log\n\n- first\n"
)


def _ours(base: bytes, stamp: str, line: str) -> bytes:
    return base.replace(b"updated: 2026-11-30T10:00:00.000001Z",
                        f"updated: {stamp}".encode()) + f"- {line}\n".encode()


def test_an_editor_saving_over_our_write_is_healed(writer: NoteWriter) -> None:
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    assert writer.write("Memory/log.md", ours, base=STAMPED).status == "written"
    clobber = STAMPED + b"- typed in obsidian\n"  # loaded before our write, saved after
    (writer.root / "Memory/log.md").write_bytes(clobber)
    healed = writer.heal()
    assert healed is not None and [o.status for o in healed] == ["healed"]
    text = writer.read("Memory/log.md")
    assert text is not None
    assert b"- typed in obsidian\n" in text and b"- ours\n" in text
    # the repair is an edit of its own, with a fresh stamp: neither the buffer's nor ours,
    # so a later save built on our write is told apart from one built on the repair
    assert b"updated: 2026-11-30T10:15:00" in text
    assert writer.heal() == []  # healed once; the result is ours now


def test_a_folder_reported_beside_a_written_file_does_not_stop_its_repair(
        writer: NoteWriter) -> None:
    # the watcher reports the folder the first remember made ("Memory") in the same batch
    # as the file: reading the folder failed, and the daemon dropped every repair it waited
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    (writer.root / "Memory/log.md").write_bytes(STAMPED + b"- typed in obsidian\n")
    healed = writer.heal(["Memory", "Memory/log.md"], wait=False)
    assert healed is not None and [o.status for o in healed] == ["healed"]


def test_a_user_edit_built_on_our_write_is_left_alone(writer: NoteWriter) -> None:
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours wrong")
    writer.write("Memory/log.md", ours, base=STAMPED)
    fixed_by_user = ours.replace(b"- ours wrong\n", b"- ours right\n")
    (writer.root / "Memory/log.md").write_bytes(fixed_by_user)
    assert writer.heal() == []
    assert writer.read("Memory/log.md") == fixed_by_user


def test_the_next_write_heals_first_and_a_clash_forks(writer: NoteWriter) -> None:
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    clobber = STAMPED.replace(b"- first\n", b"- FIRST rewritten\n")
    (writer.root / "Memory/log.md").write_bytes(clobber)  # clobbered and rewrote a line
    later = clobber.replace(b"# Log", b"# Log book")
    outcome = writer.write("Memory/log.md", later, base=clobber)
    everything = b"".join(p.read_bytes() for p in (writer.root / "Memory").glob("*.md"))
    assert b"- ours\n" in everything and b"FIRST rewritten" in everything
    assert outcome.status in {"merged", "conflict", "written"}
    assert any(".conflict-" in p.name for p in (writer.root / "Memory").iterdir())


def _writer_with_editor_saving_at_swap(tmp_path: Path, theirs: bytes) -> NoteWriter:
    """A writer over ``Memory/log.md`` (holding STAMPED) whose first write is met by an
    editor saving ``theirs`` at the worst moment: after our compare, just before our swap
    (the on_written hook runs exactly there)."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    target = vault / "Memory" / "log.md"
    target.write_bytes(STAMPED)
    fired: list[str] = []

    def editor_saves(path: str, _digest: str) -> None:
        if not fired:
            fired.append(path)
            target.write_bytes(theirs)

    return NoteWriter(vault, tmp_path / "state", on_written=editor_saves)


def test_an_editor_save_between_compare_and_swap_is_merged_not_lost(tmp_path: Path) -> None:
    writer = _writer_with_editor_saving_at_swap(
        tmp_path, STAMPED + b"- typed at the worst moment\n")
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    outcome = writer.write("Memory/log.md", ours, base=STAMPED)
    text = writer.read("Memory/log.md")
    assert outcome.status == "merged" and text is not None
    assert b"- typed at the worst moment\n" in text and b"- ours\n" in text


def test_a_clashing_save_in_that_moment_goes_back_with_ours_beside_it(tmp_path: Path) -> None:
    theirs = STAMPED.replace(b"- first\n", b"- first, rewritten by the user\n")
    writer = _writer_with_editor_saving_at_swap(tmp_path, theirs)
    ours = STAMPED.replace(b"- first\n", b"- first, rewritten by dreamd\n")
    outcome = writer.write("Memory/log.md", ours, base=STAMPED)
    assert outcome.status == "conflict" and outcome.conflict_path
    assert writer.read("Memory/log.md") == theirs
    assert writer.read(outcome.conflict_path) == ours


def test_a_hand_edited_generated_file_is_kept_beside_it(writer: NoteWriter) -> None:
    assert writer.write_generated("Memory/MEMORY.md", b"- [a](a.md) \xe2\x80\x94 one\n").status \
        == "created"
    assert writer.write_generated("Memory/MEMORY.md", b"- [a](a.md) \xe2\x80\x94 two\n") \
        .conflict_path is None  # ours, regenerated: nothing to keep
    hand = b"- [a](a.md) \xe2\x80\x94 two\n- my own note about the index\n"
    (writer.root / "Memory/MEMORY.md").write_bytes(hand)
    outcome = writer.write_generated("Memory/MEMORY.md", b"- [a](a.md) \xe2\x80\x94 three\n")
    assert outcome.conflict_path is not None
    assert (writer.root / outcome.conflict_path).read_bytes() == hand
    assert writer.read("Memory/MEMORY.md") == b"- [a](a.md) \xe2\x80\x94 three\n"


def test_a_hand_line_saved_into_a_generated_file_during_its_write_outlives_the_next(
    tmp_path: Path,
) -> None:
    """The user saves a line into ``MEMORY.md`` at the worst moment of a rebuild (after the
    compare, before the swap): it is merged in, and the file is then not what dreamd
    generated — the next rebuild keeps it as a conflict copy instead of overwriting it as
    dreamd's own (found by ``bench/soak.py``)."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    target = vault / "Memory" / "MEMORY.md"
    one = b"# Memory index\n\n## User\n\n- [a](a.md) \xe2\x80\x94 one\n"
    hand = one + b"- my own line, typed during the rebuild\n"
    armed: list[bool] = []

    def editor_saves(path: str, _digest: str) -> None:
        if armed and path == "Memory/MEMORY.md":
            armed.clear()
            target.write_bytes(hand)

    writer = NoteWriter(vault, tmp_path / "state", on_written=editor_saves)
    writer.write_generated("Memory/MEMORY.md", one)
    armed.append(True)
    two = one.replace(b"## User\n\n", b"## User\n\n- [b](b.md) \xe2\x80\x94 two\n")
    writer.write_generated("Memory/MEMORY.md", two)
    assert b"- my own line" in target.read_bytes()  # merged with the rebuild
    three = two + b"- [c](c.md) \xe2\x80\x94 three\n"
    outcome = writer.write_generated("Memory/MEMORY.md", three)
    assert target.read_bytes() == three
    assert outcome.conflict_path is not None
    assert b"- my own line" in (vault / outcome.conflict_path).read_bytes()


def test_a_file_deleted_and_made_anew_is_not_a_lost_update(writer: NoteWriter) -> None:
    writer.write("Memory/plan.md", STAMPED, base=None)
    (writer.root / "Memory/plan.md").unlink()
    (writer.root / "Memory/plan.md").write_bytes(b"---\nname: Other\n---\nsomething else\n")
    for _ in range(3):
        assert not writer.heal(["Memory/plan.md"])
    assert [p.name for p in (writer.root / "Memory").iterdir()] == ["plan.md"]


def test_a_line_deleted_while_a_plugin_restamped_is_not_brought_back(writer: NoteWriter) -> None:
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    edited = ours.replace(b"- ours\n", b"").replace(b"10:00:05.123456Z", b"11:11:11Z")
    (writer.root / "Memory/log.md").write_bytes(edited)
    assert not writer.heal()
    assert writer.read("Memory/log.md") == edited


def test_journal_entries_past_the_window_never_heal(writer: NoteWriter) -> None:
    import json

    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    journal_file = next(writer._journal.glob("journal.json"))
    journal = json.loads(journal_file.read_text())
    for entry in journal["Memory/log.md"]:
        entry["at"] -= 86_400
    journal_file.write_text(json.dumps(journal))
    (writer.root / "Memory/log.md").write_bytes(STAMPED)  # yesterday's file, restored
    assert not writer.heal()
    assert writer.read("Memory/log.md") == STAMPED


def test_a_file_caught_empty_mid_save_is_never_merged_as_a_deletion(writer: NoteWriter) -> None:
    """An editor saving in place truncates, then writes. A write of ours that finds the file
    empty waits for the editor's bytes instead of merging "everything deleted"."""
    import threading

    base = b"---\nname: launch\n---\nThe spring launch plan.\n"
    ours = b"---\nname: launch\nstatus: archived\n---\nThe spring launch plan.\n"
    target = writer.root / "Memory/launch.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")  # truncated: the editor has not written yet

    saved = base + b"A line the user just typed.\n"
    threading.Timer(0.1, lambda: target.write_bytes(saved)).start()
    outcome = writer.write("Memory/launch.md", ours, base=base)
    assert outcome.status == "merged"
    assert target.read_bytes() == saved.replace(b"name: launch\n",
                                                b"name: launch\nstatus: archived\n")

    target.write_bytes(b"")  # and an editor that never finishes: nothing is written
    with pytest.raises(StaleWriteError, match="empty"):
        writer.write("Memory/launch.md", ours, base=base)
    assert target.read_bytes() == b""


@pytest.mark.parametrize("named", ["Memory/alias.md", "Memory/./log.md"])
def test_a_delete_by_another_name_leaves_no_text_behind(writer: NoteWriter, tmp_path: Path,
                                                         named: str) -> None:
    """A forget through a link in the vault, or another spelling of the path, deletes the
    file and every journaled copy of its text (and the link: its name is the memory's)."""
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "the door code is 4471")
    writer.write("Memory/log.md", ours, base=STAMPED)
    (writer.root / "Memory" / "alias.md").symlink_to("log.md")
    assert writer.delete(named, expect=ours) > 0
    assert not (writer.root / "Memory" / "log.md").exists()
    if named == "Memory/alias.md":
        assert not (writer.root / "Memory" / "alias.md").is_symlink()
    kept = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert b"4471" not in kept and b"# Log" not in kept


def test_a_stale_buffer_saved_at_the_swap_does_not_undo_our_earlier_write(
    tmp_path: Path,
) -> None:
    """The editor loaded the file before our first write and saves that buffer (with its own
    line) just as our second write swaps in: what it displaced lacks our first line because
    it is older, not because the user deleted it. Both of our lines and theirs stay."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    target = vault / "Memory" / "log.md"
    target.write_bytes(STAMPED)
    puts: list[str] = []

    def editor_saves(_path: str, _digest: str) -> None:
        puts.append(_path)
        if len(puts) == 2:  # at the second write's swap
            target.write_bytes(STAMPED + b"- typed in an old buffer\n")

    writer = NoteWriter(vault, tmp_path / "state", on_written=editor_saves)
    one = _ours(STAMPED, "2026-11-30T10:00:05.000001Z", "one")
    writer.write("Memory/log.md", one, base=STAMPED)
    two = one.replace(b"10:00:05.000001Z", b"10:00:06.000001Z") + b"- two\n"
    writer.write("Memory/log.md", two, base=one)
    text = writer.read("Memory/log.md")
    assert text is not None
    for line in (b"- one\n", b"- two\n", b"- typed in an old buffer\n"):
        assert line in text


def test_a_conflict_copy_of_a_file_with_a_long_name_can_be_written(tmp_path: Path) -> None:
    """A name near the 255-byte limit (Chinese: 3 bytes a character) plus the conflict stamp
    would be too long for the file system; the copy's stem is cut and nothing is lost."""
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    writer = NoteWriter(tmp_path / "vault", tmp_path / "state", clock=fixed)
    name = "Memory/" + "长" * 80 + ".md"  # 240 bytes + ".md"
    base = b"---\nname: x\n---\nfirst line\n"
    writer.write(name, base, base=None)
    (writer.root / name).write_bytes(base.replace(b"first line", b"theirs"))
    outcome = writer.write(name, base.replace(b"first line", b"ours"), base=base)
    assert outcome.status == "conflict" and outcome.conflict_path
    assert len(outcome.conflict_path.rsplit("/", 1)[-1].encode()) <= 255
    assert writer.read(outcome.conflict_path) == base.replace(b"first line", b"ours")
    assert conflict_copy_path("Memory/x.md", fixed()) == "Memory/x.conflict-20261130-101500.md"


def test_a_writer_lock_held_too_long_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process keeps the writer lock (a long dream, a stuck process): a write gives
    up after the timeout with a LockError that says so, and writes nothing."""
    import ccb.writer as writer_module
    from config.errors import LockError

    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    holder = NoteWriter(tmp_path / "vault", tmp_path / "state")
    monkeypatch.setattr(writer_module, "WRITER_LOCK_TIMEOUT_S", 0.2)
    waiting = NoteWriter(tmp_path / "vault", tmp_path / "state")
    # (held by the first writer, as another process would hold it)
    with holder.batch(), pytest.raises(LockError, match="writer lock"):
        waiting.write("Memory/x.md", BASE, base=None)
    assert waiting.read("Memory/x.md") is None
    assert waiting.write("Memory/x.md", BASE, base=None).status == "created"


def test_a_batchs_writes_keep_the_writer_lock_and_another_thread_waits_for_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writes of a batch do not take the process lock again (the batch holds it): it
    stays held from the first write to the end of the batch, another process gives up on it
    meanwhile, and another thread of this process writes only once the batch is over."""
    import threading

    import ccb.writer as writer_module
    from config.errors import LockError

    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    writer = NoteWriter(tmp_path / "vault", tmp_path / "state")
    monkeypatch.setattr(writer_module, "WRITER_LOCK_TIMEOUT_S", 0.2)
    other_process = NoteWriter(tmp_path / "vault", tmp_path / "state")  # (its own lock)
    order: list[str] = []
    started = threading.Event()

    def other_thread() -> None:
        started.set()
        writer.write("Memory/b.md", BASE, base=None)
        order.append("other thread")

    thread = threading.Thread(target=other_thread)
    with writer.batch():
        writer.write("Memory/a.md", BASE, base=None)
        with pytest.raises(LockError):
            other_process.write("Memory/c.md", BASE, base=None)
        writer.write("Memory/a.md", BASE + b"more\n", base=BASE)
        thread.start()
        assert started.wait(5)
        thread.join(0.3)
        assert thread.is_alive()  # waiting for the batch
        order.append("batch")
    thread.join(5)
    assert order == ["batch", "other thread"]
    assert other_process.write("Memory/c.md", BASE, base=None).status == "created"
    assert writer.read("Memory/a.md") == BASE + b"more\n"


def test_bytes_of_another_process_batch_are_named_once_the_batch_is_over(
        writer: NoteWriter, tmp_path: Path) -> None:
    """``remember`` through the Obsidian CLI: the bytes are on disk while its batch still
    holds their origin in memory (it writes ``MEMORY.md`` next). The daemon's indexer, another
    process, must name them dreamd's write, not the user's (a race CI met under load)."""
    import threading
    import time as clock

    from ccb.write_transport import sha256_hex

    daemon_side = NoteWriter(tmp_path / "vault", tmp_path / "state")  # its own lock handle
    data = b"---\ntype: reference\n---\nThe kiln shelf is 40 cm wide.\n"
    written = threading.Event()

    def remember() -> None:
        with writer.batch():
            writer.write("Memory/kiln.md", data, base=None, origin="api", change="new")
            written.set()
            clock.sleep(0.5)  # MEMORY.md and the rest of the batch

    worker = threading.Thread(target=remember)
    worker.start()
    assert written.wait(10)
    assert (tmp_path / "vault" / "Memory" / "kiln.md").read_bytes() == data
    found = daemon_side.origin_of(sha256_hex(data))
    worker.join()
    assert found is not None and found[0] == "api"
    assert daemon_side.origin_of(sha256_hex(b"someone else's bytes")) is None


def _each_once(writer: NoteWriter, lines: tuple[bytes, ...]) -> None:
    """Each of ``lines`` is in ``Memory/log.md`` once: nothing lost, nothing twice."""
    text = writer.read("Memory/log.md")
    assert text is not None
    for line in lines:
        assert text.count(line) == 1, (line, text)


def _stamped_log(tmp_path: Path) -> tuple[Path, Path]:
    """A vault whose ``Memory/log.md`` holds :data:`STAMPED` -> ``(vault, that file)``."""
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    target = vault / "Memory" / "log.md"
    target.write_bytes(STAMPED)
    return vault, target


def test_an_editor_that_loads_our_raced_write_and_saves_it_later_loses_nothing(
    tmp_path: Path,
) -> None:
    """An editor saves its line between our compare and our swap, so our swap displaces it:
    until the merge of both goes in, the file holds our write alone. The editor loads the
    file in that moment and saves that buffer, with its next line, just after the merge went
    in. Its save is built on our first write, not on the merge: the line the merge held for
    it comes back with the next repair, and nothing of anyone's is lost."""
    vault, target = _stamped_log(tmp_path)
    puts: list[str] = []
    loaded: list[bytes] = []

    def editor(path: str, _digest: str) -> None:
        puts.append(path)
        if len(puts) == 1:  # after our compare, before our swap: the editor saves
            target.write_bytes(STAMPED + b"- seven\n")
        elif len(puts) == 2:  # before the merge goes in: the editor loads our write
            loaded.append(target.read_bytes())

    writer = NoteWriter(vault, tmp_path / "state", on_written=editor)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    assert writer.write("Memory/log.md", ours, base=STAMPED).status == "merged"
    assert loaded == [ours]
    target.write_bytes(ours + b"- eight\n")  # the editor saves what it loaded, and its line
    writer.heal(["Memory/log.md"])
    _each_once(writer, (b"- ours\n", b"- seven\n", b"- eight\n"))


def test_a_line_deleted_at_our_swap_stays_deleted_when_an_older_moment_is_saved_back(
    tmp_path: Path,
) -> None:
    """Our write meets two saves in its swap moments: the editor's line, then the user deleting
    our new line — so our write goes in three times, the second holding our line and the
    editor's. The editor loads that second one, and saves it with its next line after the
    third went in. The repair brings back what the third has that the buffer had not, and
    keeps out what the third took out of it: the line the user deleted stays deleted."""
    vault, target = _stamped_log(tmp_path)
    puts: list[str] = []
    loaded: list[bytes] = []

    def at_swap(path: str, _digest: str) -> None:
        puts.append(path)
        if len(puts) == 1:  # the editor saves its line
            target.write_bytes(STAMPED + b"- seven\n")
        elif len(puts) == 2:  # the user deletes our line, which they see
            target.write_bytes(target.read_bytes().replace(b"- ours\n", b""))
        elif len(puts) == 3:  # the editor loads the file: our line and its own
            loaded.append(target.read_bytes())

    writer = NoteWriter(vault, tmp_path / "state", on_written=at_swap)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    assert len(loaded) == 1 and b"- ours\n" in loaded[0] and b"- seven\n" in loaded[0]
    target.write_bytes(loaded[0] + b"- eight\n")  # the editor saves what it loaded
    writer.heal(["Memory/log.md"])
    text = writer.read("Memory/log.md")
    assert text is not None
    assert text.count(b"- seven\n") == 1 and text.count(b"- eight\n") == 1
    assert b"- ours\n" not in text


def test_a_save_built_on_our_write_after_a_repair_keeps_what_the_repair_merged(
    writer: NoteWriter,
) -> None:
    """Two editors: A loaded the memory before our write, B after it. A saves: the repair
    merges our line back into A's save. Then B saves its buffer — our write plus B's line,
    which lacks A's. The repair had a stamp of its own, so B's save is known for one built
    on our write, not on the repair: A's line comes back. (A repair that kept our write's
    stamp took B's save for an edit of the repair, and A's line was lost.)"""
    writer.write("Memory/log.md", STAMPED, base=None)
    ours = _ours(STAMPED, "2026-11-30T10:00:05.123456Z", "ours")
    writer.write("Memory/log.md", ours, base=STAMPED)
    target = writer.root / "Memory/log.md"
    target.write_bytes(STAMPED + b"- typed by A\n")  # A's buffer predates our write
    assert [o.status for o in writer.heal() or []] == ["healed"]
    target.write_bytes(ours + b"- typed by B\n")  # B's buffer was our write
    writer.heal()
    _each_once(writer, (b"- ours\n", b"- typed by A\n", b"- typed by B\n"))


def test_a_buffer_built_on_a_write_a_repair_merged_back_is_still_repaired(
    writer: NoteWriter,
) -> None:
    """Two writes of ours, one and two. Editor A's buffer predates both, editor B's was the
    first write. A saves: both writes are merged back into its save. B saves: what it lacks
    — write two and A's line — comes back, because the first write stays in the journal
    after the repair (it was on disk: an editor may hold a buffer built on it)."""
    writer.write("Memory/log.md", STAMPED, base=None)
    one = _ours(STAMPED, "2026-11-30T10:00:05.000001Z", "one")
    writer.write("Memory/log.md", one, base=STAMPED)
    two = one.replace(b"10:00:05.000001Z", b"10:00:06.000001Z") + b"- two\n"
    writer.write("Memory/log.md", two, base=one)
    target = writer.root / "Memory/log.md"
    target.write_bytes(STAMPED + b"- typed by A\n")
    writer.heal()
    target.write_bytes(one + b"- typed by B\n")
    writer.heal()
    _each_once(writer, (b"- one\n", b"- two\n", b"- typed by A\n", b"- typed by B\n"))
    assert not list((writer.root / "Memory").glob("*.conflict*"))
