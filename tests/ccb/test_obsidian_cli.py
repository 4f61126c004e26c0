"""The Obsidian CLI transport, its content encoding, and the stand-in's parameter parsing.

Every CLI call here is a real subprocess of ``tests/support/obsidian_standin.py`` — a stand-in for
the Obsidian desktop app's CLI, installed as ``obsidian`` first on PATH — on real files.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccb.atomic import FileBeingWrittenError, replace_bytes_in_place
from ccb.obsidian_cli import (
    CLI_COOLDOWN_S,
    MAX_CONTENT_ARG_BYTES,
    ConfiguredMode,
    ObsidianCli,
    ObsidianCliError,
    WriteRouter,
    content_problem,
    encode_content,
    obsidian_app_running,
)
from ccb.writer import NoteWriter


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "Memory").mkdir()
    return root


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# --------------------------------------------------------------------------- encoding


@pytest.mark.parametrize(("data", "reason"), [
    (b"---\nname: x\n---\nplain\ttext, \"quotes\", 'single', = signs, emoji \xf0\x9f\x8c\x99\n",
     None),
    (b"", None),
    (b"C:\\Users\\me", "backslash"),
    (b"a\r\nb\r\n", "carriage returns"),
    (b"\xef\xbb\xbf---\n", "byte order mark"),
    (b"a\x00b", "NUL"),
    (b"a\x0bb", "U+000B"),
    (b"\xff\xfe", "not valid UTF-8"),
    (b"x" * MAX_CONTENT_ARG_BYTES, "more than"),
])
def test_content_problem_names_what_the_cli_cannot_carry(data: bytes,
                                                          reason: str | None) -> None:
    found = content_problem(data)
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found


@given(st.text(alphabet=st.characters(blacklist_characters="\\\r\ufeff",
                                      blacklist_categories=["Cs"]), max_size=300))
def test_encoded_content_decodes_back_exactly(standin: Any, text: str) -> None:
    """What content_problem lets through comes back byte for byte from the documented
    escapes (the stand-in decodes as the help page says)."""
    if content_problem(text.encode("utf-8")) is None:
        assert standin.decode_content(encode_content(text)) == text
        assert "\n" not in encode_content(text) and "\t" not in encode_content(text)


# --------------------------------------------------------------------------- transport


def test_create_writes_the_file_in_the_vault_through_the_cli(standin: Any, knobs: Any,
                                                              vault: Path) -> None:
    cli = ObsidianCli(vault)
    text = "---\nname: Tabs\n---\nline one\n\tindented\n\nlast line\n"
    cli.create("Memory/tabs.md", text)
    assert (vault / "Memory" / "tabs.md").read_bytes() == text.encode()
    argv = knobs.calls()[-1]
    assert argv == ["create", "path=Memory/tabs.md",
                    "content=---\\nname: Tabs\\n---\\nline one\\n\\tindented\\n\\nlast line\\n",
                    "overwrite"]
    assert cli.version() == standin.VERSION
    assert cli.vault_path() == vault.resolve()


def test_content_the_cli_cannot_carry_is_refused_before_running_anything(
        knobs: Any, vault: Path) -> None:
    with pytest.raises(ObsidianCliError, match="backslash") as caught:
        ObsidianCli(vault).create("Memory/x.md", "a \\n b")
    assert caught.value.kind == "refused"
    assert knobs.calls() == []
    assert not (vault / "Memory" / "x.md").exists()


def test_missing_cli_is_named(vault: Path) -> None:
    with pytest.raises(ObsidianCliError, match="'no-such-obsidian' was not found on PATH") \
            as caught:
        ObsidianCli(vault, command="no-such-obsidian").version()
    assert caught.value.kind == "missing"


def test_exit_code_and_first_stderr_line_are_reported(standin: Any, knobs: Any,
                                                      vault: Path) -> None:
    knobs.fail(1, "version")
    with pytest.raises(ObsidianCliError) as caught:
        ObsidianCli(vault).version()
    assert caught.value.kind == "failed"
    assert str(caught.value) == ("obsidian CLI: `obsidian version` exited with 1: Error: Unable "
                                 "to connect to Obsidian (stand-in: told to fail).")
    assert ObsidianCli(vault).version() == standin.VERSION  # only the first failed


def test_a_hanging_cli_is_stopped_with_its_whole_process_group(knobs: Any,
                                                               vault: Path) -> None:
    knobs.hang("create")
    with pytest.raises(ObsidianCliError, match="timed out after 300 ms") as caught:
        ObsidianCli(vault, timeout_ms=300).create("Memory/slow.md", "late\n")
    assert caught.value.kind == "timeout"
    assert "content=…" in str(caught.value) and "late" not in str(caught.value)
    pids = knobs.hang_pids()
    assert len(pids) == 2  # the call and the child it started
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in pids)
    assert not (vault / "Memory" / "slow.md").exists()


def test_app_detection_sees_the_app_not_a_cli_call(standin: Any, knobs: Any, vault: Path,
                                                   tmp_path: Path) -> None:
    cli = ObsidianCli(vault)
    executable = cli.executable()
    assert not obsidian_app_running(executable)
    knobs.hang("version")
    call = subprocess.Popen([executable, "version"], cwd=vault, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not knobs.hang_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(call.pid).name() == "obsidian"  # named like the app …
        assert not obsidian_app_running(executable)  # … but it is a call of the CLI
    finally:
        os.killpg(call.pid, signal.SIGKILL)  # the call and the child it started
        call.wait()
    app = standin.start_fake_app(tmp_path / "app")
    try:
        assert obsidian_app_running(executable)
    finally:
        app.kill()
        app.wait()
    assert not obsidian_app_running(executable)


# --------------------------------------------------------------------------- the stand-in


@pytest.mark.parametrize(("argv", "parsed"), [
    ([], (None, "help", {}, set())),
    (["version"], (None, "version", {}, set())),
    (["create", "name=Trip to Paris", "template=Travel"],
     (None, "create", {"name": "Trip to Paris", "template": "Travel"}, set())),
    (["create", "name=Note", "content=Hello", "open", "overwrite"],
     (None, "create", {"name": "Note", "content": "Hello"}, {"open", "overwrite"})),
    (["vault=My Vault", "search", "query=a=b"],
     ("My Vault", "search", {"query": "a=b"}, set())),
    (["delete", "path=A/b.md", "permanent"], (None, "delete", {"path": "A/b.md"},
                                              {"permanent"})),
])
def test_standin_parses_the_documented_syntax(standin: Any, argv: list[str],
                                                parsed: tuple[object, ...]
                                              ) -> None:
    assert standin.parse_args(argv) == parsed


def _obsidian(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["obsidian", *args], cwd=vault, capture_output=True, text=True,
                          check=False, timeout=60)


def test_standin_commands_act_on_the_vault_it_runs_in(knobs: Any, vault: Path) -> None:
    assert _obsidian(vault, "create", "path=A/n.md", "content=# N\\nbody").returncode == 0
    assert (vault / "A" / "n.md").read_text(encoding="utf-8") == "# N\nbody"
    again = _obsidian(vault, "create", "path=A/n.md", "content=other")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert _obsidian(vault, "read", "file=n").stdout == "# N\nbody"
    assert _obsidian(vault, "move", "path=A/n.md", "to=B").returncode == 0
    assert (vault / "B" / "n.md").is_file() and not (vault / "A" / "n.md").exists()
    assert _obsidian(vault, "move", "path=B/n.md", "to=C/renamed.md").returncode == 0
    assert _obsidian(vault, "delete", "path=C/renamed.md").returncode == 0
    assert (vault / ".trash" / "renamed.md").is_file()
    assert _obsidian(vault, "create", "name=Gone", "content=x").returncode == 0
    assert _obsidian(vault, "delete", "file=Gone", "permanent").returncode == 0
    assert not (vault / "Gone.md").exists() and not (vault / ".trash" / "Gone.md").exists()
    unknown = _obsidian(vault, "frobnicate")
    assert unknown.returncode == 1 and 'Command "frobnicate" not found' in unknown.stderr
    assert _obsidian(vault, "vault", "info=path").stdout.strip() == str(vault.resolve())


def test_standin_property_set_reserialises_frontmatter(knobs: Any, vault: Path) -> None:
    """Why dreamd never uses property:set: the whole block is rewritten."""
    note = vault / "Memory" / "m.md"
    note.write_text("---\nname: M   # a comment\nflag: yes\nwhen: 2024-03-05T10:30:00\n---\n"
                    "body\n", encoding="utf-8")
    assert _obsidian(vault, "property:set", "name=pinned", "value=true", "type=checkbox",
                     "path=Memory/m.md").returncode == 0
    text = note.read_text(encoding="utf-8")
    assert "pinned: true" in text and "# a comment" not in text and "flag: true" in text
    assert text.endswith("---\nbody\n")


def test_standin_uses_the_active_vault_outside_a_vault(knobs: Any, vault: Path,
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _obsidian(plain, "vault", "info=path").returncode == 1
    monkeypatch.setenv("OBSIDIAN_STANDIN_ACTIVE_VAULT", str(vault))
    assert _obsidian(plain, "vault", "info=path").stdout.strip() == str(vault.resolve())


# --------------------------------------------------------------------------- the router


def _router(vault: Path, mode: ConfiguredMode, *, cli_enabled: bool = True,
            max_retries: int = 2) -> WriteRouter:
    return WriteRouter(ObsidianCli(vault), mode=mode, memory_folder="Memory",
                       cli_enabled=cli_enabled, max_retries=max_retries)


@pytest.mark.parametrize(("path", "ours"), [
    ("Memory/x.md", True), ("Memory/MEMORY.md", True), ("Memory/DREAMS.md", True),
    ("Memory/sub/y.md", True), ("Memory/x.conflict-20261130-101500.md", False),
    ("Memory/.hidden.md", False), ("Memory/picture.png", False), ("Notes/x.md", False),
    ("Memoryx/x.md", False), ("x.md", False), ("Memory", False),
])
def test_only_dreamds_own_files_may_go_through_the_cli(tmp_path: Path, path: str,
                                                        ours: bool) -> None:
    assert _router(tmp_path, "cli").is_memory_path(path) is ours



def test_the_answer_is_the_routers_own_folder_whichever_router_asked_first(
        tmp_path: Path) -> None:
    """The answer is kept by path and folder: a router of another memory folder asked of the
    same path, before or after, answers for its own folder (English and Chinese names)."""
    def router(folder: str) -> WriteRouter:
        return WriteRouter(ObsidianCli(tmp_path), mode="cli", memory_folder=folder)
    for _ in range(2):
        assert router("Memory").is_memory_path("Memory/x.md") is True
        assert router("Notes").is_memory_path("Memory/x.md") is False
        assert router("记忆").is_memory_path("记忆/咖啡.md") is True
        assert router("记忆/旧").is_memory_path("记忆/咖啡.md") is False
        assert router("Memory").is_memory_path("记忆/咖啡.md") is False

def test_mode_reasons_without_probing(tmp_path: Path) -> None:
    assert str(_router(tmp_path, "direct").write_mode()) == "direct: obsidian.mode = direct"
    assert str(_router(tmp_path, "cli").write_mode()) == "cli: obsidian.mode = cli"
    assert str(_router(tmp_path, "cli", cli_enabled=False).write_mode()) == \
        "direct: obsidian.cli.enabled = false"
    assert str(_router(tmp_path, "auto", cli_enabled=False).write_mode()) == \
        "direct: obsidian.cli.enabled = false"


def test_auto_is_cached_and_a_timeout_starts_a_cool_down(
        knobs: Any, vault: Path, obsidian_app: subprocess.Popen[bytes]) -> None:
    now = [1000.0]
    router = WriteRouter(ObsidianCli(vault), mode="auto", memory_folder="Memory",
                         clock=lambda: now[0])
    first = router.write_mode()
    assert first.mode == "cli" and first.reason.startswith(
        "Obsidian is running and obsidian version answered in ")
    probes = len(knobs.calls())
    assert [argv[0] for argv in knobs.calls()] == ["version", "vault"]
    now[0] += 10
    assert router.write_mode() == first
    assert len(knobs.calls()) == probes  # cached: no new probe
    router.note_timeout()
    cooled = router.write_mode()
    assert cooled.mode == "direct" and "timed out" in cooled.reason
    now[0] += CLI_COOLDOWN_S - 1
    assert router.write_mode().mode == "direct"
    assert len(knobs.calls()) == probes
    now[0] += 2
    assert router.write_mode().mode == "cli"  # asked again after the cool-down


# --------------------------------------------------------------------------- the writer


def _memory(body: str, stamp: str = "2026-11-30T10:00:00Z") -> bytes:
    return (f"---\nname: Kiln\ndescription: kiln facts\ntype: project\nupdated: {stamp}\n---\n"
            f"{body}").encode()


def _cli_writer(vault: Path, tmp_path: Path) -> NoteWriter:
    fixed = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    return NoteWriter(vault, tmp_path / "state", clock=lambda: fixed,
                      router=_router(vault, "cli"))


def test_writer_writes_memory_files_through_the_cli_and_notes_directly(
        knobs: Any, vault: Path, tmp_path: Path) -> None:
    writer = _cli_writer(vault, tmp_path)
    data = _memory("## Facts\nThe kiln is 40 cm wide.\n")
    outcome = writer.write("Memory/kiln.md", data, base=None)
    assert outcome.status == "created" and (vault / "Memory/kiln.md").read_bytes() == data
    note = b"# A note\nwritten by dreamd's arbiter\n"
    writer.write("Notes/n.md", note, base=None)
    assert (vault / "Notes/n.md").read_bytes() == note
    assert knobs.created() == ["Memory/kiln.md"]
    assert writer.origin_of(outcome.content_hash) == ("api", "")


def test_an_edit_made_right_before_the_cli_call_is_merged(knobs: Any, vault: Path,
                                                          tmp_path: Path) -> None:
    """Compare-before-write on the CLI path: the file is re-read right before the call; the
    user's edit found there is merged with ours, never overwritten."""
    base = _memory("## Facts\nThe kiln is 40 cm wide.\n\n## Notes\nNone yet.\n")
    target = vault / "Memory" / "kiln.md"
    target.write_bytes(base)
    theirs = base.replace(b"None yet.\n", b"None yet.\nThe user added this line.\n")
    saved: list[str] = []

    def editor_saves(path: str, _digest: str) -> None:
        if not saved:
            saved.append(path)
            target.write_bytes(theirs)  # the user saves in the moment before our CLI call

    router = _router(vault, "cli")
    writer = NoteWriter(vault, tmp_path / "state", on_written=editor_saves, router=router)
    ours = base.replace(b"40 cm wide.\n", b"40 cm wide.\nIt fires to cone 6.\n")
    outcome = writer.write("Memory/kiln.md", ours, base=base)
    after = target.read_bytes()
    assert outcome.status == "merged"
    assert b"It fires to cone 6." in after and b"The user added this line." in after
    assert knobs.created() == ["Memory/kiln.md"]


