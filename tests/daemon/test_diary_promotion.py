"""From diary to memory (issue 21): a line of a daily note earns a memory by being found.

Real vault files, the real writer, a real store (LanceDB in a temp folder) and the real search
pipeline; the token-hash fake embedder only builds the App (the votes are word matches, not
meaning). Time is fixed: the dream and each search are given their moment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint

from ccb.parse import parse_note
from daemon.active_recall import FAILURES_TO_PAUSE, PAUSE_S, ActiveRecall, fuse
from daemon.app import App, sleep_cycle
from daemon.cli import serve_command
from daemon.dream_sleep import diary_status
from magma.snippet_store import SnippetStore

REPO = Path(__file__).resolve().parents[2]
Builder = Callable[..., tuple[App, object]]
#: The evening the diary line was written (UTC, the user's zone in these tests).
DAY0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
NOTE = "Daily/2026-12-01.md"
RULE = ("Release notes must name every breaking change: a silent rename broke the mobile "
        "client in March.")
DIARY = (f"# Tuesday\n\n## PR review\n- 14:03 {RULE}\n"
         "- 15:10 Lunch with Bob at the noodle place near the station.\n")


def _at(days: float, hour: int = 12) -> datetime:
    return DAY0.replace(hour=hour) + timedelta(days=days)


@pytest.fixture
def diary_app(vault: Path, make_app: Builder) -> App:
    (vault / NOTE).write_text(DIARY, encoding="utf-8")
    app, _ = make_app(vault, **{"time.zone": "UTC"})
    app.sync()
    return app


def _dream(app: App, at: datetime) -> None:
    app.dreamer(clock=lambda: at).dream(force=True)


def _search_on_three_days(app: App) -> None:
    for day, query in ((1, "breaking change in release notes"),
                       (2, "silent rename broke the mobile client"),
                       (3, "what must release notes name")):
        hits = app.search(query, limit=10, now=_at(day))
        assert NOTE in {h.path for h in hits}
    app.search("lunch noodle place", limit=10, now=_at(2))


def _with_model(make_app: Builder, vault: Path, endpoint: ChatEndpoint) -> App:
    """An App whose LLM role is ``endpoint`` (a loopback FAKE), synced, after one night."""
    app, _ = make_app(vault, **{"time.zone": "UTC", "llm.enabled": True,
                                "llm.model": "test-model", "llm.base_url": endpoint.url,
                                "llm.timeout_s": 2})
    app.sync()
    _dream(app, _at(0, 22))
    return app


def _promoted(vault: Path) -> list[Path]:
    return [p for p in (vault / "Memory").glob("*.md")
            if "derived_from" in p.read_text(encoding="utf-8")]


def test_a_rule_found_three_times_on_three_days_becomes_a_feedback_memory(
        diary_app: App, vault: Path) -> None:
    note_before = (vault / NOTE).read_bytes()
    _dream(diary_app, _at(0, 22))  # light sleep stages the lines; nothing is earned yet
    assert _promoted(vault) == []
    _search_on_three_days(diary_app)
    _dream(diary_app, _at(3, 22))
    promoted = _promoted(vault)
    assert len(promoted) == 1
    meta = parse_note("Memory/x.md", promoted[0].read_bytes()).memory
    assert meta is not None and meta.type == "feedback" and meta.source == "dream"
    text = promoted[0].read_text(encoding="utf-8")
    assert f"derived_from:\n  - \"{NOTE}:4\"" in text or f"derived_from:\n  - {NOTE}:4" in text
    assert RULE in text
    assert "noodle" not in text and not any("noodle" in p.read_text() for p in promoted)
    assert (vault / NOTE).read_bytes() == note_before  # the phases never rewrite a note
    dreams = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert "## Light Sleep" in dreams and "## REM Sleep" in dreams
    assert f"promoted → [[{promoted[0].stem}]]" in dreams and f"`{NOTE}:4`" in dreams
    assert diary_status(diary_app.state_dir)["promoted"] == 1
    # the evidence in derived_from is lines of the diary, not a lost memory: check is clean
    diary_app.sync()
    findings = diary_app.consistency().check().findings
    assert not [f for f in findings if promoted[0].name in str(f.drift)], findings
    # a second night with nothing new changes nothing
    files = {p: p.read_bytes() for p in (vault / "Memory").rglob("*.md")}
    _dream(diary_app, _at(3, 23))
    assert {p: p.read_bytes() for p in (vault / "Memory").rglob("*.md")} == files


def test_a_line_searched_once_is_not_promoted_and_explain_says_why(
        diary_app: App, vault: Path) -> None:
    _dream(diary_app, _at(0, 22))
    diary_app.search("lunch noodle place", limit=10, now=_at(1))
    _dream(diary_app, _at(1, 22))
    assert _promoted(vault) == []
    cycle = sleep_cycle(diary_app, clock=lambda: _at(1, 22))
    lunch = next(s for s in diary_app.snippet_recaller.store.snippets(paths=[NOTE])
                 if "noodle" in s.body)
    explained = cycle.explain(lunch.key[:8])
    assert explained is not None and explained.recalls.count == 1
    assert {"recalls", "distinct_queries"} <= set(explained.score.failed)
    assert cycle.last_night()["why_none"]


@pytest.mark.parametrize(("known", "action"), [
    (RULE, "duplicate"),  # the same words: nothing to add
    ("Release notes must name every breaking change.", "updated"),  # the reason is new
])
def test_a_duplicate_of_a_memory_is_merged_into_it_not_promoted_twice(
        diary_app: App, vault: Path, known: str, action: str) -> None:
    kept = diary_app.memories().remember(known, type="feedback")
    before = sorted(p.name for p in (vault / "Memory").glob("*.md") if p.name != "DREAMS.md")
    _dream(diary_app, _at(0, 22))
    _search_on_three_days(diary_app)
    _dream(diary_app, _at(3, 22))
    assert sorted(p.name for p in (vault / "Memory").glob("*.md")
                  if p.name != "DREAMS.md") == before
    state = sleep_cycle(diary_app).state()
    rule = [v for v in state.values() if v.get("status") == "promoted"]
    assert [(v["memory"], v["action"]) for v in rule] == [(kept.path, action)]
    assert "a silent rename broke the mobile client" in \
        (vault / kept.path).read_text(encoding="utf-8")


def test_promote_explain_prints_every_signal_and_gate_and_refuses_an_unknown_key(
        diary_app: App, vault: Path) -> None:
    _dream(diary_app, _at(0, 22))
    key = next(iter(sleep_cycle(diary_app).state()))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "daemon", "promote", "--vault", str(vault), "--explain"]
    shown = subprocess.run([*args, key[:6]], capture_output=True, text=True, env=env,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    for name in ("relevance", "frequency", "diversity", "recency", "consolidation",
                 "richness", "phase boost", "gate recalls", "gate distinct_queries"):
        assert name in shown.stdout
    missing = subprocess.run([*args, "ffffffff"], capture_output=True, text=True, env=env,
                             timeout=120)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_context_hook_adds_at_most_three_raw_diary_lines_that_match_the_prompt(
        diary_app: App, vault: Path) -> None:
    _dream(diary_app, _at(0, 22))
    event = json.dumps({"hook_event_name": "UserPromptSubmit",
                        "prompt": "what do release notes need to name about breaking changes?"})
    # as the daemon serves the hook (the CLI in another process would load the real model)
    done = serve_command(diary_app, ["context", "--hook"], event, {})
    assert done is not None and done.exit_code == 0, done
    assert "<raw-diary" in done.stdout, done.stderr
    raw = done.stdout[done.stdout.index("<raw-diary"):]
    assert RULE in raw and f"({NOTE}:4)" in raw and "noodle" not in raw
    assert raw.count("\n- ") <= 3


def test_active_recall_stops_trying_for_a_minute_after_three_failures(tmp_path: Path) -> None:
    broken = tmp_path / "not-a-store"
    broken.write_text("a file where the store should be", encoding="utf-8")
    opened: list[int] = []
    now = [1_000.0]

    def store() -> SnippetStore:
        opened.append(1)
        return SnippetStore.open(str(broken))

    recall = ActiveRecall(store, tmp_path, clock=lambda: now[0])
    for _ in range(FAILURES_TO_PAUSE):
        assert recall.recall("release notes breaking change") == []
    assert len(opened) == FAILURES_TO_PAUSE and recall.paused()
    assert recall.recall("release notes breaking change") == []
    assert len(opened) == FAILURES_TO_PAUSE  # paused: not tried
    now[0] += PAUSE_S + 1
    assert recall.recall("release notes breaking change") == [] and len(opened) == 4


def test_a_line_the_user_deletes_is_dropped_and_shown_so(diary_app: App, vault: Path) -> None:
    _dream(diary_app, _at(0, 22))
    note = vault / NOTE
    note.write_text(note.read_text(encoding="utf-8").replace(
        "- 15:10 Lunch with Bob at the noodle place near the station.\n", ""), encoding="utf-8")
    _dream(diary_app, _at(1, 22))
    state = sleep_cycle(diary_app).state()
    assert sorted(v["status"] for v in state.values()) == ["dropped", "staged"]
    dropped = next(v for v in state.values() if v["status"] == "dropped")
    assert dropped["why"] == f"its line left {NOTE}"
    assert "dropped: its line left" in (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert [s.body for s in diary_app.snippet_recaller.store.snippets(paths=[NOTE])] == [RULE]


def test_light_sleep_reads_an_attached_openclaw_workspace_and_leaves_it_as_it_is(
        vault: Path, make_app: Builder, tmp_path: Path, corpora_dir: Path) -> None:
    workspace = tmp_path / "vhex"
    shutil.copytree(corpora_dir / "memory-samples" / "openclaw" / "VhexAI__openclaw-workspace",
                    workspace)
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    app, _ = make_app(vault, **{"time.zone": "UTC",
                                "vault.extra_roots": [{"path": str(workspace), "name": "vhex"}]})
    app.sync()
    _dream(app, datetime(2026, 2, 4, 22, tzinfo=UTC))
    found = app.snippet_recaller.store.snippets(paths=["vhex:memory/2026-02-04.md"])
    assert found and all(s.evidence.startswith("vhex:memory/2026-02-04.md:") for s in found)
    assert {v["status"] for v in sleep_cycle(app).state().values()} == {"staged"}
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before


def test_a_line_deleted_from_an_older_note_leaves_the_raw_layer(
        diary_app: App, vault: Path) -> None:
    _dream(diary_app, _at(0, 22))
    note = vault / NOTE
    note.write_text(note.read_text(encoding="utf-8").replace(
        "- 15:10 Lunch with Bob at the noodle place near the station.\n", ""), encoding="utf-8")
    _dream(diary_app, _at(10, 22))  # long past light sleep's two days
    assert [s.body for s in diary_app.snippet_recaller.store.snippets(paths=[NOTE])] == [RULE]
    assert ActiveRecall(lambda: diary_app.snippet_recaller.store, diary_app.state_dir
                        ).recall("lunch with Bob at the noodle place") == []
    note.unlink()  # the whole day deleted: nothing of it is shown again
    _dream(diary_app, _at(11, 22))
    assert diary_app.snippet_recaller.store.snippets(paths=[NOTE]) == []


def test_with_a_model_each_block_opens_with_a_diary_paragraph_kept_in_dreams_only(
        vault: Path, make_app: Builder) -> None:
    (vault / NOTE).write_text(DIARY, encoding="utf-8")
    endpoint = ChatEndpoint()  # FAKE model on loopback: the diary prompt gets a paragraph

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        system = body["messages"][0]["content"]
        if "dream diary" in system:
            return 200, "I noticed a rule about\nrelease notes tonight."
        return 200, "not json at all"  # the deep phase's own prompts fail, as a bad model's

    endpoint.respond = respond
    try:
        _with_model(make_app, vault, endpoint)
    finally:
        endpoint.close()
    dreams = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    light = dreams[dreams.index("## Light Sleep"):dreams.index("## REM Sleep")]
    assert "\n*I noticed a rule about release notes tonight.*\n" in light  # one line
    assert not any("I noticed" in p.read_text(encoding="utf-8")
                   for p in (vault / "Memory").glob("*.md") if p.name != "DREAMS.md")


class _BrokenModel:
    """A model in memory whose every call fails (an unreadable weight file, a bad shape)."""

    model_id = "test-token-hash"
    dims = 64

    def embed(self, texts: object) -> object:
        raise RuntimeError("the model failed")


def test_active_recall_fuses_vectors_with_words_and_falls_back_to_words_silently(
        diary_app: App, tmp_path: Path) -> None:
    _dream(diary_app, _at(0, 22))  # light sleep embeds the snippets with the app's model
    store = diary_app.snippet_recaller.store
    keys, _ = store.vectors("test-token-hash")
    assert sorted(keys) == sorted(s.key for s in store.snippets(paths=[NOTE]))
    prompt = "what must release notes name about breaking changes"
    with_model = ActiveRecall(lambda: store, diary_app.state_dir,
                              embedder=lambda: diary_app.embedder)
    assert [s.body for s in with_model.recall(prompt)][:1] == [RULE]
    assert with_model.matched_by == "words+vectors"
    broken = ActiveRecall(lambda: store, diary_app.state_dir, embedder=_BrokenModel)
    assert [s.body for s in broken.recall(prompt)] == [RULE]  # the words still decide
    assert broken.matched_by == "words" and not broken.paused()
    kept = diary_app.state_dir / "active-recall.json"  # a failing model is no failure
    assert not kept.exists() or not json.loads(kept.read_text(encoding="utf-8")).get(
        "failures")


def test_reciprocal_rank_fusion_puts_what_both_lists_agree_on_first() -> None:
    words = {"a": 0.9, "b": 0.6}
    meaning = {"b": 0.5, "c": 0.45, "a": 0.31}
    # b: 1/62 + 1/61 (second and first); a: 1/61 + 1/63 (first and third); c: 1/62
    assert fuse([words, meaning]) == ["b", "a", "c"]
    assert fuse([{"x": 0.7}, {"y": 0.8}]) == ["x", "y"]  # a tie goes to the word match
    assert fuse([{"x": 0.7, "y": 0.7}, {}], days={"x": 2, "y": 1}) == ["y", "x"]


REWORDED = ("Release notes name every breaking change: a silent rename broke the mobile client "
            "in March.")


@pytest.mark.parametrize(("statement", "kept", "wording"), [
    (REWORDED, REWORDED, "the model's"),
    # a name and a year the line never said: refused, the line's own words are kept
    ("Release notes must name every breaking change: a silent rename broke the iOS client "
     "in March 2025.", RULE, "the line's: the model's wording was refused: it added `2025`, "
                             "`iOS`"),
    ("Release notes must name breaking changes.", RULE,  # the reason and its month lost
     "the line's: the model's wording was refused: it dropped `March`"),
])
def test_with_a_model_a_promoted_line_is_reworded_only_under_the_fact_check(
        vault: Path, make_app: Builder, statement: str, kept: str, wording: str) -> None:
    (vault / NOTE).write_text(DIARY, encoding="utf-8")
    endpoint = ChatEndpoint()  # FAKE model on loopback
    asked: list[str] = []

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "a line from a person's own notes" in system:
            asked.append(user)
            return 200, json.dumps({"statement": statement})
        return 200, "not json at all"  # the deep phase's own prompts fail, as a bad model's

    endpoint.respond = respond
    try:
        app = _with_model(make_app, vault, endpoint)
        _search_on_three_days(app)
        _dream(app, _at(3, 22))
    finally:
        endpoint.close()
    assert asked == [f"PR review: {RULE}"]  # the promoted line only, with its heading
    (promoted,) = _promoted(vault)
    text = promoted.read_text(encoding="utf-8")
    assert kept in text and f"{NOTE}:4" in text
    entry = next(v for v in sleep_cycle(app).state().values() if v["status"] == "promoted")
    assert entry["wording"] == wording
