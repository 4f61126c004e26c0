"""A sync with more files to read than one write batch reads the next batch while this one is
embedded and written (:func:`daemon.read_ahead.read_ahead`): the index it builds is the one
the read-everything-first order builds, row for row.

Real files (the demo vault, the memory samples and 150 notes of the obsidian help vault, byte
for byte, plus an entry file and two hand-written credentials) and a real LanceDB store; the
embedder is the token-hash fake (these tests are about which rows are written, not about
meaning). The same vault is indexed twice: with ``sync.write_batch_files`` above its file count
(one batch: read everything, then embed and write) and with 7 (read ahead, batch by batch).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.app import App
from daemon.credential_ledger import read_credentials
from daemon.read_ahead import read_ahead
from daemon.sync import SyncReport

Builder = Callable[..., tuple[App, object]]
REPO = Path(__file__).resolve().parents[2]
HELP_NOTES = 150
SMALL_BATCH = 7

FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区工作 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- Prefers the kiln at cone six for stoneware <!--m:subj=kiln.cone-->\n"
    "- Drinks oolong tea every afternoon\n"
)
LOGIN_TEXT = (
    "---\nname: Staging login\ndescription: How to log in to the staging server\n"
    "type: user\n---\nThe staging server is staging.example.org, user deploy.\n\n"
    "password: S3cr3t-Passw0rd-xyz\n"
)
NOTE_TEXT = ("# Warehouse database\n\nThe warehouse database runs on the old rack.\n"
             "数据库密码：Abc12345xyz!\n")


class Phases:
    """A :class:`daemon.sync.Progress` that keeps ``[name, total, done]`` of each phase."""

    def __init__(self) -> None:
        self.seen: list[list[Any]] = []

    def phase(self, name: str, total: int) -> None:
        self.seen.append([name, total, 0])

    def advance(self, units: int = 1) -> None:
        self.seen[-1][2] += units


def _real_vault(root: Path, corpora: Path) -> Path:
    shutil.copytree(REPO / "vault_example", root, symlinks=True)
    shutil.copytree(corpora / "memory-samples", root / "samples")
    help_notes = sorted((corpora / "obsidian-help").rglob("*.md"))[:HELP_NOTES]
    for note in help_notes:
        target = root / "help" / note.relative_to(corpora / "obsidian-help")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    (root / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    (root / "Memory" / "staging-login.md").write_text(LOGIN_TEXT, encoding="utf-8")
    (root / "Projects" / "Warehouse database.md").write_text(NOTE_TEXT, encoding="utf-8")
    return root


def _rows(app: App) -> dict[str, Any]:
    """What the index holds, without the ids a new note draws at random."""
    files = {path: (f.kind, f.size, f.mtime_ns, f.content_hash, f.memory_type, f.memory_id)
             for path, f in app.store.file_index().items()}
    hashes = app.store.chunk_hashes()
    chunks = sorted((c.path, c.heading_path, c.text, c.body, hashes[c.chunk_id],
                     None if c.vector is None else c.vector.tobytes())
                    for c in app.store.chunks_of(files))
    return {"files": files, "chunks": chunks,
            "properties": app.store.memory_properties(),
            "credentials": read_credentials(app.state_dir)}


def _report(report: SyncReport) -> dict[str, Any]:
    return {"added": report.added, "modified": report.modified, "deleted": report.deleted,
            "renamed": report.renamed, "unchanged": report.unchanged,
            "touched": report.touched,
            # new to the index: the second vault's from the embedding cache the first filled
            "embedded": report.chunks_embedded + report.chunks_cached,
            "reused": report.chunks_reused, "problems": report.problems,
            "changed": report.changed_paths, "files": report.files_total}


def _edit(root: Path) -> None:
    """Changes that delete no file: notes edited, one only touched, an entry line gone."""
    for note in sorted((root / "help").rglob("*.md"))[:40:3]:
        with note.open("a", encoding="utf-8") as out:
            out.write("\nA line added after the first index.\n")
    touched = root / "Welcome.md"
    touched.touch()
    (root / "Memory" / "facts.md").write_text(FACTS.replace(
        "- Drinks oolong tea every afternoon\n", ""), encoding="utf-8")


@pytest.mark.slow
def test_reading_ahead_builds_the_same_index_as_reading_first(
        tmp_path: Path, make_app: Builder, corpora_dir: Path) -> None:
    first = _real_vault(tmp_path / "one batch", corpora_dir)
    ahead = tmp_path / "read ahead"
    shutil.copytree(first, ahead, symlinks=True)  # the same bytes and mtimes
    files = sum(1 for p in first.rglob("*") if p.is_file())
    one, _ = make_app(first, **{"sync.write_batch_files": 10 * files})
    batched, _ = make_app(ahead, **{"sync.write_batch_files": SMALL_BATCH})
    assert one.state_dir != batched.state_dir

    seen_one, seen_ahead = Phases(), Phases()
    reports = (one.sync(progress=seen_one), batched.sync(progress=seen_ahead))
    assert [name for name, *_ in seen_one.seen] == ["reading", "embedding"]
    # one phase, every file read, embedded and written counted once
    [(name, total, done)] = seen_ahead.seen
    assert name == "indexing" and total == done == reports[0].added + reports[0].modified \
        + reports[0].touched + sum(p.kind == "read" for p in reports[0].problems)
    assert _report(reports[0]) == _report(reports[1])
    assert reports[0].added > HELP_NOTES and reports[0].chunks_embedded > 0
    assert {p.kind for p in reports[0].problems} >= {"credential"}
    assert _rows(one) == _rows(batched)

    for root in (first, ahead):  # edited, stat changed, nothing deleted: read ahead again
        _edit(root)
    for path in sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file()):
        shutil.copystat(first / path, ahead / path)
    reports = (one.sync(), batched.sync(progress=(seen := Phases())))
    assert seen.seen[0][0] == "indexing"
    assert reports[0].modified >= 14 and reports[0].touched >= 1
    assert _report(reports[0]) == _report(reports[1])
    assert _rows(one) == _rows(batched)
    one.close()
    batched.close()


def test_the_next_batch_is_read_while_the_caller_holds_this_one() -> None:
    read: list[int] = []
    second_read = threading.Event()

    def reader(batch: int) -> str:
        read.append(batch)
        if batch == 2:
            second_read.set()
        return f"read {batch}"

    with read_ahead([1, 2, 3, 4], reader) as pairs:
        got = []
        for batch, result in pairs:
            if batch == 1:  # batch 2 is read while batch 1 is held, batch 3 is not
                assert second_read.wait(timeout=60)
                assert read == [1, 2]
            got.append((batch, result))
    assert got == [(1, "read 1"), (2, "read 2"), (3, "read 3"), (4, "read 4")]
    assert read == [1, 2, 3, 4]


def test_a_read_error_reaches_the_caller_and_a_caller_error_stops_the_reading() -> None:
    def failing(batch: int) -> int:
        if batch == 2:
            raise OSError("disk gone")
        return batch

    got = []
    with pytest.raises(OSError, match="disk gone"), read_ahead([1, 2, 3], failing) as pairs:
        got.extend(batch for batch, _ in pairs)
    assert got == [1]

    read: list[int] = []

    def batches() -> Iterator[int]:
        yield from range(100)

    with pytest.raises(RuntimeError), read_ahead(batches(), read.append) as pairs:
        for batch, _ in pairs:
            if batch == 3:
                raise RuntimeError("the store refused the write")
    # the batch after the failed one at most (unless it was not started yet), nothing further
    assert read[:4] == [0, 1, 2, 3] and len(read) <= 5


def test_switches_are_short_while_a_batch_is_read_ahead_and_as_before_after() -> None:
    """The embedder's thread gets the GIL back within :data:`READ_AHEAD_SWITCH_S` while the
    reader's pure Python runs; the interval is the process's own again afterwards, also
    after an error, and two read-aheads at once restore it only when both are done."""
    import sys

    from daemon.read_ahead import READ_AHEAD_SWITCH_S

    before = sys.getswitchinterval()
    seen: list[float] = []
    with read_ahead([1, 2], lambda n: (seen.append(sys.getswitchinterval()), n)[1]) as pairs:
        assert [n for n, _ in pairs] == [1, 2]
        with read_ahead([3], lambda n: n) as inner:
            assert [n for n, _ in inner] == [3]
        assert sys.getswitchinterval() == pytest.approx(READ_AHEAD_SWITCH_S)
    assert seen == [pytest.approx(READ_AHEAD_SWITCH_S)] * 2
    assert sys.getswitchinterval() == pytest.approx(before)
    with pytest.raises(ValueError), read_ahead([1], lambda n: n) as pairs:
        raise ValueError("the caller's error")
    assert sys.getswitchinterval() == pytest.approx(before)
