"""remember / show / forget and MEMORY.md, on a copy of the demo vault and a real store.

The embedder is the token-hash fake (conftest): the decisions under test are by content hash,
character bigrams, type, subject and negation, not by meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ccb.parse import parse_note
from config.errors import SecretRefusedError
from daemon.app import App

Builder = Callable[..., tuple[App, object]]


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    application, _ = make_app(vault)
    application.sync()
    return application


def test_same_fact_twice_is_one_memory(app: App) -> None:
    service = app.memories()
    first = service.remember("Always add a 30 s timeout to the billing API client.",
                             type="feedback", subject="billing.timeout")
    again = service.remember("always add a 30 s timeout to the billing API client",
                             type="feedback", subject="billing.timeout")
    assert first.action == "created" and again.action == "duplicate"
    assert again.path == first.path and again.memory_id == first.memory_id
    assert first.path in app.store.file_index()  # indexed right away (no daemon running)
    assert "Memory/MEMORY.md" not in app.store.file_index()  # generated: never indexed


def test_changed_fact_supersedes_and_both_stay(app: App, vault: Path) -> None:
    service = app.memories()
    old = service.remember("Use pnpm, not npm, for every JavaScript project",
                           type="feedback", subject="js.package-manager")
    new = service.remember("Use npm, not pnpm, for every JavaScript project",
                           type="feedback", subject="js.package-manager")
    assert new.action == "superseded" and new.superseded == old.path
    old_note = parse_note(old.path, (vault / old.path).read_bytes())
    new_note = parse_note(new.path, (vault / new.path).read_bytes())
    assert old_note.memory and old_note.memory.valid_to is not None
    assert old_note.memory.version == 2
    assert old_note.properties["superseded_by"] == f"[[{Path(new.path).stem}]]"
    assert new_note.memory and new_note.memory.supersedes == (Path(old.path).stem,)
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert Path(new.path).name in index and Path(old.path).name not in index


def test_a_secret_is_refused_and_nothing_is_written(app: App, vault: Path) -> None:
    before = sorted(p.name for p in (vault / "Memory").iterdir())
    with pytest.raises(SecretRefusedError, match="credential"):
        app.memories().remember(
            "deploy with AWS key AKIAQWERTYUIOPASDFGH please", type="project")
    assert sorted(p.name for p in (vault / "Memory").iterdir()) == before


def test_a_tip_announced_as_a_secret_is_remembered_a_quoted_password_is_not(
        app: App, vault: Path) -> None:
    """The new-user trial's memory was refused as a credential: a sentence announcing a
    secret, then prose in quotes. It is kept; a password in quotes after the same words is
    still refused (the families: ``tests/consistency/test_secrets_quoted_prose.py``)."""
    kept = app.memories().remember(
        'Management lesson, here is a secret: "grant agency to the people who do the work"',
        type="feedback")
    assert kept.action == "created"
    assert "grant agency" in (vault / kept.path).read_text(encoding="utf-8")
    before = sorted(p.name for p in (vault / "Memory").iterdir())
    with pytest.raises(SecretRefusedError, match="credential"):
        app.memories().remember('The NAS admin, here is a secret: "Zq8kLm2vP7xR"',
                                type="project")
    assert sorted(p.name for p in (vault / "Memory").iterdir()) == before


#: A GitHub token of the documented shape (``ghp_`` + 36), made up for these tests.
GITHUB_TOKEN = "ghp_Zq3x9Lk2Vb7Nm4Pc8Rt1Yw6Hs5Jd0Fg2Ae9K"


@pytest.mark.parametrize("owner", [GITHUB_TOKEN, f"alice/{GITHUB_TOKEN}"])
def test_an_owner_holding_a_credential_is_refused_and_nothing_is_written(
    app: App, vault: Path, owner: str
) -> None:
    """The owner is written, casefolded, into the memory (an MCP server started for it
    writes through this service): it is scanned like the text, name and description."""
    from ccb.owner import parse_owner

    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    with pytest.raises(SecretRefusedError, match="owner"):
        app.memories(parse_owner(owner)).remember("The kiln shelf is 40 cm wide.",
                                                  type="reference")
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("owner", [GITHUB_TOKEN, "AKIAZQ3X9LK2VB7NM4PC/claude-code"])
def test_dreamd_remember_refuses_a_credential_given_as_owner(
    app: App, vault: Path, tmp_path: Path, owner: str
) -> None:
    """``dreamd remember --owner …`` looks at the owner as typed: an AWS key id is found in
    capitals only, and the owner is casefolded once parsed."""
    import os
    import subprocess
    import sys

    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    env = {**os.environ, "DREAMD_STORAGE__DATA_DIR": str(tmp_path / "cli-data")}
    done = subprocess.run([sys.executable, "-m", "daemon", "remember", "--owner", owner,
                           "--vault", str(vault), "The kiln shelf is 40 cm wide."],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env,
                          timeout=120, check=False)
    assert done.returncode == 9, done.stderr
    assert "owner" in done.stderr and owner.split("/")[0][8:] not in done.stderr
    assert "Traceback" not in done.stderr
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before


def test_only_the_memory_edit_touches_other_files(app: App, vault: Path) -> None:
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    changed = {p for p, data in before.items() if not p.exists() or p.read_bytes() != data}
    assert changed <= {vault / "Memory" / "MEMORY.md"}
    assert (vault / result.path).is_file()


def test_show_finds_by_id_name_and_forget_removes_file_and_rows(app: App, vault: Path) -> None:
    service = app.memories()
    made = service.remember("Glaze tests are fired at cone 6.", type="project",
                            name="Glaze test cone")
    assert service.find(made.memory_id).path == made.path
    assert service.find("glaze test cone").path == made.path
    report = service.forget(made.memory_id)
    assert not (vault / made.path).exists()
    assert made.path not in app.store.file_index()
    assert report.path == made.path and report.removed
    assert "glaze-test-cone" not in (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")


def test_forgetting_the_newer_memory_makes_the_older_current_and_leaves_no_link(
    app: App, vault: Path
) -> None:
    service = app.memories()
    old = service.remember("The office wifi password rotates every Monday.",
                           type="project", subject="office.wifi.rotation")
    new = service.remember("The office wifi password rotates every Friday.",
                           type="project", subject="office.wifi.rotation")
    assert new.superseded == old.path
    report = service.forget(new.memory_id)
    stem = Path(new.path).stem
    assert not any(stem in p.read_text(encoding="utf-8") for p in (vault / "Memory").iterdir()
                   if p.suffix == ".md")
    note = parse_note(old.path, (vault / old.path).read_bytes())
    assert note.memory is not None and note.memory.valid_to is None
    assert "superseded_by" not in note.properties
    assert any("current again" in line and old.path in line for line in report.removed)
    assert Path(old.path).name in (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert app.consistency().check().clean


def test_forgetting_the_older_memory_takes_it_out_of_the_newer_ones_links(
    app: App, vault: Path
) -> None:
    service = app.memories()
    old = service.remember("Standups are at 9:30.", type="project", subject="team.standup")
    new = service.remember("Standups are at 10:15.", type="project", subject="team.standup")
    service.forget(old.memory_id)
    note = parse_note(new.path, (vault / new.path).read_bytes())
    assert note.memory is not None and note.memory.supersedes == ()
    assert Path(old.path).stem not in (vault / new.path).read_text(encoding="utf-8")
    assert app.consistency().check().clean


def test_forgetting_the_middle_of_a_chain_keeps_the_oldest_superseded_by_the_newest(
    app: App, vault: Path
) -> None:
    service = app.memories()
    first = service.remember("The kiln fires on Mondays.", type="project", subject="kiln.day")
    middle = service.remember("The kiln fires on Wednesdays.", type="project",
                              subject="kiln.day")
    last = service.remember("The kiln fires on Fridays.", type="project", subject="kiln.day")
    assert middle.superseded == first.path and last.superseded == middle.path
    report = service.forget(middle.memory_id)
    oldest = parse_note(first.path, (vault / first.path).read_bytes())
    newest = parse_note(last.path, (vault / last.path).read_bytes())
    assert oldest.memory is not None and oldest.memory.valid_to is not None  # still closed
    assert oldest.properties["superseded_by"] == f"[[{Path(last.path).stem}]]"
    assert newest.memory is not None and newest.memory.supersedes == (Path(first.path).stem,)
    assert not any("current again" in line for line in report.removed)
    assert any("stays superseded" in line and first.path in line for line in report.removed)
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert Path(last.path).name in index and Path(first.path).name not in index
    assert Path(middle.path).stem not in (vault / first.path).read_text(encoding="utf-8")
    assert app.consistency().check().clean


def test_a_long_memory_is_found_by_its_whole_text(app: App) -> None:
    service = app.memories()
    text = ("When the nightly export to the analytics warehouse fails, rerun it by hand from "
            "the ops runbook before nine, because the finance dashboards read it at ten.")
    made = service.remember(text, type="project")
    assert service.find(text).path == made.path  # its name is cut; the text names it
    assert service.find("  " + text.upper() + " ").path == made.path


def test_forgotten_text_is_gone_from_the_store_on_disk(app: App) -> None:
    marker = "zebracorn-quartz-7731"
    service = app.memories()
    made = service.remember(f"The studio wifi is named {marker}.", type="reference")
    other = service.remember("The kiln shelf is 40 cm wide.", type="reference")
    app.indexing.settle()  # (the index write follows the answer; the files on disk read)
    store = Path(app.store_uri)
    assert any(marker.encode() in p.read_bytes() for p in store.rglob("*") if p.is_file())
    service.forget(other.memory_id)  # a second forget in a row: the first one's rows too
    service.forget(made.memory_id)
    assert not any(marker.encode() in p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert app.search("studio wifi zebracorn", limit=5)  # the index still answers
    state = app.state_dir  # the writer's journal of recent writes included
    assert not any(marker.encode() in p.read_bytes() for p in state.rglob("*") if p.is_file())


def test_forget_takes_its_line_out_of_the_hand_edited_index_it_keeps_as_a_copy(
    app: App, vault: Path
) -> None:
    """The user typed a line into ``MEMORY.md``; forget rebuilds the index and keeps theirs
    beside it as a conflict copy, which listed the forgotten memory (its name and its text):
    that line goes, the user's stays (found by ``bench/soak.py``)."""
    marker = "peridot-lantern-5520"
    service = app.memories()
    made = service.remember(f"The shed padlock hint is {marker}.", type="reference")
    index = vault / "Memory" / "MEMORY.md"
    assert marker.encode() in index.read_bytes()
    with index.open("a", encoding="utf-8") as handle:
        handle.write("- my own reminder: water the plants\n")
    service.forget(made.memory_id)
    copies = sorted((vault / "Memory").glob("MEMORY.conflict-*.md"))
    assert len(copies) == 1
    assert b"- my own reminder: water the plants\n" in copies[0].read_bytes()
    assert b"[Prefers metric units](prefers-metric-units.md)" in copies[0].read_bytes()
    left = [p for root in (vault, app.state_dir) for p in root.rglob("*")
            if p.is_file() and marker.encode() in p.read_bytes()]
    assert left == []


