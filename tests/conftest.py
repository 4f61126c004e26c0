"""Suite-wide fixtures: every test runs with its own data and config folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def _shared(part: str) -> Path:
    """``../shared/<part>``: the real inputs of the suite. A checkout without them skips
    those tests; CI (``CI`` set) must have them, so there it is a failure."""
    path = SHARED / part
    if not path.is_dir():
        message = f"{path} not found: the suite reads the shared cases and corpora from there"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    """``../shared/cases`` (read-only): inputs built from public bug reports."""
    return _shared("cases")


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """``../shared/corpora`` (read-only): real vaults written by other people."""
    return _shared("corpora")


@pytest.fixture(autouse=True)
def isolated_dreamd(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point dreamd's data dir and config file at a fresh temp folder; clear DREAMD_* vars."""
    home = tmp_path_factory.mktemp("dreamd-home")
    for key in list(os.environ):
        if key.startswith("DREAMD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DREAMD_STORAGE__DATA_DIR", str(home / "data"))
    monkeypatch.setenv("DREAMD_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    monkeypatch.setenv("LANCEDB_LOG", "error")
    return home
