"""Fixtures for the daemon tests: a copy of the demo vault and an App built on it."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from daemon.app import App, load

REPO = Path(__file__).resolve().parents[2]


def _load_harness() -> ModuleType:
    """Make ``daemon_harness.py`` importable as ``daemon_harness`` (tests/daemon is not a
    package under ``--import-mode=importlib``); the daemon test modules import it by name."""
    module = sys.modules.get("daemon_harness")
    if module is None:
        spec = importlib.util.spec_from_file_location(
            "daemon_harness", Path(__file__).with_name("daemon_harness.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["daemon_harness"] = module
        spec.loader.exec_module(module)
    return module


_load_harness()


@pytest.fixture
def daemons() -> Iterator[list[Any]]:
    """Daemon processes a test started; any still running at teardown are SIGKILLed."""
    started: list[Any] = []
    yield started
    for process in started:
        process.kill9()


class TokenHashEmbedder:
    """A deterministic FAKE embedder (token hashing), for tests that are not about meaning.

    It keeps the sync tests fast and exact (which chunks were embedded, which reused); every
    test about what a search *means* uses the real model instead.
    """

    model_id = "test-token-hash"
    dims = 64

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dims] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out

    @property
    def embedded(self) -> int:
        return sum(self.calls)


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
