"""One rule for "is this memory current?", seen from every place that asks it.

A memory whose ``valid_to`` is still ahead (a change announced for later, a supersession that
starts next month) is current until that day: search finds it, ``MEMORY.md`` lists it, the
session-start context carries it, and the checker treats it as live. One whose ``valid_to``
has passed is none of these, and stays on disk. The rule itself is tested as a table in
``tests/consistency/test_lifecycle.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from daemon.app import App
from daemon.context import build_context

Builder = Callable[..., tuple[App, object]]

_MEMORY = """---
name: {name}
description: {description}
type: feedback
id: {id}
created: 2026-11-01T09:00:00Z
updated: 2026-11-01T09:00:00Z
version: 1
valid_from: 2026-11-01
valid_to: {valid_to}
{extra}---
{body}
"""


def _write(vault: Path, stem: str, **fields: str) -> str:
    fields.setdefault("extra", "")
    (vault / "Memory" / f"{stem}.md").write_text(_MEMORY.format(**fields), encoding="utf-8")
    return f"Memory/{stem}.md"


def test_a_memory_that_ends_later_is_current_everywhere_until_that_day(
        vault: Path, make_app: Builder) -> None:
    ending = _write(
        vault, "staging-deploys-via-jenkins", name="Staging deploys via Jenkins",
        description="Staging is deployed from the Jenkins job until the move to Actions",
        id="01JZ0000000000000000000001", valid_to="2099-01-01",
        body="Always deploy staging from the Jenkins job `staging-deploy` (marigold).",
        extra="possible_duplicate: \"[[staging-deploys-from-jenkins]]\"\n")
    twin = _write(
        vault, "staging-deploys-from-jenkins", name="Staging deploys from Jenkins",
        description="Staging goes out through Jenkins", id="01JZ0000000000000000000002",
        valid_to="", body="Staging is deployed with the Jenkins job (marigold pipeline).")
    ended = _write(
        vault, "staging-deploys-via-capistrano", name="Staging deploys via Capistrano",
        description="Staging was deployed with Capistrano", id="01JZ0000000000000000000003",
        valid_to="2020-01-01", body="Always deploy staging with `cap staging deploy` (marigold).")
    app, _ = make_app(vault)
    app.sync()

    found = {hit.path for hit in app.search("how is staging deployed marigold", limit=20)}
    assert ending in found and ended not in found

    index, _ = app.memories().index_text()
    assert b"staging-deploys-via-jenkins.md" in index
    assert b"staging-deploys-via-capistrano.md" not in index

    context = build_context(app, "", count_recall=False).text
    assert "until the move to Actions" in context
    assert "Capistrano" not in context

    pairs = [f.drift for f in app.consistency().check().findings
             if f.kind == "possible_pair"]
    assert [getattr(d, "paths", None) for d in pairs] == [tuple(sorted((ending, twin)))]
    assert (vault / ended).is_file()  # not current is not gone


def test_a_supersession_that_starts_later_is_no_contradiction(
        vault: Path, make_app: Builder) -> None:
    """Both memories are current until the day the newer begins; they are one settled change,
    so the checker reports nothing, and the older leaves ``MEMORY.md`` only on that day."""
    old = _write(
        vault, "office-is-on-elm-street", name="Office is on Elm Street",
        description="The office is at 12 Elm Street", id="01JZ0000000000000000000011",
        valid_to="2099-01-01", body="The office is at 12 Elm Street.",
        extra="subject: office.address\n")
    new = _write(
        vault, "office-moves-to-oak-avenue", name="Office moves to Oak Avenue",
        description="From 2099 the office is at 40 Oak Avenue", id="01JZ0000000000000000000012",
        valid_to="", body="The office is at 40 Oak Avenue.",
        extra="subject: office.address\nsupersedes: \"[[office-is-on-elm-street]]\"\n")
    app, _ = make_app(vault)
    app.sync()
    assert [f.kind for f in app.consistency().check().findings
            if f.kind in {"contradiction", "possible_pair"}] == []
    index, _ = app.memories().index_text()
    assert Path(old).name.encode() in index and Path(new).name.encode() in index


def test_a_supersession_of_memories_without_ids_is_no_contradiction(
        vault: Path, make_app: Builder) -> None:
    """Hand-written memories carry no ``id``: the supersedes link settles them all the same."""
    for stem, body, extra in (
            ("coffee-old", "The user drinks black coffee every morning.", ""),
            ("coffee-new", "The user drinks green tea every morning instead of coffee.",
             'supersedes: "[[coffee-old]]"\n')):
        text = (f"---\nname: {stem}\ndescription: morning drink\ntype: user\n"
                f"subject: drinks.morning\n{'valid_to: 2099-12-20' if stem == 'coffee-old' else ''}"
                f"\n{extra}---\n{body}\n")
        (vault / "Memory" / f"{stem}.md").write_text(text, encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    assert [f.kind for f in app.consistency().check().findings if f.kind == "contradiction"] == []


def test_the_dream_and_search_agree_on_the_day_of_a_stamp_with_an_offset() -> None:
    """``valid_to: 2026-12-03T00:30:00+14:00`` is the 3rd as written: current on the 2nd for
    search and MEMORY.md, and not archived by the dream's lifecycle that day."""
    from datetime import UTC, datetime, timedelta, timezone

    from consistency.lifecycle import LifecycleMemory, MemoryState, is_current, plan_lifecycle

    ends = datetime(2026, 12, 3, 0, 30, tzinfo=timezone(timedelta(hours=14)))
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert is_current(MemoryState(valid_to=ends.date()), now.date())
    memory = LifecycleMemory("k", "Memory/k.md", "project", valid_to=ends,
                             updated=now - timedelta(days=1))
    assert plan_lifecycle([memory], now) == []
