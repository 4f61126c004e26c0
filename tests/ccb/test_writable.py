"""A vault folder that refuses writes is one line naming the folder and what to do, never an
OSError and a traceback, and the write leaves everything as it was (ccb.writable, the writer).

The folders are really read-only (``tests/support/read_only.py``: permission bits, and root's
override dropped when the suite runs as root).
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from read_only import unwritable

from ccb.writable import not_writable, require_writable
from ccb.writer import NoteWriter
from config.errors import VaultError, VaultNotWritableError, exit_code_for

NOTE = b"---\nname: Kiln\ntype: project\nupdated: 2026-11-30T10:15:00Z\n---\nCone six.\n"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_new_file_in_a_read_only_folder_is_one_line_and_nothing_written(
    writer: NoteWriter,
) -> None:
    folder = writer.root / "Memory"
    writer.write("Memory/old.md", NOTE, base=None)
    before = _files(folder)
    with unwritable(folder), pytest.raises(VaultNotWritableError) as refused:
        writer.write("Memory/new.md", NOTE, base=None)
    message = str(refused.value)
    assert message.startswith(f"ccb: write: {folder} is not writable (permission denied)")
    assert f"chmod u+w {folder}" in message and "nothing was written" in message
    assert "\n" not in message
    assert isinstance(refused.value, VaultError) and exit_code_for(refused.value) == 4
    assert _files(folder) == before  # no file, no temp file left behind


def test_an_edit_and_a_delete_in_a_read_only_folder_leave_the_file_as_it_was(
    writer: NoteWriter,
) -> None:
    folder = writer.root / "Memory"
    writer.write("Memory/old.md", NOTE, base=None)
    before = _files(folder)
    with unwritable(folder):
        with pytest.raises(VaultNotWritableError, match=f"{folder} is not writable"):
            writer.write("Memory/old.md", NOTE.replace(b"six", b"ten"), base=NOTE)
        with pytest.raises(VaultNotWritableError, match=f"{folder} is not writable"):
            writer.delete("Memory/old.md", expect=NOTE)
        # a dream's writes: the first refusal ends the batch
        with pytest.raises(VaultNotWritableError), writer.batch():
            writer.write("Memory/old.md", NOTE.replace(b"six", b"ten"), base=NOTE)
    assert _files(folder) == before
    # writable again: the same write goes through
    assert writer.write("Memory/old.md", NOTE.replace(b"six", b"ten"), base=NOTE).status == \
        "written"


def test_a_read_only_folder_is_found_before_work_starts(tmp_path: Path) -> None:
    folder = tmp_path / "Memory"
    folder.mkdir()
    require_writable(folder)
    require_writable(folder / "not yet" / "made")  # asks the nearest folder that exists
    assert list(folder.iterdir()) == []  # the probe leaves nothing
    with unwritable(folder), pytest.raises(VaultNotWritableError, match=str(folder)):
        require_writable(folder)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(("code", "said", "todo"), [
    (errno.EROFS, "is on a read-only file system", "mount it read-write"),
    (errno.EACCES, "is not writable (permission denied)", "chmod u+w"),
    (errno.EPERM, "is not writable (operation not permitted)", "chmod u+w"),
    (errno.ENOSPC, "is on a full disk", "free some space"),
    (errno.EDQUOT, "is over your disk quota", "raise the quota"),
])
def test_each_refusal_says_what_to_do(tmp_path: Path, code: int, said: str, todo: str) -> None:
    """The errors a read-only mount (errno 30), a full disk or a quota give: as the atomic
    writer raises them, naming its temp file in the folder."""
    temp = tmp_path / "My Vault" / "Memory" / ".kiln.md.x1y2.dreamd-tmp"
    error = not_writable(OSError(code, "refused", str(temp)))
    assert error is not None
    message = str(error)
    assert message.startswith(f"ccb: write: {temp.parent} {said}") and todo in message
    if todo == "chmod u+w":
        assert f"chmod u+w '{temp.parent}'" in message  # quoted for the shell


def test_other_errors_are_not_refusals() -> None:
    assert not_writable(OSError(errno.EIO, "Input/output error", "/v/a.md")) is None
    assert not_writable(FileNotFoundError(errno.ENOENT, "gone", "/v/a.md")) is None