def test_a_clashing_edit_before_the_cli_call_goes_to_a_conflict_copy(
        knobs: Any, vault: Path, tmp_path: Path) -> None:
    base = _memory("The kiln is 40 cm wide.\n")
    target = vault / "Memory" / "kiln.md"
    target.write_bytes(base)
    theirs = base.replace(b"40 cm", b"45 cm")
    done: list[bool] = []

    def editor_saves(_path: str, _digest: str) -> None:
        if not done:
            done.append(True)
            target.write_bytes(theirs)

    writer = NoteWriter(vault, tmp_path / "state", on_written=editor_saves,
                        router=_router(vault, "cli"))
    ours = base.replace(b"40 cm", b"50 cm")
    outcome = writer.write("Memory/kiln.md", ours, base=base)
    assert outcome.status == "conflict" and outcome.conflict_path is not None
    assert target.read_bytes() == theirs  # theirs stays in place …
    assert (vault / outcome.conflict_path).read_bytes() == ours  # … ours beside it
    assert knobs.created() == []  # the conflict copy: direct


@pytest.mark.parametrize("clash", [False, True])
def test_an_old_buffer_saved_before_the_cli_call_keeps_our_earlier_write(
        knobs: Any, vault: Path, tmp_path: Path, clash: bool) -> None:
    """The editor loaded the file before our first write and saves that buffer right before
    our second CLI call: the first write's line is gone from it because the buffer is older,
    not because the user deleted it. It comes back; a clash with our second write sends that
    one to a conflict copy, and nothing is lost."""
    base = _memory("## Facts\nThe kiln is 40 cm wide.\n")
    target = vault / "Memory" / "kiln.md"
    target.write_bytes(base)
    old_buffer = base + b"The user typed this.\n"
    if clash:
        old_buffer = old_buffer.replace(b"40 cm", b"45 cm")
    calls: list[str] = []

    def editor_saves(path: str, _digest: str) -> None:
        calls.append(path)
        if len(calls) == 2:
            target.write_bytes(old_buffer)

    writer = NoteWriter(vault, tmp_path / "state", on_written=editor_saves,
                        router=_router(vault, "cli"))
    one = base.replace(b"10:00:00Z", b"10:00:01.000001Z") + b"It fires to cone 6.\n"
    writer.write("Memory/kiln.md", one, base=base)
    two = one.replace(b"10:00:01.000001Z", b"10:00:02.000001Z").replace(b"40 cm", b"50 cm")
    outcome = writer.write("Memory/kiln.md", two, base=one)
    after = target.read_bytes()
    assert b"It fires to cone 6." in after and b"The user typed this." in after
    if clash:
        assert outcome.status == "conflict" and outcome.conflict_path is not None
        assert b"45 cm" in after and b"50 cm" in (vault / outcome.conflict_path).read_bytes()
    else:
        assert outcome.status == "merged" and b"50 cm" in after


