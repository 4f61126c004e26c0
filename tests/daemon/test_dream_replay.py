"""Replay: the dream reads older Claude Code transcripts it never read, through the Extractor.

The endpoint is a FAKE: the loopback OpenAI-chat server of daemon_harness, answering with
canned replies (an LLM is external and non-deterministic). Everything else is real: transcript
files, the vault, the writer, ``remember``'s write path, the dream.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint, snapshot

from ccb.parse import parse_note
from daemon.app import App
from daemon.dream import LAST_FILE
from daemon.dream_replay import REPLAY_CURSOR_FILE

Builder = Callable[..., tuple[App, object]]


@dataclass
class Extractor:
    """Answers an extraction question with one ``user`` fact per ``FACT: <text>`` line of the
    transcript it is sent; other questions get no JSON. ``status`` other than 200 answers
    that status. ``transcripts`` lists, in order, the first fact of each transcript asked."""

    status: int = 200
    transcripts: list[str] = field(default_factory=list)
    others: int = 0
    url: str = ""


@pytest.fixture
def extractor() -> Iterator[Extractor]:
    state = Extractor()

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if "conversation between a user" not in body["messages"][0]["content"]:
            state.others += 1
            return 200, "not json"
        text = str(body["messages"][-1]["content"])
        facts = re.findall(r"FACT: (.+)", text)
        state.transcripts.append(facts[0] if facts else "")
        if state.status != 200:
            return state.status, ""
        return 200, json.dumps({"facts": [
            {"type": "user", "name": fact.rstrip("."), "description": fact,
             "subject": None, "body": fact} for fact in facts]})

    endpoint = ChatEndpoint()  # the shared FAKE endpoint of daemon_harness
    endpoint.respond = respond
    state.url = endpoint.url
    yield state
    endpoint.close()


def transcript(folder: Path, name: str, fact: str, *, days_old: float) -> Path:
    """A Claude Code transcript (JSON lines) in which the user says ``FACT: <fact>``, last
    written ``days_old`` days ago."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [
        {"type": "user", "message": {"role": "user", "content": f"FACT: {fact}"}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Noted."}]}},
    ]) + "\n", encoding="utf-8")
    stamp = (datetime.now(UTC) - timedelta(days=days_old)).timestamp()
    os.utime(path, (stamp, stamp))
    return path


FACTS = ["The user keeps bees on the roof.", "The user rides a cargo bike.",
         "The user bakes rye bread on Sundays.", "The user plays the cello.",
         "The user speaks Norwegian.", "The user grows chillies on the balcony.",
         "The user climbs at the indoor wall on Tuesdays.", "The user collects fountain pens."]


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """Eight transcripts written 10 to 3 days ago (``s0`` the oldest, ``s7`` the newest)."""
    folder = tmp_path / "claude" / "projects" / "p"
    for n, fact in enumerate(FACTS):
        transcript(folder, f"s{n}", fact, days_old=10 - n)
    return folder


def replay_app(vault: Path, make_app: Builder, url: str, pattern: Path, **more: object) -> App:
    app, _ = make_app(vault, **{"llm.enabled": True, "llm.model": "test-model",
                                "llm.base_url": url, "llm.timeout_s": 2,
                                "dream.transcripts": str(pattern), **more})
    app.sync()
    # a dream ran yesterday: every transcript above is older, so the Extractor reads none
    (app.state_dir / LAST_FILE).write_text(json.dumps(
        {"last_dream": (datetime.now(UTC) - timedelta(days=1)).isoformat()}))
    return app


