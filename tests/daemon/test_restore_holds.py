"""A user's rollback or restore of a superseded memory holds: the old fact is the current one
again, the memory that had superseded it is superseded by it in turn (both kept, every version
in the history), the answer says so, the lineage reads one way, and the next dream leaves the
restored memory as it is. Real files, a real store (LanceDB in a temp folder); the token-hash
fake embedder (conftest): supersession here is decided by type, subject and changed value,
not by meaning.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from ccb.parse import parse_note
from daemon import render
from daemon.app import App
from daemon.cli import _lineage_service
from daemon.lineage import print_lineage

Builder = Callable[..., tuple[App, object]]

#: (older fact, newer fact, type, subject): English and Chinese, with and without a subject's
#: dots, project / feedback / user.
PAIRS = [
    ("Deploy to eu-west-1", "Deploy to us-east-1", "project", "deploy.region"),
    ("部署到 eu-west-1 区域", "部署到 us-east-1 区域", "project", "deploy.region"),
    ("The payments API timeout is 30s.", "The payments API timeout is 60s.", "feedback",
     "api.timeout"),
    ("团队周会在每周二上午十点", "团队周会在每周四上午十点", "project", "meeting"),
    ("I prefer tabs for indentation", "I prefer spaces for indentation", "user",
     "editor.indent"),
]


def _note(vault: Path, path: str):  # type: ignore[no-untyped-def]
    return parse_note(path, (vault / path).read_bytes())


def _superseded_pair(app: App, old_text: str, new_text: str, kind: str, subject: str
                     ) -> tuple[str, str]:
    service = app.memories()
    old = service.remember(old_text, type=kind, subject=subject)
    new = service.remember(new_text, type=kind, subject=subject)
    assert new.action == "superseded" and new.superseded == old.path, new
    return old.path, new.path


def _holds(app: App, vault: Path, old: str, new: str) -> None:
    """``old`` is current and supersedes ``new``; ``new`` is superseded by ``old`` and no
    longer names it; search shows ``old`` only; a dream changes nothing about ``old``."""
    restored, other = _note(vault, old), _note(vault, new)
    assert restored.memory.valid_to is None and restored.memory.status is None
    assert restored.memory.supersedes == (Path(new).stem,)
    assert other.memory.supersedes == ()
    assert other.memory.valid_to is not None
    assert other.properties["superseded_by"] == f"[[{Path(old).stem}]]"
    listed = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert f"]({Path(old).name})" in listed and f"]({Path(new).name})" not in listed
    console = Console(file=io.StringIO(), width=400)
    service = _lineage_service(app, None)
    print_lineage(console, service.lineage(old), None)
    said = console.file.getvalue()  # type: ignore[attr-defined]
    assert "superseded by" not in said and f"supersedes: {new}" in said, said
    before = (vault / old).read_bytes()
    report = app.dreamer().dream(force=True)
    assert (vault / old).read_bytes() == before  # the dream leaves the restore as it is
    assert not any(Path(old).stem in line and "superseded by" in line
                   for line in report.plan.changes)
    again = app.dreamer().dream(force=True)
    assert (vault / old).read_bytes() == before and old not in again.written
    assert _note(vault, new).memory.valid_to is not None  # still superseded, still there


@pytest.mark.parametrize(("old_text", "new_text", "kind", "subject"), PAIRS)
def test_rollback_to_before_the_supersession_makes_the_old_fact_current(
    vault: Path, make_app: Builder, old_text: str, new_text: str, kind: str, subject: str,
) -> None:
    app, _ = make_app(vault)
    app.sync()
    old, new = _superseded_pair(app, old_text, new_text, kind, subject)
    newer_before = (vault / new).read_bytes()
    result = app.history().rollback(old, 1)
    assert result.superseded == (new,) and result.unlinked == ()
    # the answer says what happened (CLI; MCP returns the same fields)
    console = Console(file=io.StringIO(), width=400)
    render.print_rollback(console, result)
    said = console.file.getvalue()  # type: ignore[attr-defined]
    assert f"it supersedes {new} in turn" in said
    # the newer memory: only the keys that changed, byte for byte elsewhere
    after = (vault / new).read_bytes()
    changed = {line for line in after.splitlines() if line not in newer_before.splitlines()}
    assert {line.split(b":")[0] for line in changed} <= {
        b"valid_to", b"superseded_by", b"updated", b"version", b"supersedes"}
    assert after.split(b"\n---\n", 1)[1] == newer_before.split(b"\n---\n", 1)[1]
    # every version kept: the newer memory's own history still holds it superseding the old
    history = app.history().history(new)
    assert any(f"[[{Path(old).stem}]]".encode() in app.versions.content(v.memory_id, v.n)
               for v in history if v.kind != "tombstone")
    _holds(app, vault, old, new)


@pytest.mark.parametrize(("old_text", "new_text", "kind", "subject"), PAIRS[:4:3])
def test_rollback_after_a_dream_archived_it_holds(
    vault: Path, make_app: Builder, old_text: str, new_text: str, kind: str, subject: str,
) -> None:
    app, _ = make_app(vault)
    app.sync()
    old, new = _superseded_pair(app, old_text, new_text, kind, subject)
    app.dreamer().dream(force=True)
    n = next(v.n for v in app.history().history(old) if b"valid_to:" in
             app.versions.content(v.memory_id, v.n) and _note_bytes_current(
                 app.versions.content(v.memory_id, v.n)))
    result = app.history().rollback(old, n)
    assert result.superseded == (new,)
    _holds(app, vault, old, new)


def _note_bytes_current(data: bytes) -> bool:
    note = parse_note("m.md", data)
    return note.memory is not None and note.memory.valid_to is None and \
        note.memory.status is None


@pytest.mark.parametrize(("old_text", "new_text", "kind", "subject"), PAIRS[:2])
@pytest.mark.parametrize("dream_first", [False, True])
def test_restore_supersedes_the_newer_memory_in_turn(
    vault: Path, make_app: Builder, old_text: str, new_text: str, kind: str, subject: str,
    dream_first: bool,
) -> None:
    app, _ = make_app(vault)
    app.sync()
    old, new = _superseded_pair(app, old_text, new_text, kind, subject)
    if dream_first:
        app.dreamer().dream(force=True)
        assert _note(vault, old).memory.status == "archived"
    taken = app.dreamer().restore(old)
    assert taken is not None and taken.superseded == (new,)
    app.memories().after_change([old, new])
    _holds(app, vault, old, new)


def test_rollback_of_a_current_memory_changes_nothing_else(
    vault: Path, make_app: Builder,
) -> None:
    """An ordinary rollback (an edit undone) supersedes nothing and is not a restore."""
    app, _ = make_app(vault)
    app.sync()
    service = app.memories()
    first = service.remember("Use pnpm for installs.", type="project", subject="tools.pm")
    other = service.remember("Prefers dark mode in the editor.", type="user",
                             subject="editor.theme")
    data = (vault / first.path).read_bytes()
    (vault / first.path).write_bytes(data.replace(b"pnpm", b"pnpm 9"))
    app.sync()
    before = (vault / other.path).read_bytes()
    result = app.history().rollback(first.path, 1)
    assert result.superseded == () and result.unlinked == ()
    assert (vault / first.path).read_bytes() == data
    assert (vault / other.path).read_bytes() == before
    assert first.path not in app.dreamer().restorer.restored()
