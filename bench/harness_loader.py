"""Load ``tests/daemon/daemon_harness.py`` for the reliability benches (by path: the tests are
not a package under pytest's ``--import-mode=importlib``)."""

from __future__ import annotations

import importlib.util
import sys
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
