"""The distilled profile: the dream's ``llm.profile`` role against an LLM endpoint.

The endpoint is a FAKE: the loopback OpenAI-chat server of daemon_harness, answering with
canned replies (an LLM is external and non-deterministic). Everything else is real: files, the
store, the writer, the dream.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint, snapshot, write_memory

from ccb.parse import parse_note
from daemon.app import App
from daemon.context import build_context
from daemon.dream_profile import PROFILE_STATE_FILE

Builder = Callable[..., tuple[App, object]]
PROFILE = "Memory/profile.md"


@dataclass
class ProfileModel:
    """Answers a profile question with ``sentences`` (text, names of the memories cited),
    numbered as the question numbered them; ``status`` other than 200 answers that status."""

    sentences: list[tuple[str, list[str]]] = field(default_factory=list)
    status: int = 200
    reply: str | None = None
    delay_s: float = 0.0
    questions: list[str] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def model() -> Iterator[ProfileModel]:
    state = ProfileModel()

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        prompt = str(body["messages"][-1]["content"])
        state.questions.append(prompt)
        time.sleep(state.delay_s)
        if state.status != 200:
            return state.status, ""
        if state.reply is not None:
            return 200, state.reply
        numbers = {name: int(n) for n, name in re.findall(r"^### (\d+) \((.+)\)$", prompt,
                                                         re.MULTILINE)}
        return 200, json.dumps({"sentences": [
            {"text": text, "sources": [numbers[name] for name in names]}
            for text, names in state.sentences]})

    endpoint = ChatEndpoint()  # the shared FAKE endpoint of daemon_harness
    endpoint.respond = respond
    state.url = endpoint.url
    yield state
    endpoint.close()


@pytest.fixture
def habits(vault: Path) -> dict[str, str]:
    """Three user memories besides the vault's own (prefers-metric-units)."""
    return {
        "late": write_memory(vault, "works-late", "The user works late, usually until 23:00.",
                             subject="habits.hours", days_old=9),
        "go": write_memory(vault, "prefers-go", "The user prefers Go for new services.",
                           subject="languages", days_old=8),
        "dark": write_memory(vault, "dark-themes", "The user likes dark themes in every "
                             "editor.", subject="editor.theme", days_old=7),
    }


GOOD = [("Works late, usually until 23:00.", ["works late"]),
        ("Prefers Go and dark themes.", ["prefers go", "dark themes"])]


def profile_app(vault: Path, make_app: Builder, url: str, **more: object) -> App:
    app, _ = make_app(vault, **{"llm.profile.enabled": True, "llm.profile.model": "profile-test",
                                "llm.profile.base_url": url, "llm.profile.timeout_s": 2,
                                **more})
    app.sync()
    return app


def diary(vault: Path) -> str:
    return (vault / "Memory/DREAMS.md").read_text(encoding="utf-8")


def test_the_profile_is_distilled_once_and_again_only_when_its_sources_change(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str],
) -> None:
    # another owner's memory stays theirs: the profile, shared, is never made from it
    write_memory(vault, "alice-diet", "Alice is vegetarian.", days_old=3,
                 owner="alice/claude-code")
    model.sentences = GOOD
    app = profile_app(vault, make_app, model.url)
    report = app.dreamer().dream()
    assert len(model.questions) == 1  # one question per dream
    assert "vegetarian" not in model.questions[0]
    assert "works late" in model.questions[0] and "Prefers metric units" in model.questions[0]
    assert PROFILE in report.written
    note = parse_note(PROFILE, (vault / PROFILE).read_bytes())
    assert note.memory is not None
    assert (note.memory.type, note.memory.pinned, note.memory.source) == ("user", True, "dream")
    # each sentence names the memories it comes from
    assert note.body.splitlines() == [
        "- Works late, usually until 23:00. ([[works-late]])",
        "- Prefers Go and dark themes. ([[prefers-go]], [[dark-themes]])"]
    assert "Distilled the profile [[profile]] from 4 user memories" in diary(vault)
    # pinned: in every context from now on
    assert "Prefers Go and dark themes." in build_context(app, "", count_recall=False).text
    # nothing changed: not asked again, the file stays as it is
    before = (vault / PROFILE).read_bytes()
    app.dreamer().dream()
    assert len(model.questions) == 1 and (vault / PROFILE).read_bytes() == before
    # a source changed but the profile says the same: asked, and the file stays as it is
    write_memory(vault, "dark-themes", "The user likes dark themes in every editor and "
                 "terminal.", subject="editor.theme", days_old=7)
    app.sync()
    app.dreamer().dream()
    assert len(model.questions) == 2 and (vault / PROFILE).read_bytes() == before
    # a source changed: asked once more, the profile follows
    write_memory(vault, "works-late", "The user works late, usually until 01:00.",
                 subject="habits.hours", days_old=9)
    model.sentences = [("Works late, usually until 01:00.", ["works late"])]
    app.sync()
    app.dreamer().dream()
    assert len(model.questions) == 3
    again = parse_note(PROFILE, (vault / PROFILE).read_bytes())
    assert again.memory is not None and again.memory.id == note.memory.id
    assert again.memory.version == 2
    assert again.body == "- Works late, usually until 01:00. ([[works-late]])\n"
    assert "Distilled the profile [[profile]] from 4 user memories (its sources changed)" \
        in diary(vault)


