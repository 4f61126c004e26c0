"""Invalidation that spreads: a synthesis of three memories, one of them superseded later,
through ``dreamd check``, search and the dream (kept, derived again, or archived).

Real files, store, writer and dream; the token-hash fake embedder (conftest; nothing here is
about meaning) and, where a model is asked, a FAKE loopback endpoint speaking the OpenAI chat
protocol (an LLM is external and non-deterministic).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint, write_memory
from rich.console import Console

from ccb.parse import parse_note
from consistency.derived_recheck import derived_rechecks
from consistency.graph_checks import ChangedSource
from daemon.app import App
from daemon.context import build_context
from daemon.derived_marks import MARK
from daemon.render import print_dream
from magma.lineage import lineage_graph, lineage_memory

Builder = Callable[..., tuple[App, object]]
SYNTHESIS = "Memory/billing-service-facts.md"
FACTS = {"name": "Billing service facts",
         "description": "Who owns billing, retries, invoice cutoff",
         "body": "## What\nDana Reyes owns the billing service. Failed charges are retried 3 "
                 "times. Invoices close on 2026-12-01.\n"}
AGAIN = {**FACTS, "body": "## What\nDana Reyes owns the billing service. Failed charges are "
                          "retried 3 times.\n"}


@pytest.fixture
def replies() -> Iterator[tuple[dict[str, str], str]]:
    """The FAKE endpoint's reply to a synthesis prompt (``answers["synthesis"]``), its URL."""
    answers: dict[str, str] = {}

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        system = body["messages"][0]["content"]
        return 200, answers.get("synthesis" if "consolidate" in system else "other", "no")

    endpoint = ChatEndpoint()
    endpoint.respond = respond
    yield answers, endpoint.url
    endpoint.close()


def _sources(vault: Path) -> None:
    write_memory(vault, "billing-retries", "Billing retries failed charges 3 times.",
                 type="project", subject="billing.retries", days_old=20)
    write_memory(vault, "billing-owner", "Dana Reyes owns the billing service.",
                 type="project", subject="billing.owner", days_old=15)
    write_memory(vault, "billing-cutoff", "Invoices close on 2026-12-01.",
                 type="project", subject="billing.cutoff", days_old=10)


def _synthesised(vault: Path, make_app: Builder, url: str,
                 answers: dict[str, str]) -> App:
    """The three sources synthesised by a dream, then the cutoff superseded by the user."""
    _sources(vault)
    answers["synthesis"] = json.dumps(FACTS)
    app, _ = make_app(vault, **{"llm.enabled": True, "llm.model": "test-model",
                                "llm.base_url": url, "llm.timeout_s": 2,
                                "dream.transcripts": ""})
    app.sync()
    app.dreamer().dream()
    assert (vault / SYNTHESIS).is_file()
    (vault / "Memory/billing-cutoff-moved.md").write_text(
        "---\nname: Billing cutoff moved\ntype: project\ncreated: 2026-12-02T10:00:00Z\n"
        'supersedes: "[[billing-cutoff]]"\n---\nInvoices close on 2026-12-05.\n',
        encoding="utf-8")
    app.sync()
    return app


def _changed(app: App) -> list[tuple[tuple[str, ...], str]]:
    return [(f.drift.chain, f.drift.change) for f in app.consistency().check().findings
            if isinstance(f.drift, ChangedSource)]


def _why(app: App, query: str, path: str) -> list[str] | None:
    for hit in app.search(query, limit=10, count_recall=False):
        if hit.path == path:
            return list(hit.why)
    return None


