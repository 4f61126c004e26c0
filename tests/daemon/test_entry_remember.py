"""remember meets entries (daemon.entry_remember): a fact already an entry is a duplicate of
``file.md#key``; a contradicted entry is superseded by a minimal edit of its file; an unsure
pair is two lines of the file, listed by ``dreamd conflicts``.

Real files, a real store; the embedder is the token-hash fake (the decisions under test are
by content hash, subject and the words, not by meaning).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccb.entries import entry_key, parse_entry_file
from daemon.app import App
from daemon.memories import MemoryService

Builder = Callable[..., tuple[App, object]]
NOW = datetime(2026, 6, 20, 9, 0, tzinfo=UTC)

FACTS = (
    "# 关于我\n\n"
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- The kiln shelf is 40 cm wide <!--m:subj=kiln.shelf;vf=2026-03-01-->\n"
    "- Drinks oolong tea every afternoon\n"
)
YUHANG = f"Memory/facts.md#{entry_key('我在余杭区')}"
XIHU = f"Memory/facts.md#{entry_key('我在西湖区')}"
SHELF = f"Memory/facts.md#{entry_key('The kiln shelf is 40 cm wide')}"


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    application, _ = make_app(vault)
    application.sync()
    return application


def _service(app: App) -> MemoryService:
    return app.memories(clock=lambda: NOW)


def _memory_files(vault: Path) -> set[str]:
    return {p.name for p in (vault / "Memory").iterdir()}


def _diff(before: bytes, after: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """``(removed, added)`` lines of ``git diff --no-index`` between ``before`` and ``after``."""
    old = tmp_path / "before.md"
    old.write_bytes(before)
    run = subprocess.run(["git", "diff", "--no-index", "--no-color", "-U0", str(old),
                          str(after)], capture_output=True, check=False, timeout=30)
    body = [x for x in run.stdout.decode().splitlines()
            if not x.startswith(("---", "+++", "@@", "diff", "index"))]
    return [x[1:] for x in body if x.startswith("-")], [x[1:] for x in body if x.startswith("+")]


def test_a_fact_already_an_entry_is_its_duplicate_and_nothing_is_written(
        app: App, vault: Path) -> None:
    before = {p: p.read_bytes() for p in (vault / "Memory").iterdir()}
    again = _service(app).remember("我在余杭区", type="project", subject="所在地")
    assert (again.action, again.path) == ("duplicate", YUHANG)
    restated = _service(app).remember("the kiln shelf is 40 cm wide.", type="project")
    assert (restated.action, restated.path) == ("duplicate", SHELF)
    assert {p: p.read_bytes() for p in (vault / "Memory").iterdir()} == before


def test_a_contradiction_supersedes_the_entry_in_its_own_file_chinese(
        app: App, vault: Path, tmp_path: Path) -> None:
    facts = vault / "Memory" / "facts.md"
    before, files = facts.read_bytes(), _memory_files(vault)
    result = _service(app).remember("我在西湖区", type="project", subject="所在地")
    assert (result.action, result.path, result.superseded) == ("superseded", XIHU, YUHANG)
    assert result.verdict == "contradiction"
    # one modified line, one added line; no memory file written
    assert _diff(before, facts, tmp_path) == (
        ["- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->"],
        ["- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2;vt=2026-06-20-->",
         "- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;"
         f"sup={entry_key('我在余杭区')}-->"])
    assert _memory_files(vault) - files <= {"MEMORY.md"}
    # indexed right away: the new line is found, the old one hidden
    found = [h.path for h in app.search("我在西湖区", count_recall=False, now=NOW)]
    assert XIHU in found and YUHANG not in found
    # remembered again, the new line is the fact: a duplicate of it
    assert _service(app).remember("我在西湖区", type="project", subject="所在地").path == XIHU


def test_a_contradiction_supersedes_the_entry_english(app: App, vault: Path) -> None:
    result = _service(app).remember("The kiln shelf is 45 cm wide", type="project",
                                    subject="kiln.shelf")
    new = f"Memory/facts.md#{entry_key('The kiln shelf is 45 cm wide')}"
    assert (result.action, result.path, result.superseded) == ("superseded", new, SHELF)
    entry_file = parse_entry_file("Memory/facts.md", (vault / "Memory/facts.md").read_bytes())
    old = entry_file.entry(SHELF.split("#")[1])
    assert old is not None and str(old.fields.vt) == "2026-06-20"
    assert entry_file.entries[-1].fields.sup == SHELF.split("#")[1]


def test_another_owners_entries_are_not_candidates(app: App, vault: Path) -> None:
    (vault / "Memory" / "hers.md").write_text(
        "---\nowner: alice\n---\n- 我在滨江区 <!--m:subj=住址-->\n", encoding="utf-8")
    before = (vault / "Memory" / "hers.md").read_bytes()
    result = _service(app).remember("我在上城区", type="project", subject="住址")
    assert result.action == "created" and "#" not in result.path
    assert (vault / "Memory" / "hers.md").read_bytes() == before


def test_a_pinned_fact_closes_the_entry_and_becomes_a_memory_file(
        app: App, vault: Path) -> None:
    """An entry has no pinned: a pinned fact is a memory file; the entry it contradicts is
    closed all the same."""
    result = _service(app).remember("我在西湖区", type="project", subject="所在地", pinned=True)
    assert result.action == "superseded" and result.superseded == YUHANG
    assert "#" not in result.path and (vault / result.path).is_file()
    text = (vault / "Memory" / "facts.md").read_text(encoding="utf-8")
    assert "hc=2;vt=2026-06-20-->" in text and "西湖区" not in text


def test_an_unsure_pair_is_two_lines_listed_until_settled(app: App, vault: Path,
                                                         tmp_path: Path) -> None:
    """A possible contradiction (a changed place beside a new sentence): the new line names
    the old one; ``possible_pairs`` (dreamd conflicts) lists both as entries."""
    facts = vault / "Memory" / "facts.md"
    before = facts.read_bytes()
    result = _service(app).remember("我在西湖区，离公司很近", type="project", subject="所在地")
    assert result.linked_as == "possible_contradiction", result.judgement
    new_key = result.path.split("#")[1]
    assert result.path == f"Memory/facts.md#{entry_key('我在西湖区，离公司很近')}"
    assert _diff(before, facts, tmp_path) == ([], [
        "- 我在西湖区，离公司很近 <!--m:subj=所在地;vf=2026-06-20;"
        f"possible_contradiction={entry_key('我在余杭区')}-->"])
    assert ("possible_contradiction", YUHANG, result.path) in _service(app).possible_pairs()
    assert new_key != entry_key("我在余杭区")


def test_dreamd_check_lists_an_entry_pair_and_an_entry_contradiction(
        app: App, vault: Path) -> None:
    """check considers entries as it considers memory files: the unsure pair remember made
    is a possible pair, and two live lines of one subject that disagree are a
    contradiction."""
    result = _service(app).remember("我在西湖区，离公司很近", type="project", subject="所在地")
    findings = app.consistency().check().findings
    pairs = [f.drift.paths for f in findings if f.kind == "possible_pair"]
    assert tuple(sorted((YUHANG, result.path))) in pairs
    facts = vault / "Memory" / "facts.md"
    with facts.open("a", encoding="utf-8") as out:  # written by hand: no link, no sup
        out.write("- The kiln shelf is 45 cm wide <!--m:subj=kiln.shelf;vf=2026-06-01-->\n")
    findings = app.consistency().check().findings
    clashes = [f.drift.paths for f in findings if f.kind == "contradiction"]
    shelf45 = f"Memory/facts.md#{entry_key('The kiln shelf is 45 cm wide')}"
    assert tuple(sorted((SHELF, shelf45))) in clashes


@pytest.mark.parametrize("answer", ["same", "changed", "different"])
def test_an_entry_pair_is_settled_by_the_user_on_those_two_lines(
        app: App, vault: Path, tmp_path: Path, answer: str) -> None:
    facts = vault / "Memory" / "facts.md"
    made = _service(app).remember("我在西湖区，离公司很近", type="project", subject="所在地")
    before = facts.read_bytes()
    message = _service(app).settle_pair(made.path, answer)  # type: ignore[arg-type]
    assert YUHANG in message and made.path in message
    old = entry_key("我在余杭区")
    removed, added = _diff(before, facts, tmp_path)
    line = "- 我在西湖区，离公司很近 <!--m:subj=所在地;vf=2026-06-20"
    assert removed[-1] == f"{line};possible_contradiction={old}-->"
    assert added[-1] == {"same": f"{line};merged_into={old}-->", "changed": f"{line};sup={old}-->",
                         "different": f"{line}-->"}[answer]
    assert len(removed) == len(added) == (2 if answer == "changed" else 1)
    assert not [pair for pair in _service(app).possible_pairs() if YUHANG in pair]
    live = {h.path for h in app.search("我在", count_recall=False, now=NOW)}
    assert (made.path in live) == (answer != "same") and (YUHANG in live) == (answer != "changed")


def test_remember_and_conflicts_resolve_from_the_command_line(vault: Path) -> None:
    """As a user runs it (real subprocesses, nothing synced: the words decide)."""
    (vault / "Memory" / "facts.md").write_text(FACTS, encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "DREAMD_VAULT__PATH": str(vault)}

    def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "daemon", *args], cwd=repo, env=env,
                              capture_output=True, text=True, check=False, timeout=300)

    same = dreamd("remember", "我在余杭区", "--subject", "所在地", "--json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["path"] == YUHANG
    moved = dreamd("remember", "我在西湖区", "--subject", "所在地", "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["path"] == XIHU
    assert "sup=" in (vault / "Memory" / "facts.md").read_text(encoding="utf-8")
    wrong = dreamd("conflicts", "resolve", XIHU, "--as", "same")
    assert wrong.returncode != 0 and "not kept apart" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_moving_back_to_a_closed_fact_appends_it_again(app: App, vault: Path) -> None:
    """The old line is history (vt set); the fact holding again is a new line, its key the
    text's with -2 (the second line of that text in the file), superseding the newer one."""
    _service(app).remember("我在西湖区", type="project", subject="所在地")
    back = _service(app).remember("我在余杭区", type="project", subject="所在地")
    assert (back.action, back.path, back.superseded) == ("superseded", f"{YUHANG}-2", XIHU)
    text = (vault / "Memory" / "facts.md").read_text(encoding="utf-8")
    assert text.endswith(f"- 我在余杭区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;"
                         f"sup={entry_key('我在西湖区')}-->\n")
    found = [h.path for h in app.search("我在余杭区", count_recall=False, now=NOW)]
    assert f"{YUHANG}-2" in found and YUHANG not in found and XIHU not in found
