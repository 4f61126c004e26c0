"""The daemon's local API: real ``dreamd run`` subprocesses with the real model on a copy of
``vault_example``, a real Unix socket, and real ``python -m daemon`` client processes.

A command line is answered in-process the first time (that run records where its settings
lead); from then on the running daemon answers it. Each test checks who answered by what
the client process imported (``-X importtime``): a served command never imports LanceDB.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import daemon_harness as harness
import pytest

from daemon import client

pytestmark = pytest.mark.scenario

REPO = Path(__file__).resolve().parents[2]
MEMORY = "Tests hit a real database"  # a memory of vault_example


def _dreamd(args: list[str], cwd: Path, *, stdin: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -X importtime -m daemon ARGS`` (the console script's code)."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "daemon", *args],
                          cwd=cwd, input=stdin if stdin is not None else "", text=True,
                          capture_output=True, timeout=timeout, check=False)


def _imported(run: subprocess.CompletedProcess[str], module: str) -> bool:
    return any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == module
               for line in run.stderr.splitlines())


def _said(run: subprocess.CompletedProcess[str]) -> str:
    """stderr without the import-time lines."""
    return "\n".join(line for line in run.stderr.splitlines()
                     if not line.startswith("import time:"))


def _start(folder: Path) -> Any:
    vault = folder / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    daemon = harness.DaemonProcess.start(vault, folder / "daemon.log", fake=False)
    daemon.wait_state("watching")
    harness.wait_until(lambda: (daemon.state_dir / client.API_RECORD).exists(), bool,
                       timeout_s=60, what="api.json")
    return vault, daemon


@pytest.fixture
def served(tmp_path: Path) -> Any:
    """A copy of vault_example with a running daemon whose API is open, for one test."""
    vault, daemon = _start(tmp_path)
    try:
        yield vault, daemon
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One daemon for the tests that only read through it (and the environment it started
    in: the records it writes are keyed by it), started once for the module."""
    folder = tmp_path_factory.mktemp("shared-daemon")
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ.update({"DREAMD_STORAGE__DATA_DIR": str(folder / "data"),
                       "DREAMD_CONFIG": str(folder / "config.toml"),
                       "XDG_CACHE_HOME": str(folder / "cache"),
                       "XDG_CONFIG_HOME": str(folder / "xdg-config"),
                       "XDG_DATA_HOME": str(folder / "xdg-data")})
    try:
        vault, daemon = _start(folder)
        try:
            yield vault, daemon, dict(os.environ)
        finally:
            daemon.stop()
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def reading(shared: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The shared daemon, with this test's environment set to the one it started in."""
    vault, daemon, env = shared
    for key in [k for k in os.environ if k.startswith(("DREAMD_", "XDG_"))]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith(("DREAMD_", "XDG_")):
            monkeypatch.setenv(key, value)
    return vault, daemon


def test_the_daemon_answers_with_the_output_the_cli_gives(reading: Any, tmp_path: Path) -> None:
    vault, _daemon = reading
    here = tmp_path / "work"
    here.mkdir()
    # a relative --vault: no record of it yet, so the first run answers in-process
    args = ["show", MEMORY, "--vault", "vault"]
    first = _dreamd(args, vault.parent)
    assert first.returncode == 0, _said(first)
    assert _imported(first, "lancedb")
    second = _dreamd(args, vault.parent)
    assert second.returncode == 0, _said(second)
    assert not _imported(second, "lancedb") and not _imported(second, "numpy")
    assert not _imported(second, "typer") and not _imported(second, "pydantic")
    assert second.stdout == first.stdout
    assert _said(second) == ""
    # the daemon recorded its own settings: its vault named by its folder is served from
    # any working folder at once
    elsewhere = _dreamd(["show", MEMORY, "--vault", str(vault)], here)
    assert elsewhere.returncode == 0 and not _imported(elsewhere, "lancedb")
    assert elsewhere.stdout == first.stdout
    # it was started with its vault named and is the only vault indexed: a command line
    # that names no vault resolves to it, and is served from any folder at once too
    bare = _dreamd(["show", MEMORY], here)
    assert bare.returncode == 0 and not _imported(bare, "lancedb"), _said(bare)
    assert bare.stdout == first.stdout
    # a relative --vault recorded in one folder never answers for another folder
    (here / "vault").mkdir()
    other = _dreamd(args, here)
    assert other.returncode != 0 and _imported(other, "lancedb")

    # the same errors and exit codes as the CLI
    missing = _dreamd(["show", "no such memory", "--vault", str(vault)], here)
    assert missing.returncode == 2 and not _imported(missing, "lancedb")
    assert "no memory has that id or name" in _said(missing)
    # a usage error is typer's own message, printed by the client
    usage = _dreamd(["search", "", "--vault", str(vault)], here)
    assert usage.returncode == 2 and "the query is empty" in _said(usage)


def test_a_line_naming_no_vault_is_served_only_where_it_means_the_daemons(
        served: Any, tmp_path: Path) -> None:
    vault, _daemon = served
    outside = tmp_path / "work"
    outside.mkdir()
    # the daemon's vault is the only one indexed: served from anywhere, said on stderr
    # outside it, and silently inside it
    only = _dreamd(["show", MEMORY], outside)
    assert only.returncode == 0 and not _imported(only, "lancedb"), _said(only)
    assert f"using {vault.resolve()}, the only vault indexed" in _said(only)
    inside = _dreamd(["show", MEMORY], vault / "Memory")
    assert inside.returncode == 0 and not _imported(inside, "lancedb"), _said(inside)
    assert _said(inside) == "" and inside.stdout == only.stdout
    # in a vault Obsidian keeps (it holds .obsidian/), not indexed yet: the line means that
    # vault, never the daemon's
    fresh = tmp_path / "新 vault"
    (fresh / ".obsidian").mkdir(parents=True)
    (fresh / "Daily").mkdir()
    new = _dreamd(["show", MEMORY], fresh / "Daily")
    assert _imported(new, "lancedb") and new.returncode != 0, _said(new)
    assert MEMORY not in new.stdout and "the only vault indexed" not in _said(new)
    # a second vault indexed: inside it, the line means that vault, never the daemon's
    other = tmp_path / "other"
    (other / "Memory").mkdir(parents=True)
    (other / "Kiln.md").write_text("# Kiln\n\nFirst firing in January.\n", "utf-8")
    assert _dreamd(["sync", str(other)], outside).returncode == 0
    theirs = _dreamd(["show", MEMORY], other / "Memory")
    assert _imported(theirs, "lancedb") and theirs.returncode != 0
    assert MEMORY not in theirs.stdout
    # outside both: an error naming both, never the daemon's answer
    neither = _dreamd(["show", MEMORY], outside)
    assert neither.returncode == 3 and neither.stdout == ""
    assert str(vault.resolve()) in _said(neither) and str(other.resolve()) in _said(neither)
    # inside the daemon's vault: still served
    again = _dreamd(["show", MEMORY], vault)
    assert again.returncode == 0 and not _imported(again, "lancedb"), _said(again)
    assert again.stdout == only.stdout


def test_the_socket_is_private_and_gone_after_a_stop(served: Any) -> None:
    _vault, daemon = served
    record = json.loads((daemon.state_dir / client.API_RECORD).read_text("utf-8"))
    assert record["pid"] == daemon.pid and record["protocol"] == client.PROTOCOL
    path = Path(record["socket"])
    info = path.lstat()
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert daemon.stop() == 0
    assert not path.exists() and not (daemon.state_dir / client.API_RECORD).exists()


def _health_as(uid: int, path: str) -> dict[str, Any]:
    """The answer to ``health`` asked by a child process running as ``uid``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only socket calls, then _exit
        try:
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(path)
                sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"health","params":{}}\n')
                answer = sock.makefile("rb").readline()
            os.write(write, answer)
        except OSError as error:
            os.write(write, json.dumps({"oserror": str(error)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0,
                    reason="needs root to act as another user")
def test_another_user_is_refused(reading: Any) -> None:
    _vault, daemon = reading
    path = json.loads((daemon.state_dir / client.API_RECORD).read_text("utf-8"))["socket"]
    nobody = 65534
    # the file's mode keeps another user out ...
    assert "oserror" in _health_as(nobody, path)
    # ... and with the mode opened up, the daemon itself refuses by the peer's uid
    parent = Path(path).parent
    parent_mode = stat.S_IMODE(parent.stat().st_mode)
    Path(path).chmod(0o666)
    for folder in [parent, *parent.parents]:
        folder.chmod(stat.S_IMODE(folder.stat().st_mode) | 0o001)
    try:
        answer = _health_as(nobody, path)
    finally:
        parent.chmod(parent_mode)
    assert answer.get("error", {}).get("code") == client.FORBIDDEN, answer
    assert _health_as(os.getuid(), path)["result"]["pid"] == daemon.pid


def test_clients_writing_at_once_through_the_daemon_lose_nothing(
        served: Any, tmp_path: Path) -> None:
    vault, daemon = served
    here = tmp_path / "work"
    here.mkdir()
    assert _dreamd(["status", "--vault", str(vault)], here).returncode == 0  # the record
    facts = [f"The build server number {n} is called kiln-{n}.local." for n in range(8)]
    procs = [subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "daemon", "remember", fact,
         "--type", "reference", "--vault", str(vault)],
        cwd=here, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for fact in facts]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(facts), results
    assert not any("import time:" in err and "| lancedb\n" in err for _out, err in results)
    texts = "\n".join(p.read_text("utf-8") for p in (vault / "Memory").glob("*.md"))
    assert all(fact in texts for fact in facts)
    # the daemon indexed each write right after answering it: a search through it finds
    # every one at once (the next request waits for that index work)
    for n in range(8):
        found = _dreamd(["search", f"kiln-{n}.local", "--json", "-n", "3", "--vault",
                         str(vault)], here)
        assert found.returncode == 0 and not _imported(found, "lancedb")
        assert any(f"kiln-{n}.local" in hit["snippet"] for hit in json.loads(found.stdout))
    app = harness.fresh_app(vault, fake=False)
    on_disk = {f"Memory/{p.name}" for p in (vault / "Memory").glob("*.md")
               if p.name != "MEMORY.md"}  # the generated index is not indexed itself
    assert on_disk <= set(app.store.file_index()), on_disk - set(app.store.file_index())
    assert harness.index_vs_disk(app) == []
    assert daemon.proc.poll() is None


def test_a_daemon_killed_mid_answer_leaves_a_clear_error_and_an_answer(
        served: Any, tmp_path: Path) -> None:
    vault, daemon = served
    here = tmp_path / "work"
    here.mkdir()
    args = ["show", MEMORY, "--vault", str(vault)]
    expected = _dreamd(args, here)  # in-process, writes the record
    assert expected.returncode == 0
    daemon.proc.send_signal(signal.SIGSTOP)  # it accepts the connection but never answers
    try:
        proc = subprocess.Popen([sys.executable, "-m", "daemon", *args], cwd=here,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)  # the request is sent and waits for its answer
    finally:
        daemon.kill9()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == expected.stdout
    assert "answering in-process" in err and ("stopped answering" in err
                                             or "closed the connection" in err), err


def test_remember_reads_its_text_from_stdin_through_the_daemon(
        served: Any, tmp_path: Path) -> None:
    """``remember -``: the client reads stdin and sends it with the command; a text the
    daemon would not read (over 8 MiB) is answered here instead, in one line all the same."""
    vault, _daemon = served
    here = tmp_path / "work"
    here.mkdir()
    assert _dreamd(["status", "--vault", str(vault)], here).returncode == 0  # the record
    text = "The kiln shelf paper is in drawer three.\nReplace it after ten firings.\n"
    run = _dreamd(["remember", "-", "--json", "--vault", str(vault)], here, stdin=text)
    assert run.returncode == 0 and not _imported(run, "lancedb"), _said(run)
    written = (vault / json.loads(run.stdout)["path"]).read_text("utf-8")
    assert written.endswith("---\n" + text)  # the text, never "-"
    for stdin, said in (("", "nothing on stdin"), ("🎉🎉\n", "has no words"),
                        ("x" * 300_000, "300,000 characters, more than memory.max_chars")):
        refused = _dreamd(["remember", "-", "--vault", str(vault)], here, stdin=stdin)
        assert refused.returncode == 2 and not _imported(refused, "lancedb"), _said(refused)
        assert said in _said(refused) and len(_said(refused).splitlines()) == 1
    huge = _dreamd(["remember", "-", "--vault", str(vault)], here, stdin="x" * 9_000_000)
    # answered in-process (the CLI imported), and refused there before the index is opened
    assert huge.returncode == 2 and _imported(huge, "typer") and not _imported(huge, "lancedb")
    assert _said(huge).splitlines() == [
        "dreamd: remember: the memory text: 9,000,000 characters, more than memory.max_chars "
        "(65,536); nothing was written — shorten it, split it into several memories, or raise "
        "memory.max_chars (e.g. --set memory.max_chars=9000000)"]


def test_a_diary_line_goes_through_the_daemon_and_is_found_at_once(
        served: Any, tmp_path: Path) -> None:
    """``note -``: the daemon writes today's daily note with its one writer and indexes it
    with its resident index, so a search right after finds the line."""
    vault, _daemon = served
    here = tmp_path / "work"
    here.mkdir()
    assert _dreamd(["status", "--vault", str(vault)], here).returncode == 0  # the record
    line = "The glaze kiln tripped its breaker: the cone 10 program draws too much current."
    run = _dreamd(["note", "-", "--section", "Incidents", "--json", "--vault", str(vault)],
                  here, stdin=line + "\n")
    assert run.returncode == 0 and not _imported(run, "lancedb"), _said(run)
    result = json.loads(run.stdout)
    assert (vault / result["path"]).read_text("utf-8").endswith(line + "\n")
    found = _dreamd(["search", "kiln breaker tripped", "--json", "--vault", str(vault)], here)
    assert found.returncode == 0 and not _imported(found, "lancedb"), _said(found)
    assert result["path"] in [hit["path"] for hit in json.loads(found.stdout)]


def test_other_settings_are_answered_in_process(reading: Any, tmp_path: Path) -> None:
    vault, _daemon = reading
    here = tmp_path / "work"
    here.mkdir()
    args = ["--set", "fusion.max_tokens=1234", "show", MEMORY, "--vault", str(vault)]
    assert _dreamd(args, here).returncode == 0  # records where these settings lead
    again = _dreamd(args, here)
    assert again.returncode == 0 and _imported(again, "lancedb")
    assert "other settings" in _said(again)
    # settings that only change how dreamd runs (its log level) are still served
    quiet = ["--set", "logging.level=error", "show", MEMORY, "--vault", str(vault)]
    assert _dreamd(quiet, here).returncode == 0
    served_run = _dreamd(quiet, here)
    assert served_run.returncode == 0 and not _imported(served_run, "lancedb")


def test_the_readme_hook_recipe_against_a_running_daemon(reading: Any, tmp_path: Path) -> None:
    vault, _daemon = reading
    readme = (REPO / "README.md").read_text("utf-8")
    found = re.search(r"```json\n(\{\n  \"hooks\".*?)```", readme, re.S)
    assert found is not None, "the README's hook recipe"
    recipe = json.loads(found.group(1))
    command = recipe["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    dreamd = f"{sys.executable} -X importtime -m daemon"
    line = command.replace("/path/to/dreamd/.venv/bin/dreamd", dreamd).replace(
        "~/Notes", str(vault))
    here = tmp_path / "project"
    here.mkdir()
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                        "prompt": "how should the integration tests treat the database?"})
    runs = [subprocess.run(["bash", "-c", line], cwd=here, input=event, text=True,
                           capture_output=True, timeout=120, check=False) for _ in range(2)]
    for run in runs:  # the vault as the daemon was started: served from the first prompt on
        assert run.returncode == 0 and "<background" in run.stdout, _said(run)
        assert MEMORY in run.stdout
        assert not _imported(run, "lancedb") and _said(run) == ""
    # (the retrieved part may reorder: each context counts its memories' recalls)


def _mcp_exchange(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "the MCP server closed its output"
        answer = json.loads(line)
        if answer.get("id") == message.get("id"):
            return answer


def test_an_mcp_session_is_proxied_to_the_daemon(reading: Any, tmp_path: Path) -> None:
    vault, _daemon = reading
    here = tmp_path / "work"
    here.mkdir()
    relative = [sys.executable, "-X", "importtime", "-m", "daemon", "mcp", "--vault", "./vault"]
    named = [*relative[:-1], str(vault)]
    # a relative vault not seen before: in-process (and recorded); then proxied; the vault
    # named by the folder the daemon was started with: proxied from the first session
    for args, cwd, proxied in ((relative, vault.parent, False), (relative, vault.parent, True),
                               (named, here, True)):
        # stderr to a file: the import-time lines would fill a pipe nobody reads meanwhile
        log = tmp_path / f"mcp-{len(list(tmp_path.glob('mcp-*.err')))}.err"
        with log.open("w") as stderr_file:
            proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=stderr_file, text=True)
        try:
            init = _mcp_exchange(proc, {
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}}})
            assert init["result"]["serverInfo"]["name"] == "dreamd"
            assert init["result"]["serverInfo"]["version"]  # the installed version
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0",
                                         "method": "notifications/initialized"}) + "\n")
            proc.stdin.flush()
            read = _mcp_exchange(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                        "params": {"name": "memory_read",
                                                   "arguments": {"memory": MEMORY}}})
            assert "real database" in json.dumps(read["result"]), read
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
        stderr = log.read_text("utf-8")
        imported_lancedb = any(line.rsplit("|", 1)[-1].strip() == "lancedb"
                               for line in stderr.splitlines() if line.startswith("import"))
        assert imported_lancedb is not proxied, stderr[-2000:]
        assert proc.returncode == 0


def test_invocations_are_read_like_the_cli_reads_them() -> None:
    parsed = client.parse_invocation(["-v", "--config", "c.toml", "--set=a.b=1", "search",
                                      "pnpm", "--vault=/v", "-n", "3"])
    assert parsed is not None
    assert (parsed.config, parsed.sets, parsed.command, parsed.vault) == \
        ("c.toml", ("a.b=1",), "search", "/v")
    assert parsed.args == ("pnpm", "--vault=/v", "-n", "3")
    assert client.parse_invocation(["context", "--hook"]).hook  # type: ignore[union-attr]
    # sync takes its vault as the argument: it decides where the command goes
    synced = client.parse_invocation(["sync", "--allow-mass-delete", "/other"])
    assert synced is not None and synced.vault == "/other"
    for argv in ([], ["--help"], ["search", "--help"], ["--unknown", "search"], ["--config"]):
        assert client.parse_invocation(argv) is None, argv


def test_a_changed_config_file_invalidates_the_record(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[default]\n", "utf-8")
    record = client.Resolution(tmp_path / "state", "f" * 64)
    client.write_resolution("k1", record, config)
    assert client.read_resolution("k1") == record
    time.sleep(0.01)
    config.write_text("[default]\n# edited\n", "utf-8")
    assert client.read_resolution("k1") is None
    assert client.read_resolution("never-written") is None


def _session_start(vault: Path, here: Path) -> subprocess.CompletedProcess[str]:
    event = json.dumps({"hook_event_name": "SessionStart", "session_id": "s",
                        "source": "startup"})
    return _dreamd(["context", "--hook", "--budget", "2000", "--vault", str(vault)], here,
                   stdin=event)


def test_a_session_start_with_no_daemon_reads_the_kept_context(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    here = tmp_path / "project"
    here.mkdir()
    first = _session_start(vault, here)
    assert first.returncode == 0 and MEMORY in first.stdout, _said(first)
    assert _imported(first, "lancedb")
    kept = _session_start(vault, here)
    assert kept.returncode == 0 and not _imported(kept, "lancedb") and not _imported(
        kept, "typer")
    assert kept.stdout == first.stdout and _said(kept) == ""
    # an edited memory makes the kept context stale: the next one is built anew
    memory = vault / "Memory" / "tests-hit-a-real-database.md"
    memory.write_text(memory.read_text("utf-8") + "\nAlso for the search index.\n", "utf-8")
    fresh = _session_start(vault, here)
    assert _imported(fresh, "lancedb") and "Also for the search index." in fresh.stdout
    # a forgotten memory leaves no copy in the kept contexts
    forget = _dreamd(["forget", MEMORY, "--vault", str(vault)], here, stdin="y\n")
    assert forget.returncode == 0, _said(forget)
    state = next((Path(os.environ["DREAMD_STORAGE__DATA_DIR"]) / "vaults").iterdir())
    leftovers = "".join(p.read_text("utf-8") for p in (state / "session-start").glob("*"))
    assert "real database" not in leftovers
    after = _session_start(vault, here)
    assert after.returncode == 0 and MEMORY not in after.stdout


def test_the_daemon_keeps_the_session_start_current(served: Any, tmp_path: Path) -> None:
    vault, daemon = served
    here = tmp_path / "project"
    here.mkdir()
    assert _session_start(vault, here).returncode == 0  # in-process: the record
    assert not _imported(_session_start(vault, here), "lancedb")  # served
    rule = "Always answer with the shortest working example first."
    added = _dreamd(["remember", rule, "--type", "feedback", "--vault", str(vault)], here)
    assert added.returncode == 0 and not _imported(added, "lancedb"), _said(added)
    assert daemon.stop() == 0
    later = _session_start(vault, here)  # no daemon now: the kept context, rebuilt by it
    assert later.returncode == 0 and not _imported(later, "lancedb"), _said(later)
    assert rule in later.stdout


def test_version_is_printed_before_anything_loads(tmp_path: Path) -> None:
    run = _dreamd(["--version"], tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("dreamd ")
    assert not _imported(run, "typer") and not _imported(run, "pydantic")


def test_autostart_starts_a_daemon_that_answers_the_next_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    here = tmp_path / "project"
    here.mkdir()
    monkeypatch.setenv("DREAMD_DAEMON__AUTOSTART", "true")
    args = ["show", MEMORY, "--vault", str(vault)]
    assert _dreamd(args, here).returncode == 0  # in-process: records the settings
    starting = _dreamd(args, here)
    assert starting.returncode == 0 and "started one in the background" in _said(starting)
    state = next((Path(os.environ["DREAMD_STORAGE__DATA_DIR"]) / "vaults").iterdir())
    record = harness.wait_until(
        lambda: json.loads((state / client.API_RECORD).read_text("utf-8"))
        if (state / client.API_RECORD).exists() else {},
        bool, timeout_s=120, what="the started daemon's api.json")
    try:
        quiet = _dreamd(args, here)  # no second start within the grace period
        assert "started one" not in _said(quiet)
        served_run = harness.wait_until(lambda: _dreamd(args, here),
                                        lambda r: not _imported(r, "lancedb"),
                                        timeout_s=120, what="a served answer", every_s=1)
        assert served_run.returncode == 0 and served_run.stdout == quiet.stdout
    finally:
        os.kill(record["pid"], signal.SIGTERM)
        harness.wait_until(lambda: (state / client.API_RECORD).exists(), lambda e: not e,
                           timeout_s=60, what="the daemon's exit")


def test_arguments_that_are_not_utf8_and_stalled_clients(served: Any, tmp_path: Path) -> None:
    vault, daemon = served
    here = tmp_path / "work"
    here.mkdir()
    odd = os.fsdecode(b"caf\xe9 glaze")  # an argument in another encoding
    run = _dreamd(["search", odd, "--vault", str(vault)], here)
    assert run.returncode == 0 and not _imported(run, "lancedb"), _said(run)
    hook = _dreamd(["context", "--hook", "--vault", str(vault)], here,
                   stdin='{"prompt": "caf\\udce9 glaze"}')
    assert hook.returncode == 0 and "<background" in hook.stdout
    # a client that asks for a long answer and never reads it does not hold the daemon
    big = "A long glaze log line. " * 150_000
    memory = vault / "Memory" / "glaze-log.md"
    memory.write_text("---\nname: Glaze log\ndescription: every firing\ntype: reference\n"
                      f"---\n{big}\n", "utf-8")
    harness.wait_until(lambda: _dreamd(["show", "Glaze log", "--vault", str(vault)], here),
                       lambda r: r.returncode == 0, timeout_s=60, what="the log indexed")
    record = json.loads((daemon.state_dir / client.API_RECORD).read_text("utf-8"))
    resolution = client.find_resolution(client.parse_invocation(  # type: ignore[arg-type]
        ["show", "Glaze log", "--vault", str(vault)]))
    assert resolution is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as staller:
        staller.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        staller.connect(record["socket"])
        staller.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "cli", "params": {
            "protocol": client.PROTOCOL, "settings": resolution.settings, "stdin": None,
            "argv": ["show", "Glaze log", "--vault", str(vault)], "terminal": {}}}).encode()
            + b"\n")
        time.sleep(0.5)  # the daemon is writing the answer nobody reads
        other = _dreamd(["status", "--vault", str(vault)], here)
        assert other.returncode == 0 and not _imported(other, "lancedb"), _said(other)


def test_the_record_key_follows_where_the_config_is_looked_up() -> None:
    invocation = client.parse_invocation(["status"])
    assert invocation is not None
    keys = {client.resolution_key(invocation, {"HOME": "/h", "XDG_CONFIG_HOME": xdg}, None)
            for xdg in ("/a", "/b")}
    assert len(keys) == 2
