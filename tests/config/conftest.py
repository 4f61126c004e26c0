"""Shared helpers for the config tests: real files in tmp_path, environments as plain dicts."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from config import default_config_path


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point platformdirs at empty tmp folders, so no test reads the real user config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    if not default_config_path().is_relative_to(tmp_path):
        pytest.skip("platformdirs ignores XDG_CONFIG_HOME on this platform")
    return tmp_path


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write ``text`` to ``tmp_path / name`` and return the path."""

    def write(text: str, name: str = "config.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


#: The seed framework's config.json (camelCase layout), as a file: tests/seed-config.json.
SEED_CONFIG_FILE = Path(__file__).resolve().parents[1] / "seed-config.json"
SEED_CONFIG: dict[str, object] = json.loads(SEED_CONFIG_FILE.read_text(encoding="utf-8"))


@pytest.fixture
def seed_config() -> dict[str, object]:
    """A fresh copy of :data:`SEED_CONFIG`."""
    return copy.deepcopy(SEED_CONFIG)


@pytest.fixture
def seed_json(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    shutil.copyfile(SEED_CONFIG_FILE, path)  # byte for byte: the file loads unchanged
    return path