def test_forget_leaves_no_copy_kept_under_a_name_the_memory_had_before(
    app: App, vault: Path
) -> None:
    marker = "larkspur-umber-4410"
    service = app.memories()
    made = service.remember(f"The lab door code hint is {marker}.", type="reference")
    app.recalls.record([made.memory_id], "where is the lab door code hint")
    renamed = vault / "Memory" / "lab-door.md"
    (vault / made.path).rename(renamed)  # the user renamed it in Obsidian
    app.sync()
    service.forget(made.memory_id)
    assert not renamed.exists()
    state = app.state_dir
    assert not any(marker.encode() in p.read_bytes() for p in state.rglob("*") if p.is_file())
    assert made.memory_id not in app.recalls.stats()  # no search recall of it is kept
    assert not any(made.memory_id.encode() in p.read_bytes()
                   for p in (state / "lancedb" / "recalls.lance").rglob("*") if p.is_file())


def test_forget_after_a_dream_leaves_no_name_in_the_diary_or_the_dream_state(
    app: App, vault: Path
) -> None:
    """Two memories a dream linked ("[[a]] superseded by [[b]]"), both forgotten: no byte
    of their names or text is left in the vault or the state folder, and each diary line that
    named them says a memory was forgotten, in the diary's shape."""
    for stem, day in (("quokkafern-deploy", "Tuesdays"), ("quokkafern-deploy-day", "Wednesdays")):
        (vault / "Memory" / f"{stem}.md").write_text(
            f"---\nname: {stem}\ndescription: Quokkafern deploys happen on {day}\n"
            f"type: project\nsubject: quokkafern.deploy-day\n---\n"
            f"Quokkafern deploys happen on {day}, after the standup.\n", encoding="utf-8")
    app.sync()
    report = app.dreamer().dream(force=True)
    assert any("quokkafern" in line for line in report.plan.changes)
    diary = vault / "Memory" / "DREAMS.md"
    assert b"quokkafern" in diary.read_bytes()
    service = app.memories()
    reports = [service.forget(name) for name in ("quokkafern-deploy-day", "quokkafern-deploy")]
    assert any("dream diary" in line for r in reports for line in r.removed)
    left = [p for root in (vault, app.state_dir) for p in root.rglob("*")
            if p.is_file() and b"quokkafern" in p.read_bytes().lower()]
    assert [str(p.relative_to(p.parents[2])) for p in left] == []
    text = diary.read_text(encoding="utf-8")
    assert "- A memory was forgotten on " in text and text.startswith("# ")


