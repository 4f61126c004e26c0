"""Two memory files whose names differ only by case (``a.md`` and ``A.md``: possible on
Linux, and in a vault synced from it): each is named by its file path written exactly, and
a name both share gets a message without ``id None``. Real files; the token-hash fake
embedder (conftest). The files are a break-it report's input, kept as given (its ``mem``
helper: ``name``, ``description: <name> described``, ``type: project``, the body)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from config.errors import MemoryNotFoundError
from daemon.app import App

Builder = Callable[..., tuple[App, object]]


def test_each_of_two_case_only_names_is_named_by_its_exact_path(
    tmp_path: Path, make_app: Builder,
) -> None:
    memory = tmp_path / "vault" / "Memory"
    memory.mkdir(parents=True)
    for file, name in (("a.md", "Alpha"), ("A.md", "alpha upper")):
        (memory / file).write_text(f"---\nname: {name}\ndescription: {name} described\n"
                                   f"type: project\n---\nBody of {name}.\n", encoding="utf-8")
    if len(list(memory.iterdir())) < 2:
        pytest.skip("this file system folds case")
    app, _ = make_app(tmp_path / "vault")
    service = app.memories()
    assert service.find("Memory/a.md").path == "Memory/a.md"
    assert service.find("Memory/A.md").path == "Memory/A.md"
    assert service.find("A.md").path == "Memory/A.md"
    with pytest.raises(MemoryNotFoundError) as raised:
        service.find("memory/A.MD")
    assert "id None" not in str(raised.value)
    assert "written exactly (case counts)" in str(raised.value)
    service.forget("Memory/a.md")
    assert sorted(p.name for p in memory.glob("*.md") if p.name != "MEMORY.md") == ["A.md"]
