"""Service units and agents: rendered, verified by systemd itself, installed into a tmp HOME.

`systemctl`/`launchctl` are real where they exist; the success paths use tiny stub scripts on
PATH that record their arguments (the real managers cannot be driven in a container, and
tests must never touch the developer's own service manager).
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config.errors import DreamdError
from config.settings import vault_id
from daemon.service import (
    CommandRan,
    CommandSkipped,
    ServicePlan,
    install,
    launchd_label,
    plan_service,
    render_launchd_plist,
    render_systemd_unit,
    service_id,
    service_status,
    systemd_unit_name,
    uninstall,
)

REPO = Path(__file__).resolve().parents[2]
PYTHON = Path(sys.executable).absolute()
ODD_NAME = "My vault é%$x"  # space, non-ASCII, systemd specifier and variable characters


@pytest.fixture
def odd_vault(tmp_path: Path) -> Path:
    vault = tmp_path / ODD_NAME
    (vault / ".obsidian").mkdir(parents=True)
    return vault


@pytest.fixture
def no_user_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every `systemctl --user` call fail to reach a manager, on any machine."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


def _stub_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> Path:
    """Executables on a fresh PATH that append their argv to calls.log and exit 0."""
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir()
    for name in names:
        script = bin_dir / name
        script.write_text(
            f'#!/bin/sh\necho "{name} $*" >> "{bin_dir}/calls.log"\necho "{name} says ok"\n',
            encoding="utf-8",
        )
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir / "calls.log"


def _calls(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _systemd_plan(vault: Path, home: Path, *, python: Path = PYTHON,
                  env_name: str | None = None) -> ServicePlan:
    return plan_service(vault, python=python, env_name=env_name, platform="linux", home=home,
                        environ={"XDG_CONFIG_HOME": str(home / "xdg")})


def _launchd_plan(vault: Path, home: Path) -> ServicePlan:
    return plan_service(vault, python=PYTHON, platform="darwin", home=home, environ={})


# --------------------------------------------------------------------------- names


def test_service_id_is_ascii_and_keeps_the_vault_digest(tmp_path: Path) -> None:
    vault = tmp_path / "Notes é"
    digest = vault_id(vault).rsplit("-", 1)[1]
    assert service_id(vault) == f"notes-e-{digest}"
    assert service_id(tmp_path / "笔记") == vault_id(tmp_path / "笔记").rsplit("-", 1)[1]
    assert systemd_unit_name(vault) == f"dreamd-notes-e-{digest}.service"
    assert launchd_label(vault) == f"io.dreamd.notes-e-{digest}"
    assert service_id(tmp_path / "a") != service_id(tmp_path / "b" / "a")


# --------------------------------------------------------------------------- systemd


def test_systemd_unit_text(odd_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / 'conf "dir"' / "config.toml"
    text = render_systemd_unit(python=PYTHON, config_path=config, vault=odd_vault,
                               env_name="production")
    lines = text.splitlines()
    escaped_vault = str(odd_vault).replace("%", "%%").replace("$", "$$")
    assert f'ExecStart="{PYTHON}" "-P" "-m" "daemon" "run" "{escaped_vault}"' in lines
    for expected in ("Type=notify", "NotifyAccess=main", "ExecReload=/bin/kill -HUP $MAINPID",
                     "Restart=on-failure", "RestartSec=5", "WatchdogSec=60", "Nice=10",
                     "RestartPreventExitStatus=3 7", "WantedBy=default.target",
                     'Environment="DREAMD_ENV=production"',
                     'Environment="DREAMD_LOGGING__FORMAT=json"'):
        assert expected in lines
    # Environment= expands specifiers but not variables; quotes are backslash-escaped.
    config_text = str(config).replace("%", "%%").replace('"', '\\"')
    assert f'Environment="DREAMD_CONFIG={config_text}"' in lines
    description = next(line for line in lines if line.startswith("Description="))
    assert "My vault é%%$x" in description

    bare = render_systemd_unit(python=PYTHON, config_path=None, vault=odd_vault, env_name=None)
    assert "DREAMD_CONFIG" not in bare and "DREAMD_ENV=" not in bare
    assert 'Environment="DREAMD_LOGGING__FORMAT=json"' in bare.splitlines()


def _verify(unit: Path, runtime: Path) -> subprocess.CompletedProcess[str]:
    # `--user` needs a runtime folder; containers often have no XDG_RUNTIME_DIR, which makes
    # verify fail with "Failed to lookup RuntimeDirectory path" before reading the unit.
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(["systemd-analyze", "verify", "--user", str(unit)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_analyze_verifies_the_unit(odd_vault: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    # The interpreter path itself has a space, non-ASCII and `%`/`$`: verify checks that the
    # executable exists, so a quoting mistake there fails the test.
    odd_bin = tmp_path / "py thon é%$" / "bin"
    odd_bin.mkdir(parents=True)
    (odd_bin / "python").symlink_to(PYTHON)
    for python in (PYTHON, odd_bin / "python"):
        text = render_systemd_unit(python=python, config_path=tmp_path / "c f.toml",
                                   vault=odd_vault, env_name="dev")
        unit = tmp_path / systemd_unit_name(odd_vault)
        unit.write_text(text, encoding="utf-8")
        done = _verify(unit, runtime)
        assert done.returncode == 0, done.stderr
        assert str(unit) not in done.stdout + done.stderr, done.stdout + done.stderr

    # Control: verify does object to an interpreter that is not there.
    missing = render_systemd_unit(python=tmp_path / "no such" / "python", config_path=None,
                                  vault=odd_vault, env_name=None)
    unit.write_text(missing, encoding="utf-8")
    done = _verify(unit, runtime)
    assert done.returncode != 0
    assert "no such/python" in done.stderr


def test_plan_paths_respect_xdg_config_home(odd_vault: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    plan = _systemd_plan(odd_vault, home)
    assert plan.kind == "systemd"
    assert plan.path == home / "xdg" / "systemd" / "user" / systemd_unit_name(odd_vault)
    assert plan.vault == odd_vault.resolve()
    relative = plan_service(odd_vault, python=PYTHON, platform="linux", home=home,
                            environ={"XDG_CONFIG_HOME": "relative/ignored"})
    assert relative.path.parent == home / ".config" / "systemd" / "user"
    with pytest.raises(DreamdError, match="win32"):
        plan_service(odd_vault, python=PYTHON, platform="win32", home=home, environ={})


def test_plan_keeps_the_venv_interpreter_unresolved(odd_vault: Path, tmp_path: Path) -> None:
    link_dir = tmp_path / "venv" / "bin"
    link_dir.mkdir(parents=True)
    (link_dir / "python").symlink_to(PYTHON)
    plan = _systemd_plan(odd_vault, tmp_path / "home", python=link_dir / "python")
    assert plan.python == link_dir / "python"
    assert f'"{link_dir / "python"}" "-P"' in plan.content.decode()


def test_install_dry_run_touches_nothing(odd_vault: Path, tmp_path: Path) -> None:
    plan = _systemd_plan(odd_vault, tmp_path / "home", env_name="production")
    result = install(plan, dry_run=True)
    assert not plan.path.exists() and not (tmp_path / "home").exists()
    assert result.changed_files == ()
    assert all(isinstance(c, CommandSkipped) and c.reason == "dry run" for c in result.commands)
    assert [c.argv for c in result.commands] == [
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "enable", "--now", plan.name),
    ]
    text = "\n".join(result.lines())
    assert f"would write {plan.path}" in text
    assert "  Type=notify" in text and "DREAMD_ENV=production" in text
    assert f"systemctl --user enable --now {plan.name}" in text
    assert not uninstall(plan, dry_run=True).commands  # nothing installed: nothing to undo


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="needs a real systemctl")
@pytest.mark.usefixtures("no_user_manager")
def test_install_with_unreachable_manager_writes_the_unit_and_says_what_to_run(
    odd_vault: Path, tmp_path: Path
) -> None:
    plan = _systemd_plan(odd_vault, tmp_path / "home")
    result = install(plan, dry_run=False)
    assert plan.path.read_bytes() == plan.content
    assert result.changed_files == (plan.path,)
    assert not result.ok
    first = result.commands[0]
    assert isinstance(first, CommandRan) and first.returncode != 0 and first.output
    assert result.todo == ("systemctl --user daemon-reload",
                           f"systemctl --user enable --now {plan.name}")
    text = "\n".join(result.lines())
    assert "still to do — run these in your login session:" in text
    assert f"  systemctl --user enable --now {plan.name}" in text
    assert "loginctl enable-linger" in text

    # Uninstall: systemctl cannot disable, so the enable link is removed by hand.
    wants = plan.path.parent / "default.target.wants"
    wants.mkdir()
    (wants / plan.name).symlink_to(plan.path)
    gone = uninstall(plan, dry_run=False)
    assert not plan.path.exists() and not (wants / plan.name).is_symlink()
    assert set(gone.changed_files) == {plan.path, wants / plan.name}
    assert gone.todo == (f"systemctl --user stop {plan.name}", "systemctl --user daemon-reload")


def test_install_without_systemctl(odd_vault: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    plan = _systemd_plan(odd_vault, tmp_path / "home")
    result = install(plan, dry_run=False)
    assert plan.path.read_bytes() == plan.content
    assert result.commands[0] == CommandSkipped(("systemctl", "--user", "daemon-reload"),
                                                "systemctl not found on PATH")
    assert len(result.todo) == 2
    assert "not run (systemctl not found on PATH)" in "\n".join(result.lines())


def test_install_status_reinstall_uninstall_with_working_systemctl(
    odd_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _stub_bin(tmp_path, monkeypatch, "systemctl")
    home = tmp_path / "home"
    plan = _systemd_plan(odd_vault, home)
    assert not service_status(plan).installed

    result = install(plan, dry_run=False)
    assert result.ok and result.changed_files == (plan.path,)
    assert all(isinstance(c, CommandRan) and c.ok for c in result.commands)
    assert _calls(log) == ["systemctl --user daemon-reload",
                           f"systemctl --user enable --now {plan.name}"]

    status = service_status(plan)
    assert status.installed and status.up_to_date
    assert [c.argv[2] for c in status.commands] == ["is-enabled", "is-active"]

    again = install(plan, dry_run=False)  # same content: not rewritten, no restart
    assert again.changed_files == () and "unchanged" in "\n".join(again.lines())
    changed = _systemd_plan(odd_vault, home, env_name="production")
    assert not service_status(changed).up_to_date
    log.unlink()
    install(changed, dry_run=False)
    assert _calls(log)[-1] == f"systemctl --user restart {plan.name}"

    log.unlink()
    gone = uninstall(changed, dry_run=False)
    assert gone.ok and not plan.path.exists()
    assert _calls(log) == [f"systemctl --user disable --now {plan.name}",
                           "systemctl --user daemon-reload"]
    assert uninstall(changed, dry_run=False).lines() == [f"not installed: {plan.path} absent"]


# --------------------------------------------------------------------------- launchd


def test_launchd_plist_round_trip(odd_vault: Path, tmp_path: Path) -> None:
    logs = tmp_path / "Logs"
    data = render_launchd_plist(python=PYTHON, config_path=tmp_path / "c.toml", vault=odd_vault,
                                env_name="dev", log_dir=logs)
    plist = plistlib.loads(data)
    ident = service_id(odd_vault)
    assert plist["Label"] == f"io.dreamd.{ident}"
    assert plist["ProgramArguments"] == [str(PYTHON), "-P", "-m", "daemon", "run", str(odd_vault)]
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["ProcessType"] == "Background"
    assert plist["EnvironmentVariables"] == {
        "PATH": f"{PYTHON.parent}:/usr/bin:/bin:/usr/sbin:/sbin",
        "DREAMD_CONFIG": str(tmp_path / "c.toml"),
        "DREAMD_ENV": "dev",
        "DREAMD_LOGGING__FORMAT": "json",
    }
    assert plist["StandardOutPath"] == str(logs / f"{ident}.out.log")
    assert plist["StandardErrorPath"] == str(logs / f"{ident}.err.log")


def test_launchd_install_and_uninstall(odd_vault: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    log = _stub_bin(tmp_path, monkeypatch, "launchctl")
    home = tmp_path / "home"
    plan = _launchd_plan(odd_vault, home)
    assert plan.path == home / "Library" / "LaunchAgents" / f"{plan.name}.plist"
    result = install(plan, dry_run=False)
    assert result.ok and plan.path.read_bytes() == plan.content
    assert plan.log_dir is not None and plan.log_dir.is_dir()
    uid = os.getuid()
    assert _calls(log) == [f"launchctl enable gui/{uid}/{plan.name}",
                           f"launchctl bootstrap gui/{uid} {plan.path}"]
    assert not any("Full Disk Access" in note for note in result.notes)

    log.unlink()
    gone = uninstall(plan, dry_run=False)
    assert gone.ok and not plan.path.exists()
    assert _calls(log) == [f"launchctl bootout gui/{uid}/{plan.name}"]


def test_launchd_reinstall_boots_out_first_and_tolerates_failure(
    odd_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _stub_bin(tmp_path, monkeypatch, "launchctl")
    home = tmp_path / "home"
    plan = _launchd_plan(odd_vault, home)
    plan.path.parent.mkdir(parents=True)
    plan.path.write_bytes(b"old")
    # a bootout that fails ("not loaded") must not stop the install
    script = log.parent / "launchctl"
    script.write_text(script.read_text(encoding="utf-8").replace(
        'echo "launchctl says ok"', 'case "$1" in bootout) exit 3;; esac'), encoding="utf-8")
    result = install(plan, dry_run=False)
    assert [c.argv[1] for c in result.commands] == ["bootout", "enable", "bootstrap"]
    first = result.commands[0]
    assert isinstance(first, CommandRan) and first.returncode == 3
    assert result.ok


def test_launchd_without_launchctl_and_privacy_note(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    home = tmp_path / "home"
    vault = home / "Library" / "Mobile Documents" / "iCloud~md~obsidian" / "Documents" / "V"
    vault.mkdir(parents=True)
    plan = _launchd_plan(vault, home)
    result = install(plan, dry_run=False)
    assert plan.path.exists()
    assert result.todo == (f"launchctl enable {plan.launchd_target}",
                           f"launchctl bootstrap gui/{os.getuid()} {plan.path}")
    note = next(n for n in result.notes if "Full Disk Access" in n)
    assert "iCloud Drive" in note and str(PYTHON.resolve()) in note
    documents = _launchd_plan(home / "Documents" / "vault", home)
    assert any("~/Documents" in n for n in install(documents, dry_run=True).notes)
    gone = uninstall(plan, dry_run=False)
    assert not plan.path.exists()
    assert gone.todo == (f"launchctl bootout {plan.launchd_target}",)


# --------------------------------------------------------------------------- python -m daemon


def test_dash_p_keeps_a_stray_daemon_folder_out(tmp_path: Path) -> None:
    """The unit runs with the user's home as working folder; `-P` keeps it off sys.path."""
    (tmp_path / "daemon").mkdir()
    (tmp_path / "daemon" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    code = "import daemon, sys; print(daemon.__file__)"
    shadowed = subprocess.run([str(PYTHON), "-c", code], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, check=False)
    assert "shadowed" in shadowed.stderr
    safe = subprocess.run([str(PYTHON), "-P", "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=True)
    assert Path(safe.stdout.strip()).is_relative_to(REPO / "daemon")


def test_python_dash_m_daemon_runs_the_cli(tmp_path: Path) -> None:
    done = subprocess.run([str(PYTHON), "-P", "-m", "daemon", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout
