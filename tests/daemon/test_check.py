"""Versions, rollback, ``dreamd check`` and conflicts on a copy of the demo vault.

Real LanceDB store and version archive in tmp_path, real files; the embedder is the token-hash
fake (conftest): nothing here is about meaning.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import store_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccb.owner import parse_owner
from ccb.parse import parse_note
from config.errors import ConflictNotFoundError, VaultError, VersionNotFoundError
from consistency.checker import Divergent, DuplicateId, Orphaned, Stale
from daemon.app import App
from magma.versions import NewVersion

Builder = Callable[..., tuple[App, object]]
MEMORY = "Memory/tests-hit-a-real-database.md"
DREAMD = Path(sys.executable).with_name("dreamd")


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    application, _ = make_app(vault)
    application.sync()
    return application


def _key(vault: Path, path: str = MEMORY) -> str:
    note = parse_note(path, (vault / path).read_bytes())
    assert note.memory is not None and note.memory.id
    return note.memory.id


def _append(vault: Path, path: str, line: str) -> bytes:
    target = vault / path
    target.write_bytes(target.read_bytes() + line.encode() + b"\n")
    return target.read_bytes()


def test_first_sync_versions_every_memory_and_the_vault_checks_clean(app: App,
                                                                     vault: Path) -> None:
    report = app.consistency().check()
    assert report.clean, report.findings
    assert report.read == 0  # nothing read again: stat and index rows agree, and the sync
    # recorded that MEMORY.md is what the memories give
    versions = app.versions.history(_key(vault))
    assert [(v.n, v.origin) for v in versions] == [(1, "user-edit")]
    assert app.versions.content(_key(vault), 1) == (vault / MEMORY).read_bytes()


def test_an_edit_while_nobody_watched_is_stale_and_fixed(app: App, vault: Path) -> None:
    edited = _append(vault, MEMORY, "- and the Redis cache too")
    service = app.consistency()
    report = service.check()
    assert [type(f.drift) for f in report.findings] == [Stale]
    fixed = service.fix(report, automatic_only=True)
    assert len(fixed.applied) == 1 and not fixed.left
    assert service.check().clean
    key = _key(vault)
    assert app.versions.content(key, 2) == edited
    stored = store_reads.get_file(app.store, MEMORY)
    assert stored is not None and stored.content_hash == hashlib.sha256(edited).hexdigest()


def test_rollback_writes_the_old_bytes_as_a_new_version_and_can_be_undone(
    app: App, vault: Path
) -> None:
    original = (vault / MEMORY).read_bytes()
    _append(vault, MEMORY, "- a second line")
    app.sync()
    changed = (vault / MEMORY).read_bytes()
    history = app.history()
    result = history.rollback(_key(vault), 1)
    assert result.status == "written" and (vault / MEMORY).read_bytes() == original
    versions = history.history(_key(vault))
    assert [(v.n, v.origin) for v in versions] == [(1, "user-edit"), (2, "user-edit"),
                                                   (3, "rollback")]
    assert "rollback to version 1" in versions[-1].change_log
    history.rollback(_key(vault), 2)  # the rollback of the rollback
    assert (vault / MEMORY).read_bytes() == changed
    assert "+- a second line" in history.diff(_key(vault), 1, 2)
    assert app.consistency().check().clean
    with pytest.raises(VersionNotFoundError, match="no version 9"):
        history.rollback(_key(vault), 9)


def test_rollback_keeps_unrecorded_current_content_first(app: App, vault: Path) -> None:
    edited = _append(vault, MEMORY, "- typed while the daemon was off")  # not synced
    app.history().rollback(_key(vault), 1)
    contents = [app.versions.content(_key(vault), v.n)
                for v in app.versions.history(_key(vault))]
    assert edited in contents  # CONVENTIONS.md rule 8: archived before it was replaced


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                        min_size=1, max_size=40), min_size=1, max_size=3))
def test_rollback_then_rollback_of_rollback_restores_the_bytes(
    app: App, vault: Path, lines: list[str]
) -> None:
    key = _key(vault)
    for line in lines:
        _append(vault, MEMORY, line.replace("\r", " ").replace("\n", " "))
    app.sync()
    before = (vault / MEMORY).read_bytes()
    head = app.versions.heads()[key].n
    history = app.history()
    history.rollback(key, 1)
    history.rollback(key, head)
    assert (vault / MEMORY).read_bytes() == before


def test_a_deleted_memory_is_tombstoned_after_the_grace_and_can_come_back(
    vault: Path, make_app: Builder
) -> None:
    app, _ = make_app(vault, **{"check.orphan_grace_s": "0"})
    app.sync()
    key, original = _key(vault), (vault / MEMORY).read_bytes()
    (vault / MEMORY).unlink()
    app.sync()
    assert key in app.recorder.pending()
    report = app.consistency().check()
    assert [f.drift for f in report.findings][:1] == [Orphaned(MEMORY, key, confirmed=True)]
    app.consistency().fix(report, automatic_only=True)
    versions = app.versions.history(key)
    assert [v.kind for v in versions] == ["edit", "tombstone"]
    assert app.consistency().check().clean
    app.history().rollback(key, 1)  # a deleted memory is restored from its history
    assert (vault / MEMORY).read_bytes() == original
    assert app.versions.heads()[key].kind == "edit"


def test_an_orphan_waits_for_the_grace_period(app: App, vault: Path) -> None:
    key = _key(vault)
    (vault / MEMORY).unlink()
    app.sync()
    report = app.consistency().check()
    assert [f.kind for f in report.findings] == ["orphaned", "memory_index_out_of_date"]
    fixed = app.consistency().fix(report, automatic_only=True)
    assert [f.kind for f, _ in fixed.applied] == ["memory_index_out_of_date"]
    # the daemon waits for the tombstone: editors delete and re-create files
    assert app.versions.heads()[key].kind == "edit"


def test_a_copied_memory_file_gets_its_own_id(app: App, vault: Path) -> None:
    copy = "Memory/tests-hit-a-real-database copy.md"
    shutil.copyfile(vault / MEMORY, vault / copy)
    app.sync()
    service = app.consistency()
    report = service.check()
    assert any(isinstance(f.drift, DuplicateId) for f in report.findings)
    service.fix(report, automatic_only=False)
    assert _key(vault, copy) != _key(vault)
    # two live memories saying the same thing now: a contradiction for the user (or a dream)
    assert [f.kind for f in service.check().findings] == ["contradiction"]


def test_a_crash_between_version_and_index_is_repaired(app: App, vault: Path) -> None:
    edited = _append(vault, MEMORY, "- written just before the crash")
    note = parse_note(MEMORY, edited)
    app.recorder.offer([(note, edited, None)])  # the version landed, the index row did not
    # and another crash lost a row the plain-text archive still holds
    app.versions._table.delete(f"memory_id = '{_key(vault)}' AND n = 1")
    service = app.consistency()
    kinds = sorted(f.kind for f in service.check().findings)
    assert kinds == ["archive_out_of_step", "stale"]
    service.fix(automatic_only=True)
    assert service.check().clean
    assert [v.n for v in app.versions.history(_key(vault))] == [1, 2]


def test_an_edit_after_a_write_killed_before_it_kept_its_base_is_not_undone(
    app: App, vault: Path
) -> None:
    """``dreamd remember`` killed (kill -9) after it wrote a memory and recorded its version 1,
    before this device kept that version as its base or indexed the file; the user then edits
    the memory. The edit is version 2, not a divergence from "another device", and ``check
    --fix`` never puts version 1 back over it (found by ``bench/soak.py``)."""
    from datetime import UTC, datetime

    from ccb.memory_file import NewMemory, render_memory

    path, key = "Memory/kiln-shelf-width.md", "01M90SOAKKI11ED0000000000A"
    now = datetime.now(UTC)
    data = render_memory(NewMemory(name="Kiln shelf width", description="The kiln shelf",
                                   type="project", id=key, created=now, updated=now,
                                   body="The kiln shelf is 40 cm wide.\n"))
    app.writer.write(path, data, base=None)  # what the killed process managed to do
    app.versions.record([NewVersion(key, path, data, "api", memory_type="project")])
    edited = _append(vault, path, "- typed after the crash")
    app.sync()
    service = app.consistency()
    service.fix(service.check(), automatic_only=False)
    assert (vault / path).read_bytes() == edited
    assert service.check().clean
    head = app.versions.history(key)[-1]
    assert (head.n, head.kind) == (2, "edit")
    assert head.content_hash == hashlib.sha256(edited).hexdigest()


def test_memory_index_out_of_date_is_rebuilt(app: App, vault: Path) -> None:
    (vault / "Memory" / "MEMORY.md").unlink()
    service = app.consistency()
    assert [f.kind for f in service.check().findings] == ["memory_index_out_of_date"]
    service.fix(automatic_only=True)
    assert (vault / "Memory" / "MEMORY.md").is_file() and service.check().clean


def test_divergence_of_a_project_memory_goes_to_review_and_resolves(
    app: App, vault: Path
) -> None:
    path = "Memory/kiln-first-firing-in-january.md"
    key = _key(vault, path)
    base = (vault / path).read_bytes()
    # another device recorded version 2 (simulated by recording it from here) ...
    theirs = base.replace(b"January", b"February")
    app.versions.record([NewVersion(key, path, theirs, "api", memory_type="project")])
    # ... while this vault's copy was edited differently
    ours = _append(vault, path, "- glaze firing a week later")
    service = app.consistency()
    report = service.check()
    assert [type(f.drift) for f in report.findings] == [Divergent]
    fixed = service.fix(report, automatic_only=False)
    assert "conflict" in fixed.applied[0][1]
    assert (vault / path).read_bytes() == ours  # the file stays as the user left it
    (record,) = service.conflicts()
    assert (vault / record.copy).read_bytes() == theirs
    assert [f.kind for f in service.check().findings] == ["open_conflict"]
    message = service.resolve(key, "magma")
    assert "kept magma" in message and not (vault / record.copy).exists()
    assert (vault / path).read_bytes() == theirs
    contents = {app.versions.content(key, v.n) for v in app.versions.history(key)
                if v.kind != "tombstone"}
    assert {base, theirs, ours} <= contents  # every side is in the history
    assert service.check().clean


def test_check_cli_exit_codes_and_json(vault: Path) -> None:
    """The CLI as a user runs it (real subprocesses, the real embedding model)."""
    env = {**os.environ, "DREAMD_VAULT__PATH": str(vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    assert run("sync").returncode == 0
    clean = run("check")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "clean" in clean.stdout
    _append(vault, MEMORY, "- edited")
    drift = run("check", "--json")
    assert drift.returncode == 1
    assert '"stale": 1' in drift.stdout
    fixed = run("check", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    history = run("history", _key(vault))
    assert history.returncode == 0 and "user-edit" in history.stdout
    assert run("rollback", _key(vault), "--to", "1").returncode == 0
    assert "rollback" in run("history", _key(vault)).stdout
    missing = run("rollback", _key(vault), "--to", "7")
    assert missing.returncode != 0 and "no version 7" in missing.stderr
    assert "Traceback" not in missing.stderr


# ---------------------------------------------------------------- found by review


def _conflict(app: App, vault: Path) -> tuple[str, str, bytes, bytes]:
    """A project memory whose file and history diverged, sent to review by check --fix."""
    path = "Memory/kiln-first-firing-in-january.md"
    key = _key(vault, path)
    theirs = (vault / path).read_bytes().replace(b"January", b"February")
    app.versions.record([NewVersion(key, path, theirs, "api", memory_type="project")])
    ours = _append(vault, path, "- glaze firing a week later")
    app.consistency().fix(automatic_only=False)
    return path, key, ours, theirs


def test_resolve_keeps_both_sides_even_when_they_no_longer_parse(app: App, vault: Path) -> None:
    path, key, _, _ = _conflict(app, vault)
    (record,) = app.consistency().conflicts()
    broken_copy = b"---\nname: [unclosed\n---\nmy notes on the copy\n"
    (vault / record.copy).write_bytes(broken_copy)
    broken_file = (vault / path).read_bytes().replace(b"type: project", b"type: projects")
    (vault / path).write_bytes(broken_file)
    app.consistency().resolve(key, "magma")
    contents = {app.versions.content(key, v.n) for v in app.versions.history(key)}
    assert broken_copy in contents and broken_file in contents


def test_a_deleted_conflict_copy_settles_for_the_file(app: App, vault: Path) -> None:
    path, key, ours, _ = _conflict(app, vault)
    (record,) = app.consistency().conflicts()
    (vault / record.copy).unlink()
    service = app.consistency()
    assert [f.kind for f in service.check().findings] == ["open_conflict"]
    service.fix(automatic_only=False)
    assert service.check().clean and not service.conflicts()
    assert (vault / path).read_bytes() == ours
    assert app.versions.content(key, app.versions.heads()[key].n) == ours


def test_resolve_after_the_memory_moved_on_refreshes_the_copy(app: App, vault: Path) -> None:
    path, key, ours, _ = _conflict(app, vault)
    newer = ours.replace(b"glaze firing", b"bisque firing")
    app.versions.record([NewVersion(key, path, newer, "api", memory_type="project")])
    with pytest.raises(ConflictNotFoundError, match="changed again elsewhere"):
        app.consistency().resolve(key, "magma")
    (record,) = app.consistency().conflicts()
    assert (vault / record.copy).read_bytes() == newer  # look again at the newest one
    app.consistency().resolve(key, "magma")
    assert (vault / path).read_bytes() == newer


def test_check_refuses_an_empty_vault_instead_of_tombstoning_everything(
    app: App, vault: Path, tmp_path: Path
) -> None:
    aside = tmp_path / "aside"
    shutil.move(vault, aside)
    vault.mkdir()
    with pytest.raises(VaultError, match="is the drive mounted"):
        app.consistency().check()
    assert all(h.kind == "edit" for h in app.versions.heads().values())


def test_an_owner_never_reads_another_owners_older_versions(app: App, vault: Path) -> None:
    service = app.memories(parse_owner("alice"))
    made = service.remember("My locker code is left of the kiln room door", type="user")
    path = vault / made.path
    path.write_bytes(path.read_bytes().replace(b"owner: alice\n", b""))  # now shared
    app.sync()
    bob = app.history(parse_owner("bob"))
    versions = bob.history(made.memory_id)
    assert [v.n for v in versions] == [2]  # version 1 was alice's alone
    with pytest.raises(VersionNotFoundError):
        bob.diff(made.memory_id, 1)
    with pytest.raises(VersionNotFoundError):
        bob.rollback(made.memory_id, 1)
    assert len(app.history(parse_owner("alice")).history(made.memory_id)) == 2


def test_odd_entries_in_the_memory_folder_are_skipped(app: App, vault: Path,
                                                      tmp_path: Path) -> None:
    (vault / "Memory" / "Ideas.md").mkdir()
    (vault / "Memory" / "Ideas.md" / "n.md").write_text("x\n", encoding="utf-8")
    (vault / "Memory" / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    outside = tmp_path / "outside.md"
    outside.write_bytes((vault / MEMORY).read_bytes() + b"SECRET OUTSIDE\n")
    linked = vault / "Memory" / "linked.md"
    linked.symlink_to(outside)
    _append(vault, MEMORY, "- edited")
    app.consistency().fix(automatic_only=False)
    assert b"SECRET OUTSIDE" not in (vault / "Memory" / "MEMORY.md").read_bytes()
    assert "SECRET OUTSIDE" not in app.history().diff(_key(vault), 1)


def test_corrupt_state_files_give_no_traceback(app: App, vault: Path) -> None:
    state = app.state_dir
    (state / "tombstones-pending.json").write_text('{"X": {"since": "2000-01-01"}}')
    (state / "conflicts.json").write_text(
        '{"A": {"memory_key": 5, "path": 7, "copy": 9, "head_n": "a", "opened": null},'
        ' "B": {"memory_key": "B", "path": "../../etc/passwd", "copy": "../../x",'
        ' "head_n": 1, "opened": "2026-01-01"}}')
    service = app.consistency()
    assert service.check().clean and service.conflicts() == []


def test_rollback_of_a_deleted_memory_rebuilds_memory_md(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"check.orphan_grace_s": "0"})
    app.sync()
    key = _key(vault)
    (vault / MEMORY).unlink()
    app.sync()
    app.consistency().fix(automatic_only=False)
    app.history().rollback(key, 1)
    assert app.consistency().check().clean


def test_an_edit_after_a_rollback_is_not_taken_for_an_editors_old_buffer(
    app: App, vault: Path
) -> None:
    """A rollback restores an old ``updated:`` stamp; the lost-update repair reads stamps, so
    it must not then 'repair' the user's next edit back to what was rolled back."""
    path = "Memory/kiln-first-firing-in-january.md"
    key = _key(vault, path)
    service = app.memories()
    service.remember("Kiln: first firing moved to January; circuit is 32 A",
                     type="project", subject="kiln.circuit")  # a dreamd write, journaled
    target = vault / path
    target.write_bytes(target.read_bytes().replace(b"32 A", b"16 A", 1))
    app.sync()
    app.history().rollback(key, 1)
    rolled = target.read_bytes()
    target.write_bytes(rolled.replace(b"32 A", b"25 A", 1))
    edited = target.read_bytes()
    assert app.writer.heal([path]) == []
    assert target.read_bytes() == edited
    assert not list((vault / "Memory").glob("*.conflict-*"))