def test_a_profile_edited_by_hand_is_never_overwritten(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str],
) -> None:
    model.sentences = GOOD
    app = profile_app(vault, make_app, model.url)
    app.dreamer().dream()
    edited = (vault / PROFILE).read_bytes().replace(b"Works late", b"Works late (not on Fridays)")
    (vault / PROFILE).write_bytes(edited)
    write_memory(vault, "tea", "The user drinks green tea, never coffee.", subject="drinks",
                 days_old=2)
    model.sentences = [*GOOD, ("Drinks green tea, never coffee.", ["tea"])]
    app.sync()
    report = app.dreamer().dream()
    assert (vault / PROFILE).read_bytes() == edited  # the user's words stay
    copies = sorted((vault / "Memory").glob("profile.conflict-*.md"))
    assert len(copies) == 1 and b"Drinks green tea" in copies[0].read_bytes()
    copy = copies[0].relative_to(vault).as_posix()
    assert copy in report.written
    assert (f"The profile [[profile]] was edited by hand: the new draft is beside it as "
            f"[[{Path(copy).stem}]]") in diary(vault)
    app.dreamer().dream()  # the same sources: no second copy, no second question
    assert len(sorted((vault / "Memory").glob("profile.conflict-*.md"))) == 1
    assert len(model.questions) == 2


@pytest.mark.parametrize(("sentences", "why"), [
    ([("Works late, usually until 02:00.", ["works late"])], "`02:00`"),
    ([("Prefers Rust.", ["prefers go"])], "`Rust`"),
])
def test_a_draft_that_says_what_its_sources_do_not_is_rejected(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str],
    sentences: list[tuple[str, list[str]]], why: str,
) -> None:
    model.sentences = sentences
    app = profile_app(vault, make_app, model.url)
    app.dreamer().dream()
    assert not (vault / PROFILE).exists()
    assert "Rejected a profile draft:" in diary(vault) and why in diary(vault)


@pytest.mark.parametrize("reply", ["no json here", '{"sentences": [{"text": "Works late."}]}',
                                   '{"sentences": [{"text": "Works late.", "sources": [99]}]}'])
def test_an_unreadable_draft_is_rejected(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str], reply: str,
) -> None:
    model.reply = reply
    app = profile_app(vault, make_app, model.url)
    app.dreamer().dream()
    assert not (vault / PROFILE).exists()
    assert "Rejected a profile draft:" in diary(vault)


@pytest.mark.parametrize("failure", ["down", "500", "slow"])
def test_a_failing_endpoint_leaves_every_file_as_it_was(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str], failure: str,
) -> None:
    model.sentences = GOOD
    app = profile_app(vault, make_app, model.url)
    app.dreamer().dream()
    tea = "The user drinks green tea with every meal at home and at work"  # > 60: see below
    write_memory(vault, "tea", tea + ".", subject="drinks", days_old=2)
    app.sync()
    app.dreamer().dream()  # a dream without the role would change nothing more now
    before = snapshot(vault)
    state_before = (app.state_dir / PROFILE_STATE_FILE).read_bytes()
    # (the description, and so MEMORY.md, keep the first 60 characters: unchanged)
    write_memory(vault, "tea", tea + ", never coffee.", subject="drinks", days_old=2)
    before["Memory/tea.md"] = (vault / "Memory/tea.md").read_bytes()
    app.sync()
    url = "http://127.0.0.1:9/v1" if failure == "down" else model.url
    model.status = 500 if failure == "500" else 200
    failing = profile_app(vault, make_app, url, **({"llm.profile.timeout_s": 0.5}
                                                   if failure == "slow" else {}))
    model.delay_s = 1.5 if failure == "slow" else 0.0
    asked = len(model.questions)
    failing.dreamer().dream()
    assert len(model.questions) - asked <= 1  # at most one question per dream
    after = snapshot(vault)
    assert {p: d for p, d in after.items() if p != "Memory/DREAMS.md"} == \
        {p: d for p, d in before.items() if p != "Memory/DREAMS.md"}
    assert (app.state_dir / PROFILE_STATE_FILE).read_bytes() == state_before
    assert "Did not distil the profile: llm:" in diary(vault)
    # the endpoint back: the next dream distils what it could not
    model.status, model.delay_s = 200, 0.0
    model.sentences = [*GOOD, ("Drinks green tea, never coffee.", ["tea"])]
    app.dreamer().dream()
    assert b"Drinks green tea, never coffee." in (vault / PROFILE).read_bytes()


def test_without_the_role_there_is_no_profile(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str],
) -> None:
    app, _ = make_app(vault)
    app.sync()
    app.dreamer().dream()
    assert not (vault / PROFILE).exists() and not model.questions
    assert not (app.state_dir / PROFILE_STATE_FILE).exists()


def test_the_profile_is_never_taken_for_a_fact(
    vault: Path, make_app: Builder, model: ProfileModel, habits: dict[str, str],
) -> None:
    """remember and the dream's consolidation never compare a memory with the profile: a
    fact said in the same words as the profile is kept (here merged into the memory it
    repeats), not dropped as the profile's duplicate."""
    model.sentences = GOOD
    app = profile_app(vault, make_app, model.url)
    app.dreamer().dream()
    body = parse_note(PROFILE, (vault / PROFILE).read_bytes()).body
    result = app.memories().remember(body.strip(), type="user", name="same words")
    assert result.action != "duplicate" and result.path != PROFILE
    write_memory(vault, "twin", body.strip(), days_old=1)
    app.sync()
    app.dreamer().dream()
    archived = [line for line in diary(vault).splitlines() if "[[twin]]" in line]
    assert archived and not any("[[profile]]" in line for line in archived)
    assert b"status: archived" not in (vault / PROFILE).read_bytes()



def test_the_readme_profile_config_is_valid(tmp_path: Path) -> None:
    from config import load_settings

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (snippet,) = [s for s in re.findall(r"```toml\n(.+?)\n```", readme, flags=re.S)
                  if "[default.llm.profile]" in s]
    (tmp_path / "config.toml").write_text(snippet, encoding="utf-8")
    role = load_settings(config_path=tmp_path / "config.toml", environ={}).settings.llm.profile
    assert role.enabled and role.model
