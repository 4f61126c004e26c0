"""The ``llm.judge`` role in a dream: the pairs the rules were unsure of, settled by an LLM.

The LLM is a fake: a loopback HTTP server speaking the OpenAI chat protocol, started and
stopped by the test (an LLM is external and not deterministic). Everything else is real: the
product's embedding model, a real store, real files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from daemon_harness import ChatEndpoint, write_memory

from ccb.parse import parse_note
from daemon.app import App, load
from daemon.pair_judge import JUDGEMENTS_FILE, parse_judgement


@dataclass
class FakeJudge:
    """The shared fake endpoint (:class:`daemon_harness.ChatEndpoint`) answering every
    question with ``reply`` (HTTP ``status`` when not 200), and the questions it was asked."""

    endpoint: ChatEndpoint
    questions: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.endpoint.url

    @property
    def reply(self) -> str:
        return self.endpoint.reply

    @reply.setter
    def reply(self, text: str) -> None:
        self.endpoint.reply = text

    @property
    def status(self) -> int:
        return self.endpoint.status

    @status.setter
    def status(self, code: int) -> None:
        self.endpoint.status = code


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    judge = FakeJudge(ChatEndpoint())
    judge.reply = '{"verdict": "same"}'

    def respond(request: dict[str, Any]) -> tuple[int, str]:
        judge.questions.append(request["messages"][-1]["content"])
        return judge.status, judge.reply

    judge.endpoint.respond = respond
    yield judge
    judge.endpoint.close()


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    return vault


def _app(vault: Path, url: str, **more: object) -> App:
    app = App.create(load(None, None, {
        "vault.path": str(vault), "llm.judge.enabled": True, "llm.judge.model": "judge",
        "llm.judge.base_url": url, "llm.judge.timeout_s": 5, "dream.transcripts": "",
        **more}))
    app.sync()
    return app


def _unsure_pair(vault: Path) -> tuple[str, str]:
    old = write_memory(vault, "obvious-comments", "Don't add comments explaining obvious code.",
                       type="feedback", days_old=10)
    # a pair the rules leave unsure (cosine 0.61, between the dream's neighbours from 0.55
    # and a paraphrase from 0.62); "Skip trivial comments — only comment code whose intent
    # isn't clear from reading it." was one until the rules read it as the same fact
    new = write_memory(vault, "unclear-intent", "Only comment code whose intent isn't clear "
                       "from reading it.", type="feedback", days_old=2)
    return old, new


def test_without_the_role_an_unsure_pair_stays_apart(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    old, new = _unsure_pair(vault)
    app = App.create(load(None, None, {"vault.path": str(vault), "dream.transcripts": ""}))
    app.sync()
    app.dreamer().dream(force=True)
    for path in (old, new):
        note = parse_note(path, (vault / path).read_bytes())
        assert "merged_into" not in note.properties and note.memory
        assert note.memory.valid_to is None


def test_a_judged_duplicate_is_merged_and_the_answer_is_kept(
        tmp_path: Path, fake_judge: FakeJudge) -> None:
    vault = _vault(tmp_path)
    old, new = _unsure_pair(vault)
    app = _app(vault, fake_judge.url)
    app.dreamer().dream(force=True)
    assert len(fake_judge.questions) == 1 and "obvious code" in fake_judge.questions[0]
    merged = parse_note(new, (vault / new).read_bytes())
    keeper = parse_note(old, (vault / old).read_bytes())
    assert merged.properties.get("merged_into")  # archived into the keeper, not deleted
    assert "comment code whose intent" in keeper.body and "obvious code" in keeper.body
    cache = json.loads((app.state_dir / JUDGEMENTS_FILE).read_text(encoding="utf-8"))
    assert list(cache.values()) == ["duplicate"]
    assert "comment" not in json.dumps(cache)  # hashes only, never the memories' text


def test_a_judged_change_supersedes_and_both_files_stay(
        tmp_path: Path, fake_judge: FakeJudge) -> None:
    vault = _vault(tmp_path)
    old, new = _unsure_pair(vault)
    fake_judge.reply = 'Sure! ```json\n{"verdict": "changed"}\n```'
    _app(vault, fake_judge.url).dreamer().dream(force=True)
    old_note = parse_note(old, (vault / old).read_bytes())
    new_note = parse_note(new, (vault / new).read_bytes())
    assert old_note.memory and old_note.memory.valid_to is not None
    assert new_note.memory and new_note.memory.supersedes == ("obvious-comments",)


@pytest.mark.parametrize(("reply", "status"), [("I think they are the same.", 200),
                                               ('{"verdict": "maybe"}', 200), ("", 429),
                                               ("", 500)])
def test_no_answer_leaves_the_pair_and_asks_again_next_time(
        tmp_path: Path, fake_judge: FakeJudge, reply: str, status: int) -> None:
    vault = _vault(tmp_path)
    old, new = _unsure_pair(vault)
    fake_judge.reply, fake_judge.status = reply, status
    app = _app(vault, fake_judge.url)
    before = {p: parse_note(p, (vault / p).read_bytes()) for p in (old, new)}
    app.dreamer().dream(force=True)
    after = {p: parse_note(p, (vault / p).read_bytes()) for p in (old, new)}
    # unanswered, the pair stays as the rules left it: both kept as they were, each naming
    # the other as a possible duplicate (issue 16: an uncertain pair is linked and listed)
    for path, other in ((old, new), (new, old)):
        assert after[path].body == before[path].body
        assert after[path].memory and after[path].memory.valid_to is None
        assert after[path].properties.get("possible_duplicate") == [
            f"[[{Path(other).stem}]]"], after[path].properties
    assert not (app.state_dir / JUDGEMENTS_FILE).exists()
    (vault / new).write_bytes((vault / new).read_bytes() + b"\n")  # a change: dream again
    app.sync()
    app.dreamer().dream(force=True)
    assert len(fake_judge.questions) == 2


def test_the_questions_per_dream_are_bounded(tmp_path: Path, fake_judge: FakeJudge) -> None:
    vault = _vault(tmp_path)
    _unsure_pair(vault)
    write_memory(vault, "short-answers", "Wants short answers, bullet points over prose.",
                 type="user", days_old=9)
    write_memory(vault, "concise-replies", "Prefers concise replies; lists rather than "
                 "long paragraphs.", type="user", days_old=1)
    fake_judge.reply = '{"verdict": "different"}'
    _app(vault, fake_judge.url, **{"llm.judge.max_pairs": 1}).dreamer().dream(force=True)
    assert len(fake_judge.questions) == 1


def test_parse_judgement() -> None:
    assert parse_judgement('{"verdict": "same"}') == "duplicate"
    assert parse_judgement('noise {"x": 1} then {"verdict": " Changed "}') == "contradiction"
    assert parse_judgement('{"verdict": "different"}') == "distinct"
    assert parse_judgement("same") is None
    assert parse_judgement('{"verdict": ["same"]}') is None


def test_the_dream_supersedes_without_a_subject_until_the_new_fact_began(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    old = write_memory(vault, "timeout-30", "The billing API request timeout is 30 s.",
                       type="project", days_old=20)
    new = write_memory(vault, "timeout-60", "The billing API request timeout is now 60 s.",
                       type="project", days_old=5)
    app = App.create(load(None, None, {"vault.path": str(vault), "dream.transcripts": ""}))
    app.sync()
    app.dreamer().dream(force=True)
    old_note = parse_note(old, (vault / old).read_bytes())
    new_note = parse_note(new, (vault / new).read_bytes())
    assert old_note.memory and new_note.memory
    assert new_note.memory.supersedes == ("timeout-30",)
    assert str(old_note.memory.valid_to) == str(new_note.memory.valid_from)  # not the dream's day
