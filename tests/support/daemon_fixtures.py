"""Fixtures of the daemon tests and the scenarios: a copy of the demo vault, an App built on it
with the FAKE token-hash embedder, and the daemon processes a test started. Their folders'
``conftest.py`` import them by name (``tests/support`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import TokenHashEmbedder

from daemon.app import App, load

__all__ = ["daemons", "make_app", "vault"]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def daemons() -> Iterator[list[Any]]:
    """Daemon processes a test started; any still running at teardown are SIGKILLed."""
    started: list[Any] = []
    yield started
    for process in started:
        process.kill9()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh copy of vault_example/ (tests may edit it freely)."""
    target = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", target, symlinks=True)
    return target


@pytest.fixture
def make_app() -> Callable[[Path], tuple[App, TokenHashEmbedder]]:
    """Build an App on a vault with the fake embedder injected (composition-root seam)."""

    def build(root: Path, **overrides: object) -> tuple[App, TokenHashEmbedder]:
        fake = TokenHashEmbedder()
        application = App.create(load(None, None, {"vault.path": str(root), **overrides}),
                                 embedder=fake)
        return application, fake

    return build
