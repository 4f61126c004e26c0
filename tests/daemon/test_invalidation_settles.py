"""Invalidation that spreads, settled: one dream settles a whole chain of derivations, a
synthesis of a merged duplicate follows the merge to its keeper, and one whose every source
was forgotten is settled instead of flagged for ever.

Real files, real LanceDB, the real dream; the token-hash fake embedder (conftest; nothing
here is about meaning). The memory files are the inputs of break-it reports, kept as given
(their ``mem`` helper writes ``name``, ``description: <name> described``, ``type: project``
and the body).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lineage_files import report_memory

from ccb.parse import parse_note
from consistency.graph_checks import ChangedSource
from daemon.app import App
from daemon.context import build_context

Builder = Callable[..., tuple[App, object]]


def _mem(vault: Path, file: str, name: str, body: str, *extra: str) -> None:
    """A memory file as the reports' ``mem`` helper writes it (the body before the lines)."""
    report_memory(vault, file, name, *extra, body=body)


def _status(vault: Path, path: str) -> str | None:
    note = parse_note(path, (vault / path).read_bytes())
    assert note.memory is not None
    return note.memory.status


def _changed(app: App) -> list[ChangedSource]:
    return [f.drift for f in app.consistency().check().findings
            if isinstance(f.drift, ChangedSource)]


@pytest.fixture
def empty_vault(tmp_path: Path) -> Path:
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    return tmp_path / "vault"


STUDIO = ("---\nname: Studio facts\ndescription: where things are in the studio\n"
          "type: project\n{derived}\n---\n{body}\n")