def test_forget_takes_the_name_out_of_other_memories_earlier_versions(
    app: App, vault: Path
) -> None:
    service = app.memories()
    old = service.remember("The ceramics studio key box code changes every Monday.",
                           type="reference", subject="studio.keybox")
    new = service.remember("The ceramics studio key box code changes every Friday.",
                           type="reference", subject="studio.keybox")
    assert new.superseded == old.path
    stem = Path(old.path).stem.encode()
    app.indexing.settle()  # (its version is recorded right after the answer)
    assert any(stem in v.read_bytes() for v in app.state_dir.rglob("*.md"))  # new's history
    report = service.forget(old.path)
    assert any("other memories' earlier versions" in line for line in report.removed)
    left = [p for root in (vault, app.state_dir) for p in root.rglob("*")
            if p.is_file() and stem in p.read_bytes()]
    assert [str(p.relative_to(p.parents[1])) for p in left] == []
    history = app.history().history(new.memory_id)  # still whole, and every version reads
    assert [v.n for v in history] == sorted(v.n for v in history) and history
    for version in history:
        app.versions.content(new.memory_id, version.n)


def test_owners_never_see_each_others_memories(app: App, vault: Path) -> None:
    from ccb.owner import Owner

    alice, bob = Owner("alice", "claude-code"), Owner("bob", "claude-code")
    mine = app.memories(alice).remember(
        "The staging database password rotates every Monday at 09:00.", type="project",
        subject="staging.rotation")
    theirs = app.memories(bob).remember(
        "The staging database password rotates every Monday at 09:00.", type="project",
        subject="staging.rotation")
    assert mine.action == theirs.action == "created"  # one owner's fact never dedupes another's
    assert mine.path != theirs.path
    text = (vault / mine.path).read_text(encoding="utf-8")
    assert "owner: alice/claude-code" in text

    def paths(owner: Owner | None) -> set[str]:
        return {h.path for h in app.search("staging database password rotates Monday",
                                           limit=50, owner=owner)}

    assert mine.path in paths(alice) and theirs.path not in paths(alice)
    assert theirs.path in paths(bob) and mine.path not in paths(bob)
    assert {mine.path, theirs.path} <= paths(None)  # the vault's owner sees all
    assert {mine.path, theirs.path} <= paths(Owner("alice")) | {theirs.path}
    assert theirs.path not in paths(Owner("alice"))
    assert mine.path not in paths(Owner("alice", "cursor"))
    shared = paths(alice) & paths(bob)
    assert any(p.startswith("Memory/") for p in shared)  # shared memories stay shared
    listed = {s.path for s in app.memories(alice).memories()}
    assert mine.path in listed and theirs.path not in listed
    with pytest.raises(Exception, match="no memory has that id"):
        app.memories(alice).find(theirs.memory_id)
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert Path(mine.path).name in index and Path(theirs.path).name in index


