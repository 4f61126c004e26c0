"""Suite-wide fixtures: every test runs with its own data and config folders."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]

# Properties are about what is kept and decided, never about time: no example fails for
# being slow on a loaded machine (hypothesis's default deadline is 200 ms an example).
settings.register_profile("dreamd", deadline=None)
settings.load_profile("dreamd")
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


#: The product's packages, compiled once before the tests start.
PACKAGES = ("config", "ccb", "magma", "consistency", "daemon")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the product's modules to bytecode once, in the process that starts the run.

    The suite starts hundreds of dreamd processes (the CLI as a user runs it, daemons). Where
    ``PYTHONDONTWRITEBYTECODE`` is set, as on the CI machines, Python never writes the
    bytecode it compiles, so each of them compiled all of dreamd's modules from source again:
    measured ≈0.9 s of CPU per process on a loaded 2-core machine (``python -X importtime -c
    "import daemon.app"``: 1.77 s of dreamd's own import time without bytecode, 0.90 s
    with). ``compileall`` writes it whatever that setting says; Python reads it either way.
    """
    if hasattr(session.config, "workerinput"):  # an xdist worker: its controller did it
        return
    import compileall

    for package in PACKAGES:
        compileall.compile_dir(REPO / package, quiet=1)


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
    """Point dreamd's data dir, config file and transcripts glob at a fresh temp folder;
    clear the other DREAMD_* vars."""
    home = tmp_path_factory.mktemp("dreamd-home")
    for key in list(os.environ):
        if key.startswith("DREAMD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DREAMD_STORAGE__DATA_DIR", str(home / "data"))
    monkeypatch.setenv("DREAMD_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg-cache"))  # the CLI's resolution cache
    monkeypatch.setenv("LANCEDB_LOG", "error")
    # the user's own assistant transcripts (~/.claude/projects) are never read by a test
    monkeypatch.setenv("DREAMD_DREAM__TRANSCRIPTS", str(home / "transcripts" / "*" / "*.jsonl"))
    return home


@pytest.fixture(autouse=True)
def index_writes_end_with_their_test() -> Iterator[None]:
    """Wait, after each test, for the index writes its ``remember`` calls left to this
    process's background writer (:mod:`daemon.index_writer`): a test's LanceDB work never
    runs on into the next test's."""
    yield
    from daemon.index_writer import settle_all

    settle_all(timeout_s=120.0)


# --------------------------------------------------------------------------- Obsidian stand-in


@pytest.fixture(scope="session")
def standin() -> ModuleType:
    """The stand-in for the Obsidian desktop app's CLI (``tests/support/obsidian_standin.py``)."""
    import obsidian_standin

    return obsidian_standin


@pytest.fixture
def knobs(standin: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The stand-in installed as ``obsidian`` first on PATH, with its knobs folder."""
    bin_dir = tmp_path / "bin"
    standin.install(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    folder = tmp_path / "standin"
    folder.mkdir()
    monkeypatch.setenv("OBSIDIAN_STANDIN_DIR", str(folder))
    monkeypatch.delenv("OBSIDIAN_STANDIN_ACTIVE_VAULT", raising=False)
    return standin.Knobs(folder)


@pytest.fixture
def obsidian_app(standin: ModuleType, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A running process named ``obsidian``: to the process list, the app is running."""
    proc = standin.start_fake_app(tmp_path / "app")
    yield proc
    proc.kill()
    proc.wait()
