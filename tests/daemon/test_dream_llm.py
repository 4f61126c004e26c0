"""The dream's deep phase against an LLM endpoint.

The endpoint is a FAKE: a loopback HTTP server that speaks the OpenAI chat-completions protocol
and answers with canned replies (an LLM is external and non-deterministic). Everything else is
real: files, the store, the writer, the dream.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint, snapshot, write_memory
from lineage_files import checked_canvas

from ccb.parse import parse_note
from config.errors import LlmError
from daemon.app import App
from daemon.lineage import LineageService
from daemon.llm import ChatClient

Builder = Callable[..., tuple[App, object]]


@dataclass
class FakeChat:
    """Replies by what the system prompt asks for: ``synthesis``, ``refine``, ``extract``.
    ``status`` other than 200 answers that HTTP status; ``delay_s`` waits before answering."""

    replies: dict[str, str] = field(default_factory=dict)
    status: int = 200
    delay_s: float = 0.0
    requests: list[dict[str, object]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def fake_chat() -> Iterator[FakeChat]:
    state = FakeChat()

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        state.requests.append(body)
        time.sleep(state.delay_s)
        system = body["messages"][0]["content"]
        kind = ("synthesis" if "consolidate" in system else
                "refine" if "tidy" in system else "extract")
        if state.status != 200:
            return state.status, ""
        return 200, state.replies.get(kind, "not json at all")

    endpoint = ChatEndpoint()  # the shared FAKE endpoint of daemon_harness
    endpoint.respond = respond
    state.url = endpoint.url
    yield state
    endpoint.close()


def test_client_reports_every_failure_as_one_error(fake_chat: FakeChat) -> None:
    client = ChatClient(fake_chat.url, "test-model", timeout_s=0.5)
    fake_chat.replies["extract"] = "hello"
    assert client.chat([{"role": "system", "content": "x"}]) == "hello"
    assert fake_chat.requests[-1]["model"] == "test-model"
    fake_chat.status = 429
    with pytest.raises(LlmError, match="HTTP 429"):
        client.chat([{"role": "system", "content": "x"}])
    fake_chat.status, fake_chat.delay_s = 200, 1.5
    with pytest.raises(LlmError, match="did not answer within"):
        client.chat([{"role": "system", "content": "x"}])
    with pytest.raises(LlmError, match="cannot reach"):
        ChatClient("http://127.0.0.1:9/v1", "m", timeout_s=1).chat([])


@pytest.fixture
def cluster_vault(vault: Path) -> dict[str, str]:
    return {
        "a": write_memory(vault, "billing-retries", "Billing retries failed charges 3 times.",
                          type="project", subject="billing.retries", days_old=20),
        "b": write_memory(vault, "billing-owner", "Dana Reyes owns the billing service.",
                          type="project", subject="billing.owner", days_old=15),
        "c": write_memory(vault, "billing-cutoff", "Invoices close on 2026-12-01.",
                          type="project", subject="billing.cutoff", days_old=10),
    }


def llm_app(vault: Path, make_app: Builder, url: str, **more: object) -> App:
    app, _ = make_app(vault, **{"llm.enabled": True, "llm.model": "test-model",
                                "llm.base_url": url, "llm.timeout_s": 2,
                                "dream.transcripts": "", **more})
    app.sync()
    return app


def test_a_faithful_synthesis_supersedes_its_sources(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
) -> None:
    fake_chat.replies["synthesis"] = "```json\n" + json.dumps({
        "name": "Billing service facts",
        "description": "Who owns billing, retries, invoice cutoff",
        "body": "## What\nDana Reyes owns the billing service. Failed charges are retried 3 "
                "times. Invoices close on 2026-12-01.\n"}) + "\n```"
    app = llm_app(vault, make_app, fake_chat.url)
    report = app.dreamer().dream()
    new = vault / "Memory/billing-service-facts.md"
    note = parse_note("Memory/billing-service-facts.md", new.read_bytes())
    assert note.memory is not None and note.memory.source == "dream"
    assert set(note.memory.supersedes) == {"billing-retries", "billing-owner", "billing-cutoff"}
    for rel in cluster_vault.values():
        source = parse_note(rel, (vault / rel).read_bytes())
        assert source.memory.status == "archived"  # type: ignore[union-attr]
        assert source.properties["merged_into"] == "[[billing-service-facts]]"
    diary = (vault / "Memory/DREAMS.md").read_text()
    assert "into [[billing-service-facts]]" in diary
    assert "Memory/billing-service-facts.md" in report.written


def test_a_synthesis_whose_source_changed_is_flagged_by_check_with_its_chain(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
) -> None:
    """A synthesis names its sources in ``derived_from``: what it did to them (archived into
    it, superseded by it) is no change; a source forgotten later, or superseded by a memory
    the user writes, flags the synthesis — and what derives from it — with the chain."""
    fake_chat.replies["synthesis"] = "```json\n" + json.dumps({
        "name": "Billing service facts",
        "description": "Who owns billing, retries, invoice cutoff",
        "body": "## What\nDana Reyes owns the billing service. Failed charges are retried 3 "
                "times. Invoices close on 2026-12-01.\n"}) + "\n```"
    app = llm_app(vault, make_app, fake_chat.url)
    app.dreamer().dream()
    synthesis = "Memory/billing-service-facts.md"
    note = parse_note(synthesis, (vault / synthesis).read_bytes())
    assert sorted(note.properties["derived_from"]) == [  # type: ignore[arg-type]
        "[[billing-cutoff]]", "[[billing-owner]]", "[[billing-retries]]"]

    def lineage_drift() -> list[tuple[str, object]]:
        return [(f.kind, f.drift) for f in app.consistency().check().findings
                if f.kind in {"derived_from_changed_source", "dangling_lineage",
                              "supersedes_cycle", "superseded_twice"}]

    assert lineage_drift() == []
    (vault / "Memory/billing-digest.md").write_text(
        "---\nname: Billing digest\ntype: project\ncreated: 2026-11-30T10:00:00Z\n"
        'derived_from: "[[billing-service-facts]]"\n---\nSee the billing facts.\n',
        encoding="utf-8")
    app.memories().forget("billing-owner")
    app.sync()
    # forget takes the name out (it is often the memory's text), and leaves a count
    text = (vault / synthesis).read_text(encoding="utf-8")
    assert "billing-owner" not in text and "forgotten_sources: 1\n" in text
    found = lineage_drift()
    assert [(kind, drift.chain, drift.change) for kind, drift in found] == [  # type: ignore[attr-defined]
        ("derived_from_changed_source",
         ("Memory/billing-digest.md", synthesis, "(a forgotten memory)"), "forgotten"),
        ("derived_from_changed_source", (synthesis, "(a forgotten memory)"), "forgotten")]
    # a source superseded by a memory the user writes flags it too
    (vault / "Memory/billing-cutoff-moved.md").write_text(
        "---\nname: Billing cutoff moved\ntype: project\ncreated: 2026-12-02T10:00:00Z\n"
        'supersedes: "[[billing-cutoff]]"\n---\nInvoices close on 2026-12-05.\n',
        encoding="utf-8")
    app.sync()
    found = lineage_drift()
    changes = {(drift.chain, drift.change) for kind, drift in found  # type: ignore[attr-defined]
               if kind == "derived_from_changed_source"}
    assert ((synthesis, "Memory/billing-cutoff.md"),
            "superseded by Memory/billing-cutoff-moved.md") in changes
    # and the cutoff now has two successors: the synthesis and the user's memory
    assert ("superseded_twice", "Memory/billing-cutoff.md") in {
        (kind, getattr(drift, "path", "")) for kind, drift in found}


def test_a_dream_canvas_draws_a_synthesis_with_its_sources(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
) -> None:
    fake_chat.replies["synthesis"] = "```json\n" + json.dumps({
        "name": "Billing service facts",
        "description": "Who owns billing, retries, invoice cutoff",
        "body": "## What\nDana Reyes owns the billing service. Failed charges are retried 3 "
                "times. Invoices close on 2026-12-01.\n"}) + "\n```"
    app = llm_app(vault, make_app, fake_chat.url)
    report = app.dreamer().dream()
    memories = app.memories()
    service = LineageService(memories=memories.memories, find=memories.find,
                             versions=app.versions, writer=app.writer,
                             memory_folder=app.settings.vault.memory_folder)
    drawn = service.write_dream_canvas(report.plan.consolidation, report.plan.lifecycle,
                                       app.clock(), report.written)
    assert drawn is not None
    canvas = checked_canvas(vault, drawn.path)
    by_id = {n["id"]: n.get("file") for n in canvas["nodes"]}
    synthesised = sorted(by_id[e["toNode"]] for e in canvas["edges"]
                         if e["label"] == "derived from"  # the label lineage --canvas uses
                         and by_id[e["fromNode"]] == "Memory/billing-service-facts.md")
    assert synthesised == sorted(cluster_vault.values())


def test_a_synthesis_that_drops_a_fact_is_rejected(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
) -> None:
    fake_chat.replies["synthesis"] = json.dumps({
        "name": "Billing", "description": "Billing facts",
        "body": "Dana Reyes owns billing; charges are retried."})  # lost 3 and 2026-12-01
    app = llm_app(vault, make_app, fake_chat.url)
    before = snapshot(vault)
    app.dreamer().dream()
    after = snapshot(vault)
    for rel in cluster_vault.values():
        assert after[rel] == before[rel]
    diary = after["Memory/DREAMS.md"].decode()
    assert "Rejected a synthesis" in diary and "`2026-12-01`" in diary and "`3`" in diary


def test_a_synthesis_longer_than_a_memory_may_be_is_rejected(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
) -> None:
    """The deep phase writes what remember would take, no more (memory.max_chars)."""
    fake_chat.replies["synthesis"] = json.dumps({
        "name": "Billing service facts", "description": "Who owns billing, retries, cutoff",
        "body": "Dana Reyes owns the billing service. Failed charges are retried 3 times. "
                "Invoices close on 2026-12-01. " + "Every detail of every invoice run. " * 20})
    app = llm_app(vault, make_app, fake_chat.url, **{"memory.max_chars": 500})
    before = snapshot(vault)
    app.dreamer().dream()
    after = snapshot(vault)
    assert "Memory/billing-service-facts.md" not in after
    for rel in cluster_vault.values():
        assert after[rel] == before[rel]
    diary = after["Memory/DREAMS.md"].decode()
    assert "Rejected a synthesis of" in diary and "more than memory.max_chars (500)" in diary


@pytest.mark.parametrize("failure", ["down", "429", "slow", "garbage"])
def test_a_misbehaving_endpoint_never_breaks_a_dream(
    vault: Path, make_app: Builder, fake_chat: FakeChat, cluster_vault: dict[str, str],
    failure: str,
) -> None:
    write_memory(vault, "pnpm-a", "Use pnpm for installs.", subject="pm", days_old=3)
    write_memory(vault, "pnpm-b", "use pnpm for installs", subject="pm", days_old=2)
    url = "http://127.0.0.1:9/v1" if failure == "down" else fake_chat.url
    fake_chat.status = 429 if failure == "429" else 200
    fake_chat.delay_s = 3 if failure == "slow" else 0
    app = llm_app(vault, make_app, url)
    report = app.dreamer().dream()
    assert "Archived [[pnpm-b]]: exact duplicate of [[pnpm-a]]" in report.plan.changes
    diary = (vault / "Memory/DREAMS.md").read_text()
    assert ("Deep phase stopped" in diary) if failure != "garbage" else \
        ("Rejected a synthesis" in diary)
    for rel in cluster_vault.values():
        assert b"status: archived" not in (vault / rel).read_bytes()


def test_extractor_keeps_transcript_facts_through_the_write_path(
    vault: Path, make_app: Builder, fake_chat: FakeChat, tmp_path: Path,
) -> None:
    transcripts = tmp_path / "claude" / "projects" / "p"
    transcripts.mkdir(parents=True)
    (transcripts / "s1.jsonl").write_text("\n".join(json.dumps(line) for line in [
        {"type": "user", "message": {"role": "user", "content": "Please always run ruff "
                                     "before you commit, the CI rejects lint errors."}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Will do."}]}},
        {"type": "summary", "summary": "ignored"},
    ]) + "\n")
    fake_chat.replies["extract"] = json.dumps({"facts": [
        {"type": "feedback", "name": "Run ruff before committing",
         "description": "CI rejects lint errors", "subject": "lint.ruff",
         "body": "Always run ruff before committing: the CI rejects lint errors."},
        {"type": "reference", "name": "Deploy key", "description": "the key",
         "subject": "deploy.key",
         "body": "The deploy key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"},
        {"type": "nonsense", "name": "x", "body": "y"},
    ]})
    app = llm_app(vault, make_app, fake_chat.url,
                  **{"dream.transcripts": str(tmp_path / "claude/projects/*/*.jsonl")})
    app.dreamer().dream()
    kept = vault / "Memory/run-ruff-before-committing.md"
    note = parse_note("Memory/run-ruff-before-committing.md", kept.read_bytes())
    assert note.memory is not None and note.memory.type == "feedback"
    assert note.memory.source == "dream"
    assert any("ruff before you commit" in json.dumps(r["messages"])  # the extraction's
               for r in fake_chat.requests if "dream diary" not in json.dumps(r["messages"]))
    diary = (vault / "Memory/DREAMS.md").read_text()
    assert "Extracted [[run-ruff-before-committing]] from transcript s1.jsonl" in diary
    assert "Did not keep a fact from s1.jsonl" in diary  # the credential was refused
    assert not any(b"sk-live" in data for data in snapshot(vault).values())
