"""Reading what a process prints to a pseudo-terminal, for the tests of what a person at a
terminal sees (``dreamd init`` asking, ``dreamd run`` telling)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time

__all__ = ["ANSI", "read_until"]

#: A terminal's escape sequences (colours, cursor moves), left out of the text compared.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def read_until(fd: int, process: subprocess.Popen[bytes], wanted: str | None,
               timeout_s: float) -> str:
    """What ``process`` printed to the terminal ``fd`` until the text (escapes left out)
    holds ``wanted`` (``None``: until the process closes the terminal or ends), or
    ``timeout_s`` seconds passed -> that text, escapes left out, ``\\r\\n`` as ``\\n``."""
    shown = b""
    deadline = time.monotonic() + timeout_s

    def text() -> str:
        return ANSI.sub("", shown.decode(errors="replace")).replace("\r\n", "\n")

    while time.monotonic() < deadline and (wanted is None or wanted not in text()):
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    return text()
