"""Shared helpers for the config tests: real files in tmp_path, environments as plain dicts."""

from __future__ import annotations

import copy
import json
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


#: The seed framework's config.json, in its own camelCase layout (values as in the seed).
SEED_CONFIG: dict[str, object] = {
    "cache": {"enabled": True, "ttlHours": 24, "maxSize": 10000, "semanticThreshold": 0.9},
    "obsidian": {
        "mode": "auto",
        "cli": {"enabled": True, "timeout": 5000},
        "direct": {"atomicWrites": True},
        "fallback": {"enabled": True, "maxRetries": 2},
    },
    "autoDream": {
        "enabled": True,
        "timeGate": {"minHoursBetweenDream": 24, "maxHoursBetweenDream": 168},
        "sessionGate": {"minSessionsForDream": 5, "scanIntervalMs": 600000},
    },
    "retrieval": {
        "defaultStrategy": "both-priority-ccb",
        "intentAnalysis": {
            "enableLLM": False,
            "enableRules": True,
            "llmConfidenceThreshold": 0.7,
            "ruleConfidenceThreshold": 0.5,
        },
        "progressiveSearch": {
            "enabled": True,
            "stages": [
                {"name": "ccb-fast", "limit": 5, "timeout": 100},
                {"name": "magma-extend", "limit": 10, "timeout": 300},
                {"name": "full-fusion", "limit": None, "timeout": 800},
            ],
        },
    },
    "fusion": {
        "maxTokens": 4000,
        "enableSemanticDeduplication": True,
        "semanticSimilarityThreshold": 0.85,
        "tokenBudget": {"dynamic": True, "maxTokensPerMemory": 500},
    },
    "environments": {
        "development": {
            "autoDream.timeGate.minHoursBetweenDream": 1,
            "cache.enabled": False,
            "retrieval.progressiveSearch.enabled": False,
        },
        "production": {
            "autoDream.timeGate.minHoursBetweenDream": 48,
            "cache.enabled": True,
            "retrieval.progressiveSearch.enabled": True,
        },
    },
}


@pytest.fixture
def seed_config() -> dict[str, object]:
    """A fresh copy of :data:`SEED_CONFIG`."""
    return copy.deepcopy(SEED_CONFIG)


@pytest.fixture
def seed_json(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(SEED_CONFIG, indent=2), encoding="utf-8")
    return path
