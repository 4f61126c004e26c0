"""A superseded ``user`` memory (a preference the user replaced) is archived by the dream as a
superseded ``project`` or ``feedback`` memory is, and the diary says so (DESIGN.md:
"Superseded → archived"; "never touched" keeps a preference from ageing out, not from being
replaced). Real files, a real store; the token-hash fake embedder (conftest): supersession
here is decided by type, subject and changed value, not by meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ccb.parse import parse_note
from daemon.app import App

Builder = Callable[..., tuple[App, object]]

PAIRS = [
    ("I prefer tabs for indentation", "I prefer spaces for indentation", "editor.indent"),
    ("My editor indents with 2 spaces", "My editor indents with 4 spaces", "editor.indent"),
    ("我的编辑器缩进用 2 个空格", "我的编辑器缩进用 4 个空格", "editor.indent"),
    ("我住在上海", "我住在北京", "home.city"),
]


@pytest.mark.parametrize("kind", ["user", "project", "feedback"])
@pytest.mark.parametrize(("old_text", "new_text", "subject"), PAIRS)
def test_a_superseded_memory_of_every_type_is_archived_and_reported(
    vault: Path, make_app: Builder, kind: str, old_text: str, new_text: str, subject: str,
) -> None:
    app, _ = make_app(vault)
    app.sync()
    service = app.memories()
    old = service.remember(old_text, type=kind, subject=subject)
    new = service.remember(new_text, type=kind, subject=subject)
    assert new.action == "superseded" and new.superseded == old.path, new
    before = (vault / old.path).read_bytes()
    report = app.dreamer().dream(force=True)
    after = (vault / old.path).read_bytes()
    note = parse_note(old.path, after)
    assert note.memory.status == "archived", after.decode()  # type: ignore[union-attr]
    assert note.properties["archived_reason"] == "superseded"
    assert after.split(b"\n---\n", 1)[1] == before.split(b"\n---\n", 1)[1]  # body kept
    assert any(f"[[{Path(old.path).stem}]]" in line and "superseded" in line
               for line in report.plan.changes), report.plan.changes
    diary = (vault / "Memory" / "DREAMS.md").read_text(encoding="utf-8")
    assert f"[[{Path(old.path).stem}]]" in diary
    # recoverable: a restore brings it back, and the next dream leaves it
    assert app.dreamer().restore(old.path)
    app.memories().after_change([old.path, new.path])
    kept = (vault / old.path).read_bytes()
    app.dreamer().dream(force=True)
    assert (vault / old.path).read_bytes() == kept
    assert parse_note(new.path, (vault / new.path).read_bytes()).memory.valid_to is not None  # type: ignore[union-attr]