@pytest.mark.parametrize("tamper", ["copy is the file", "copy is another memory", "bool head"])
def test_a_tampered_conflict_record_never_deletes_a_file(app: App, vault: Path,
                                                         tamper: str) -> None:
    """A resolve deletes the conflict copy: a record in conflicts.json whose copy is not a
    conflict copy of its memory's file (or whose fields have the wrong types) is ignored, and
    every file stays."""
    path, key, _, _ = _conflict(app, vault)
    state = app.state_dir / "conflicts.json"
    records = json.loads(state.read_text(encoding="utf-8"))
    other = "Memory/prefers-metric-units.md"
    if tamper == "copy is the file":
        records[key]["copy"] = path
    elif tamper == "copy is another memory":
        records[key]["copy"] = other
    else:
        records = {"x": {"memory_key": "x", "path": other, "copy": other, "head_n": True,
                         "opened": "2026-12-01T00:00:00+00:00"}}
    state.write_text(json.dumps(records), encoding="utf-8")
    before = {p: (vault / p).read_bytes() for p in (path, other)}
    for wanted in (key, "x"):
        with pytest.raises(ConflictNotFoundError):
            app.consistency().resolve(wanted, "magma")
    assert {p: (vault / p).read_bytes() for p in (path, other)} == before


def test_check_cuts_memories_into_chunks_as_the_index_does(
        make_app: Builder, tmp_path: Path) -> None:
    """The checker judges subject groups with each memory's first-chunk vector: it must cut
    the memory as the index cut it (``sync.chunk_max_chars``), or the stored vector is never
    found and a long memory is judged on a vector of other text."""
    vault = tmp_path / "vault"
    (vault / "memory").mkdir(parents=True)
    application, _fake = make_app(vault, **{"sync.chunk_max_chars": 300})
    pool = application.consistency().subject_pool()
    assert pool.chunk_max_chars == 300 == application.memory_pool.chunk_max_chars