def test_a_memory_index_that_is_a_link_is_never_written_through(app: App, vault: Path) -> None:
    """A ``MEMORY.md`` symlink to a note: ``remember`` writes and indexes the memory, leaves
    the link and the note it points to as they are, and says why in the log."""
    target = vault / "Memory" / "prefers-metric-units.md"
    before = target.read_bytes()
    index = vault / "Memory" / "MEMORY.md"
    index.unlink()
    index.symlink_to("prefers-metric-units.md")
    made = app.memories().remember("The bakery opens at 7am on Saturdays.", type="reference")
    assert target.read_bytes() == before and index.is_symlink()
    assert made.path in app.store.file_index()  # indexed although MEMORY.md was not rebuilt
    assert app.search("bakery opens Saturdays", limit=5)[0].path == made.path
    app.consistency().fix(automatic_only=False)  # `dreamd check --fix`
    assert target.read_bytes() == before and index.is_symlink()


@pytest.mark.parametrize(("valid_to", "current"), [("2999-01-01", True), ("2020-01-01", False)])
def test_a_memory_is_current_until_its_valid_to_day(app: App, vault: Path, valid_to: str,
                                                    current: bool) -> None:
    """One rule everywhere (consistency.lifecycle.is_current): a ``valid_to`` still ahead
    leaves a memory current for remember's duplicate test and for ``show``/``forget`` by
    name; one behind it does not."""
    text = "Quarterly invoices go out on the first Monday of the quarter."
    (vault / "Memory" / "invoices.md").write_text(
        "---\nname: Invoice day\ndescription: when invoices go out\ntype: project\n"
        f"id: 01JINVOICEDAY00000000000000\nvalid_to: {valid_to}\n---\n\n{text}\n",
        encoding="utf-8")
    app.sync()
    service = app.memories()
    again = service.remember(text, type="project")
    assert (again.action == "duplicate") is current, again
    if current:
        assert service.find("Invoice day").path == "Memory/invoices.md"


