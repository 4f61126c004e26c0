"""Obsidian write modes (``obsidian.mode`` = auto | cli | direct) through the real App.

The Obsidian CLI here is ``tests/support/obsidian_standin.py``, a STAND-IN for the Obsidian
desktop app's CLI (real subprocesses, the documented parameter syntax, real files), installed
as ``obsidian`` first on PATH; its call log tells which writes went through it. "Obsidian is
running" is a real process named ``obsidian`` (a copy of ``sleep``). The embedder is the
token-hash fake (conftest): these tests are about files and origins, not meaning.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import daemon_harness as h  # tests/support (pytest pythonpath)
import psutil  # type: ignore[import-untyped]
import pytest
from structlog.testing import capture_logs
from typer.testing import CliRunner

from ccb.obsidian_cli import ObsidianCliError
from ccb.parse import parse_note
from config.errors import VaultError
from config.loading import load_settings
from config.settings import ObsidianSettings
from daemon.app import App, make_write_router
from daemon.cli import app as cli_app
from daemon.doctor_checks import check_write_mode

Builder = Callable[..., tuple[App, object]]
MEMORY_INDEX = "Memory/MEMORY.md"
USER_MEMORY = "Memory/prefers-metric-units.md"


def _app(make_app: Builder, vault: Path, **settings: object) -> App:
    application, _ = make_app(vault, **settings)
    application.sync()
    return application


def _cli_app(make_app: Builder, vault: Path, **settings: object) -> App:
    return _app(make_app, vault, **{"obsidian.mode": "cli", **settings})


def _snapshot(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes()
            for p in sorted(vault.rglob("*")) if p.is_file()}


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# --------------------------------------------------------------------------- cli


def test_cli_mode_writes_memories_through_obsidian_and_recognises_the_echo(
        knobs: Any, vault: Path, make_app: Builder) -> None:
    app = _cli_app(make_app, vault)
    assert str(app.write_mode()) == "cli: obsidian.mode = cli"
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert knobs.created() == [result.path, MEMORY_INDEX]
    written = (vault / result.path).read_bytes()
    assert written.decode() == knobs.last_content(result.path)  # what the CLI wrote, exactly
    note = parse_note(result.path, written)
    assert note.memory is not None and "40 cm" in note.body
    # The echo: the version of these bytes is dreamd's ("api"), not a user edit …
    assert [v.origin for v in app.history().history(result.path)] == ["api"]
    # … and a sync finds nothing to re-process.
    again = app.sync()
    assert not again.changed_paths and not again.deleted
    assert app.consistency().check().clean


def test_a_user_note_is_never_written_through_the_cli(knobs: Any, vault: Path,
                                                     make_app: Builder) -> None:
    app = _cli_app(make_app, vault)
    path = "Baking/Sourdough starter.md"
    before = (vault / path).read_bytes()
    edited = before + b"\nFed at 9 am with rye.\n"
    outcome = app.writer.write(path, edited, base=before, origin="arbiter")
    assert outcome.status == "written" and (vault / path).read_bytes() == edited
    app.writer.write("Notes/new note.md", b"# New\n", base=None)
    assert knobs.calls() == []


def test_a_cli_that_fails_twice_succeeds_on_the_third_attempt(knobs: Any, vault: Path,
                                                              make_app: Builder) -> None:
    knobs.fail(2, "create")
    app = _cli_app(make_app, vault, **{"obsidian.fallback.max_retries": 2})
    with capture_logs() as logs:
        result = app.memories().remember("Glazes are fired at cone 6.", type="project")
    assert knobs.created() == [result.path] * 3 + [MEMORY_INDEX]
    assert (vault / result.path).read_bytes().decode() == knobs.last_content(result.path)
    failed = [e for e in logs if e["event"] == "write.cli_failed"]
    assert [(e["attempt"], e["kind"]) for e in failed] == [(1, "failed"), (2, "failed")]
    assert not [e for e in logs if e["event"] == "write.fallback"]
    assert [v.origin for v in app.history().history(result.path)] == ["api"]


def test_a_cli_that_fails_three_times_falls_back_to_direct(knobs: Any, vault: Path,
                                                           make_app: Builder) -> None:
    knobs.fail(3, "create")
    app = _cli_app(make_app, vault, **{"obsidian.fallback.max_retries": 2})
    with capture_logs() as logs:
        result = app.memories().remember("Glazes are fired at cone 6.", type="project")
    assert knobs.created() == [result.path] * 3 + [MEMORY_INDEX]
    fallback = [e for e in logs if e["event"] == "write.fallback"]
    assert [e["path"] for e in fallback] == [result.path]
    assert "exited with 1" in fallback[0]["error"]
    note = parse_note(result.path, (vault / result.path).read_bytes())
    assert note.memory is not None and "cone 6" in note.body
    assert [v.origin for v in app.history().history(result.path)] == ["api"]


def test_fallback_disabled_fails_clearly_and_leaves_the_files(knobs: Any, vault: Path,
                                                              make_app: Builder) -> None:
    knobs.fail(100, "create")
    app = _cli_app(make_app, vault, **{"obsidian.fallback.enabled": False,
                                       "obsidian.fallback.max_retries": 1})
    before = _snapshot(vault)
    with pytest.raises(ObsidianCliError) as caught:
        app.memories().remember("Glazes are fired at cone 6.", type="project")
    message = str(caught.value)
    assert isinstance(caught.value, VaultError)
    assert "Obsidian CLI failed" in message and "obsidian.fallback.enabled = false" in message
    assert "exited with 1" in message
    edited = before[USER_MEMORY].replace(b"metric", b"metric (SI)", 1)
    with pytest.raises(ObsidianCliError):
        app.writer.write(USER_MEMORY, edited, base=before[USER_MEMORY])
    assert _snapshot(vault) == before  # nothing created, nothing changed
    assert len(knobs.created()) == 4  # two writes, two attempts each


def test_a_hanging_cli_times_out_then_the_file_is_written_directly(
        knobs: Any, vault: Path, make_app: Builder) -> None:
    knobs.hang("create")
    app = _cli_app(make_app, vault, **{"obsidian.cli.timeout_ms": 1000,
                                       "obsidian.fallback.max_retries": 1})
    before = (vault / USER_MEMORY).read_bytes()
    edited = before.replace(b"metric", b"metric (SI)", 1)
    with capture_logs() as logs:
        outcome = app.writer.write(USER_MEMORY, edited, base=before)
    assert outcome.status == "written"
    assert (vault / USER_MEMORY).read_bytes() == edited
    assert knobs.created() == [USER_MEMORY] * 2
    assert [e["kind"] for e in logs if e["event"] == "write.cli_failed"] == ["timeout"] * 2
    assert "timed out after 1000 ms" in next(
        e for e in logs if e["event"] == "write.fallback")["error"]
    pids = knobs.hang_pids()
    deadline = time.monotonic() + 10
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids and all(_gone(p) for p in pids)  # nothing left that could write later
    assert (vault / USER_MEMORY).read_bytes() == edited


def test_content_with_a_backslash_goes_direct_byte_for_byte(knobs: Any, vault: Path,
                                                            make_app: Builder) -> None:
    app = _cli_app(make_app, vault)
    text = "Notes live in C:\\Users\\me\\Vault and \\n is not a newline here."
    with capture_logs() as logs:
        result = app.memories().remember(text, type="reference")
    assert result.path not in knobs.created()
    data = (vault / result.path).read_bytes()
    assert text.encode() in data
    reasons = [e["reason"] for e in logs if e["event"] == "write.direct"]
    assert any("backslash" in reason for reason in reasons)


def test_atomic_writes_off_writes_memory_files_in_place(knobs: Any, vault: Path,
                                                        make_app: Builder) -> None:
    app = _app(make_app, vault, **{"obsidian.mode": "direct",
                                   "obsidian.direct.atomic_writes": False})
    target = vault / USER_MEMORY
    before, inode = target.read_bytes(), target.stat().st_ino
    edited = before.replace(b"metric", b"metric (SI)", 1)
    assert app.writer.write(USER_MEMORY, edited, base=before).status == "written"
    assert target.read_bytes() == edited and target.stat().st_ino == inode
    assert knobs.calls() == []


# --------------------------------------------------------------------------- direct, auto


def test_direct_mode_never_runs_the_cli(knobs: Any, vault: Path, make_app: Builder,
                                        obsidian_app: subprocess.Popen[bytes]) -> None:
    app = _app(make_app, vault, **{"obsidian.mode": "direct"})
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert (vault / result.path).is_file()
    assert knobs.calls() == []
    assert str(app.write_mode()) == "direct: obsidian.mode = direct"


def test_cli_disabled_never_runs_the_cli_even_in_cli_mode(
        knobs: Any, vault: Path, make_app: Builder,
        obsidian_app: subprocess.Popen[bytes]) -> None:
    """obsidian.cli.enabled = false wins over obsidian.mode = cli (the seed's switch)."""
    app = _cli_app(make_app, vault, **{"obsidian.cli.enabled": False})
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert (vault / result.path).is_file()
    assert knobs.calls() == []
    assert str(app.write_mode()) == "direct: obsidian.cli.enabled = false"


def test_auto_without_obsidian_running_writes_directly_and_runs_no_cli(
        knobs: Any, vault: Path, make_app: Builder) -> None:
    app = _app(make_app, vault)  # obsidian.mode defaults to auto
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert (vault / result.path).is_file()
    assert knobs.calls() == []  # not even `obsidian version`: it would launch the app
    assert str(app.write_mode()) == "direct: obsidian.mode = auto and Obsidian is not running"
    assert [v.origin for v in app.history().history(result.path)] == ["api"]


def test_auto_with_obsidian_running_writes_through_the_cli(
        knobs: Any, vault: Path, make_app: Builder,
        obsidian_app: subprocess.Popen[bytes]) -> None:
    app = _app(make_app, vault)
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert [argv[0] for argv in knobs.calls()] == ["version", "vault", "create", "create"]
    assert knobs.created() == [result.path, MEMORY_INDEX]
    mode = app.write_mode()
    assert mode.mode == "cli"
    assert mode.reason.startswith("Obsidian is running and obsidian version answered in ")


def test_auto_after_a_cli_timeout_writes_directly_without_waiting_again(
        knobs: Any, vault: Path, make_app: Builder,
        obsidian_app: subprocess.Popen[bytes]) -> None:
    knobs.hang("create")
    app = _app(make_app, vault, **{"obsidian.cli.timeout_ms": 2000})
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    # one create timed out (no retry in auto), then the cool-down: MEMORY.md went direct
    assert knobs.created() == [result.path]
    note = parse_note(result.path, (vault / result.path).read_bytes())
    assert note.memory is not None and "40 cm" in note.body
    assert (vault / MEMORY_INDEX).read_bytes().count(Path(result.path).name.encode()) == 1
    mode = app.write_mode()
    assert mode.mode == "direct" and "timed out" in mode.reason
    app.memories().remember("Glazes are fired at cone 6.", type="project")
    assert len(knobs.created()) == 1  # still cooling down: no new CLI call


def test_auto_does_not_write_into_another_vault(
        knobs: Any, vault: Path, make_app: Builder, tmp_path: Path,
        obsidian_app: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI falls back to the *active* vault when its folder is not a vault it knows:
    dreamd checks which vault it acts on and writes directly otherwise."""
    other = tmp_path / "other"
    (other / ".obsidian").mkdir(parents=True)
    monkeypatch.setenv("OBSIDIAN_STANDIN_ACTIVE_VAULT", str(other))
    (vault / ".obsidian").rename(vault / ".obsidian-off")  # not a vault to Obsidian now
    app = _app(make_app, vault, **{"vault.config_folder": ".obsidian-off"})
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert (vault / result.path).is_file()
    assert knobs.created() == []
    assert not any(p.is_file() for p in other.rglob("*.md"))
    mode = app.write_mode()
    assert mode.mode == "direct" and "acts on the vault" in mode.reason and mode.hint


# --------------------------------------------------------------------------- doctor


def test_doctor_names_the_write_mode_and_why(standin: Any, knobs: Any, vault: Path,
                                             make_app: Builder, tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(cli_app, ["doctor", "--vault", str(vault)])
    assert "write mode: direct: obsidian.mode = auto and Obsidian is not running" \
        in done.output
    done = runner.invoke(cli_app, ["--set", "obsidian.mode=direct", "doctor", "--vault",
                                   str(vault)])
    assert "write mode: direct: obsidian.mode = direct" in done.output
    app = standin.start_fake_app(tmp_path / "app")
    try:
        done = runner.invoke(cli_app, ["doctor", "--vault", str(vault)])
        assert "write mode: cli: Obsidian is running and obsidian version answered in " \
            in done.output
        done = runner.invoke(cli_app, ["--set", "obsidian.cli.enabled=false", "doctor",
                                       "--vault", str(vault)])
        assert "write mode: direct: obsidian.cli.enabled = false" in done.output
    finally:
        app.kill()
        app.wait()
    assert [argv[0] for argv in knobs.calls()] == ["version", "vault"]  # only while running
    settings = _app(make_app, vault, **{"obsidian.mode": "cli",
                                        "obsidian.cli.command": "no-such-obsidian"}).settings
    check = check_write_mode(make_write_router(settings, vault))
    assert check.status == "warn" and "not installed" in check.detail and check.hint


def test_the_readme_obsidian_config_is_valid(tmp_path: Path) -> None:
    readme = (h.REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Writing through Obsidian (obsidian.mode)", 1)[1]
    section = section.split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```toml\n(.+?)\n```", section, flags=re.S)
    config = tmp_path / "config.toml"
    config.write_text(snippet, encoding="utf-8")
    loaded = load_settings(config_path=config, env_name=None, overrides={})
    assert loaded.settings.obsidian == ObsidianSettings()  # the README shows the defaults
    assert loaded.sources["obsidian.fallback.max_retries"].startswith("file:")
    assert "stand-in" in section and "tests/support/obsidian_standin.py" in section


# --------------------------------------------------------------------------- the daemon


def test_a_cli_write_seen_by_the_running_daemon_is_dreamds_not_a_user_edit(
        knobs: Any, vault: Path, make_app: Builder, tmp_path: Path,
        daemons: list[Any]) -> None:
    daemon = h.DaemonProcess.start(vault, tmp_path / "daemon.log")
    daemons.append(daemon)
    daemon.wait_state("watching", timeout_s=120)
    app, _ = make_app(vault, **{"obsidian.mode": "cli"})
    result = app.memories().remember("The kiln shelf is 40 cm wide.", type="reference")
    assert knobs.created() == [result.path, MEMORY_INDEX]
    h.wait_until(lambda: h.index_vs_disk(h.fresh_app(vault)), lambda p: not p,
                 timeout_s=60, what="the daemon indexed the CLI write", every_s=0.3)
    fresh = h.fresh_app(vault)
    assert [v.origin for v in fresh.history().history(result.path)] == ["api"]
    assert fresh.session_count().edit_bursts == 0  # not counted as the user's editing
    assert daemon.stop() == 0, daemon.log_tail()
