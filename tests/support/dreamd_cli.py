"""The real ``dreamd`` command on a vault, as a user runs it (a subprocess of this venv's
entry point), for tests that need the CLI itself.

Test support, importable by name (``tests/support`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["DREAMD", "Run", "dreamd_on"]

#: This venv's ``dreamd`` entry point.
DREAMD = Path(sys.executable).with_name("dreamd")
Run = Callable[..., subprocess.CompletedProcess[str]]


def dreamd_on(vault: Path, *, timeout_s: float = 300) -> Run:
    """``run(*args)``: ``dreamd ARGS`` with ``DREAMD_VAULT__PATH`` set to ``vault``, output
    captured as text; a traceback on stderr fails the test (a user never sees one)."""
    env = {**os.environ, "DREAMD_VAULT__PATH": str(vault)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(DREAMD), *args], capture_output=True, text=True, env=env,
                              timeout=timeout_s, check=False)
        assert "Traceback" not in done.stderr, done.stderr
        return done
    return run
