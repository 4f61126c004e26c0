"""Import ``tests/support/daemon_harness.py`` for the reliability benches (``tests/support`` is
test support, importable by name: pytest's ``pythonpath``, and here)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"


def load_daemon_harness() -> Any:
    """The harness module, ``daemon_harness`` (its subprocesses import it by that name)."""
    if str(SUPPORT) not in sys.path:
        sys.path.insert(0, str(SUPPORT))
    import daemon_harness

    return daemon_harness


def isolated_base(prefix: str) -> Path:
    """A new temp folder for a bench's trials, with every ``DREAMD_*`` variable of the
    caller's environment cleared (nothing of the user's dreamd is touched) and LanceDB's
    per-query warning silenced. The caller points ``DREAMD_STORAGE__DATA_DIR`` and
    ``DREAMD_CONFIG`` into it."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    return Path(tempfile.mkdtemp(prefix=prefix))
