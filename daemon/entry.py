"""The ``dreamd`` console script: ask the running daemon first, import the CLI only if not.

A command the daemon serves (:data:`daemon.client.SERVED_COMMANDS`, and ``mcp`` over stdio)
goes to its local API before typer, rich, pydantic, LanceDB or the model is imported; the
process that answers a hook is then the interpreter, the standard library and
:mod:`daemon.client`. Anything else, or no daemon, runs :func:`daemon.cli.run_here`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from daemon import client

__all__ = ["ask_daemon", "exit_on_sigterm", "main", "version_line"]


def ask_daemon(argv: Sequence[str]) -> tuple[int | None, str | None]:
    """``(exit_code, None)`` when the daemon answered ``argv``; ``(None, why)`` when the
    command runs in this process (``why``: one line for stderr, or ``None``)."""
    invocation = client.parse_invocation(argv)
    if invocation is None:
        return None, None
    if invocation.command in client.SERVED_COMMANDS:
        code, why = client.run_served(argv)
        if code is not None:
            return (0 if invocation.hook else code), None
        return None, why
    if invocation.command == "mcp" and "--http" not in invocation.args:
        why = client.proxy_mcp(argv)
        if why is None:
            return 0, None  # the daemon served the session
        if why == client.SESSION_LOST:
            return 1, None  # said on stderr; the session's state is the daemon's, gone
        return None, None if why == client.NO_RECORD else why
    return None, None


def version_line() -> str:
    """``dreamd <version>`` of the installed distribution."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"dreamd {version('dreamd')}"
    except PackageNotFoundError:
        return "dreamd (not installed as a distribution)"


#: The exit code of a command stopped by SIGTERM (128 + the signal's number, as a shell
#: reports a process the signal ended).
SIGTERM_EXIT = 143


#: Seconds a command stopped by SIGTERM waits for its pending index writes (our choice: a
#: ``remember``'s write takes well under a second; an MCP client gives its server a few
#: seconds before SIGKILL).
SIGTERM_FLUSH_S = 5.0


def exit_on_sigterm() -> None:
    """Make SIGTERM end this process as it did (at once, code 143, no ``finally`` block run:
    an MCP stdio server blocked on its input would not end otherwise), once the index write
    a ``remember`` left for after its answer (:mod:`daemon.index_writer`) is in the store,
    waited for at most :data:`SIGTERM_FLUSH_S`. An MCP client stops its stdio server with
    SIGTERM; without this the memory stayed out of search until the next sync. ``dreamd
    run`` puts its own handler in place (:mod:`daemon.runner`)."""
    import os
    import signal

    def stop(signum: int, _frame: object) -> None:
        writers = sys.modules.get("daemon.index_writer")  # (not imported: nothing pending)
        if writers is not None:
            writers.settle_all(SIGTERM_FLUSH_S)
        os._exit(SIGTERM_EXIT)

    signal.signal(signal.SIGTERM, stop)


def main() -> None:
    """Console-script entry point (``dreamd``)."""
    if sys.argv[1:] == ["--version"]:  # answered before typer loads
        sys.stdout.write(version_line() + "\n")
        return
    try:
        code, why = ask_daemon(sys.argv[1:])
    except (OSError, ValueError) as error:  # a deleted working folder, an odd record
        code, why = None, f"could not ask the daemon ({error})"
    except KeyboardInterrupt:  # Ctrl-C while the daemon answers: it finishes on its own
        sys.stderr.write("dreamd: interrupted (the daemon finishes what it started)\n")
        sys.exit(130)
    if code is not None:
        sys.exit(code)
    from daemon.cli import run_here

    exit_on_sigterm()
    run_here(why)
