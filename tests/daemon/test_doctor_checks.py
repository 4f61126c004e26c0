"""Doctor checks on real temp folders (the inotify limit is a real file holding a number)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from config.errors import ConfigError
from config.loading import load_settings
from config.settings import Settings
from daemon.doctor_checks import (
    Check,
    FolderCount,
    check_config,
    check_daemon,
    check_disk_space,
    check_inotify_limit,
    check_service,
    check_store,
    check_vault_readable,
    count_watched_folders,
    run_checks,
)
from daemon.lock import DaemonLock
from daemon.service import plan_service

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_permissions = pytest.mark.skipif(AS_ROOT or sys.platform == "win32",
                                       reason="root ignores file permissions")


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> None:
    """No user config file or service folder of the machine running the tests leaks in."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".obsidian" / "plugins" / "p").mkdir(parents=True)
    return vault


def _limit(tmp_path: Path, value: str) -> Path:
    path = tmp_path / "max_user_watches"
    path.write_text(value + "\n", encoding="ascii")
    return path


# --------------------------------------------------------------------------- vault


def test_vault_readable(tmp_path: Path) -> None:
    assert check_vault_readable(tmp_path / "missing").status == "fail"
    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    assert check_vault_readable(tmp_path / "file.md").status == "fail"
    plain = tmp_path / "plain"
    plain.mkdir()
    warned = check_vault_readable(plain)
    assert warned.status == "warn" and "not an Obsidian vault?" in warned.detail
    vault = _vault(tmp_path)
    (vault / "a.md").write_text("a", encoding="utf-8")
    good = check_vault_readable(vault)
    assert good == Check("vault", "ok", f"{vault}: 2 entries, .obsidian/ present")
    (vault / "cfg").mkdir()
    assert check_vault_readable(vault, config_folder="cfg").status == "ok"