def test_a_memory_written_without_an_id_is_known_to_remember(app: App, vault: Path,
                                                              corpora_dir: Path) -> None:
    """Claude Code writes memory files without an ``id``: remembering the same fact again
    finds that file (it is judged by its path), and nothing is written twice. The file is a
    public memory sample, byte for byte."""
    sample = (corpora_dir / "memory-samples" / "claude-code" / "Aleslammer__deathwatch_foundryvtt"
              / ".claude" / "memory" / "user_ui_preferences.md")
    data = sample.read_bytes()
    (vault / "Memory" / "user_ui_preferences.md").write_bytes(data)
    app.sync()
    body = parse_note("Memory/user_ui_preferences.md", data).body
    again = app.memories().remember(body, type="user")
    assert again.action == "duplicate", again
    assert again.path == "Memory/user_ui_preferences.md"
    assert (vault / "Memory" / "user_ui_preferences.md").read_bytes() == data


def test_a_changed_fact_supersedes_a_memory_written_without_an_id(app: App,
                                                                   vault: Path) -> None:
    hand = (b"---\nname: Staging port\ndescription: where staging listens\ntype: project\n---\n"
            b"The staging database listens on port 5432.\n")
    (vault / "Memory" / "staging-port.md").write_bytes(hand)
    app.sync()
    new = app.memories().remember("The staging database listens on port 5433.",
                                  type="project")
    assert new.action == "superseded" and new.superseded == "Memory/staging-port.md", new
    old = (vault / "Memory" / "staging-port.md").read_bytes()
    assert b"valid_to:" in old and old.endswith(b"listens on port 5432.\n")


