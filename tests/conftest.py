"""Suite-wide fixtures: every test runs with its own data and config folders."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def isolated_dreamd(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point dreamd's data dir and config file at a fresh temp folder; clear DREAMD_* vars."""
    import os

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