def test_check_and_search_flag_it_and_a_dream_without_a_model_archives_it(
    vault: Path, make_app: Builder, replies: tuple[dict[str, str], str],
) -> None:
    answers, url = replies
    _synthesised(vault, make_app, url, answers)
    app, _ = make_app(vault)  # the model is off from here
    assert _changed(app) == [((SYNTHESIS, "Memory/billing-cutoff.md"),
                              "superseded by Memory/billing-cutoff-moved.md")]
    why = _why(app, "billing service facts Dana Reyes", SYNTHESIS)
    assert why is not None and any(w.startswith(f"{MARK}: Memory/billing-cutoff.md") for w in why)
    context = build_context(app, "billing service facts Dana Reyes", count_recall=False)
    assert any(e.path == SYNTHESIS for e in context.entries)  # an assistant is told too
    assert f"({MARK}: Memory/billing-cutoff.md" in context.text

    app.dreamer().dream()  # the date is held by the superseded source only
    note = parse_note(SYNTHESIS, (vault / SYNTHESIS).read_bytes())
    assert note.memory is not None and note.memory.status == "archived"
    assert note.properties["archived_reason"] == "source changed"
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert "Archived [[billing-service-facts]]: [[billing-cutoff]] superseded by " \
           "Memory/billing-cutoff-moved.md, and its other sources do not hold `2026-12-01`" \
           in diary
    for stem in ("billing-retries", "billing-owner"):  # archived into it: back again
        source = parse_note(f"Memory/{stem}.md", (vault / f"Memory/{stem}.md").read_bytes())
        assert source.memory is not None and source.memory.status != "archived"
    app.sync()
    assert _changed(app) == []
    assert _why(app, "billing service facts Dana Reyes", SYNTHESIS) is None
    assert _why(app, "Dana Reyes owns billing", "Memory/billing-owner.md") is not None
    app.dreamer().dream()  # settled: a second dream finds nothing to re-check
    assert (vault / "Memory/DREAMS.md").read_text(encoding="utf-8").count(
        "Archived [[billing-service-facts]]") == 1


def test_with_a_model_it_is_derived_again_under_the_fact_check(
    vault: Path, make_app: Builder, replies: tuple[dict[str, str], str],
) -> None:
    answers, url = replies
    app = _synthesised(vault, make_app, url, answers)
    app.dreamer().dream()  # the canned answer still states the old date: refused
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert "Rejected deriving [[billing-service-facts]] again: it added `2026-12-01`" in diary
    assert parse_note(SYNTHESIS, (vault / SYNTHESIS).read_bytes()).properties[
        "archived_reason"] == "source changed"