def test_a_reader_of_an_older_version_goes_on_after_a_forget_elsewhere(
    app: App, vault: Path, make_app: Builder
) -> None:
    """A forget drops every older version of the tables (its purge). Another process that
    opened one of them (a search beside it, a remember deciding) reads the latest instead of
    failing on the files the purge removed."""
    assert app.search("kiln shelf", limit=3) is not None  # this reader holds a version now
    other, _ = make_app(vault)
    service = other.memories()
    for n in range(3):
        made = service.remember(f"Shelf {n} of the kiln is 40 cm wide.", type="reference")
        service.forget(made.memory_id)
    other.close()
    assert app.search("kiln shelf", limit=3) is not None
    assert app.memories().remember("The kiln lid hinge squeaks.", type="reference").path


def test_a_credential_written_by_hand_is_never_copied(app: App, vault: Path) -> None:
    """A memory file written by hand holds a password: dreamd refuses to write one, and it
    does not copy this one either — not into MEMORY.md, not into an assistant's context."""
    from daemon.context import build_context

    (vault / "Memory" / "router.md").write_text(
        "---\nname: Router\ndescription: The router admin password is Vq7#pLm2xZ\n"
        "type: user\nid: 01JROUTER00000000000000000\n---\n"
        "The router admin password is Vq7#pLm2xZ and the SSID is Harbour.\n",
        encoding="utf-8")
    app.sync()
    app.memories().rebuild_index()
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert "router.md" in index and "Vq7#pLm2xZ" not in index
    context = build_context(app, "router", count_recall=False).text
    assert "router.md" in context and "Vq7#pLm2xZ" not in context
    assert "credential withheld" in context


