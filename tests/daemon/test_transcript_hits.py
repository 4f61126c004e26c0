"""What the user said in an assistant session is searchable like a note (issue 21): after
light sleep, ``dreamd search`` and ``memory_search`` list the statements a query matches
after the vault's hits, marked as raw session material (``kind: transcript``, the transcript
line as location), never as a memory nor in an assembled context; a listed statement is
one recall of it, never two; a statement with a credential, one that became a memory and
one whose memory was forgotten are never listed.

Real vault files, a real transcript in the shape Claude Code writes, a real store, the real
search pipeline, the real MCP server in this process; the token-hash fake embedder builds
the App (what is tested is where the statements go, not meaning). Time is fixed.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from rich.console import Console

from consistency.snippet_cut import cut_statements
from daemon import render
from daemon.app import App, sleep_cycle
from daemon.context import build_context
from daemon.mcp_server import build_server

Builder = Callable[..., tuple[App, object]]
SESSION = "5d1e2f3a-0b4c-4d5e-8f9a-1b2c3d4e5f60"
DAY0 = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
RULE = ("From now on, integration tests must run against a real Postgres, never an "
        "in-memory fake: the fake hid a broken migration last month.")
ONE_OFF = "Let's use the blue palette for the quarterly slides."
QUERY = "integration tests against a real Postgres"


def _at(days: float, hour: int = 12) -> datetime:
    return DAY0.replace(hour=hour) + timedelta(days=days)


def _entry(kind: str, content: Any, at: datetime) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/home/me/code/kiln", "sessionId": SESSION, "version": "2.0.14",
            "type": kind, "message": {"role": kind, "content": content},
            "uuid": f"u-{at.timestamp()}-{kind}",
            "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z")}


@pytest.fixture
def session_app(vault: Path, make_app: Builder, tmp_path: Path) -> tuple[App, Path]:
    """A vault with a note on the same topic, and a session of DAY0 light sleep has cut."""
    (vault / "Notes").mkdir(exist_ok=True)
    (vault / "Notes" / "Test database.md").write_text(
        "# Test database\n\nThe integration tests run against Postgres 16 in a container.\n",
        encoding="utf-8")
    folder = tmp_path / "claude" / "projects" / "-home-me-code-kiln"
    folder.mkdir(parents=True)
    transcript = folder / f"{SESSION}.jsonl"
    lines = [_entry("user", "The integration suite failed again. Why?", DAY0),
             _entry("assistant", [{"type": "text", "text": "Let me look."}],
                    DAY0 + timedelta(minutes=1)),
             _entry("user", [{"type": "text", "text": f"{RULE} Thanks."}],
                    DAY0 + timedelta(minutes=2)),
             _entry("user", ONE_OFF, DAY0 + timedelta(minutes=3))]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.utime(transcript, (DAY0.timestamp() + 600, DAY0.timestamp() + 600))
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "dream.transcripts": str(folder.parent / "*" / "*.jsonl")})
    app.sync()
    app.dreamer(clock=lambda: _at(0, 22)).dream(force=True)
    return app, transcript


def _raw(hits: list[Any]) -> list[Any]:
    return [h for h in hits if h.origin == "transcript"]


def test_a_statement_is_listed_after_the_vault_hits_as_raw_session_material(
        session_app: tuple[App, Path]) -> None:
    app, transcript = session_app
    rule = next(s for s in app.snippet_recaller.store.snippets(origin="transcript")
                if s.body == RULE)
    plain = app.search(QUERY, limit=10, now=_at(1), count_recall=False)
    hits = app.search(QUERY, limit=10, now=_at(1), count_recall=False, transcripts=True)
    assert _raw(plain) == []  # only asked for: the context and the benches never get them
    raw = _raw(hits)
    assert [h.path for h in raw] == [f"{transcript.as_posix()}:3"]
    assert raw[0].note_id == rule.key and raw[0].memory_type is None
    assert RULE[:60] in raw[0].snippet
    assert raw[0].why and raw[0].why[0].startswith("session words #1")
    # after the vault's hits, never in their place: the vault's hits are the same
    assert hits[:len(plain)] == plain and hits[len(plain):] == raw
    assert "Notes/Test database.md" in [h.path for h in plain]

    as_json = [render.hit_json(h) for h in hits]
    assert [h["kind"] for h in as_json[len(plain):]] == ["transcript"]
    assert {h["kind"] for h in as_json[:len(plain)]} <= {"note", "memory"}
    trace = app.last_search_trace
    assert trace is not None and "1 listed" in trace.transcripts
    assert render.trace_json(trace)["transcripts"] == trace.transcripts

    console = Console(file=io.StringIO(), width=200, color_system=None)
    render.print_hits(console, QUERY, hits)
    render.print_trace(console, trace)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    listed = shown.split("Said in assistant sessions (raw transcripts, unreviewed: not "
                         "memories, not notes):\n", 1)
    assert len(listed) == 2 and f"{transcript.as_posix()}:3 (transcript, key " in listed[1]
    assert "statements of assistant sessions: 2 statements of sessions, 1 by words" in shown

    # a filter (types, folder, layers, a past day) asks for the vault only
    for narrowed in ({"memory_types": ["feedback"]}, {"path_prefix": "Notes/"},
                     {"layers": [3]}):
        assert _raw(app.search(QUERY, now=_at(1), count_recall=False, transcripts=True,
                               **narrowed)) == []


def test_the_context_and_memory_index_never_hold_a_statement(
        session_app: tuple[App, Path], vault: Path) -> None:
    app, transcript = session_app
    context = build_context(app, QUERY, count_recall=False)
    assert transcript.name not in context.text and "hid a broken migration" not in context.text
    assert all(transcript.name not in e.path for e in context.entries)
    index = vault / "Memory" / "MEMORY.md"
    assert not index.exists() or "Postgres" not in index.read_text(encoding="utf-8")


def test_memory_search_lists_statements_as_kind_transcript(
        session_app: tuple[App, Path]) -> None:
    app, transcript = session_app

    async def run() -> Any:
        async with Client(build_server(app)) as client:
            return await client.call_tool("memory_search", {"query": QUERY, "limit": 5})

    result = anyio.run(run)
    assert not result.is_error, result.content
    content = result.structured_content
    hits = content.get("result", content) if content is not None \
        else json.loads(result.content[0].text)
    kinds = [h["kind"] for h in hits]
    assert kinds[-1] == "transcript" and kinds.count("transcript") == 1
    assert hits[-1]["path"] == f"{transcript.as_posix()}:3"
    assert hits[-1]["memory_type"] is None


def test_a_listed_statement_is_one_recall_never_two(session_app: tuple[App, Path]) -> None:
    app, _ = session_app
    store = app.snippet_recaller.store
    rule = next(s for s in store.snippets(origin="transcript") if s.body == RULE)
    app.search(QUERY, limit=10, now=_at(1), transcripts=True)  # matched and listed
    assert store.recall_stats()[rule.key].count == 1
    app.search(QUERY, limit=10, now=_at(2))  # matched, not listed: the count goes on
    assert store.recall_stats()[rule.key].count == 2
    # a statement listed that the words of the query alone would not count is counted
    # once, with the match it was listed for
    shown = app.snippet_recaller.recall("zebra crossings", [], _at(3), shown={rule.key: 0.4})
    assert shown == {rule.key: 0.4}
    assert store.recall_stats()[rule.key].count == 3


def test_a_statement_with_a_credential_is_never_listed(session_app: tuple[App, Path]) -> None:
    app, _ = session_app
    store = app.snippet_recaller.store
    # an index written before credentials were kept out: the search is the second lock
    label = "~/.claude/projects/old/0000.jsonl"
    leaked = cut_statements(label, DAY0.date(), [(
        4, "From now on, deploy Postgres staging with the key "
           "sk-proj-Abc123XyZ987qweRTY456uioPLK.")])
    store.replace_notes({label: leaked})
    hits = app.search("deploy Postgres staging key", now=_at(1), count_recall=False,
                      transcripts=True)
    assert all("sk-proj" not in h.snippet and not h.path.startswith(label) for h in hits)


def test_a_promoted_statement_and_a_forgotten_one_are_never_listed(
        session_app: tuple[App, Path], vault: Path) -> None:
    app, _ = session_app
    for day, query in ((1, QUERY), (2, "in-memory fake hid a broken migration"),
                       (3, "what must the integration tests run against")):
        app.search(query, limit=10, now=_at(day), transcripts=True)
    app.dreamer(clock=lambda: _at(3, 22)).dream(force=True)
    state = sleep_cycle(app).state()
    promoted = [(k, v) for k, v in state.items() if v.get("status") == "promoted"]
    assert len(promoted) == 1
    key, entry = promoted[0]
    hits = app.search(QUERY, now=_at(4), count_recall=False, transcripts=True)
    assert key not in {h.note_id for h in _raw(hits)}  # the memory is found itself
    assert any(h.path == entry["memory"] for h in hits)

    app.memories().forget(Path(entry["memory"]).stem)
    assert sleep_cycle(app).state()[key]["status"] == "forgotten"
    hits = app.search(QUERY, now=_at(4), count_recall=False, transcripts=True)
    assert key not in {h.note_id for h in _raw(hits)}
    assert all(RULE[:40] not in h.snippet for h in hits if h.origin == "transcript")
    # and the next night does not stage it again
    app.dreamer(clock=lambda: _at(4, 22)).dream(force=True)
    assert sleep_cycle(app).state()[key]["status"] == "forgotten"


def test_retrieval_transcript_hits_0_lists_none(vault: Path, make_app: Builder,
                                                 session_app: tuple[App, Path]) -> None:
    assert session_app[0].search(QUERY, now=_at(1), count_recall=False, transcripts=True)
    off, _ = make_app(vault, **{"time.zone": "UTC", "retrieval.transcript_hits": 0})
    hits = off.search(QUERY, now=_at(1), count_recall=False, transcripts=True)
    assert _raw(hits) == []
    trace = off.last_search_trace
    assert trace is not None and trace.transcripts == "off: retrieval.transcript_hits = 0"