def test_a_cli_that_changes_what_it_was_sent_is_caught_by_the_read_back(
        knobs: Any, vault: Path, tmp_path: Path) -> None:
    knobs.mangle()
    writer = NoteWriter(vault, tmp_path / "state", router=_router(vault, "cli", max_retries=1))
    data = _memory("Exactly this.\n")
    writer.write("Memory/kiln.md", data, base=None)
    assert (vault / "Memory/kiln.md").read_bytes() == data  # fallen back to direct
    assert knobs.created() == ["Memory/kiln.md", "Memory/kiln.md"]


def test_in_place_writes_keep_the_inode(vault: Path, tmp_path: Path) -> None:
    target = vault / "Memory" / "kiln.md"
    base = _memory("old\n")
    target.write_bytes(base)
    inode = target.stat().st_ino
    in_place = NoteWriter(vault, tmp_path / "state", atomic_writes=False)
    in_place.write("Memory/kiln.md", _memory("new\n"), base=base)
    assert target.read_bytes() == _memory("new\n") and target.stat().st_ino == inode
    NoteWriter(vault, tmp_path / "state").write("Memory/kiln.md", _memory("newer\n"),
                                                base=_memory("new\n"))
    assert target.stat().st_ino != inode  # the atomic path renames a new file in


def test_fallback_off_puts_back_what_a_failed_cli_write_left(knobs: Any, vault: Path,
                                                             tmp_path: Path) -> None:
    knobs.mangle()
    target = vault / "Memory" / "kiln.md"
    base = _memory("old\n")
    target.write_bytes(base)
    router = WriteRouter(ObsidianCli(vault), mode="cli", memory_folder="Memory",
                         max_retries=1, fallback=False)
    writer = NoteWriter(vault, tmp_path / "state", router=router)
    with pytest.raises(ObsidianCliError,
                       match=r"read back differs .* obsidian.fallback.enabled = false"):
        writer.write("Memory/kiln.md", _memory("new\n"), base=base)
    assert target.read_bytes() == base  # the mangled bytes the CLI left were undone
    assert knobs.created() == ["Memory/kiln.md", "Memory/kiln.md"]
    with pytest.raises(ObsidianCliError):
        writer.write("Memory/fresh.md", _memory("new\n"), base=None)
    assert not (vault / "Memory" / "fresh.md").exists()