def test_forget_with_no_answer_forgets_nothing_and_says_how(vault: Path, app: App,
                                                            tmp_path: Path) -> None:
    """``dreamd forget`` asks first; with no answer on stdin (a script, a pipe) it keeps the
    memory and says ``--yes`` forgets without asking, in one line, not "Aborted."."""
    import os
    import subprocess
    import sys

    made = app.memories().remember("The kiln key hangs behind the studio door.",
                                   type="reference")
    # (a state folder of its own: the index above was built with the test's fake model)
    env = {**os.environ, "DREAMD_STORAGE__DATA_DIR": str(tmp_path / "cli-data")}
    done = subprocess.run([sys.executable, "-m", "daemon", "forget", made.path, "--vault",
                           str(vault)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=env, timeout=120, check=False)
    assert done.returncode == 1 and (vault / made.path).exists()
    assert "--yes forgets without asking" in done.stderr and "Aborted" not in done.stderr


def test_forgetting_the_middle_of_a_chain_whose_file_is_gone_keeps_the_oldest_superseded(
    app: App, vault: Path
) -> None:
    """The middle memory's file deleted by hand, then forgotten: its successor is read from
    the newest memory's ``supersedes``, so the oldest never becomes current beside it."""
    service = app.memories()
    first = service.remember("The kiln fires on Mondays.", type="project", subject="kiln.day")
    middle = service.remember("The kiln fires on Wednesdays.", type="project",
                              subject="kiln.day")
    last = service.remember("The kiln fires on Fridays.", type="project", subject="kiln.day")
    (vault / middle.path).unlink()
    report = service.forget(middle.memory_id, remains=(middle.memory_id, middle.path))
    oldest = parse_note(first.path, (vault / first.path).read_bytes())
    newest = parse_note(last.path, (vault / last.path).read_bytes())
    assert oldest.memory is not None and oldest.memory.valid_to is not None  # still closed
    assert oldest.properties["superseded_by"] == f"[[{Path(last.path).stem}]]"
    assert newest.memory is not None and newest.memory.supersedes == (Path(first.path).stem,)
    assert not any("current again" in line for line in report.removed)
    index = (vault / "Memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert Path(last.path).name in index and Path(first.path).name not in index


def test_a_derived_name_never_cuts_a_word_or_a_number_in_two() -> None:
    from daemon.memories import NAME_MAX_CHARS, derived_name

    name = derived_name("The staging server for the Atlas project listens on port 8080.")
    assert len(name) <= NAME_MAX_CHARS and name.endswith("…")
    assert "port 80" not in name.replace("port 8080", "")  # never a different number
    assert all(word in "The staging server for the Atlas project listens on port 8080"
               for word in name.rstrip("…").split())
    chinese = derived_name("我们的预发布服务器在杭州机房每周二下午部署一次数据库是十五版的"
                           "备份每天凌晨三点做一次而且日志保留三十天监控看板在内网可以打开")
    assert len(chinese) <= NAME_MAX_CHARS and chinese.endswith("…")


def test_blank_name_description_and_subject_are_fields_not_given(app: App, vault: Path) -> None:
    """``--name "   "`` failed with a ValueError traceback (a memory needs a name); a blank
    description or subject was written as given (``subject: "  "``, an empty MEMORY.md line)."""
    done = app.memories().remember("Llamas hum when they are content.", type="user",
                                   name="   ", description=" \n ", subject="  ")
    memory = parse_note(done.path, (vault / done.path).read_bytes()).memory
    assert memory is not None and memory.name == "Llamas hum when they are content."
    assert memory.description == "Llamas hum when they are content."
    assert memory.subject is None
    assert "[Llamas hum when they are content.](" in (vault / "Memory/MEMORY.md").read_text()


def test_the_memory_remembered_is_indexed_with_its_draft_vector_and_found_at_once(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The draft's vector (its first chunk, as the file is indexed) is the one indexed: the
    text is embedded once and the chunks table is not looked up for it; a search right after
    ``remember`` returns finds the memory, with that vector."""
    app, fake = make_app(vault)
    app.sync()
    service = app.memories()
    looked_up: list[set[str]] = []
    real_read = app.store._t.read

    def read(table: object, columns: object = None, where: str | None = None,
             with_row_id: bool = False) -> object:
        if table is app.store._t.chunks and columns == ["content_hash", "vector"]:
            looked_up.append({where or ""})
        return real_read(table, columns, where, with_row_id)  # type: ignore[arg-type]

    monkeypatch.setattr(app.store._t, "read", read)
    embedded = fake.embedded  # type: ignore[attr-defined]
    made = service.remember("The glaze kiln in the back room fires at cone six.",
                            type="project")
    assert fake.embedded - embedded == 1  # type: ignore[attr-defined]
    assert looked_up == []
    vectors = app.indexing.first_chunk_vectors([made.path])
    assert made.path in vectors
    hits = app.search("glaze kiln back room cone six", limit=3)
    assert hits and hits[0].path == made.path


def test_a_new_memory_on_sealed_tables_deletes_no_row_and_an_orphan_is_still_replaced(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sealed tables hold no orphan (:mod:`magma.store_seal`): a new memory's path has no
    chunk or link row, and writing it deletes none. Rows a crash left without their file row
    unseal the tables, and the next write of that path replaces them (never a second copy)."""
    app, _ = make_app(vault)
    app.sync()
    service = app.memories()
    deletes: list[str] = []
    table_type = type(app.store._t.chunks)
    real_delete = table_type.delete

    def delete(table: object, where: str) -> object:
        deletes.append(f"{table.name}: {where}")  # type: ignore[attr-defined]
        return real_delete(table, where)  # type: ignore[arg-type]

    monkeypatch.setattr(table_type, "delete", delete)
    made = service.remember("The wood kiln is loaded on Thursday evenings.", type="project")
    assert app.store.seal.holds(app.store.versions())
    assert not [d for d in deletes if made.path in d]

    # a crash between the chunk and file commits: the chunks stay, the file row is gone
    app.store._t.files.delete(f"path = '{made.path}'")
    app.store.refresh()
    assert not app.store.seal.holds(app.store.versions())
    assert app.indexing.index_now([made.path])
    assert any(made.path in d and d.startswith("chunks") for d in deletes)
    ids = app.store.chunk_hashes([made.path])
    rows = app.store._t.read(app.store._t.chunks, ["chunk_id"], f"path = '{made.path}'")
    assert rows.num_rows == len(ids) == 1


def test_a_new_memory_appends_its_file_row_and_a_changed_one_upserts_it(
    vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path the files table does not hold (the store's index of it read at the table's
    version says so) is appended, not merged into the table by a join; a path it holds is
    upserted. Either way one row per path."""
    from magma.store_tables import StoreTables

    app, _ = make_app(vault)
    app.sync()
    service = app.memories()
    merged: list[str] = []
    real_replace = StoreTables.replace

    def replace(table: object, key: str, group: str, data: object, groups: object) -> None:
        merged.extend(data.column("path").to_pylist() if key == "path" else [])  # type: ignore[attr-defined]
        real_replace(table, key, group, data, groups)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreTables, "replace", staticmethod(replace))
    made = service.remember("The raku kiln needs new fibre blanket before spring.",
                            type="project", subject="raku.kiln")
    assert made.path in app.store.file_index() and merged == []
    changed = service.remember("The raku kiln needs new fibre blanket before spring, and a "
                               "new thermocouple.", type="project", subject="raku.kiln")
    assert changed.path == made.path and changed.action == "updated"
    app.indexing.settle()  # (the index write follows the answer)
    assert made.path in merged
    paths = app.store._t.read(app.store._t.files, ["path"]).column("path").to_pylist()
    assert len(paths) == len(set(paths))


_KILLED_REMEMBER = """
import os, signal, sys
from fakes import TokenHashEmbedder
from daemon.app import App, load
from daemon.indexing import Indexing

def killed(self, paths, purge=False):  # the memory is written, its indexing not begun
    os.kill(os.getpid(), signal.SIGKILL)

Indexing.index_now = killed
app = App.create(load(None, None, {"vault.path": sys.argv[1]}), embedder=TokenHashEmbedder())
app.memories().remember(sys.argv[2], type="project")
"""


def test_a_remember_killed_before_its_indexing_said_again_indexes_its_memory(
    vault: Path, make_app: Builder
) -> None:
    """``dreamd remember`` killed (SIGKILL, a real process) after it wrote the memory file and
    before it indexed it; the user says it again: "already known", and the memory is in the
    index as it is on disk and found by a search, not only after the next sync."""
    import os
    import subprocess
    import sys

    app, _ = make_app(vault)
    app.sync()
    text = "The glaze kiln in the back room fires at cone six on Thursdays."
    support = Path(__file__).resolve().parents[1] / "support"
    repo = support.parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), str(support)])}
    killed = subprocess.run([sys.executable, "-c", _KILLED_REMEMBER, str(vault), text],
                            env=env, cwd=repo, capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr.decode(errors="replace")[-2000:]
    written = [p for p in (vault / "Memory").glob("*.md")
               if p.name != "MEMORY.md" and "cone six" in p.read_text("utf-8")]
    assert len(written) == 1
    path = f"Memory/{written[0].name}"

    again, _ = make_app(vault)  # a new process
    assert path not in again.store.file_index()
    said = again.memories().remember(text, type="project")
    assert (said.action, said.path) == ("duplicate", path)
    known = again.store.file_index()[path]
    stat = (vault / path).stat()
    assert (known.size, known.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    hits = again.search("glaze kiln back room cone six Thursdays", limit=3)
    assert hits and hits[0].path == path
    unchanged = again.store.versions()
    assert again.memories().remember(text, type="project").action == "duplicate"
    assert again.store.versions() == unchanged  # indexed already: nothing written again
