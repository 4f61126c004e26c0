"""The record of forgets begun (``daemon.forget_journal``): found by every name the forget
could be given, kept across processes, gone when the forget is done."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ccb.atomic import TEMP_SUFFIX
from daemon.forget_journal import PENDING_FORGETS_FILE, ForgetJournal

#: (history key, path, names that name it, names that do not)
FAMILY = [
    ("01JF3Z8Q2M4N6P8R0T2V4X6Z8B", "Memory/locker-hint.md",
     ["01JF3Z8Q2M4N6P8R0T2V4X6Z8B", "01jf3z8q2m4n6p8r0t2v4x6z8b", "Memory/locker-hint.md",
      "locker-hint.md", "locker-hint", "Locker hint", " Locker Hint "],
     ["Memory/locker.md", "hint", "", "locker"]),
    ("01JF3Z8Q2M4N6P8R0T2V4X6Z8C", "Memory/储物柜提示.md",
     ["Memory/储物柜提示.md", "储物柜提示.md", "储物柜提示", "01JF3Z8Q2M4N6P8R0T2V4X6Z8C"],
     ["储物柜", "Memory/提示.md"]),
    ("path:Memory/crème-brûlée.md", "Memory/crème-brûlée.md",  # written by hand: no id
     ["path:Memory/crème-brûlée.md", "Memory/crème-brûlée.md",
      "Memory/cre\u0300me-bru\u0302le\u0301e.md", "crème brûlée", "Crème Brûlée"],
     ["crème", "path:Memory/creme-brulee.md"]),
]


@pytest.mark.parametrize(("key", "path", "names", "others"), FAMILY)
def test_a_forget_begun_is_found_by_every_name_of_its_memory(
        tmp_path: Path, key: str, path: str, names: list[str], others: list[str]) -> None:
    journal = ForgetJournal(tmp_path)
    journal.begin(key, path, owner=None, file_hash="f" * 64, chunks=["c1", "c2"])
    for name in names:
        found = journal.find(name)
        assert found is not None and (found.key, found.path) == (key, path), name
    for name in others:
        assert journal.find(name) is None, name
    # another process reads what this one wrote; the file is the user's alone
    assert ForgetJournal(tmp_path).pending()[key].chunks == ("c1", "c2")
    assert stat.S_IMODE((tmp_path / PENDING_FORGETS_FILE).stat().st_mode) == 0o600
    journal.drop(key)
    assert ForgetJournal(tmp_path).pending() == {}
    assert not (tmp_path / PENDING_FORGETS_FILE).exists()


def test_a_forget_begun_again_keeps_what_the_first_knew(tmp_path: Path) -> None:
    """Begun again after a kill (the rows purged by then, the file gone): the chunk hashes of
    both runs, and the owner, the file's hash and the start of the first."""
    journal = ForgetJournal(tmp_path)
    first = journal.begin("K", "Memory/a.md", owner="alice/claude-code", file_hash="f1",
                          chunks=["c1"])
    again = journal.begin("K", "Memory/a.md", owner=None, file_hash=None, chunks=[])
    assert again.chunks == ("c1",) and again.file_hash == "f1" and again.since == first.since
    assert again.owner == "alice/claude-code"
    journal.begin("L", "Memory/b.md", owner=None, file_hash=None, chunks=["c2"])
    journal.drop("K")
    assert set(journal.pending()) == {"L"}


def test_the_temp_file_of_a_write_a_kill_cut_short_goes_with_the_forget(tmp_path: Path) -> None:
    """A kill amid the journal's atomic write leaves its temp file, which holds the path
    (found by ``bench/soak.py --seed 1 --trials 20 --operations forget``, seed 16)."""
    journal = ForgetJournal(tmp_path)
    journal.begin("K", "Memory/locker-hint-fgq.md", owner=None, file_hash=None, chunks=[])
    left = tmp_path / f".{PENDING_FORGETS_FILE}.k1ll3d{TEMP_SUFFIX}"
    left.write_bytes((tmp_path / PENDING_FORGETS_FILE).read_bytes())
    other = tmp_path / f".history-bases.json.k1ll3d{TEMP_SUFFIX}"  # not the journal's
    other.write_bytes(b"{}")
    journal.drop("K")
    assert not left.exists() and other.exists()
    assert not any(b"fgq" in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_a_damaged_record_reads_as_no_forget_begun(tmp_path: Path) -> None:
    (tmp_path / PENDING_FORGETS_FILE).write_text('{"K": 3, "L": {"path": 4}', encoding="utf-8")
    assert ForgetJournal(tmp_path).pending() == {}
    (tmp_path / PENDING_FORGETS_FILE).write_text('{"K": 3, "L": {"path": "Memory/l.md"}}',
                                                 encoding="utf-8")
    assert list(ForgetJournal(tmp_path).pending()) == ["L"]
