"""`dreamd init` without a path: the vaults Obsidian knows, picked at a terminal.

The interactive cases run the real command in a pseudo-terminal (stdin must be a terminal
for dreamd to ask); the others run the typer app in-process with CliRunner, whose stdin is
not a terminal. Each test gets its own home folder with a real ``obsidian.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest
import structlog
from terminal import read_until
from typer.testing import CliRunner

from daemon.cli import app as cli_app

REPO = Path(__file__).resolve().parents[2]
PTY_TIMEOUT_S = 120.0


def obsidian_home(tmp_path: Path, vaults: dict[str, int], missing: tuple[str, ...] = (),
                  config_dir: Path | None = None) -> Path:
    """A home folder whose Obsidian knows ``vaults`` (folder name -> ts in ms); folders in
    ``missing`` are listed but not created."""
    home = tmp_path / "home"
    entries = {}
    for index, (name, ts) in enumerate(vaults.items()):
        if name not in missing:
            (home / name).mkdir(parents=True)
        entries[f"{index:016x}"] = {"path": str(home / name), "ts": ts}
    folder = config_dir or home / ".config" / "obsidian"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "obsidian.json").write_text(json.dumps({"vaults": entries}), encoding="utf-8")
    return home


def config_vault(config: Path) -> str:
    match = re.search(r'^path = "(.*)"$', config.read_text(encoding="utf-8"), re.MULTILINE)
    assert match, config.read_text(encoding="utf-8")
    return match.group(1)


def run_in_terminal(args: list[str], env: dict[str, str], answer: str,
                    prompt: str) -> tuple[int, str]:
    """Run ``python -m daemon ARGS`` with a pseudo-terminal as stdin/stdout/stderr; type
    ``answer`` once ``prompt`` shows. Returns the exit code and everything printed."""
    main_fd, sub_fd = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", *args], cwd=REPO, env=env,
        stdin=sub_fd, stdout=sub_fd, stderr=sub_fd, close_fds=True,
    )
    os.close(sub_fd)
    try:
        asked = read_until(main_fd, process, prompt, PTY_TIMEOUT_S)
        answered = prompt in asked
        if answered:
            os.write(main_fd, answer.encode())
        text = asked + read_until(main_fd, process, None, PTY_TIMEOUT_S)
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    assert answered, f"never asked {prompt!r}:\n{text}"
    return code, text


def terminal_env(home: Path, config_home: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), NO_COLOR="1", TERM="dumb", COLUMNS="250")
    env["XDG_CONFIG_HOME"] = str(config_home or home / ".config")
    return env


# --------------------------------------------------------------------------- at a terminal

needs_pty = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")


@needs_pty
def test_picking_a_number_writes_that_vault(tmp_path: Path) -> None:
    home = obsidian_home(tmp_path, {"Notes": 3_000, "Work": 2_000, "Old": 1_000})
    config = tmp_path / "dreamd.toml"

    code, shown = run_in_terminal(["--config", str(config), "init"], terminal_env(home),
                                  "2\n\n", "Vault number")  # then Enter: no service

    assert code == 0, shown
    assert "as a service" in shown and "later: dreamd service install" in shown
    listing = shown[shown.index("Vaults Obsidian knows:"):]
    assert [line.split()[:3] for line in listing.splitlines()[1:4]] == [
        ["1.", "Notes", str(home / "Notes")],
        ["2.", "Work", str(home / "Work")],
        ["3.", "Old", str(home / "Old")],
    ]
    assert f"wrote {config}" in shown
    assert config_vault(config) == str(home / "Work")


@needs_pty
def test_one_vault_is_confirmed_with_enter(tmp_path: Path) -> None:
    # XDG_CONFIG_HOME moved away from ~/.config; a listed folder that is gone cannot be taken
    config_home = tmp_path / "xdg"
    home = obsidian_home(tmp_path, {"Gone": 2_000, "Notes": 1_000}, missing=("Gone",),
                         config_dir=config_home / "obsidian")
    config = tmp_path / "dreamd.toml"

    code, shown = run_in_terminal(["--config", str(config), "init"],
                                  terminal_env(home, config_home), "\n\n", "Use Notes")

    assert code == 0, shown
    assert re.search(r"1\. Gone .*folder missing", shown)
    assert config_vault(config) == str(home / "Notes")


@needs_pty
def test_picking_a_vault_whose_folder_is_gone_asks_again(tmp_path: Path) -> None:
    home = obsidian_home(tmp_path, {"Notes": 2_000, "Gone": 1_000, "Work": 500},
                         missing=("Gone",))
    config = tmp_path / "dreamd.toml"

    code, shown = run_in_terminal(["--config", str(config), "init"], terminal_env(home),
                                  "2\n3\n\n", "Vault number")

    assert code == 0, shown
    assert f"{home / 'Gone'} no longer exists (Obsidian still lists it); pick another" in shown
    assert "Traceback" not in shown and config_vault(config) == str(home / "Work")


# --------------------------------------------------------------------------- without a terminal


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[MutableMapping[str, Any]]]:
    """The structlog events of the test (and none printed among the command's output)."""
    monkeypatch.setattr("daemon.cli.configure_logging", lambda **_: None)  # keep pytest's
    with structlog.testing.capture_logs() as captured:
        yield captured


@pytest.fixture
def cli(logs: list[MutableMapping[str, Any]]) -> CliRunner:
    return CliRunner()


def use_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


def test_without_a_terminal_it_lists_the_vaults_and_exits_2(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = obsidian_home(tmp_path, {"Notes": 2_000, "Gone": 1_000, "Work": 500},
                         missing=("Gone",))
    snap = home / "snap" / "obsidian" / "current" / ".config" / "obsidian"
    snap.mkdir(parents=True)
    (snap / "obsidian.json").write_text("[1, 2", encoding="utf-8")
    use_home(monkeypatch, home)
    config = tmp_path / "dreamd.toml"

    result = cli.invoke(cli_app, ["--config", str(config), "init"])

    assert result.exit_code == 2, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Vaults Obsidian knows:"
    assert [line.split()[:3] for line in lines[1:]] == [
        ["1.", "Notes", str(home / "Notes")],
        ["2.", "Gone", str(home / "Gone")],
        ["3.", "Work", str(home / "Work")],
    ]
    assert lines[2].endswith("folder missing") and "missing" not in lines[1] + lines[3]
    assert "run `dreamd init <path>` with one of these." in result.stderr
    assert f"skipped {snap / 'obsidian.json'}: not JSON" in result.stderr
    assert not config.exists()


def test_without_a_terminal_yes_takes_the_only_vault(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = obsidian_home(tmp_path, {"Notes": 2_000, "Gone": 1_000}, missing=("Gone",))
    use_home(monkeypatch, home)
    config = tmp_path / "dreamd.toml"

    refused = cli.invoke(cli_app, ["--config", str(config), "init"])
    assert refused.exit_code == 2 and "`dreamd init --yes` to take the only one" in \
        refused.stderr

    result = cli.invoke(cli_app, ["--config", str(config), "init", "--yes"])
    assert result.exit_code == 0, result.output
    assert config_vault(config) == str(home / "Notes")

    # --yes never guesses between two vaults
    home2 = obsidian_home(tmp_path / "two", {"A": 2, "B": 1})
    use_home(monkeypatch, home2)
    two = cli.invoke(cli_app, ["--config", str(tmp_path / "two.toml"), "init", "--yes"])
    assert two.exit_code == 2 and not (tmp_path / "two.toml").exists()


def test_nothing_found_says_where_it_looked(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch,
    logs: list[MutableMapping[str, Any]],
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    use_home(monkeypatch, home)

    result = cli.invoke(cli_app, ["--config", str(tmp_path / "dreamd.toml"), "init"])

    assert result.exit_code == 2 and result.stdout == ""
    assert "found no Obsidian vaults" in result.stderr
    for place in (home / ".config" / "obsidian",
                  home / ".var" / "app" / "md.obsidian.Obsidian" / "config" / "obsidian",
                  home / "snap" / "obsidian" / "current" / ".config" / "obsidian"):
        assert f"{place / 'obsidian.json'} (not found)" in result.stderr
    assert "Run `dreamd init <path>` with your vault's folder." in result.stderr
    assert [(e["event"], e["files"], e["vaults"]) for e in logs] == [
        ("obsidian.vaults_discovered", 3, 0)
    ]


def test_only_missing_folders_is_nothing_to_pick(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = obsidian_home(tmp_path, {"Gone": 1}, missing=("Gone",))
    use_home(monkeypatch, home)
    result = cli.invoke(cli_app, ["--config", str(tmp_path / "dreamd.toml"), "init", "--yes"])
    assert result.exit_code == 2
    assert "Gone" in result.stdout and "none of these folders exists any more" in result.stderr


def test_an_existing_config_is_refused_before_listing(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = obsidian_home(tmp_path, {"Notes": 1})
    use_home(monkeypatch, home)
    config = tmp_path / "dreamd.toml"
    config.write_text("# mine\n", encoding="utf-8")

    result = cli.invoke(cli_app, ["--config", str(config), "init", "--yes"])
    assert result.exit_code != 0 and "--force" in str(result.exception)
    assert result.stdout == "" and config.read_text(encoding="utf-8") == "# mine\n"

    forced = cli.invoke(cli_app, ["--config", str(config), "init", "--yes", "--force"])
    assert forced.exit_code == 0 and config_vault(config) == str(home / "Notes")


def test_with_a_path_obsidian_is_not_consulted(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "obsidian").mkdir(parents=True)
    (home / ".config" / "obsidian" / "obsidian.json").write_text("garbage", encoding="utf-8")
    use_home(monkeypatch, home)
    vault = tmp_path / "My vault"
    vault.mkdir()
    config = tmp_path / "dreamd.toml"

    result = cli.invoke(cli_app, ["--config", str(config), "init", str(vault)])

    assert result.exit_code == 0, result.output
    assert result.stderr == "" and "Vaults Obsidian knows" not in result.stdout
    assert config_vault(config) == str(vault.resolve())