def test_a_new_memory_lacks_two_things_and_the_report_says_which(app: App, vault: Path) -> None:
    """A memory written while nobody watched is missing from the index and from the history:
    two findings on one path, each saying what it lacks."""
    import io

    from rich.console import Console

    from daemon.render import print_check

    (vault / "Memory" / "written-by-hand.md").write_text(
        "---\nname: Written by hand\ndescription: a fact\ntype: user\n"
        "id: 01JHANDWRITTEN000000000000\n---\nLikes long walks.\n", encoding="utf-8")
    out = io.StringIO()
    print_check(Console(file=out, width=200), app.consistency().check())
    lines = [line for line in out.getvalue().splitlines() if "written-by-hand" in line]
    assert len(lines) == 2
    assert "(not in the index)" in lines[0] + lines[1]
    assert "(no version in the history)" in lines[0] + lines[1]


def test_a_link_to_nothing_written_three_times_is_one_finding(app: App, vault: Path) -> None:
    """A memory whose name, description and body each write ``[[Kiln log]]`` (no such note):
    one broken link, not three identical lines."""
    (vault / "Memory" / "kiln-log-ref.md").write_text(
        "---\nname: See [[Kiln log]]\ndescription: the [[Kiln log]] keeps firings\n"
        "type: reference\n---\nFirings are in [[Kiln log]].\n", encoding="utf-8")
    app.sync()
    found = [f for f in app.consistency().check().findings if f.kind == "broken_link"]
    assert [(f.drift.path, f.drift.target) for f in found] == [  # type: ignore[attr-defined]
        ("Memory/kiln-log-ref.md", "Kiln log")]


def test_the_problem_files_follow_each_sync_seen_by_one_service(app: App, vault: Path) -> None:
    """The stored problems are kept while the index stays at its version: a sync that reads
    a note whole again, or one that no longer reads whole, shows in the next check of the
    same service (the same process)."""
    service = app.consistency()
    before = {p.path for p in service.check().problems}
    notes = {vault / "读书笔记.md":
             "---\ntags: [reading\n作者: 村上春树\n---\n一本关于跑步的书。\n",
             vault / "Reading log.md": "---\ntags: [reading\nauthor: Murakami\n---\nRunning.\n"}
    for note, text in notes.items():
        note.write_bytes(text.encode())
    app.sync()
    expected = before | {"读书笔记.md", "Reading log.md"}
    assert {p.path for p in service.check().problems} == expected
    assert {p.path for p in service.check().problems} == expected  # kept, the same
    (vault / "读书笔记.md").write_bytes("---\ntags: [reading]\n---\n一本关于跑步的书。\n".encode())
    app.sync()
    assert {p.path for p in service.check().problems} == before | {"Reading log.md"}
    (vault / "Reading log.md").write_bytes(b"---\ntags: [reading]\n---\nRunning.\n")
    app.sync()
    assert {p.path for p in service.check().problems} == before
    assert service.check().clean