@needs_permissions
def test_unlistable_vault_fails(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    vault.chmod(0o000)
    try:
        assert check_vault_readable(vault).status == "fail"
    finally:
        vault.chmod(0o755)


# --------------------------------------------------------------------------- inotify


def _tree(tmp_path: Path) -> Path:
    """A vault with 10 watched folders (root included) and many that are skipped."""
    vault = _vault(tmp_path)
    for rel in ("Notes", "Notes/2026", "Notes/2026/11", "Memory", "Projects", "Projects/a",
                "Projects/a/assets", "Daily", "Läsning"):
        (vault / rel).mkdir(parents=True)
    for rel in (".git/objects/ab", ".trash/old", "node_modules/x/y", "Projects/a/node_modules/z",
                "Notes/.hidden/deep", ".obsidian/plugins/p/node_modules/q", "Custom cfg/sub"):
        (vault / rel).mkdir(parents=True)
    (vault / "link-out").symlink_to(tmp_path, target_is_directory=True)  # never followed
    return vault


def test_count_watched_folders(tmp_path: Path) -> None:
    vault = _tree(tmp_path)
    # watched: 9 + root + "Custom cfg" + its sub; skipped: .obsidian/plugins/p/node_modules/q
    # (5), .git/objects/ab (3), .trash/old (2), node_modules/x/y (3),
    # Projects/a/node_modules/z (2), Notes/.hidden/deep (2)
    assert count_watched_folders(vault) == FolderCount(watched=12, skipped=17)
    assert count_watched_folders(vault, config_folder="Custom cfg") == FolderCount(10, 19)


@pytest.mark.parametrize(
    ("limit", "status"), [("100", "ok"), ("20", "ok"), ("19", "warn"), ("12", "warn"),
                          ("11", "fail"), ("0", "fail")]
)
def test_inotify_thresholds(tmp_path: Path, limit: str, status: str) -> None:
    vault = _tree(tmp_path)
    check = check_inotify_limit(vault, config_folder="Custom cfg",
                                max_user_watches_path=_limit(tmp_path, limit), platform="linux")
    assert check.status == status
    assert check.detail.startswith(f"10 folders to watch, limit "
                                   f"fs.inotify.max_user_watches={limit} ")
    assert check.detail.endswith("; 19 folders under .git, .trash, node_modules etc. not counted")
    if status == "ok":
        assert check.hint is None
    else:
        assert check.hint is not None
        assert "sudo sysctl fs.inotify.max_user_watches=524288" in check.hint
        assert "/etc/sysctl.d/" in check.hint


def test_inotify_can_count_skipped_folders(tmp_path: Path) -> None:
    vault = _tree(tmp_path)
    check = check_inotify_limit(vault, config_folder="Custom cfg", include_skipped=True,
                                max_user_watches_path=_limit(tmp_path, "100"), platform="linux")
    assert check.status == "ok" and check.detail.startswith("29 folders to watch")
    assert check.detail.endswith("etc. counted")
    tight = check_inotify_limit(vault, include_skipped=True, platform="linux",
                                max_user_watches_path=_limit(tmp_path, "32"))
    assert tight.status == "fail"


def test_inotify_elsewhere_and_unreadable(tmp_path: Path) -> None:
    vault = _tree(tmp_path)
    assert check_inotify_limit(vault, platform="darwin") == Check("inotify", "ok",
                                                                  "ok (not Linux)")
    missing = check_inotify_limit(vault, platform="linux",
                                  max_user_watches_path=tmp_path / "absent")
    assert missing.status == "warn"
    garbage = check_inotify_limit(vault, platform="linux",
                                  max_user_watches_path=_limit(tmp_path, "many"))
    assert garbage.status == "warn"


# --------------------------------------------------------------------------- disk, config


def test_disk_space(tmp_path: Path) -> None:
    assert check_disk_space(tmp_path, min_free_mib=0).status == "ok"
    not_yet = check_disk_space(tmp_path / "a" / "b", min_free_mib=0)
    assert not_yet.status == "ok" and f"at {tmp_path}" in not_yet.detail
    full = check_disk_space(tmp_path, min_free_mib=10**12)
    assert full.status == "fail" and full.hint is not None


def test_config(tmp_path: Path) -> None:
    def broken() -> Settings:
        raise ConfigError("config: embedding.batch_size: must be ≥ 1 (file /x/config.toml)")

    failed = check_config(broken)
    assert failed.status == "fail" and "embedding.batch_size" in failed.detail
    good = check_config(lambda: load_settings(environ={},
                                              overrides={"vault.path": str(tmp_path)}).settings)
    assert good.status == "ok" and str(tmp_path) in good.detail


# --------------------------------------------------------------------------- store


def test_store(tmp_path: Path) -> None:
    # (a remote store is asked over the network: tests/scenarios/test_s3_store.py)
    absent = check_store(str(tmp_path / "data" / "lancedb"), "v")
    assert absent.status == "warn" and "does not exist yet" in absent.detail
    (tmp_path / "db").mkdir()
    assert check_store(str(tmp_path / "db"), "v").status == "ok"
    assert check_store((tmp_path / "db").as_uri(), "v").status == "ok"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert check_store(str(tmp_path / "file"), "v").status == "fail"


@needs_permissions
def test_store_read_only(tmp_path: Path) -> None:
    store = tmp_path / "db"
    store.mkdir()
    store.chmod(0o555)
    try:
        check = check_store(str(store), "v")
        assert check.status == "fail" and "not writable" in check.detail
    finally:
        store.chmod(0o755)


# --------------------------------------------------------------------------- daemon, service


def test_daemon(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert check_daemon(state).detail == "not running"
    with DaemonLock(state):
        assert check_daemon(state).detail.startswith(f"running (pid {os.getpid()}, started ")


def test_service(tmp_path: Path) -> None:
    home = tmp_path / "home"
    vault = _vault(tmp_path)
    plan = plan_service(vault, platform="linux", home=home, environ={})
    assert check_service(plan).detail.startswith("not installed")
    plan.path.parent.mkdir(parents=True)
    plan.path.write_bytes(plan.content)
    assert check_service(plan) == Check("service", "ok", f"installed: {plan.path}")
    plan.path.write_bytes(plan.content + b"# edited\n")
    assert check_service(plan).status == "warn"

    icloud = home / "Documents" / "vault"
    mac = plan_service(icloud, platform="darwin", home=home, environ={})
    mac.path.parent.mkdir(parents=True)
    mac.path.write_bytes(mac.content)
    warned = check_service(mac)
    assert warned.status == "warn" and warned.hint is not None
    assert "Full Disk Access" in warned.hint


# --------------------------------------------------------------------------- run_checks


def test_run_checks(tmp_path: Path) -> None:
    vault = _tree(tmp_path)

    def load() -> Settings:
        return load_settings(environ={}, overrides={
            "vault.path": str(vault), "storage.data_dir": str(tmp_path / "data")
        }).settings

    checks = run_checks(load, platform="linux",
                        max_user_watches_path=_limit(tmp_path, "1000000"))
    assert [c.name for c in checks] == ["config", "vault", "inotify", "disk", "store",
                                        "credentials", "daemon", "service"]
    assert {c.name: c.status for c in checks}["store"] == "warn"  # not built yet
    assert all(c.status != "fail" for c in checks), checks

    def broken() -> Settings:
        raise ConfigError("config: bad")

    assert [c.name for c in run_checks(broken)] == ["config"]
    no_vault = run_checks(lambda: load_settings(environ={}).settings, platform="linux")
    assert [(c.name, c.status) for c in no_vault] == [("config", "ok"), ("vault", "fail")]
    missing = run_checks(lambda: load_settings(environ={}, overrides={
        "vault.path": str(tmp_path / "gone"), "storage.data_dir": str(tmp_path / "data")
    }).settings, platform="win32")
    names = [c.name for c in missing]
    assert "inotify" not in names and names[-1] == "service"
    assert next(c for c in missing if c.name == "vault").status == "fail"
