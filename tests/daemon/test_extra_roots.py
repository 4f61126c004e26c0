"""Extra roots: memory folders people already have, indexed beside the vault, read only.

Real files and a real store; the embedder is the token-hash fake (these tests are about which
files are indexed under which path, not about meaning).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import store_reads
from watchfiles import Change

from ccb.roots import Root, derive_root_name, owning_root
from ccb.scan import VaultFilter
from config.errors import ConfigError
from daemon.app import App
from daemon.watch import ChangeHandler, relative_paths

Builder = Callable[..., tuple[App, object]]

FEEDBACK = b"""---
name: Integration tests hit a real database
description: No mocks for the database layer
type: feedback
---
Integration tests must hit a real PostgreSQL, never a mock; a mocked migration passed once
and broke production.
"""


@pytest.fixture
def claude_memory(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / ".claude" / "projects" / "-home-me-code-kiln" / "memory"
    folder.mkdir(parents=True)
    (folder / "feedback_real_db.md").write_bytes(FEEDBACK)
    (folder / "MEMORY.md").write_text(
        "- [Integration tests hit a real database](feedback_real_db.md) — no mocks\n"
        "- [Parent](../../CLAUDE.md) — leaves the folder\n", encoding="utf-8")
    return folder


def test_root_names_are_readable_and_unique() -> None:
    claude = Path("/home/me/.claude/projects/-home-me-code-kiln/memory")
    assert derive_root_name(claude) == "claude-home-me-code-kiln"
    assert derive_root_name(Path("/srv/agent/workspace/memory")) == "workspace-memory"
    assert derive_root_name(Path("/notes/agent log"), {"agent-log"}) == "agent-log-2"
    roots = [Root("", Path("/v"), VaultFilter()), Root("x:", Path("/x"), VaultFilter())]
    assert owning_root("x:a.md", roots) is roots[1]
    assert owning_root("notes/x:a.md", roots) is roots[0]


def test_claude_code_memory_folder_is_indexed_and_searchable(
    vault: Path, make_app: Builder, claude_memory: Path
) -> None:
    before = {p: p.read_bytes() for p in claude_memory.rglob("*") if p.is_file()}
    app, _ = make_app(vault, **{"vault.extra_roots": [str(claude_memory)]})
    report = app.sync()
    path = "claude-home-me-code-kiln:feedback_real_db.md"
    index = app.store.file_index()
    assert path in index and "claude-home-me-code-kiln:MEMORY.md" in index
    assert index[path].memory_id is None  # no id in the file: dreamd never adds one there
    # the vault's own memory says nearly the same: the root's is searched on its own here
    hits = app.search("real PostgreSQL database never a mock", memory_types=["feedback"],
                      path_prefix="claude-home-me-code-kiln:")
    assert hits and hits[0].path == path
    assert report.added >= 2
    again = app.sync()  # the vault's sync never takes the extra root's rows for deletions
    assert (again.added, again.deleted, again.modified) == (0, 0, 0)
    assert {p: p.read_bytes() for p in claude_memory.rglob("*") if p.is_file()} == before


def test_detached_root_leaves_the_index_and_missing_root_keeps_it(
    vault: Path, make_app: Builder, claude_memory: Path
) -> None:
    app, _ = make_app(vault, **{"vault.extra_roots": [{"path": str(claude_memory),
                                                        "name": "kiln"}]})
    app.sync()
    assert "kiln:feedback_real_db.md" in app.store.file_index()
    moved = claude_memory.with_name("memory-away")
    claude_memory.rename(moved)  # unmounted, deleted, renamed: the rows stay
    report = app.sync()
    assert "kiln:feedback_real_db.md" in app.store.file_index()
    assert any(p.kind == "root" and p.path == "kiln:" for p in report.problems)
    moved.rename(claude_memory)
    detached, _ = make_app(vault)  # removed from the config: its rows go
    detached.sync()
    assert not any(p.startswith("kiln:") for p in detached.store.file_index())


def test_visible_vault_folder_cannot_be_an_extra_root(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"vault.extra_roots": [str(vault / "Memory")]})
    with pytest.raises(ConfigError, match="part of the vault"):
        app.make_syncer()


def test_hidden_memory_folder_inside_the_vault_and_its_watch_events(
    vault: Path, make_app: Builder
) -> None:
    hidden = vault / ".claude" / "memory"
    hidden.mkdir(parents=True)
    (hidden / "user_prefers_tea.md").write_text(
        "---\nname: Prefers tea\ndescription: tea\nmetadata: \n  type: user\n---\n"
        "The user drinks green tea, never coffee.\n", encoding="utf-8")
    app, _ = make_app(vault, **{"vault.extra_roots": [str(hidden)]})
    app.sync()
    name = app.roots[1].prefix
    assert name == "claude-memory:"
    assert f"{name}user_prefers_tea.md" in app.store.file_index()
    # a watcher batch on the hidden folder reaches the extra root, not the vault's filter
    new = hidden / "project_kiln.md"
    new.write_text("---\nname: Kiln\ntype: project\n---\nThe kiln fires on Fridays.\n",
                   encoding="utf-8")
    assert relative_paths(app.roots, [(Change.added, str(new))]) == {f"{name}project_kiln.md"}
    handler = ChangeHandler(app.roots, app.make_syncer(), settle_s=0.0)
    result = handler.apply_changes([(Change.added, str(new))])
    assert result.report is not None and result.report.added == 1
    assert app.store.file_index()[f"{name}project_kiln.md"].memory_id is None
    new.unlink()
    handler.apply_changes([(Change.deleted, str(new))])
    assert f"{name}project_kiln.md" not in app.store.file_index()


def test_memory_samples_of_three_tools(
    vault: Path, make_app: Builder, corpora_dir: Path, tmp_path: Path
) -> None:
    samples = corpora_dir / "memory-samples"
    copy = tmp_path / "samples"
    shutil.copytree(samples, copy)
    roots = [
        {"path": str(copy / "claude-code/Aleslammer__deathwatch_foundryvtt/.claude/memory"),
         "name": "deathwatch"},
        {"path": str(copy / "claude-code/1000ssam__claude-config/memory"), "name": "ssam"},
        {"path": str(copy / "openclaw/VhexAI__openclaw-workspace"), "name": "vhex"},
        {"path": str(copy / "openclaw/4078730__clawdbot-workspace"), "name": "clawd"},
        {"path": str(copy / "basic-memory"), "name": "basic"},
    ]
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    app, _ = make_app(vault, **{"vault.extra_roots": roots})
    report = app.sync()
    index = app.store.file_index()
    on_disk = {p for p in before if p.suffix == ".md" and p.name != "SOURCES.md"}
    assert len([p for p in index if ":" in p.split("/")[0]]) == len(on_disk)
    # the file PyYAML rejects is reported and its body still indexed
    rejected = "ssam:feedback_pass-means-merge.md"
    assert rejected in index
    assert any(p.path == rejected and p.kind == "yaml" for p in report.problems)
    # nested metadata: type is a memory type; top-level type too
    types = {p: store_reads.get_file(app.store, p).memory_type for p in index if ":" in p}  # type: ignore[union-attr]
    assert types["deathwatch:feedback_code_quality.md"] == "feedback"
    assert any(t == "feedback" for p, t in types.items() if p.startswith("ssam:"))
    assert "vhex:memory/2026-01-31.md" in index and "clawd:memory/NOW.md" in index
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


def test_detaching_a_large_root_is_not_a_mass_delete(
    vault: Path, make_app: Builder, tmp_path: Path
) -> None:
    big = tmp_path / "agent" / "memory"
    big.mkdir(parents=True)
    for n in range(60):
        (big / f"day-{n:02d}.md").write_text(f"# Day {n}\n\nlog {n}\n", encoding="utf-8")
    app, _ = make_app(vault, **{"vault.extra_roots": [{"path": str(big), "name": "agent"}]})
    app.sync()
    detached, _ = make_app(vault)
    report = detached.sync()  # 60 of ~100 rows go: the root's, not the vault's
    assert report.deleted == 60
    assert not any(p.startswith("agent:") for p in detached.store.file_index())


def test_a_root_around_the_vault_or_another_root_is_refused(
    vault: Path, make_app: Builder, tmp_path: Path, claude_memory: Path
) -> None:
    around, _ = make_app(vault, **{"vault.extra_roots": [str(vault.parent)]})
    with pytest.raises(ConfigError, match="contains the vault"):
        around.make_syncer()
    nested, _ = make_app(vault, **{"vault.extra_roots": [str(claude_memory.parent),
                                                          str(claude_memory)]})
    with pytest.raises(ConfigError, match="inside one another"):
        nested.make_syncer()
