"""A query that is a note's exact name: the note of that name leads, and the search goes on
for the notes about it when more hits are asked for than that one.

Real notes: kepano's vault (``../shared/corpora/kepano-obsidian``: ``References/Kyoto.md``, and
``References/Fushimi Inari.md`` and ``Notes/2023 Japan Trip.md`` whose ``loc`` is
``[[Kyoto]]``), copied as it is, in a real LanceDB store. The FAKE token-hash embedder
(``tests/support/fakes.py``): these tests are about which stages run and the order of the
first hit, not about meaning.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from fakes import TokenHashEmbedder
from mcp import Client

from daemon.app import App
from daemon.context import build_context
from daemon.mcp_server import build_server

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
KYOTO = "References/Kyoto.md"
ABOUT_KYOTO = {"References/Fushimi Inari.md", "Notes/2023 Japan Trip.md"}
#: Generous deadlines: these tests are about which stages run, not how fast (a busy machine
#: must not turn them into deadline tests).
SLOW_OK = {"retrieval.progressive_search.stages": [
    {"name": "ccb-fast", "limit": 5, "timeout_ms": 20000},
    {"name": "magma-extend", "limit": 10, "timeout_ms": 20000},
    {"name": "full-fusion", "timeout_ms": 20000}]}


@pytest.fixture(scope="module")
def kepano(tmp_path_factory: pytest.TempPathFactory, corpora_dir: Path) -> Iterator[App]:
    from daemon.app import load

    root = tmp_path_factory.mktemp("kepano")
    vault = root / "vault"
    shutil.copytree(corpora_dir / "kepano-obsidian", vault, symlinks=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(root / "data"), **SLOW_OK}),
                     embedder=TokenHashEmbedder())
    app.sync()
    yield app
    app.close()


def _search(app: App, query: str, limit: int) -> tuple[list[str], list[str]]:
    hits = app.search(query, limit=limit, count_recall=False, now=NOW)
    trace = app.last_search_trace
    assert trace is not None
    return [h.path for h in hits], [s.status for s in trace.stages]


def test_ten_hits_asked_for_a_name_list_the_notes_about_it_after_it(kepano: App) -> None:
    """``dreamd search Kyoto -n 10`` answered with ``References/Kyoto.md`` alone: the search
    of names was sure of it and the search by meaning and words never ran."""
    paths, stages = _search(kepano, "Kyoto", 10)
    assert paths[0] == KYOTO
    assert set(paths) >= ABOUT_KYOTO, paths
    assert stages[1] == "ran"


def test_one_hit_asked_for_a_name_is_answered_by_the_name_alone(kepano: App) -> None:
    paths, stages = _search(kepano, "Kyoto", 1)
    assert paths == [KYOTO]
    assert stages[1:] == ["skipped: confident"] * 2


def test_every_note_named_leads_its_search_whatever_the_number_asked_for(kepano: App) -> None:
    """Each of the vault's 103 notes searched by its title: the note answers ``-n 1`` and
    leads ``-n 10``. Once the search went on past the name, "Kevin Kelly" put "Well Made 145
    Kevin Kelly" first, "Movies" the film Blade Runner, "Place Type Template" the Place
    Template (13 of 103 titles)."""
    entries = kepano.retriever.entries()
    titles: dict[str, list[str]] = {}
    for path, entry in entries.items():
        titles.setdefault(entry.title, []).append(path)
    named = {title: paths[0] for title, paths in titles.items() if len(paths) == 1}
    assert len(named) > 90
    wrong = {}
    for title, path in sorted(named.items()):
        one, _ = _search(kepano, title, 1)
        ten, _ = _search(kepano, title, 10)
        if one != [path] or ten[:1] != [path] or len(ten) < 2:
            wrong[title] = (one, ten[:3])
    assert not wrong, wrong


def test_a_name_several_notes_share_ends_no_search(kepano: App) -> None:
    """Two notes of one name (namesakes in two folders): neither is sure to be the one
    meant, so every stage runs even for one hit, as before."""
    vault = kepano.vault_root
    (vault / "Notes" / "Kyoto.md").write_text("# Kyoto\n\nTemples to see again.\n",
                                              encoding="utf-8")
    try:
        kepano.sync()
        paths, stages = _search(kepano, "Kyoto", 1)
        assert stages[1] == "ran"
        assert paths[0] in {KYOTO, "Notes/Kyoto.md"}
    finally:
        (vault / "Notes" / "Kyoto.md").unlink()
        kepano.sync()


def test_the_mcp_search_tool_gives_as_many_hits_as_it_is_asked_for(kepano: App) -> None:
    async def run() -> list[Any]:
        async with Client(build_server(kepano)) as client:
            return [await client.call_tool("memory_search", {"query": "Kyoto", "limit": n})
                    for n in (10, 1)]

    ten, one = anyio.run(run)
    assert not ten.is_error and not one.is_error
    paths_ten = [hit["path"] for hit in _items(ten)]
    assert paths_ten[0] == KYOTO and set(paths_ten) >= ABOUT_KYOTO
    assert [hit["path"] for hit in _items(one)] == [KYOTO]


def test_the_context_of_a_prompt_that_is_a_name_holds_the_notes_about_it(
        kepano: App) -> None:
    """The assistant's hook asks the context for a prompt; a prompt that is a note's name
    brings that note and the notes about it, within the budget."""
    result = build_context(kepano, "Kyoto", budget_tokens=4000, count_recall=False)
    assert KYOTO in result.text
    assert any(path in result.text for path in ABOUT_KYOTO), result.text


def _items(result: Any) -> list[dict[str, Any]]:
    content = result.structured_content
    items = content.get("result", content) if isinstance(content, dict) else content
    return [item for item in items if "path" in item]

