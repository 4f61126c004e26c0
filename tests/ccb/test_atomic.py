"""Atomic replacement: readers see old or new bytes, never half; temp names are ignored."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ccb.atomic import TEMP_SUFFIX, read_json_object, write_bytes_atomic, write_json_atomic
from ccb.scan import VaultFilter


def test_replaces_content_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_bytes_atomic(target, b"new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_creates_parent_folders_and_json(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "state.json"
    write_json_atomic(target, {"ü": 1})
    assert json.loads(target.read_text(encoding="utf-8")) == {"ü": 1}


def test_failure_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_bytes_atomic(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_temp_names_are_ignored_by_the_vault_scan() -> None:
    vfilter = VaultFilter()
    assert vfilter.is_ignored(f".note.md.x1y2{TEMP_SUFFIX}")
    assert vfilter.is_ignored(f"Memory/note.md{TEMP_SUFFIX}")


def test_swap_returns_what_it_displaced(tmp_path: Path) -> None:
    from ccb.atomic import swap_bytes_atomic

    target = tmp_path / "note.md"
    assert swap_bytes_atomic(target, b"one") is None
    assert swap_bytes_atomic(target, b"two") == b"one"
    assert target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]  # no temp file left


@pytest.mark.parametrize("content", [
    None, b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000,
])
def test_a_damaged_state_file_reads_as_empty(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "state.json"
    if content is not None:
        path.write_bytes(content)
    assert read_json_object(path) == {}


def test_a_state_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_json_atomic(path, {"a": [1, "二"], "b": {"c": None}})
    assert read_json_object(path) == {"a": [1, "二"], "b": {"c": None}}
