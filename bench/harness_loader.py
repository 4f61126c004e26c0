"""Load ``tests/daemon/daemon_harness.py`` for the reliability benches (by path: the tests are
not a package under pytest's ``--import-mode=importlib``)."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "daemon" / "daemon_harness.py"


def load_daemon_harness() -> Any:
    """The harness module, registered as ``daemon_harness`` (its subprocesses use that name)."""
    spec = importlib.util.spec_from_file_location("daemon_harness", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["daemon_harness"] = module
    spec.loader.exec_module(module)
    return module


def isolated_base(prefix: str) -> Path:
    """A new temp folder for a bench's trials, with every ``DREAMD_*`` variable of the
    caller's environment cleared (nothing of the user's dreamd is touched) and LanceDB's
    per-query warning silenced. The caller points ``DREAMD_STORAGE__DATA_DIR`` and
    ``DREAMD_CONFIG`` into it."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    return Path(tempfile.mkdtemp(prefix=prefix))
