"""The diary as the user and the assistant write it: ``dreamd note``, MCP ``memory_note``, the
daemon's serving of ``note``; today in the user's time zone; a user's edit kept byte for byte.
Real vault files and the real writer; the fake embedder only builds the App (nothing here is
about meaning)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer
from mcp import Client

from ccb.owner import Owner
from config.errors import EmptyMemoryError, SecretRefusedError
from daemon import client
from daemon.app import App, diary_of
from daemon.cli import app as cli_app
from daemon.cli import serve_command
from daemon.mcp_server import build_server

REPO = Path(__file__).resolve().parents[2]
Builder = Callable[..., tuple[App, object]]
#: 14:59 and 15:01 UTC on 1 December 2026: 23:59 on the 1st and 00:01 on the 2nd in Tokyo.
BEFORE_MIDNIGHT_TOKYO = datetime(2026, 12, 1, 14, 59, tzinfo=UTC)
AFTER_MIDNIGHT_TOKYO = datetime(2026, 12, 1, 15, 1, tzinfo=UTC)


def _fixed(app: App, instant: datetime) -> Callable[[], datetime]:
    return lambda: instant.astimezone(app.zone)


def test_each_line_goes_to_the_users_day_at_midnight_in_tokyo(
        vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"time.zone": "Asia/Tokyo"})
    first = diary_of(app, clock=_fixed(app, BEFORE_MIDNIGHT_TOKYO)).note(
        "Chose LanceDB over SQLite: vector search without a server.")
    second = diary_of(app, clock=_fixed(app, AFTER_MIDNIGHT_TOKYO)).note(
        "The nightly backup failed: the disk was full.", section="Incidents")
    assert (first.path, first.day.isoformat(), first.created) == \
        ("Daily/2026-12-01.md", "2026-12-01", True)
    assert second.path == "Daily/2026-12-02.md"
    assert (vault / first.path).read_text(encoding="utf-8") == (
        "## Notes\n- 23:59 Chose LanceDB over SQLite: vector search without a server.\n")
    assert (vault / second.path).read_text(encoding="utf-8") == (
        "## Incidents\n- 00:01 The nightly backup failed: the disk was full.\n")
    utc, _ = make_app(vault, **{"time.zone": "UTC"})
    assert diary_of(utc, clock=_fixed(utc, AFTER_MIDNIGHT_TOKYO)).today_path() == \
        "Daily/2026-12-01.md"


def test_without_time_zone_the_day_is_the_systems_tz(
        vault: Path, make_app: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    app, _ = make_app(vault)
    assert str(app.zone) == "Asia/Tokyo"
    late = diary_of(app, clock=_fixed(app, BEFORE_MIDNIGHT_TOKYO)).note("late")
    early = diary_of(app, clock=_fixed(app, AFTER_MIDNIGHT_TOKYO)).note("early")
    assert (late.path, early.path) == ("Daily/2026-12-01.md", "Daily/2026-12-02.md")
    assert (vault / early.path).read_text(encoding="utf-8").endswith("- 00:01 early\n")


def test_a_users_edit_between_two_lines_is_kept_byte_for_byte(
        vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"time.zone": "UTC"})
    diary = diary_of(app, clock=_fixed(app, BEFORE_MIDNIGHT_TOKYO))
    existing = (vault / "Daily" / "2026-12-01.md")
    existing.write_bytes(b"---\ntags: [daily]\n---\r\n# Tuesday\r\n\r\n## Notes\r\n- kiln\r\n")
    diary.note("first line")
    # the user, in Obsidian: retitles, adds a line of their own, writes below the section
    edited = existing.read_bytes().replace(b"# Tuesday", b"# Tuesday, rainy") \
        + b"\r\n## Later\r\nwritten by hand  \r\n"
    edited = edited.replace(b"- kiln\r\n", b"- kiln (fired twice)\r\n")
    existing.write_bytes(edited)
    result = diary.note("second line")
    after = existing.read_bytes()
    # the new line right after the first one (the section's last line): every other byte
    # is the user's, as they left it
    head = edited[:edited.index(b"- 14:59 first line\r\n") + len(b"- 14:59 first line\r\n")]
    assert after == head + b"- 14:59 second line\r\n" + edited[len(head):]
    assert after.splitlines()[result.lines[0] - 1] == b"- 14:59 second line"


def test_a_new_note_starts_from_the_daily_notes_template(
        vault: Path, make_app: Builder) -> None:
    (vault / ".obsidian" / "daily-notes.json").write_text(json.dumps(
        {"folder": "Journal", "format": "YYYY/MM/YYYY-MM-DD", "template": "Templates/Day"}))
    (vault / "Templates").mkdir()
    (vault / "Templates" / "Day.md").write_text(
        "---\ntags: [daily]\n---\n# {{date:dddd D MMMM}}\n\n## Notes\n\n## Tasks\n- [ ] \n",
        encoding="utf-8")
    app, _ = make_app(vault, **{"time.zone": "Asia/Tokyo"})
    result = diary_of(app, clock=_fixed(app, AFTER_MIDNIGHT_TOKYO)).note("我更喜欢用 pnpm。")
    assert result.path == "Journal/2026/12/2026-12-02.md" and result.created
    assert (vault / result.path).read_text(encoding="utf-8") == (
        "---\ntags: [daily]\n---\n# Wednesday 2 December\n\n## Notes\n- 00:01 我更喜欢用 pnpm。\n"
        "\n## Tasks\n- [ ] \n")


def test_credentials_and_empty_lines_are_refused_and_nothing_is_written(
        vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault, **{"time.zone": "UTC"})
    diary = diary_of(app, clock=_fixed(app, BEFORE_MIDNIGHT_TOKYO))
    with pytest.raises(SecretRefusedError, match=r"refuse note Daily/2026-12-01\.md"):
        diary.note("the deploy key is AKIA" + "QWERTYUIOPASDFGH")
    with pytest.raises(EmptyMemoryError):
        diary.note(" \n ")
    assert not (vault / "Daily" / "2026-12-01.md").exists()


def _tool_calls(app: App, calls: list[tuple[str, dict[str, Any]]],
                owner: Owner | None = None) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(app, owner)) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            return [tools, *[await session.call_tool(name, arguments)
                              for name, arguments in calls]]

    return anyio.run(run)


def test_an_assistant_notes_a_line_with_memory_note(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    tools, noted, secret, blank = _tool_calls(app, [
        ("memory_note", {"text": "Unfinished: the import stops at page 40 of the PDF.",
                         "section": "Open work"}),
        ("memory_note", {"text": "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}),
        ("memory_note", {"text": "🎉"}),
    ])
    description = tools["memory_note"].description
    assert "decision" in description and "unfinished work" in description
    assert "cause of an incident" in description and "chit-chat" in description
    result = noted.structured_content.get("result", noted.structured_content)
    text = (vault / result["path"]).read_text(encoding="utf-8")
    assert text.startswith("## Open work\n- ") and "page 40 of the PDF.\n" in text
    assert secret.is_error and "credential" in secret.content[0].text
    assert "a1B2c3D4" not in secret.content[0].text
    assert blank.is_error


def test_an_owners_assistant_is_named_as_the_source(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    _, noted = _tool_calls(app, [("memory_note", {"text": "Prefers metric units."})],
                           Owner("alice", "claude-code"))
    result = noted.structured_content.get("result", noted.structured_content)
    assert (vault / result["path"]).read_text(encoding="utf-8").endswith(
        " Prefers metric units. (source: alice/claude-code)\n")


def test_the_daemon_serves_note_as_the_cli_would(vault: Path, make_app: Builder) -> None:
    app, _ = make_app(vault)
    answer = serve_command(app, ["note", "-", "--section", "Decisions", "--json"],
                           "We'll use uv instead of pip.\n", {})
    assert answer is not None and answer.exit_code == 0, answer
    result = json.loads(answer.stdout)
    assert result["section"] == "Decisions"
    assert (vault / result["path"]).read_text(encoding="utf-8").endswith(
        "We'll use uv instead of pip.\n")
    refused = serve_command(app, ["note", "password: hunter2hunter2"], None, {})
    assert refused is not None and refused.exit_code == 9
    assert refused.stderr.count("\n") == 1 and "hunter2" not in refused.stderr


def test_the_client_sends_note_to_the_daemon_with_its_stdin() -> None:
    assert "note" in client.SERVED_COMMANDS
    invocation = client.parse_invocation(["note", "-", "--section", "-"])
    assert invocation is not None and invocation.reads_stdin
    invocation = client.parse_invocation(["note", "--section", "-", "text"])
    assert invocation is not None and not invocation.reads_stdin
    command = typer.main.get_command(cli_app).commands["note"]  # type: ignore[attr-defined]
    valued = {name for param in command.params if not getattr(param, "is_flag", False)
              and param.param_type_name == "option" for name in param.opts}
    assert valued == client.NOTE_VALUE_OPTIONS


def test_dreamd_note_from_the_command_line(vault: Path) -> None:
    def dreamd(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "daemon", *args, "--vault", str(vault)],
                              input=stdin, capture_output=True, text=True, timeout=120,
                              cwd=REPO, env=os.environ.copy(), check=False)

    done = dreamd("note", "Let's go with LanceDB for the index.", "--json")
    assert done.returncode == 0, done.stderr
    path = vault / json.loads(done.stdout)["path"]
    piped = dreamd("note", "-", "-s", "## Decisions", stdin="以后提交信息都用中文写。\n")
    assert piped.returncode == 0, piped.stderr
    assert "under ## Decisions" in piped.stdout
    empty = dreamd("note", "-", stdin="")
    assert empty.returncode == 2 and "nothing on stdin" in empty.stderr
    secret = dreamd("note", "the key is sk-proj-" + "Abc123XyZ987qweRTY456uioPLK")
    assert secret.returncode == 9 and "Abc123XyZ987" not in secret.stderr
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "## Notes" and lines[1].endswith(" Let's go with LanceDB for the index.")
    assert lines[3] == "## Decisions" and lines[4].endswith(" 以后提交信息都用中文写。")


def test_a_hidden_character_inside_a_credential_is_refused_from_the_command_line(
        vault: Path) -> None:
    def dreamd(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "daemon", *args, "--vault", str(vault)],
                              input=stdin, capture_output=True, text=True, timeout=120,
                              cwd=REPO, env=os.environ.copy(), check=False)

    github = "ghp_1234567890abcdefghij" + "klmnopqrstuvwxyzAB"
    refused = [
        dreamd("note", "-", stdin=f"my token {github[:24]}\x01{github[24:]} works"),
        dreamd("note", "-", stdin="AKIA" + "Z7QXW3RT\x7f5YUPLK2M"),
        dreamd("note", "-", stdin="密\u200b码是 Hunter2Zeta9"),
        dreamd("note", "key ＡＫＩＡＺ７ＱＸＷ３ＲＴ５ＹＵＰＬＫ２Ｍ ok"),
        dreamd("remember", f"CI token {github[:10]}\u200b{github[10:]}", "--type", "reference"),
        dreamd("remember", "-", "--type", "reference", stdin="AKIA" + "Z7QXW3RT\x015YUPLK2M"),
    ]
    for done in refused:
        assert done.returncode == 9, (done.stdout, done.stderr)
        assert "5YUPLK2M" not in done.stderr and "klmnopq" not in done.stderr
    planted = ("1234567890abcdefghij", "5YUPLK2M", "Hunter2Zeta9", "５ＹＵＰＬＫ２Ｍ")
    holding = [p for p in vault.rglob("*") if p.is_file()
               and any(s.encode() in p.read_bytes() for s in planted)]
    assert not holding
