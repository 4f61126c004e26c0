"""From a session to memory (issue 21): what the user said in a Claude Code session is raw
material too. Light sleep reads the transcripts of its days (the statements ``dreamd flush``
would keep), a search that matches a statement is a recall of it, and deep sleep promotes it
under the diary's gates, with the transcript's line as evidence.

Real vault files, a real transcript file in the shape Claude Code writes, a real store and
the real search pipeline; the token-hash fake embedder only builds the App (the votes are
word matches, not meaning). Time is fixed: each dream and search is given its moment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ccb.parse import parse_note
from daemon.app import App, sleep_cycle
from daemon.dream_sleep import SNIPPETS_FILE

Builder = Callable[..., tuple[App, object]]
SESSION = "3f2a1c9b-7d4e-4a51-9c1e-5b2f0c8d9e10"
DAY0 = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)
RULE = ("From now on, integration tests must run against a real Postgres, never an "
        "in-memory fake: the fake hid a broken migration last month.")
ONE_OFF = "Let's use the blue palette for the quarterly slides."
SECRET = "Always use the key sk-proj-Abc123XyZ987qweRTY456uioPLK for the staging deploys."


def _at(days: float, hour: int = 12) -> datetime:
    return DAY0.replace(hour=hour) + timedelta(days=days)


def _entry(kind: str, content: Any, at: datetime, **extra: Any) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/home/me/code/kiln", "sessionId": SESSION, "version": "2.0.14",
            "type": kind, "message": {"role": kind, "content": content},
            "uuid": f"u-{at.timestamp()}-{kind}",
            "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            **extra}


def _write_transcript(folder: Path) -> Path:
    """A session of DAY0 in the shape Claude Code writes: a summary line, the user's
    prompts (one with text blocks), the assistant's replies, a tool result, a meta line."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    t = DAY0
    lines = [
        {"type": "summary", "summary": "Flaky integration tests", "leafUuid": "x"},
        _entry("user", "The integration suite failed again on CI. Why did it pass locally?",
               t),
        _entry("assistant", [{"type": "text", "text": "You must always run migrations "
                              "first. I decided to rerun them."}], t + timedelta(minutes=1)),
        _entry("user", [{"type": "tool_result", "tool_use_id": "t1",
                         "content": "never mock the clock"}], t + timedelta(minutes=2)),
        _entry("user", [{"type": "text", "text": f"{RULE} Thanks for digging."}],
               t + timedelta(minutes=3)),
        _entry("user", "<command-name>/compact</command-name>Always answer in French.",
               t + timedelta(minutes=4), isMeta=True),
        _entry("user", f"{ONE_OFF} {SECRET}", t + timedelta(minutes=5)),
        _entry("assistant", [{"type": "text", "text": "Noted."}], t + timedelta(minutes=6)),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.utime(path, (t.timestamp() + 600, t.timestamp() + 600))
    return path


@pytest.fixture
def session_app(vault: Path, make_app: Builder, tmp_path: Path) -> tuple[App, Path]:
    projects = tmp_path / "claude" / "projects"
    transcript = _write_transcript(projects / "-home-me-code-kiln")
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "dream.transcripts": str(projects / "*" / "*.jsonl")})
    app.sync()
    return app, transcript


def _dream(app: App, at: datetime) -> None:
    app.dreamer(clock=lambda: at).dream(force=True)


def _promoted(vault: Path) -> list[Path]:
    return [p for p in (vault / "Memory").glob("*.md")
            if "derived_from" in p.read_text(encoding="utf-8")]


def _files(vault: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}


def test_a_rule_said_in_a_session_and_found_three_times_becomes_a_feedback_memory(
        session_app: tuple[App, Path], vault: Path) -> None:
    app, transcript = session_app
    said = transcript.read_bytes()
    _dream(app, _at(0, 22))  # light sleep stages what the user said; nothing earned yet
    store = app.snippet_recaller.store
    spoken = store.snippets(origin="transcript")
    assert [s.body for s in spoken] == [RULE, ONE_OFF]  # the user's statements only
    assert not any("sk-proj" in s.body for s in store.snippets())  # a credential: never
    rule = spoken[0]
    assert rule.evidence == f"{transcript.as_posix()}:5" and rule.start_score == 0.58
    assert rule.kind == "rule" and rule.day == DAY0.date()
    assert {v["status"] for v in sleep_cycle(app).state().values()} == {"staged"}
    assert _promoted(vault) == []

    for day, query in ((1, "integration tests against a real Postgres"),
                       (2, "in-memory fake hid a broken migration"),
                       (3, "what must the integration tests run against")):
        app.search(query, limit=10, now=_at(day))
    app.search("blue palette quarterly slides", limit=10, now=_at(2))  # once: not enough
    _dream(app, _at(3, 22))

    promoted = _promoted(vault)
    assert len(promoted) == 1
    meta = parse_note("Memory/x.md", promoted[0].read_bytes()).memory
    assert meta is not None and meta.type == "feedback" and meta.source == "dream"
    text = promoted[0].read_text(encoding="utf-8")
    assert RULE in text and "palette" not in text
    assert f"{transcript.as_posix()}:5" in text.split("derived_from:", 1)[1].split("\n---")[0]
    assert transcript.read_bytes() == said  # a transcript is read, never written
    dreams = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert f"`{transcript.as_posix()}:5`" in dreams

    # a second night with nothing new changes nothing: no file, no state, no row
    files, state = _files(vault), (app.state_dir / SNIPPETS_FILE).read_bytes()
    rows = [(s.key, s.lines) for s in store.snippets()]
    _dream(app, _at(3, 23))
    assert _files(vault) == files
    assert (app.state_dir / SNIPPETS_FILE).read_bytes() == state
    assert [(s.key, s.lines) for s in store.snippets()] == rows


