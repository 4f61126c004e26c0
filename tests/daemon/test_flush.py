"""``dreamd flush --hook`` as Claude Code runs it before a compaction or at a session's end: a
real subprocess, a real transcript file, the vault's real daily note. It never fails the
session (exit 0, at most one line on stderr), and a second run adds nothing new."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock
import pytest

from daemon.app import App, load

REPO = Path(__file__).resolve().parents[2]
SESSION = "3f2a1c9b-7d4e-4a51-9c1e-5b2f0c8d9e10"


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "sessionId": SESSION, "uuid": f"u{time.monotonic_ns()}",
            "message": {"role": "user", "content": content}, **extra}


def _assistant(text: str) -> dict[str, Any]:
    return {"type": "assistant", "sessionId": SESSION,
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


ENGLISH = [
    _user("Let's look at the flaky test. From now on, tests must use a real database, never "
          "mocks. Why did it pass yesterday?"),
    _assistant("You must always run the migrations first. I decided to rerun them."),
    _user([{"type": "tool_result", "tool_use_id": "t1", "content": "never do this"}]),
    _user("<command-name>/compact</command-name>Always answer in French.", isMeta=True),
    _user("Summary: the user prefers tabs.", isCompactSummary=True),
    _user([{"type": "text", "text": "I prefer small commits over big ones. Thanks!"}]),
]
CHINESE = [
    _user("我更喜欢用 pnpm。以后提交信息都用中文写。这个能用吗？"),
    _assistant("好的，我们决定用 pnpm。"),
    _user("我们决定用 PostgreSQL，不用 MySQL。今天好累啊。"),
]


def _write_transcript(path: Path, entries: list[dict[str, Any]], *, tail: str = "") -> None:
    with path.open("a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
        handle.write(tail)


def _flush(vault: Path, stdin: str | bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "daemon", "--set", "time.zone=UTC", "flush", *args,
         "--vault", str(vault)],
        input=data, capture_output=True, timeout=120, cwd=REPO, env=os.environ.copy(),
        check=False)


def _event(transcript: Path, name: str = "PreCompact") -> str:
    return json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                       "hook_event_name": name, "cwd": str(transcript.parent),
                       "trigger": "auto"})


def _today_note(vault: Path) -> Path:
    return vault / "Daily" / f"{datetime.now(UTC).date().isoformat()}.md"


@pytest.mark.parametrize("stdin", [b"", b"garbage", b"[1, 2]", b'{"session_id": "x"}',
                                   b"\xff\xfe not utf-8", b"{" * 100_000])
def test_garbage_on_stdin_exits_0_with_one_line(vault: Path, stdin: bytes) -> None:
    done = _flush(vault, stdin, "--hook")
    assert done.returncode == 0
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.startswith("dreamd flush: ") and err.count("\n") == 1, err
    assert not _today_note(vault).exists()


def test_a_missing_transcript_and_a_bad_option_exit_0(vault: Path, tmp_path: Path) -> None:
    missing = _flush(vault, _event(tmp_path / "gone.jsonl"), "--hook")
    assert missing.returncode == 0
    assert missing.stderr.decode().count("\n") == 1
    assert "cannot read the transcript" in missing.stderr.decode()
    odd = _flush(vault, _event(tmp_path / "gone.jsonl"), "--hook", "--bogus")
    assert odd.returncode == 0 and odd.stderr.decode().count("\n") == 1


def test_the_users_rules_preferences_and_decisions_reach_todays_note_once(
        vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    # the session's last line is still being written: it waits for the next flush
    _write_transcript(transcript, ENGLISH, tail='{"type": "user", "message": {"role": "us')
    first = _flush(vault, _event(transcript), "--hook")
    assert (first.returncode, first.stdout, first.stderr) == (0, b"", b"")
    note = _today_note(vault)
    lines = note.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "## Sessions"
    assert [line[8:] for line in lines[1:]] == [
        "From now on, tests must use a real database, never mocks. (source: session 3f2a1c9b)",
        "I prefer small commits over big ones. (source: session 3f2a1c9b)",
    ]
    assert all(line[2:7].replace(":", "").isdigit() for line in lines[1:])
    before = note.read_bytes()
    again = _flush(vault, _event(transcript, "SessionEnd"), "--hook")
    assert (again.returncode, again.stderr) == (0, b"")
    assert note.read_bytes() == before  # idempotent: nothing new in the transcript

    # the session goes on, in Chinese; the user edits the note meanwhile
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('er", "content": "Never deploy on Fridays."}}\n')
    _write_transcript(transcript, CHINESE)
    edited = before.replace(b"## Sessions\n", b"## Sessions\nwritten by hand\n") + \
        b"\n## Later\nmine\n"
    note.write_bytes(edited)
    third = _flush(vault, _event(transcript), "--json")
    assert third.returncode == 0, third.stderr
    report = json.loads(third.stdout)
    assert report["appended"] == 4 and report["withheld"] == 0
    text = note.read_text(encoding="utf-8")
    assert text.startswith(edited.decode().split("\n## Later")[0])
    assert text.endswith("\n## Later\nmine\n")
    added = text.split("mocks. (source: session 3f2a1c9b)\n", 1)[1].splitlines()
    assert [line[8:] for line in added[1:5]] == [
        "Never deploy on Fridays. (source: session 3f2a1c9b)",
        "我更喜欢用 pnpm。 (source: session 3f2a1c9b)",
        "以后提交信息都用中文写。 (source: session 3f2a1c9b)",
        "我们决定用 PostgreSQL，不用 MySQL。 (source: session 3f2a1c9b)",
    ]
    fourth = _flush(vault, _event(transcript), "--json")
    assert json.loads(fourth.stdout)["appended"] == 0
    assert note.read_text(encoding="utf-8") == text


def test_a_sentence_with_a_credential_is_left_out(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _write_transcript(transcript, [_user(
        "From now on, always use the key sk-proj-Abc123XyZ987qweRTY456uioPLK for staging. "
        "Never push to main.")])
    done = _flush(vault, _event(transcript), "--json")
    report = json.loads(done.stdout)
    assert (report["appended"], report["withheld"]) == (1, 1)
    text = _today_note(vault).read_text(encoding="utf-8")
    assert "Never push to main." in text and "Abc123XyZ987" not in text


def test_a_control_character_inside_a_credential_hides_it_from_no_one(
        vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _write_transcript(transcript, [_user(
        "From now on, always deploy with ghp_1234567890abcdefghij\u0001klmnopqrstuvwxyzAB "
        "for staging. Never push to main.")])
    done = _flush(vault, _event(transcript), "--json")
    report = json.loads(done.stdout)
    assert (report["appended"], report["withheld"]) == (1, 1)
    text = _today_note(vault).read_text(encoding="utf-8")
    assert "Never push to main." in text and "1234567890abcdefghij" not in text


def test_a_busy_writer_is_waited_for_a_bounded_time(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _write_transcript(transcript, [_user("Never push to main.")])
    state_dir = App.create(load(None, None, {"vault.path": str(vault)})).state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(state_dir / "writer.lock"):  # another dreamd process writing
        started = time.monotonic()
        done = _flush(vault, _event(transcript), "--hook", "--timeout", "1.5")
        took = time.monotonic() - started
    assert done.returncode == 0
    err = done.stderr.decode()
    assert err.count("\n") == 1 and "not done within 1.5 s" in err
    assert took < 15, took  # the interpreter's start, the settings, and 1.5 s
    assert not _today_note(vault).exists()
    # the cursor did not move: the next flush, with the writer free, adds the line (its own
    # deadline generous: on a loaded machine the interpreter's start alone nears the default)
    assert _flush(vault, _event(transcript), "--hook", "--timeout", "90").returncode == 0
    assert "Never push to main." in _today_note(vault).read_text(encoding="utf-8")


def test_the_readme_flush_recipe(vault: Path, tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.+?)\n```", readme, re.DOTALL)
              if '"PreCompact"' in b]
    assert len(blocks) == 1, "the README's flush recipe"
    hooks = blocks[0]["hooks"]
    assert set(hooks) == {"PreCompact", "SessionEnd"}
    transcript = tmp_path / f"{SESSION}.jsonl"
    _write_transcript(transcript, CHINESE)
    for name, entries in hooks.items():
        command = entries[0]["hooks"][0]["command"]
        line = command.replace("/path/to/dreamd/.venv/bin/dreamd",
                               f"{sys.executable} -m daemon --set time.zone=UTC").replace(
            "~/Notes", str(vault))
        done = subprocess.run(["bash", "-c", line], input=_event(transcript, name), text=True,
                              capture_output=True, timeout=120, cwd=REPO, check=False,
                              env=os.environ.copy())
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    text = _today_note(vault).read_text(encoding="utf-8")
    assert text.count("(source: session 3f2a1c9b)") == 3


def test_a_line_the_user_removed_does_not_come_back_and_a_lost_cursor_adds_nothing_twice(
        vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    _write_transcript(transcript, CHINESE)
    assert _flush(vault, _event(transcript), "--hook").returncode == 0
    note = _today_note(vault)
    kept = [line for line in note.read_text(encoding="utf-8").splitlines(keepends=True)
            if "pnpm" not in line]
    note.write_text("".join(kept), encoding="utf-8")  # the user deletes a line
    assert _flush(vault, _event(transcript), "--hook").returncode == 0
    assert note.read_text(encoding="utf-8") == "".join(kept)  # the cursor: not read again
    # a flush killed after its note was written and before its cursor was: run again, the
    # sentences the note holds are not added twice (the one the user removed comes back)
    state_dir = App.create(load(None, None, {"vault.path": str(vault)})).state_dir
    shutil.rmtree(state_dir / "flush-cursors")
    assert _flush(vault, _event(transcript), "--hook").returncode == 0
    text = note.read_text(encoding="utf-8")
    assert text.count("以后提交信息都用中文写。") == 1 and text.count("pnpm") == 1


def test_a_line_longer_than_one_read_does_not_stop_the_session_for_good(
        vault: Path, tmp_path: Path) -> None:
    from daemon.flush import MAX_READ_BYTES

    transcript = tmp_path / f"{SESSION}.jsonl"
    # a pasted dump longer than one read, then a rule: the rule reaches the note
    _write_transcript(transcript, [_user("x" * (MAX_READ_BYTES + 10)),
                                   _user("Never deploy on Fridays.")])
    first = _flush(vault, _event(transcript), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["appended"] == 1
    assert json.loads(first.stdout)["offset"] == transcript.stat().st_size
    assert "Never deploy on Fridays." in _today_note(vault).read_text(encoding="utf-8")


def test_a_hand_written_line_that_contains_a_statement_does_not_hide_it(
        vault: Path, tmp_path: Path) -> None:
    """A flush leaves out a statement the note already holds as an entry, whole; a line the
    user wrote that only contains it ("… for the docs site only? not sure") is another line.
    A semicolon joins two clauses of one statement: the instruction after it is kept."""
    note = _today_note(vault)
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("## Notes\n- 08:00 Always use pnpm for the docs site only? not sure\n",
                    encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    _write_transcript(transcript, [_user(
        "Always use pnpm. Never push directly to main; open a PR instead.")])
    done = _flush(vault, _event(transcript), "--json")
    assert json.loads(done.stdout)["appended"] == 2, done
    text = note.read_text(encoding="utf-8")
    assert re.search(r"^- \d\d:\d\d Always use pnpm\. \(source", text, re.M), text
    assert "Never push directly to main; open a PR instead." in text
# --------------------------------------------------------------------------- the Extractor
# The endpoint is a FAKE: a loopback HTTP server speaking the OpenAI chat-completions
# protocol with canned replies (an LLM is external and non-deterministic); the flush, the
# transcript and the note are real.

def _with_extractor(endpoint: Any, *args: str) -> list[str]:
    return ["--set", "llm.enabled=true", "--set", "llm.model=test-model",
            "--set", f"llm.base_url={endpoint.url}", *args]


def _flush_with(vault: Path, stdin: str, sets: list[str], *args: str
                ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", "--set", "time.zone=UTC", *sets, "flush", *args,
         "--vault", str(vault)],
        input=stdin.encode(), capture_output=True, timeout=120, cwd=REPO,
        env=os.environ.copy(), check=False)


def _facts(*bodies: str) -> str:
    return json.dumps({"facts": [{"type": "feedback", "name": b[:20], "description": b,
                                  "body": b, "subject": "x.y"} for b in bodies]})


@pytest.fixture
def chat() -> Any:
    from daemon_harness import ChatEndpoint

    endpoint = ChatEndpoint()
    endpoint.requests = []

    def respond(request: dict[str, Any]) -> tuple[int, str]:
        endpoint.requests.append(request)
        return endpoint.status, endpoint.reply

    endpoint.respond = respond
    yield endpoint
    endpoint.close()


def test_the_extractor_chooses_the_statements_when_configured(
        vault: Path, tmp_path: Path, chat: Any) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    _write_transcript(transcript, ENGLISH)
    chat.reply = _facts("Staging deploys wait for the nightly backup to finish.",
                        "Use the key sk-proj-Abc123XyZ987qweRTY456uioPLK for staging.")
    done = _flush_with(vault, _event(transcript), _with_extractor(chat), "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    report = json.loads(done.stdout)
    assert (report["by"], report["fallback"]) == ("extractor", None)
    assert (report["found"], report["withheld"], report["appended"]) == (2, 1, 1)
    assert chat.calls == 1  # one call per flush
    asked = chat_request_text(chat)
    assert "user: Let's look at the flaky test." in asked
    assert "assistant: You must always run the migrations first." in asked
    assert "Summary: the user prefers tabs." not in asked  # a compaction summary is not read
    text = _today_note(vault).read_text(encoding="utf-8")
    assert "Staging deploys wait for the nightly backup to finish. (source: session " \
        "3f2a1c9b)" in text
    assert "Abc123XyZ987" not in text  # a credential is withheld
    assert "tests must use a real database" not in text  # the rules did not choose
    # idempotent per transcript position: nothing new past the cursor, no call
    again = _flush_with(vault, _event(transcript), _with_extractor(chat), "--json")
    assert json.loads(again.stdout)["appended"] == 0 and chat.calls == 1
    assert _today_note(vault).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("failure", ["http 500", "not json", "slow"])
def test_a_failing_extractor_falls_back_to_the_rules_in_one_stderr_line(
        vault: Path, tmp_path: Path, chat: Any, failure: str) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    _write_transcript(transcript, ENGLISH)
    if failure == "http 500":
        chat.status = 500
    elif failure == "not json":
        chat.reply = "I found nothing worth keeping."
    else:
        chat.delay_s, chat.reply = 12.0, _facts("never noted")
    # the Extractor has half of the 20 s (10 s); a loaded machine has time to start too
    done = _flush_with(vault, _event(transcript), _with_extractor(chat), "--hook",
                       "--timeout", "20")
    assert (done.returncode, done.stdout) == (0, b"")
    err = done.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("dreamd flush: the Extractor failed"), err
    assert "the rules chose the statements" in err
    text = _today_note(vault).read_text(encoding="utf-8")
    assert "From now on, tests must use a real database, never mocks." in text
    assert "I prefer small commits over big ones." in text
    # slow: the call had half the hook's time and was given up (its answer, 12 s late, would
    # have put "never noted" in the note); how long it took is no pass/fail figure here
    assert "never noted" not in text


def chat_request_text(chat: Any) -> str:
    """The last request's user message (the session text the Extractor read)."""
    return str(chat.requests[-1]["messages"][-1]["content"])


def test_a_session_longer_than_the_extractor_reads_leaves_its_start_to_the_rules() -> None:
    from daemon.flush import session_text

    chunk = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in [*ENGLISH, *CHINESE])
    data = chunk.encode("utf-8")
    whole, first = session_text(data)
    assert first == 1 and whole.startswith("user: Let's look")
    assert whole.endswith("不用 MySQL。今天好累啊。")
    assert "tool_result" not in whole and "Always answer in French" not in whole
    tail, first = session_text(data, max_chars=80)
    # the last turns that fit; the rules take the user's statements of the lines before
    assert tail == ("assistant: 好的，我们决定用 pnpm。\n\n"
                    "user: 我们决定用 PostgreSQL，不用 MySQL。今天好累啊。")
    assert first == 8