def test_with_a_faithful_model_it_is_derived_again(
    vault: Path, make_app: Builder, replies: tuple[dict[str, str], str],
) -> None:
    answers, url = replies
    app = _synthesised(vault, make_app, url, answers)
    answers["synthesis"] = json.dumps(AGAIN)
    app.dreamer().dream()
    note = parse_note(SYNTHESIS, (vault / SYNTHESIS).read_bytes())
    assert note.memory is not None and note.memory.status != "archived"
    assert "2026-12-01" not in note.body and "Dana Reyes" in note.body
    assert set(note.properties["derived_from"]) == {  # type: ignore[arg-type]
        "[[billing-owner]]", "[[billing-retries]]"}
    assert note.memory.version == 2
    assert "Derived [[billing-service-facts]] again from [[billing-owner]], " \
           "[[billing-retries]]" in (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    app.sync()
    assert _changed(app) == []
    why = _why(app, "billing service facts Dana Reyes", SYNTHESIS)
    assert why is not None and not any(w.startswith(MARK) for w in why)


def test_a_synthesis_its_other_sources_still_support_is_kept(
    vault: Path, make_app: Builder,
) -> None:
    _sources(vault)
    write_memory(vault, "billing-summary", "Dana Reyes owns billing; charges retried 3 times.",
                 type="reference", days_old=5,
                 derived_from=("billing-retries", "billing-owner", "billing-cutoff"))
    (vault / "Memory/billing-cutoff-moved.md").write_text(
        "---\nname: Billing cutoff moved\ntype: project\ncreated: 2026-12-02T10:00:00Z\n"
        'supersedes: "[[billing-cutoff]]"\n---\nInvoices close on 2026-12-05.\n',
        encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    assert [c for c, _ in _changed(app)] == [("Memory/billing-summary.md",
                                             "Memory/billing-cutoff.md")]
    app.dreamer().dream()
    note = parse_note("Memory/billing-summary.md",
                      (vault / "Memory/billing-summary.md").read_bytes())
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert note.memory is not None and note.memory.status != "archived", diary
    assert set(note.properties["derived_from"]) == {  # type: ignore[arg-type]
        "[[billing-owner]]", "[[billing-retries]]"}
    assert "Re-checked [[billing-summary]] against its other sources" in (
        vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    app.sync()
    assert _changed(app) == []


def test_the_rule_walks_a_loop_of_derivations_once() -> None:
    def memory(path: str, **props: object) -> Any:
        return lineage_memory(path, {"name": path, "type": "project", **props})

    graph = lineage_graph([
        memory("a.md", derived_from=["[[b]]", "[[c]]"]),
        memory("b.md", derived_from=["[[a]]"]),
        memory("c.md"),
        memory("d.md", supersedes="[[c]]"),
    ])
    checks = derived_rechecks(graph, {"a.md": "A holds 42", "b.md": "B holds 42",
                                      "c.md": "C", "d.md": "D"})
    # b derives from a: never a's support, so nothing is left to hold a
    assert [(c.path, c.remaining) for c in checks] == [("a.md", ())]
    assert not checks[0].supported


def test_a_summary_that_repeats_a_superseded_value_is_not_still_supported(
    vault: Path, make_app: Builder,
) -> None:
    """"I live in Shanghai with my cat 咪咪", derived from "我的猫现在叫咪咪" and "I moved to
    Shanghai": once the cat's name changed, the move alone does not hold it (it names 咪咪);
    without a model the dream archives it, never keeps it as current."""
    _cat_summary(vault)
    app, _ = make_app(vault)
    app.sync()
    assert [c for c, _ in _changed(app)] == [("Memory/home-and-cat.md", "Memory/cat-name.md")]
    before = (vault / "Memory/home-and-cat.md").read_bytes()
    # the dry run shows what the re-check would do, and writes nothing
    planned = app.dreamer().dream(dry_run=True)
    assert any(line.startswith("Would archive [[home-and-cat]]")
               for line in planned.plan.changes), planned.plan.changes
    assert (vault / "Memory/home-and-cat.md").read_bytes() == before
    done = app.dreamer().dream()
    assert any(line.startswith("Archived [[home-and-cat]]") for line in done.plan.changes)
    note = parse_note("Memory/home-and-cat.md", (vault / "Memory/home-and-cat.md").read_bytes())
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert note.memory is not None and note.memory.status == "archived", diary
    assert "still hold every fact" not in diary


def test_a_source_that_names_no_memory_never_archives_what_the_user_wrote(
    vault: Path, make_app: Builder,
) -> None:
    """``derived_from`` a note, not a memory (the user may fill it in by hand): the check
    lists it, the dream leaves the memory live."""
    (vault / "Projects").mkdir(exist_ok=True)
    (vault / "Projects/Project Kiln.md").write_text("# Project Kiln\n", encoding="utf-8")
    write_memory(vault, "kiln-notes", "The kiln fires at 1,240 °C.", type="project",
                 days_old=5, derived_from=("Project Kiln",))
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    note = parse_note("Memory/kiln-notes.md", (vault / "Memory/kiln-notes.md").read_bytes())
    assert note.memory is not None and note.memory.status != "archived"


def _cat_summary(vault: Path) -> str:
    """"I live in Shanghai with my cat 咪咪", derived from the cat's name (superseded since)
    and the move: its remaining source does not hold it."""
    write_memory(vault, "cat-name", "我的猫现在叫咪咪", type="user", days_old=20)
    write_memory(vault, "moved", "I moved to Shanghai.", type="user", days_old=15)
    write_memory(vault, "home-and-cat", "I live in Shanghai with my cat 咪咪.", type="user",
                 days_old=5, derived_from=("cat-name", "moved"))
    (vault / "Memory/cat-renamed.md").write_text(
        "---\nname: Cat renamed\ntype: user\ncreated: 2026-12-02T10:00:00Z\n"
        'supersedes: "[[cat-name]]"\n---\n我的猫现在叫小白\n', encoding="utf-8")
    return "Memory/home-and-cat.md"


def test_a_restored_memory_stays_out_of_the_recheck_until_it_is_edited(
    vault: Path, make_app: Builder,
) -> None:
    """``dreamd restore`` of a memory the re-check archived: later dreams (and their dry
    runs) leave it alone while it stays as restored; an edit makes it ordinary again."""
    path = _cat_summary(vault)
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert parse_note(path, (vault / path).read_bytes()).properties.get(
        "archived_reason") == "source changed"
    assert app.dreamer().restore(path)
    restored = (vault / path).read_bytes()
    for _ in range(2):
        planned = app.dreamer().dream(dry_run=True)
        assert not any("[[home-and-cat]]" in line for line in planned.plan.changes)
        app.dreamer().dream()
        assert (vault / path).read_bytes() == restored  # still live, not archived again
        assert "archived_reason" not in parse_note(path, restored).properties
    (vault / path).write_bytes(restored.replace(b"my cat", b"my grey cat"))
    app.sync()
    app.dreamer().dream()  # edited: ordinary again, and the re-check archives it
    assert parse_note(path, (vault / path).read_bytes()).properties.get(
        "archived_reason") == "source changed"


def test_a_memory_is_never_its_own_support_through_a_loop_of_derivations(
    vault: Path, make_app: Builder,
) -> None:
    """loop-a derives from a coffee habit (superseded since) and from loop-b, which derives
    from loop-a: loop-b's text is no support of loop-a (it derives from it), and it says
    nothing of coffee anyway. The dream archives loop-a and keeps its lineage."""
    write_memory(vault, "coffee-memory", "我喜欢喝不加糖的黑咖啡", type="user", days_old=20)
    write_memory(vault, "loop-a", "Drinks black coffee.", type="user", days_old=10,
                 derived_from=("coffee-memory", "loop-b"))
    write_memory(vault, "loop-b", "Standup at 10:00.", type="user", days_old=10,
                 derived_from=("loop-a",))
    (vault / "Memory/coffee-now.md").write_text(
        "---\nname: Coffee now\ntype: user\ncreated: 2026-12-02T10:00:00Z\n"
        'supersedes: "[[coffee-memory]]"\n---\n我现在喝拿铁\n', encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    planned = app.dreamer().dream(dry_run=True)
    assert any(line.startswith("Would archive [[loop-a]]") for line in planned.plan.changes), \
        planned.plan.changes
    app.dreamer().dream()
    note = parse_note("Memory/loop-a.md", (vault / "Memory/loop-a.md").read_bytes())
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    assert "still hold every fact" not in diary
    assert note.memory is not None and note.memory.status == "archived", diary
    assert "[[coffee-memory]]" in note.properties["derived_from"]  # type: ignore[operator]


def test_still_supported_means_each_statement_is_in_a_remaining_source() -> None:
    """A memory with no name, number or date in it is not held by any source at all: each
    of its statements must be found in a remaining source's own text."""
    def memory(path: str, **props: object) -> Any:
        return lineage_memory(path, {"name": path, "type": "project", **props})

    graph = lineage_graph([
        memory("a.md", derived_from=["[[b]]", "[[c]]"]),
        memory("b.md"), memory("c.md"), memory("d.md", supersedes="[[c]]"),
    ])
    texts = {"a.md": "Drinks black coffee.", "b.md": "standup at 10:00",
             "c.md": "我喜欢喝不加糖的黑咖啡", "d.md": "D"}
    [check] = derived_rechecks(graph, texts)
    assert not check.supported and check.unsupported == ("Drinks black coffee",)
    [check] = derived_rechecks(graph, {**texts, "b.md": "She drinks black coffee daily."})
    assert check.supported


def test_the_dry_run_counts_what_the_dream_then_does(vault: Path, make_app: Builder) -> None:
    """The cutoff is done (the lifecycle archives it) and the summary derived from it holds
    its date: the dry run's counts, files and ``MEMORY.md`` are what the dream then does, and
    the dream's counts are what it did."""
    _sources(vault)
    (vault / "Memory/billing-cutoff.md").unlink()
    cutoff = vault / write_memory(vault, "billing-cutoff", "Invoices close on 2026-12-01.",
                                  type="project", subject="billing.cutoff", days_old=10)
    cutoff.write_bytes(cutoff.read_bytes().replace(b"\n---\n", b"\nstatus: done\n---\n", 1))
    write_memory(vault, "billing-summary", "Dana Reyes owns billing. Invoices close on "
                 "2026-12-01.", type="reference", days_old=5,
                 derived_from=("billing-owner", "billing-cutoff"))
    app, _ = make_app(vault)
    app.sync()
    planned_report = app.dreamer().dream(dry_run=True)
    planned = planned_report.plan
    assert planned.counts["archived"] == 2, planned.changes
    assert planned.counts["changed_memories"] == 2
    assert set(planned.edits) == {"Memory/billing-cutoff.md", "Memory/billing-summary.md"}
    assert planned.memory_index is not None and planned.memory_index[3] is not None
    assert b"billing-summary" not in planned.memory_index[3]
    done = app.dreamer().dream()
    assert done.plan.counts["archived"] == 2, done.plan.changes
    said = []
    for report, what in ((planned_report, "plan"), (done, "dream")):
        console = Console(file=io.StringIO(), width=200)
        print_dream(console, report, what=what)
        said.append(console.file.getvalue())  # type: ignore[attr-defined]
    assert "plan: 2 archived — 2 memory files" in said[0], said[0]
    assert "MEMORY.md stays as it is" not in said[0]
    assert "done: 2 archived — " in said[1], said[1]
    assert set(done.written) == {"Memory/billing-cutoff.md", "Memory/billing-summary.md"}
    assert (vault / "Memory/MEMORY.md").read_bytes() == planned.memory_index[3]