def test_a_session_that_goes_on_keeps_its_older_statements_and_stages_the_new_ones(
        session_app: tuple[App, Path]) -> None:
    app, transcript = session_app
    _dream(app, _at(0, 22))
    before = {s.key: s.lines for s in app.snippet_recaller.store.snippets(origin="transcript")}
    later = _at(4, 9)  # the same session, resumed days later
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_entry("user", "We decided to keep the nightly build on "
                                       "the old runner until March.", later)) + "\n")
    os.utime(transcript, (later.timestamp(), later.timestamp()))
    _dream(app, _at(4, 22))
    after = {s.key: (s.lines, s.day) for s in
             app.snippet_recaller.store.snippets(origin="transcript")}
    assert {k: lines for k, (lines, _) in after.items() if k in before} == before
    new = [k for k in after if k not in before]
    assert len(new) == 1 and after[new[0]][1] == later.date()
    state = sleep_cycle(app).state()
    assert all(state[k]["status"] == "staged" for k in after)


def test_a_transcript_written_before_the_lookback_is_not_read(
        vault: Path, make_app: Builder, tmp_path: Path) -> None:
    projects = tmp_path / "claude" / "projects"
    _write_transcript(projects / "p")
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "dream.transcripts": str(projects / "*" / "*.jsonl")})
    app.sync()
    _dream(app, _at(5, 22))  # the session was five days ago; light sleep reads two
    assert app.snippet_recaller.store.snippets(origin="transcript") == []


def test_dreams_md_shows_a_statement_with_a_pipe_in_one_table_cell(
        vault: Path, make_app: Builder, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    projects = tmp_path / "claude" / "projects"
    folder = projects / "p"
    folder.mkdir(parents=True)
    said = "From now on, always read the service logs through `jq | less` before a restart."
    transcript = folder / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(_entry("user", said, DAY0)) + "\n", encoding="utf-8")
    os.utime(transcript, (DAY0.timestamp(), DAY0.timestamp()))
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "dream.transcripts": str(projects / "*" / "*.jsonl")})
    app.sync()
    _dream(app, _at(0, 22))
    dreams = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").enable("table").parse(dreams)
    assert any(t.type == "table_open" for t in tokens), dreams  # the blocks are tables
    cells = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "td_open"]
    assert any("`jq | less`" in cell for cell in cells), cells  # one cell, pipe and all
    header = tokens[:next(i for i, t in enumerate(tokens) if t.type == "thead_close")]
    columns = sum(1 for t in header if t.type == "th_open")
    light = dreams.split("## Light Sleep", 1)[1].split("## REM Sleep", 1)[0]
    for line in (x for x in light.splitlines() if x.startswith("|")):
        assert line.replace("\\|", "").count("|") == columns + 1, line  # no cell spills


def test_a_statement_the_flush_wrote_to_the_diary_is_staged_once_from_the_diary(
        session_app: tuple[App, Path], vault: Path) -> None:
    from daemon.app import diary_of
    from daemon.flush import FlushCursors, HookEvent, flush

    app, transcript = session_app
    diary = diary_of(app, clock=lambda: _at(0, 15))  # the PreCompact hook of that afternoon
    report = flush(HookEvent(SESSION, transcript), diary, FlushCursors(app.state_dir))
    assert report.appended == 2  # the rule and the one-off; the credential withheld
    app.sync()
    _dream(app, _at(0, 22))
    state = sleep_cycle(app).state()
    store = app.snippet_recaller.store
    said = {s.body: s for s in store.snippets(origin="transcript")}
    noted = {s.body: s for s in store.snippets(origin="diary")}
    assert RULE in said and RULE in noted
    assert state[noted[RULE].key]["status"] == "staged"
    assert state[said[RULE].key] == {
        "status": "dropped", "staged": DAY0.date().isoformat(),
        "why": f"the diary holds it ({noted[RULE].evidence})"}
