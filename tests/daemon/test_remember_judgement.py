"""remember judges by meaning: the product's real model, a real store, real files.

Each case runs under an owner of its own, so the cases never meet. What is asserted is what
the files say afterwards: merged, superseded (both kept), or two live memories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccb.owner import parse_owner
from ccb.parse import parse_note
from config.errors import EmptyMemoryError
from daemon.app import App, load

CASES = [
    # (case, old, new, subject, expected action of the second remember)
    ("readme-pnpm", "Use pnpm, not npm, for every JavaScript project",
     "Use npm, not pnpm, for every JavaScript project", "js.package-manager", "superseded"),
    ("timeout-no-subject", "The billing API request timeout is 30 s.",
     "The billing API request timeout is now 60 s.", None, "superseded"),
    ("port-no-subject", "The metrics exporter listens on port 9100.",
     "The metrics exporter listens on port 9090.", None, "superseded"),
    ("always-never", "Always squash commits before merging.",
     "Never squash commits before merging.", None, "superseded"),
    ("restatement", "Prefers dark mode in the editor.",
     "- prefers **dark mode** in the editor", None, "duplicate"),
    ("zh-restatement", "用户喜欢用 pnpm", "用户喜欢用pnpm。", None, "duplicate"),
    ("zh-changed-city", "用户住在杭州。", "用户住在上海。", "user.home_city", "superseded"),
    ("allergies", "Allergic to shellfish.", "Allergic to dust.", None, "created"),
    ("lead-buddy", "My team lead is Alice.", "My onboarding buddy is Alice.", None, "created"),
    ("other-subject", "Prefers dark mode.", "Prefers dark mode.", "editor.theme", "created"),
]


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, Path]:
    base = tmp_path_factory.mktemp("remember-judgement")
    os.environ["DREAMD_STORAGE__DATA_DIR"] = str(base / "data")
    vault = base / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    app = App.create(load(None, None, {"vault.path": str(vault)}))
    app.sync()
    return app, vault


@pytest.mark.parametrize(("case", "old", "new", "subject", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_remember_judges_the_pair(real_app: tuple[App, Path], case: str, old: str, new: str,
                                  subject: str | None, expected: str) -> None:
    app, vault = real_app
    service = app.memories(parse_owner(f"case-{case}"))
    first = service.remember(old, type="user", subject=subject)
    other_subject = "terminal.theme" if case == "other-subject" else subject
    second = service.remember(new, type="user", subject=other_subject)
    assert second.action == expected, second.judgement
    files = [parse_note(p, (vault / p).read_bytes()) for p in {first.path, second.path}]
    if expected == "superseded":
        old_note = parse_note(first.path, (vault / first.path).read_bytes())
        new_note = parse_note(second.path, (vault / second.path).read_bytes())
        assert old_note.memory and old_note.memory.valid_to is not None
        assert new_note.memory and new_note.memory.supersedes == (Path(first.path).stem,)
        assert second.reason and second.judgement and second.candidate == first.path
    elif expected in {"updated", "duplicate"}:
        assert second.path == first.path and len(files) == 1
        body = files[0].body
        assert old.rstrip(".。") in body or old in body  # nothing the user wrote is lost
    else:
        assert len(files) == 2 and all(f.memory and f.memory.valid_to is None for f in files)


def test_a_dated_event_is_valid_from_its_day_and_two_form_a_series(
        real_app: tuple[App, Path]) -> None:
    app, vault = real_app
    now = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    service = app.memories(parse_owner("case-series"), clock=lambda: now)
    first = service.remember("Ran 5 km on 2026-03-02.", type="user", subject="running")
    second = service.remember("Ran 8 km on 2026-03-09.", type="user", subject="running")
    assert first.action == second.action == "created"
    assert second.verdict == "series", second.judgement
    notes = [parse_note(p, (vault / p).read_bytes()) for p in (first.path, second.path)]
    assert [str(n.memory.valid_from) for n in notes if n.memory] == ["2026-03-02", "2026-03-09"]
    assert all(n.memory and n.memory.valid_to is None for n in notes)
    report = app.consistency().check()
    assert not [f for f in report.findings if f.kind == "contradiction"
                and first.path in getattr(f.drift, "paths", ())]


def test_a_stored_event_counted_back_is_dated_once_not_again_from_its_own_day(
        real_app: tuple[App, Path]) -> None:
    # "a week ago" is counted from the day the memory was written; read back to judge the
    # next memory, it must not be counted again from the event's own day (valid_from)
    app, vault = real_app
    now = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)  # a Monday
    service = app.memories(parse_owner("case-counted-back"), clock=lambda: now)
    first = service.remember("A week ago my resting heart rate was 58 bpm.", type="user")
    second = service.remember("Ten days ago my resting heart rate was 64 bpm.", type="user")
    note = parse_note(first.path, (vault / first.path).read_bytes())
    assert note.memory and str(note.memory.valid_from) == "2026-11-30"
    assert second.verdict == "series", second.judgement
    assert "2026-11-30 / 2026-11-27" in str(second.judgement), second.judgement


def test_an_unsure_pair_is_linked_both_ways_and_listed_by_check(
        real_app: tuple[App, Path]) -> None:
    app, vault = real_app
    service = app.memories(parse_owner("case-possible"))
    first = service.remember("Don't add comments explaining obvious code.", type="feedback")
    second = service.remember("Only comment code whose intent isn't clear from "
                              "reading it.", type="feedback")
    assert second.action == "created" and second.linked_as == "possible_duplicate", \
        second.judgement
    old_note = parse_note(first.path, (vault / first.path).read_bytes())
    new_note = parse_note(second.path, (vault / second.path).read_bytes())
    link = second.linked_as
    assert old_note.properties[link] == [f"[[{Path(second.path).stem}]]"]
    assert new_note.properties[link] == [f"[[{Path(first.path).stem}]]"]
    report = app.consistency().check()
    pairs = [f for f in report.findings if f.kind == "possible_pair"]
    assert any(set(f.drift.paths) == {first.path, second.path} for f in pairs)


def test_remember_explain_names_the_candidate_and_the_rule(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    dreamd = [sys.executable, "-m", "daemon"]
    env = dict(os.environ)
    subprocess.run([*dreamd, "sync", str(vault)], check=True, capture_output=True, env=env)
    subprocess.run([*dreamd, "remember", "The request timeout is 30 s.", "--vault",
                    str(vault)], check=True, capture_output=True, env=env)
    done = subprocess.run([*dreamd, "remember", "The request timeout is now 60 s.",
                           "--vault", str(vault), "--explain"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "supersedes" in done.stdout and "judged against Memory/" in done.stdout
    assert "changed value" in done.stdout and "30 s → 60 s" in done.stdout
    as_json = subprocess.run([*dreamd, "remember", "The request timeout is now 60 s.",
                              "--vault", str(vault), "--json"], capture_output=True,
                             text=True, env=env)
    result = json.loads(as_json.stdout)
    assert result["action"] == "duplicate" and result["verdict"] == "duplicate"


def test_empty_text_is_a_clear_error_and_nothing_is_written(real_app: tuple[App, Path]) -> None:
    app, vault = real_app
    before = sorted(p.name for p in (vault / "Memory").iterdir())
    for text in ("", "   ", "\u200b"):
        with pytest.raises(EmptyMemoryError, match="empty"):
            app.memories(parse_owner("case-empty")).remember(text, type="user")
    assert sorted(p.name for p in (vault / "Memory").iterdir()) == before


def test_texts_in_other_scripts_are_not_merged(real_app: tuple[App, Path]) -> None:
    app, _vault = real_app
    service = app.memories(parse_owner("case-scripts"))
    paths = {service.remember(text, type="user").path
             for text in ("أنا أعيش في القاهرة", "سيارتي لونها أحمر", "Я люблю кофе",
                          "Мой начальник Иван", "나는 서울에 산다")}
    assert len(paths) == 5


def test_one_edited_sentence_in_a_long_memory_is_never_merged(
        real_app: tuple[App, Path]) -> None:
    app, vault = real_app
    service = app.memories(parse_owner("case-long"))
    steps = "\n".join(f"Step {i} runs the build for module {i}." for i in range(1, 120))
    first = service.remember(steps, type="project", name="Build steps")
    second = service.remember(steps.replace("Step 60 runs", "Step 60 skips"), type="project",
                              name="Build steps")
    # kept apart and linked: the edit is read as a changed word, or (past the part of a long
    # memory the judgement reads) as text that differs further on
    assert second.path != first.path
    assert second.verdict in {"possible_contradiction", "possible_duplicate"}
    old_body = parse_note(first.path, (vault / first.path).read_bytes()).body
    assert "Step 60 skips" not in old_body  # the old memory does not state both


def test_a_hand_edit_the_index_has_not_seen_is_judged_by_meaning(
        real_app: tuple[App, Path]) -> None:
    app, vault = real_app
    service = app.memories(parse_owner("case-handedit"))
    first = service.remember("My team lead is Alice.", type="user")
    path = vault / first.path
    path.write_bytes(path.read_bytes().replace(b"Alice", b"Carol"))  # no sync after it
    second = service.remember("My team lead is Bob.", type="user")
    assert second.action == "superseded" and second.superseded == first.path, second.judgement
    assert second.judgement and "cosine" in second.judgement


@pytest.mark.parametrize("answer", ["same", "changed", "different"])
def test_a_possible_pair_is_settled_by_the_user(real_app: tuple[App, Path], answer: str) -> None:
    app, vault = real_app
    service = app.memories(parse_owner(f"case-settle-{answer}"))
    first = service.remember("Don't add comments explaining obvious code.", type="feedback")
    second = service.remember("Only comment code whose intent isn't clear from "
                              "reading it.", type="feedback")
    assert second.linked_as == "possible_duplicate", second.judgement
    assert ("possible_duplicate", first.path, second.path) in service.possible_pairs()
    message = service.settle_pair(second.memory_id, answer)  # type: ignore[arg-type]
    old = parse_note(first.path, (vault / first.path).read_bytes())
    new = parse_note(second.path, (vault / second.path).read_bytes())
    assert "possible_duplicate" not in old.properties
    assert "possible_duplicate" not in new.properties
    assert old.memory and new.memory
    if answer == "same":
        assert new.properties["merged_into"] == f"[[{Path(first.path).stem}]]"
        assert "comment code whose intent" in old.body and "obvious code" in old.body
    elif answer == "changed":
        assert old.memory.valid_to is not None
        assert new.memory.supersedes == (Path(first.path).stem,)
    else:
        assert old.memory.valid_to is None and new.memory.valid_to is None
        assert "merged_into" not in new.properties
    assert first.path in message or second.path in message
    report = app.consistency().check()
    assert not [f for f in report.findings if f.kind == "possible_pair"
                and first.path in f.drift.paths]
    assert not [p for p in service.possible_pairs() if first.path in p]


def test_settling_a_pair_as_changed_names_what_else_the_older_memory_said(
        real_app: tuple[App, Path]) -> None:
    """The older memory also held other facts (the user's name): superseding it hides them
    too, and the user is told which, in English and in Chinese."""
    from ccb.frontmatter_edit import set_properties

    app, vault = real_app
    for case, (older_text, newer_text, others, changed) in enumerate([
        ("My name is Ana. I live in Lisbon. I work at a bakery.", "I live in Porto now.",
         ["My name is Ana.", "I work at a bakery."], "I live in Lisbon"),
        ("我叫安娜。我住在里斯本。", "我现在住在波尔图。", ["我叫安娜。"], "我住在里斯本"),
    ]):
        # an owner per case: the English case's "I live in Porto now." must not meet the
        # Chinese case's Lisbon (a change of city across languages, superseded as it should)
        service = app.memories(parse_owner(f"case-settle-more-{case}"))
        older = service.remember(older_text, type="user")
        newer = service.remember(newer_text, type="user")
        path = vault / newer.path  # linked as remember links a pair it keeps apart
        path.write_bytes(set_properties(path.read_bytes(), {
            "possible_contradiction": f"[[{Path(older.path).stem}]]"}, path=newer.path))
        message = service.settle_pair(newer.memory_id, "changed", other=older.memory_id)
        note = message.split("NOTE", 1)[1]
        assert all(sentence in note for sentence in others), message
        assert changed not in note
    single = service.remember("Standup is at 9:30.", type="user")
    later = service.remember("Standup moved to 10:15.", type="user")
    path = vault / later.path
    if single.path != later.path and "possible" not in str(later.verdict):
        path.write_bytes(set_properties(path.read_bytes(), {
            "possible_contradiction": f"[[{Path(single.path).stem}]]"}, path=later.path))
        assert "NOTE" not in service.settle_pair(later.memory_id, "changed", other=single.memory_id)


def test_a_change_of_one_fact_supersedes_it_and_links_the_older_memory_of_several(
        real_app: tuple[App, Path]) -> None:
    """Two live memories state the dog's name: one alone, one beside where the user works.
    A new name supersedes the first; the second still says where the user works, so it stays
    live, linked to the new memory as a possible contradiction both ways, and listed."""
    app, vault = real_app
    service = app.memories(parse_owner("case-compound"))
    single = service.remember("My dog is named Wangcai.", type="user")
    source = (vault / single.path).read_bytes()
    compound = vault / "Memory" / "work-and-dog.md"
    compound.write_bytes(source.replace(
        b"My dog is named Wangcai", b"I work in Hangzhou, and my dog is called Wangcai").replace(
        single.memory_id.encode(), b"01JCOMPOUND0000000000000000"))
    changed = service.remember("My dog is now called Lucky.", type="user")
    assert changed.action == "superseded" and changed.superseded == single.path, \
        changed.judgement
    older = parse_note("Memory/work-and-dog.md", compound.read_bytes())
    newer = parse_note(changed.path, (vault / changed.path).read_bytes())
    assert older.memory and older.memory.valid_to is None  # Hangzhou still holds
    assert older.properties["possible_contradiction"] == [f"[[{Path(changed.path).stem}]]"]
    assert newer.properties["possible_contradiction"] == ["[[work-and-dog]]"]
    assert b"I work in Hangzhou" in compound.read_bytes()


def test_a_change_links_no_memory_it_only_shares_a_name_with(
        real_app: tuple[App, Path]) -> None:
    """A new port supersedes the old one; a memory of the same project that says something
    else (the deploy day) gets no link written into it (a new-user trial's case)."""
    app, vault = real_app
    service = app.memories(parse_owner("case-atlas"))
    port = service.remember("The staging server for the Atlas project listens on port 8080.",
                            type="project")
    day = service.remember("Atlas deploys to staging every Tuesday afternoon.", type="project")
    assert day.path != port.path
    moved = service.remember("The staging server for the Atlas project now listens on "
                             "port 9090.", type="project")
    assert moved.action == "superseded" and moved.superseded == port.path, moved.judgement
    note = parse_note(day.path, (vault / day.path).read_bytes())
    assert "possible_contradiction" not in note.properties
    assert "port-80." not in port.path  # its name was never cut inside the number