def test_a_synthesis_of_a_merged_duplicate_follows_the_merge_to_the_keeper(
    empty_vault: Path, make_app: Builder,
) -> None:
    """The dream merges k.md into a.md (exact duplicates): Studio facts, derived from k,
    now derives from a (which holds the very same text) and stays live, in MEMORY.md."""
    vault = empty_vault
    _mem(vault, "a.md", "Kiln place", "The kiln is in the garage.")
    _mem(vault, "k.md", "Kiln place copy", "The kiln is in the garage.")
    (vault / "Memory/s.md").write_text(STUDIO.format(
        derived='derived_from: ["[[k]]"]',
        body="The kiln is in the garage, so firing days are noisy."), encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    planned = app.dreamer().dream(dry_run=True)
    assert not any("archive [[s]]" in line for line in planned.plan.changes)
    app.dreamer().dream()
    assert _status(vault, "Memory/k.md") == "archived"
    assert _status(vault, "Memory/s.md") != "archived"
    note = parse_note("Memory/s.md", (vault / "Memory/s.md").read_bytes())
    assert note.properties["derived_from"] == ["[[a]]"]
    assert note.body == "The kiln is in the garage, so firing days are noisy.\n"
    assert "(s.md)" in (vault / "Memory/MEMORY.md").read_text(encoding="utf-8")
    app.sync()
    assert _changed(app) == []


def test_a_merged_source_the_keeper_does_not_hold_is_still_re_checked(
    empty_vault: Path, make_app: Builder,
) -> None:
    """Following a merge keeps a memory only for what the keeper holds: a source merged by
    hand into a memory that says something else leaves the synthesis to the fact check."""
    vault = empty_vault
    _mem(vault, "a.md", "Kiln place", "The kiln is in the shed.")
    _mem(vault, "k.md", "Kiln place copy", "The kiln is in the garage.",
         'merged_into: "[[a]]"', "status: archived")
    (vault / "Memory/s.md").write_text(STUDIO.format(
        derived='derived_from: ["[[k]]"]', body="The kiln is in the garage."),
        encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert _status(vault, "Memory/s.md") == "archived"


PNPM = "Use pnpm for JavaScript projects"
SUMMARY = """---
name: JS tooling summary
description: how the user builds JavaScript
type: project
derived_from: ["[[use-pnpm-for-javascript-projects]]"]
---
Use pnpm for JavaScript projects.
"""
PROFILE = """---
name: Developer profile
description: who the user is as a developer
type: user
derived_from: ["[[summary]]"]
---
Use pnpm for JavaScript projects.
"""


def test_one_dream_settles_a_whole_chain_of_derivations(
    empty_vault: Path, make_app: Builder,
) -> None:
    """profile <- summary <- a rule superseded since: the dream that archives the summary
    archives the profile derived from it too (its only source is gone), and says so first in
    its dry run; the next dream has nothing left to do."""
    vault = empty_vault
    app, _ = make_app(vault)
    service = app.memories()
    service.remember(PNPM, type="feedback", subject="js.pm")
    (vault / "Memory/summary.md").write_text(SUMMARY, encoding="utf-8")
    (vault / "Memory/profile.md").write_text(PROFILE, encoding="utf-8")
    app.sync()
    app.dreamer().dream()
    newer = service.remember("Use npm, not pnpm, for JavaScript projects", type="feedback",
                             subject="js.pm")
    assert newer.superseded
    app.sync()
    planned = app.dreamer().dream(dry_run=True)
    assert [line for line in planned.plan.changes if line.startswith("Would")
            and "[[profile]]" in line]
    app.dreamer().dream()
    assert _status(vault, "Memory/summary.md") == "archived"
    assert _status(vault, "Memory/profile.md") == "archived"
    assert "profile.md" not in (vault / "Memory/MEMORY.md").read_text(encoding="utf-8")
    app.sync()
    context = build_context(app, "which package manager for javascript", budget_tokens=500,
                            count_recall=False).text
    assert "Use pnpm for JavaScript projects." not in context
    assert _changed(app) == []
    diary = (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")
    app.dreamer().dream()
    assert (vault / "Memory/DREAMS.md").read_text(encoding="utf-8").count(
        "Archived [[profile]]") == diary.count("Archived [[profile]]") == 1


def test_a_synthesis_whose_every_source_was_forgotten_is_settled_by_the_next_dream(
    empty_vault: Path, make_app: Builder,
) -> None:
    """Both sources forgotten: forget leaves ``forgotten_sources: 2`` and no
    ``derived_from``; the next dream re-checks it (no source is left: archived, recoverable),
    and check and search stop flagging it."""
    vault = empty_vault
    _mem(vault, "a.md", "Kiln place", "The kiln is in the garage.")
    _mem(vault, "b.md", "Binder colour", "The glaze binder is blue.")
    (vault / "Memory/s.md").write_text(STUDIO.format(
        derived='derived_from: ["[[a]]", "[[b]]"]',
        body="The kiln is in the garage. The glaze binder is blue."), encoding="utf-8")
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    for name in ("a", "b"):
        app.memories().forget(name)
    app.sync()
    assert "forgotten_sources: 2" in (vault / "Memory/s.md").read_text(encoding="utf-8")
    assert [c.path for c in _changed(app)] == ["Memory/s.md"]
    told = [str(f.decision) for f in app.consistency().check().findings
            if isinstance(f.drift, ChangedSource)]
    assert len(told) == 1 and "the next dream re-checks it" in told[0], told
    assert "update its `derived_from`" not in told[0]  # forget took the names out already
    app.dreamer().dream()
    assert _status(vault, "Memory/s.md") == "archived"
    app.sync()
    assert _changed(app) == []


RESIDENT_PROFILE = """---
name: Developer profile
description: who the user is as a developer
type: user
derived_from: ["[[use-pnpm-for-javascript-projects]]"]
---
Builds JavaScript with pnpm.
"""


def test_a_resident_profile_of_a_superseded_rule_is_marked_in_the_context(
    empty_vault: Path, make_app: Builder,
) -> None:
    """A user profile is resident (sent in every context): derived from a rule superseded
    since, it carries the same mark as its search hit, until a dream re-checks it."""
    vault = empty_vault
    app, _ = make_app(vault)
    service = app.memories()
    service.remember(PNPM, type="feedback", subject="js.pm")
    (vault / "Memory/profile.md").write_text(RESIDENT_PROFILE, encoding="utf-8")
    app.sync()
    assert service.remember("Use npm, not pnpm, for JavaScript projects", type="feedback",
                            subject="js.pm").superseded
    app.sync()
    text = build_context(app, "set up a new web app", budget_tokens=600,
                         count_recall=False).text
    line = next(li for li in text.splitlines() if "(Memory/profile.md)" in li)
    assert line.startswith("- [user] Developer profile (Memory/profile.md): (derived from a "
                           "changed source: Memory/use-pnpm-for-javascript-projects.md "
                           "(superseded by "), line
    assert line.endswith("it may no longer hold) who the user is as a developer — Builds "
                         "JavaScript with pnpm."), line


def test_a_supersedes_written_by_hand_counts_everywhere(empty_vault: Path,
                                                       make_app: Builder) -> None:
    """b2.md says ``supersedes: "[[b]]"``, b.md says nothing: the dream supersedes b as
    ``remember`` would (archived, ``superseded_by``), so MEMORY.md, the context and the
    check read the link as the re-check of the synthesis derived from b does."""
    vault = empty_vault
    _mem(vault, "b.md", "Lunch time", "Lunch is at noon.")
    _mem(vault, "b2.md", "Lunch time new", "Lunch is at one.", 'supersedes: "[[b]]"')
    _mem(vault, "a.md", "Kiln place", "The kiln is in the garage.")
    (vault / "Memory/s.md").write_text(STUDIO.format(
        derived='derived_from: ["[[a]]", "[[b]]"]',
        body="The kiln is in the garage. Lunch is at noon."), encoding="utf-8")
    b2_before = (vault / "Memory/b2.md").read_bytes()
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert _status(vault, "Memory/b.md") == "archived"
    old = parse_note("Memory/b.md", (vault / "Memory/b.md").read_bytes())
    assert old.properties["superseded_by"] == "[[b2]]"
    assert (vault / "Memory/b2.md").read_bytes() == b2_before  # its link was already there
    index = (vault / "Memory/MEMORY.md").read_text(encoding="utf-8")
    assert "(b2.md)" in index and "(b.md)" not in index
    app.sync()
    context = build_context(app, "when is lunch", budget_tokens=400, count_recall=False)
    assert "Memory/b.md" not in {entry.path for entry in context.entries}
    assert _status(vault, "Memory/s.md") == "archived"  # "Lunch is at noon" holds no more
    assert _changed(app) == []


def test_a_supersedes_loop_written_by_hand_supersedes_nothing(empty_vault: Path,
                                                             make_app: Builder) -> None:
    """b.md and b2.md each say they supersede the other: a loop, ignored — both stay
    (their facts apart, so that no merge decides it)."""
    vault = empty_vault
    _mem(vault, "b.md", "Kiln place", "The kiln is in the garage.", 'supersedes: "[[b2]]"')
    _mem(vault, "b2.md", "Lunch time", "Lunch is at one.", 'supersedes: "[[b]]"')
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert _status(vault, "Memory/b.md") != "archived"
    assert _status(vault, "Memory/b2.md") != "archived"


def test_a_supersession_that_takes_effect_later_is_left_to_its_day(empty_vault: Path,
                                                                  make_app: Builder) -> None:
    """b.md holds until its ``valid_to`` (ahead), b2.md names it in ``supersedes``: both
    sides are written; the link does not make the dream close b early (their facts apart,
    so that no judgement of the pair decides it)."""
    vault = empty_vault
    _mem(vault, "b.md", "Kiln place", "The kiln is in the garage.",
         "valid_to: 2099-01-01", 'superseded_by: "[[b2]]"')
    _mem(vault, "b2.md", "Lunch time", "Lunch is at one.",
         'supersedes: "[[b]]"', "valid_from: 2099-01-01")
    before = (vault / "Memory/b.md").read_bytes()
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert (vault / "Memory/b.md").read_bytes() == before