def test_in_place_write_leaves_a_file_found_empty_to_its_editor(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    target.write_bytes(b"")
    with pytest.raises(FileBeingWrittenError):
        replace_bytes_in_place(target, b"ours")
    assert target.read_bytes() == b""
    assert replace_bytes_in_place(tmp_path / "new" / "n.md", b"x") is None
    target.write_bytes(b"a much longer old text")
    assert replace_bytes_in_place(target, b"short") == b"a much longer old text"
    assert target.read_bytes() == b"short"


EDITOR_DURING_CREATE = '''#!{python}
"""A CLI that answers version and vault, and on create lets an "editor" save the file in that
very moment, then fails (exit 1) or hangs: the edit must survive."""
import os, sys, time
args = sys.argv[1:]
if args[:1] == ["version"]:
    print("1.12.7"); sys.exit(0)
if args[:1] == ["vault"]:
    print(os.getcwd()); sys.exit(0)
if args[:1] == ["create"]:
    path = next(a.split("=", 1)[1] for a in args if a.startswith("path="))
    with open(path, "ab") as f:
        f.write(b"USER EDIT: the kiln is 60 cm wide\\n")
    if "{how}" == "hang":
        time.sleep(600)
    print("Error: something went wrong", file=sys.stderr); sys.exit(1)
'''


@pytest.mark.parametrize(("how", "fallback"), [("fail", True), ("hang", True),
                                               ("fail", False)])
def test_an_edit_saved_while_a_cli_write_fails_is_never_lost(
        vault: Path, tmp_path: Path, how: str, fallback: bool) -> None:
    cli = tmp_path / "editor-cli"
    cli.write_text(EDITOR_DURING_CREATE.format(python=sys.executable, how=how),
                   encoding="utf-8")
    cli.chmod(0o755)
    target = vault / "Memory" / "kiln.md"
    base = _memory("The kiln is 40 cm wide.\n")
    target.write_bytes(base)
    router = WriteRouter(ObsidianCli(vault, command=str(cli), timeout_ms=1500), mode="cli",
                         memory_folder="Memory", max_retries=0, fallback=fallback)
    writer = NoteWriter(vault, tmp_path / "state", router=router)
    ours = _memory("The kiln is 40 cm wide. It fires to cone 6.\n")
    if fallback:
        writer.write("Memory/kiln.md", ours, base=base)
    else:
        with pytest.raises(ObsidianCliError):
            writer.write("Memory/kiln.md", ours, base=base)
    texts = [p.read_bytes() for p in (vault / "Memory").glob("*.md")]
    assert any(b"USER EDIT: the kiln is 60 cm wide" in t for t in texts), texts
    if fallback:
        assert target.read_bytes() == ours