def diary(vault: Path) -> str:
    return (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")


def test_older_transcripts_are_replayed_newest_first_each_once(
    vault: Path, make_app: Builder, extractor: Extractor, sessions: Path,
) -> None:
    app = replay_app(vault, make_app, extractor.url, sessions / "*.jsonl",
                     **{"dream.replay.sessions_per_dream": 3})
    for expected in (FACTS[7:4:-1], FACTS[4:1:-1], FACTS[1::-1], []):
        asked = len(extractor.transcripts)
        app.dreamer().dream()
        assert extractor.transcripts[asked:] == expected  # at most 3 per dream, newest first
    memories = [parse_note(p.name, p.read_bytes()) for p in (vault / "Memory").glob("*.md")]
    bodies = "\n".join(n.body for n in memories if n.memory is not None)
    assert all(fact in bodies for fact in FACTS)  # every fact kept, through remember
    kept = next(n for n in memories if n.body.strip() == FACTS[7])
    assert kept.memory is not None and kept.memory.source == "dream"
    assert re.search(r"Replayed \[\[[^]]+\]\] from transcript s7\.jsonl \(created\)",
                     diary(vault))
    cursor = json.loads((app.state_dir / REPLAY_CURSOR_FILE).read_text())
    assert sorted(Path(p).name for p in cursor["read"]) == [f"s{n}.jsonl" for n in range(8)]


def test_five_a_dream_by_default_and_what_the_extractor_read_is_not_read_again(
    vault: Path, make_app: Builder, extractor: Extractor, sessions: Path,
) -> None:
    transcript(sessions, "today", "The user drinks oat milk.", days_old=0)
    app = replay_app(vault, make_app, extractor.url, sessions / "*.jsonl")
    app.dreamer().dream()
    # the Extractor reads the new one; replay the five newest of the older ones
    assert extractor.transcripts == ["The user drinks oat milk.", *FACTS[7:2:-1]]
    app.dreamer().dream()  # "today" is older than this dream now: never read twice
    assert extractor.transcripts[6:] == FACTS[2::-1]


def test_a_replayed_fact_goes_through_the_write_paths_judgement(
    vault: Path, make_app: Builder, extractor: Extractor, tmp_path: Path,
) -> None:
    folder = tmp_path / "claude" / "projects" / "q"
    known = parse_note("x.md", (vault / "Memory/prefers-metric-units.md").read_bytes())
    transcript(folder, "again", known.body.strip().splitlines()[0], days_old=5)
    transcript(folder, "secret", "The deploy key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
               days_old=4)
    app = replay_app(vault, make_app, extractor.url, folder / "*.jsonl")
    app.dreamer().dream()
    assert len(extractor.transcripts) == 2
    assert "Did not keep a fact from secret.jsonl" in diary(vault)
    assert not any(b"sk-live" in data for data in snapshot(vault).values())


@pytest.mark.parametrize("failure", ["down", "500"])
def test_a_failing_endpoint_leaves_everything_as_it_was(
    vault: Path, make_app: Builder, extractor: Extractor, sessions: Path, failure: str,
) -> None:
    quiet, _ = make_app(vault)
    quiet.sync()
    quiet.dreamer().dream()  # settles what a dream without any LLM does to the vault
    before = snapshot(vault)
    extractor.status = 500
    url = "http://127.0.0.1:9/v1" if failure == "down" else extractor.url
    app = replay_app(vault, make_app, url, sessions / "*.jsonl")
    app.dreamer().dream()
    assert len(extractor.transcripts) <= 1  # the first failure stops the replay
    after = snapshot(vault)
    assert {p: d for p, d in after.items() if p != "Memory/DREAMS.md"} == \
        {p: d for p, d in before.items() if p != "Memory/DREAMS.md"}
    assert not (app.state_dir / REPLAY_CURSOR_FILE).exists()  # nothing counts as read
    assert re.search(r"(Replay stopped at transcript s7\.jsonl|Deep phase stopped): llm:",
                     diary(vault))
    extractor.status = 200
    back = replay_app(vault, make_app, extractor.url, sessions / "*.jsonl")
    asked = len(extractor.transcripts)
    back.dreamer().dream()
    assert extractor.transcripts[asked:] == FACTS[7:2:-1]


def test_replay_off_and_without_the_extractor_reads_nothing(
    vault: Path, make_app: Builder, extractor: Extractor, sessions: Path,
) -> None:
    off = replay_app(vault, make_app, extractor.url, sessions / "*.jsonl",
                     **{"dream.replay.sessions_per_dream": 0})
    off.dreamer().dream()
    assert extractor.transcripts == []
    plain, _ = make_app(vault, **{"dream.transcripts": str(sessions / "*.jsonl")})
    plain.sync()
    plain.dreamer().dream()
    assert extractor.transcripts == [] and not (plain.state_dir / REPLAY_CURSOR_FILE).exists()


def test_a_pipe_or_a_folder_matching_the_transcripts_glob_is_never_read(tmp_path: Path) -> None:
    """A FIFO named like a transcript would block a dream for good on its first read: only
    regular files are transcripts."""
    import os

    from daemon.dream_deep import transcripts_since
    from daemon.dream_replay import unread_transcripts

    (tmp_path / "real.jsonl").write_text("{}\n", encoding="utf-8")
    os.mkfifo(tmp_path / "hang.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    pattern = str(tmp_path / "*.jsonl")
    assert [p.name for p in transcripts_since(pattern, None)] == ["real.jsonl"]
    assert [p.name for p in unread_transcripts(pattern, (), 5)] == ["real.jsonl"]
