"""The thin client of the running daemon: a CLI command answered by the warm process.

``dreamd run`` serves its local API (:mod:`daemon.local_api`) on a Unix domain socket. A
command the daemon can answer (:data:`SERVED_COMMANDS`) is sent there before anything heavy is
imported: this module uses the standard library and ``platformdirs`` only, so a hook's
process starts, asks and exits in tens of milliseconds instead of loading LanceDB and the
embedding model (seconds).

Finding the daemon without loading the settings (pydantic, the config file's profiles and
the ``DREAMD_*`` layers take a few hundred ms): every in-process run of a command records
where its settings led — the state folder and a fingerprint of the settings that decide
answers — in the *resolution cache* (``<user cache dir>/dreamd/resolved/``), keyed by what
decides them: the global options, ``--vault``, the working folder and every ``DREAMD_*``
variable. The record is valid while the config file it was read from keeps its size and
modification time. A miss costs one in-process run, which writes the record; the next call is
a client call.

In the state folder, the daemon's ``api.json`` names its socket, its pid, the protocol and
its settings fingerprint. The client sends its fingerprint with every request; a daemon with
other settings (another profile, a ``--set``) answers 409 and the command runs in-process, so
an answer never depends on which process gave it.

Protocol version 1: JSON-RPC 2.0 on the socket, one message per line (``json`` parses
it; no HTTP, whose client in the standard library costs a hook 30 ms of imports). Methods:

- ``health`` → ``{"protocol", "pid", "vault", "settings"}``
- ``cli`` with ``{"protocol", "settings", "argv", "stdin", "terminal"}`` → ``{"exit_code",
  "stdout", "stderr"}``: the command run by the daemon exactly as the CLI runs it, its output
  captured.
- ``mcp`` with ``{"protocol", "settings", "owner"}`` → ``{"session": "open"}``, after which
  the connection carries MCP's stdio transport (one JSON-RPC message per line) both ways.

Errors (JSON-RPC ``error.code``): :data:`BUSY` (the engines stayed busy for
:data:`BUSY_WAIT_S`), :data:`OTHER_SETTINGS`, :data:`USAGE` (the client's own CLI prints
typer's message), :data:`FORBIDDEN` (another user), :data:`OTHER_PROTOCOL`, and the
standard -32700 / -32600 / -32601 / -32602. On any of them the command runs in-process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from daemon.vault_choice import choose_vault, indexed_vaults, obsidian_vault, working_folder

__all__ = [
    "API_RECORD",
    "NOTE_VALUE_OPTIONS",
    "PROTOCOL",
    "REMEMBER_VALUE_OPTIONS",
    "SERVED_COMMANDS",
    "STDIN_TEXT",
    "ApiError",
    "DaemonUnavailable",
    "Invocation",
    "NoDaemon",
    "RequestTooLong",
    "Resolution",
    "call",
    "connect",
    "daemon_starting",
    "find_resolution",
    "hook_prompt",
    "option",
    "parse_invocation",
    "pid_alive",
    "positionals",
    "proxy_mcp",
    "read_resolution",
    "request",
    "resolution_key",
    "run_served",
    "session_key",
    "write_resolution",
]

#: Version of the local API; a daemon speaking another answers 400 and the CLI runs in-process.
PROTOCOL = 1
#: The daemon's record in the state folder: socket path, pid, protocol, settings fingerprint.
API_RECORD = "api.json"
#: Commands the daemon runs for a client. Others (``run``, ``init``, ``sync``, ``dream``,
#: ``mcp --http``, ``service``, ``config``, ``doctor``) stay in the caller's process: they
#: are the writer themselves, ask the user something, or inspect the caller's environment.
SERVED_COMMANDS = frozenset({
    "search", "context", "remember", "note", "show", "forget", "history", "diff", "rollback",
    "check", "conflicts", "status", "sync",
})
#: Seconds to wait for the connection to the socket (a live daemon accepts at once).
CONNECT_TIMEOUT_S = 2.0
#: Seconds to wait for an answer, by command: a hook must never keep a prompt waiting
#: (Claude Code kills it at its ``timeout``, 30 s in the README's recipe), a read answers in
#: tens of ms when the daemon is well, a ``check`` or a write of a large vault takes seconds.
#: Past it the command runs in-process (a stopped daemon accepts connections and never
#: answers). The daemon answers :data:`BUSY` itself after :data:`BUSY_WAIT_S`.
HOOK_TIMEOUT_S, READ_TIMEOUT_S, ANSWER_TIMEOUT_S = 5.0, 30.0, 300.0
_READS = frozenset({"search", "context", "show", "history", "diff", "status"})
#: Seconds the daemon waits for its engines (held by an indexing batch) before answering
#: :data:`BUSY`.
BUSY_WAIT_S = 3.0
#: Longest message line read, in bytes (a remembered text, a hook's JSON; 8 MiB).
MAX_MESSAGE = 8 * 1024 * 1024
#: JSON-RPC error codes of the API (the implementation-defined range -32000 to -32099).
BUSY, OTHER_SETTINGS, USAGE, FORBIDDEN, OTHER_PROTOCOL = -32000, -32001, -32002, -32003, -32004
#: Environment variables that shape the answer's text, forwarded to the daemon.
TERMINAL_VARS = ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM")

#: :func:`proxy_mcp`'s answer when this command line has not run in-process yet (nothing to
#: say: the first run records where its settings lead).
NO_RECORD = "no record of this command line's settings yet"
#: :func:`proxy_mcp`'s answer when the daemon ended a session that had started.
SESSION_LOST = "the daemon ended the session"
#: Marker in the state folder: "no daemon, answering in-process" was said since the daemon
#: last stopped (it is said once, not on every command); the daemon removes it on start.
FALLBACK_NOTED = "client-fallback-noted"

#: Variables platformdirs reads for the default config file and data folder.
_LOCATION_VARS = frozenset({"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS",
                            "XDG_DATA_DIRS", "APPDATA", "LOCALAPPDATA"})

_GLOBAL_VALUE = ("--config", "-c", "--env", "--set")
_VERBOSE = re.compile(r"-v+")


class DaemonUnavailable(Exception):
    """No daemon answers for this vault (no record, a stale record, a refused connection),
    or it stopped mid-answer; the message says which, for one line on stderr."""


class NoDaemon(DaemonUnavailable):
    """No daemon runs for this vault (no record, a stale record, nothing listening)."""


class RequestTooLong(DaemonUnavailable):
    """The request is longer than :data:`MAX_MESSAGE` (a long text on ``remember -``): it
    was not sent; this process answers the command itself."""


def _once(state_dir: Path, why: str, marker_name: str = FALLBACK_NOTED) -> str | None:
    """``why`` the first time since the daemon last started, ``None`` after (a marker file
    in the state folder, which the daemon removes when it starts)."""
    marker = state_dir / marker_name
    if marker.exists():
        return None
    with contextlib.suppress(OSError):
        marker.touch()
    return why


class Invocation(NamedTuple):
    """A command line split the way ``daemon.cli`` reads it: global options, the command,
    its arguments, and the ``--vault`` among them."""

    config: str | None
    env: str | None
    sets: tuple[str, ...]
    command: str
    args: tuple[str, ...]
    vault: str | None

    @property
    def hook(self) -> bool:
        """``dreamd context --hook`` or ``flush --hook``: silent on every failure, exit 0."""
        return self.command in _HOOK_COMMANDS and "--hook" in self.args

    @property
    def reads_stdin(self) -> bool:
        """The command reads stdin: a hook (its event's JSON), ``remember -`` (the
        memory's text) and ``note -`` (the line), so the client reads it and sends it with
        the command."""
        return self.hook or (self.command == "remember" and STDIN_TEXT in positionals(
            self.args, REMEMBER_VALUE_OPTIONS)) or (self.command == "note" and STDIN_TEXT in
                                                    positionals(self.args, NOTE_VALUE_OPTIONS))


def parse_invocation(argv: Sequence[str]) -> Invocation | None:
    """``argv`` (without the program name) as an :class:`Invocation`, or ``None`` when the
    command line is not one to send (no command, ``--help``, an option this reader does not
    know before the command: typer decides those)."""
    config = env = None
    sets: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _GLOBAL_VALUE and name.startswith("--") and eq:
            i += 1
        elif arg in _GLOBAL_VALUE:
            if i + 1 >= len(argv):
                return None
            name, value = arg, argv[i + 1]
            i += 2
        elif arg == "--verbose" or _VERBOSE.fullmatch(arg):
            i += 1
            continue
        elif arg.startswith("-"):
            return None
        else:
            break
        if name in ("--config", "-c"):
            config = value
        elif name == "--env":
            env = value
        else:
            sets.append(value)
    if i >= len(argv):
        return None
    command, args = argv[i], tuple(argv[i + 1:])
    if any(a in ("--help", "-h") for a in args):
        return None
    vault = option(args, "--vault")
    if vault is None and command in _VAULT_ARGUMENT:
        vault = next((a for a in args if not a.startswith("-")), None)
    return Invocation(config, env, tuple(sets), command, args, vault)


#: ``dreamd remember -``: the memory's text is read from stdin.
STDIN_TEXT = "-"
#: Options of ``remember`` that take a value (the others are flags): what tells its TEXT
#: argument from an option's value (``--name -``). Kept equal to the command's own options
#: by ``tests/daemon/test_memory_input.py``.
REMEMBER_VALUE_OPTIONS = frozenset({"--type", "-t", "--name", "--description", "--subject",
                                    "--owner", "--vault"})
#: Options of ``note`` that take a value (kept equal to the command's own options by
#: ``tests/daemon/test_diary.py``).
NOTE_VALUE_OPTIONS = frozenset({"--section", "-s", "--vault"})
#: Commands with a ``--hook`` mode (a Claude Code hook: exit 0 whatever happens).
_HOOK_COMMANDS = frozenset({"context", "flush"})


def positionals(args: Sequence[str], value_options: frozenset[str]) -> list[str]:
    """The arguments of a command that are neither options nor their values (``-`` is an
    argument; every one after ``--`` is), as click reads them."""
    found: list[str] = []
    skip = rest = False
    for arg in args:
        if skip:
            skip = False
        elif rest or arg == "-":
            found.append(arg)
        elif arg == "--":
            rest = True
        elif arg in value_options:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


#: Served commands that take the vault as their argument (``dreamd sync VAULT``), not as
#: ``--vault``: it decides where their settings lead as ``--vault`` does.
_VAULT_ARGUMENT = frozenset({"sync", "status", "check"})


def option(args: Sequence[str], name: str) -> str | None:
    """The last value of ``name`` among a command's arguments (``--name V`` or
    ``--name=V``), as click reads a repeated option."""
    found = None
    for j, arg in enumerate(args):
        if arg == name and j + 1 < len(args):
            found = args[j + 1]
        elif arg.startswith(f"{name}="):
            found = arg.partition("=")[2]
    return found


# --------------------------------------------------------------------------- resolution cache

class Resolution(NamedTuple):
    """Where one set of inputs led the last in-process run: the state folder, the
    fingerprint of the settings that decide answers, the vault folder, whether a
    missing daemon is started (``daemon.autostart``), and whether neither the command line
    nor the settings named the vault (``implicit``: it depends on the working folder and
    the vaults indexed, :func:`daemon.vault_choice.choose_vault`)."""

    state_dir: Path
    settings: str
    vault: str = ""
    autostart: bool = False
    implicit: bool = False


def resolution_key(invocation: Invocation, environ: Mapping[str, str], cwd: str | None) -> str:
    """Hex digest of everything that decides the settings of ``invocation``; ``cwd`` only
    when a path among them is relative (:func:`find_resolution`)."""
    inputs = {
        "config": invocation.config, "env": invocation.env, "sets": list(invocation.sets),
        "vault": invocation.vault, "cwd": cwd, "home": environ.get("HOME", ""),
        "vars": sorted((k, v) for k, v in environ.items()
                       if k.startswith("DREAMD_") or k in _LOCATION_VARS),
    }
    return hashlib.sha256(json.dumps(inputs, ensure_ascii=False).encode()).hexdigest()[:32]


def find_resolution(invocation: Invocation) -> Resolution | None:
    """The record of ``invocation``'s inputs: the one any working folder shares (every path
    among the settings was absolute), else this folder's own (none when the working folder
    is gone)."""
    cwd = working_folder()
    return read_resolution(resolution_key(invocation, os.environ, None)) or (
        None if cwd is None else read_resolution(resolution_key(invocation, os.environ,
                                                                str(cwd))))


def _cache_dir(environ: Mapping[str, str]) -> Path:
    import platformdirs  # small and pure Python; here only to agree with its folders

    del environ  # platformdirs reads XDG_CACHE_HOME and friends itself
    return Path(platformdirs.user_cache_dir("dreamd")) / "resolved"


def _file_mark(path: str | None) -> list[int] | None:
    if path is None:
        return None
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def read_resolution(key: str, environ: Mapping[str, str] = os.environ) -> Resolution | None:
    """The record for ``key`` if its config file is as it was then; ``None`` otherwise."""
    try:
        record = json.loads((_cache_dir(environ) / f"{key}.json").read_text("utf-8"))
        if _file_mark(record["config_file"]) != record["config_mark"]:
            return None
        return Resolution(Path(record["state_dir"]), str(record["settings"]),
                          str(record.get("vault", "")), record.get("autostart") is True,
                          record.get("implicit") is True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def write_resolution(key: str, resolution: Resolution, config_file: Path,
                     environ: Mapping[str, str] = os.environ) -> None:
    """Record where ``key`` led (never raises: the cache only saves time)."""
    folder = _cache_dir(environ)
    record = {"state_dir": str(resolution.state_dir), "settings": resolution.settings,
              "vault": resolution.vault, "autostart": resolution.autostart,
              "implicit": resolution.implicit, "config_file": str(config_file),
              "config_mark": _file_mark(str(config_file))}
    from ccb.atomic import write_json_atomic  # here: a client that only reads never loads it

    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_json_atomic(folder / f"{key}.json", record)
    except (OSError, ValueError):  # ValueError: a path that is not UTF-8
        pass


# --------------------------------------------------------------------------- the connection

def pid_alive(pid: object) -> bool:
    """Is ``pid`` (a value read from a state file) a running process on this machine?"""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: The running daemon's status file (``daemon.status.DAEMON_STATUS_FILE``, named here: this
#: module imports no more than it must).
_DAEMON_STATUS = "daemon.json"
_DONE = {"reading": "read", "embedding": "embedded", "indexing": "indexed"}


def daemon_starting(state_dir: Path) -> str | None:
    """What the daemon of ``state_dir`` is doing when it starts (its socket not open yet)
    or reconciles (a first index of a large vault takes most of an hour; nothing committed
    yet), as one line for stderr; ``None`` when no daemon is starting."""
    try:
        status = json.loads((state_dir / _DAEMON_STATUS).read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(status, dict) or status.get("state") not in {"starting", "reconciling"} \
            or not pid_alive(status.get("pid")):
        return None
    work = status.get("work")
    doing = "reconciling the vault with its index"
    if isinstance(work, dict) and isinstance(work.get("done"), int) \
            and isinstance(work.get("total"), int):
        phase = str(work.get("phase"))
        doing = f"indexing the vault ({work['done']:,} of {work['total']:,} files " \
            f"{_DONE.get(phase, phase)})"
    return (f"the daemon (pid {status.get('pid')}) is {doing}; notes saved meanwhile are "
            "indexed as they are saved")


def api_socket(state_dir: Path) -> str:
    """The socket of the daemon serving ``state_dir``; raises DaemonUnavailable."""
    try:
        record = json.loads((state_dir / API_RECORD).read_text("utf-8"))
    except FileNotFoundError:
        starting = daemon_starting(state_dir)
        if starting is not None:  # (not NoDaemon: no second daemon is started for it)
            raise DaemonUnavailable(starting) from None
        raise NoDaemon("no daemon is running for this vault (start one: dreamd run)") from None
    except (OSError, ValueError, RecursionError) as error:
        raise DaemonUnavailable(f"the daemon's record {state_dir / API_RECORD} is "
                                f"unreadable ({error})") from None
    if not isinstance(record, dict) or not pid_alive(record.get("pid")):
        raise NoDaemon("no daemon is running for this vault (it stopped without cleaning up)")
    if record.get("protocol") != PROTOCOL:
        raise DaemonUnavailable(f"the running daemon speaks protocol {record.get('protocol')}, "
                                f"this dreamd {PROTOCOL} (restart the daemon)")
    path = record.get("socket")
    if not isinstance(path, str):
        raise DaemonUnavailable(f"the daemon's record {state_dir / API_RECORD} names no socket")
    return path


class ApiError(Exception):
    """The daemon answered with a JSON-RPC error: ``code`` and its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def connect(state_dir: Path) -> socket.socket:
    """A connection to the daemon of ``state_dir``; raises NoDaemon / DaemonUnavailable."""
    path = api_socket(state_dir)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    try:
        while True:
            try:
                sock.connect(path)
                break
            except BlockingIOError:  # the daemon's backlog is full: it is busy, not gone
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
    except (ConnectionRefusedError, FileNotFoundError):
        sock.close()
        raise NoDaemon("no daemon is running for this vault (nothing listens on its "
                       "socket)") from None
    except (OSError, ValueError, RecursionError) as error:  # ValueError: a path the OS cannot take
        sock.close()
        raise DaemonUnavailable(f"cannot reach the daemon at {path!r} ({error})") from None
    return sock


def request(sock: socket.socket, reader: Any, method: str, params: dict[str, Any], *,
            timeout: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
    """Send one JSON-RPC request on ``sock`` and read its answer from ``reader`` (the
    socket's buffered reader). Returns the result object.

    Raises ApiError for an error answer, DaemonUnavailable when the daemon closes or
    stops answering mid-request, RequestTooLong (nothing sent) when the request is longer
    than the daemon reads."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method,
               "params": {"protocol": PROTOCOL, "deadline": time.time() + timeout, **params}}
    # ASCII escapes: an argument or hook input that is not UTF-8 (its bytes kept as
    # surrogates) travels as it is and the daemon reads what this process read
    line = json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"
    if len(line) > MAX_MESSAGE:
        raise RequestTooLong(f"the request has {len(line):,} bytes, more than the daemon "
                             f"reads ({MAX_MESSAGE:,})")
    try:
        sock.settimeout(timeout)
        sock.sendall(line)
        line = reader.readline(MAX_MESSAGE + 1)
    except TimeoutError:
        raise DaemonUnavailable(f"the daemon did not answer within {timeout:g} s") from None
    except OSError as error:
        raise DaemonUnavailable(f"the daemon stopped answering ({type(error).__name__}: "
                                f"{error})") from None
    if not line.endswith(b"\n"):
        raise DaemonUnavailable("the daemon closed the connection before it answered")
    try:
        answer = json.loads(line)
    except ValueError:
        raise DaemonUnavailable("the daemon's answer is not JSON") from None
    if not isinstance(answer, dict):
        raise DaemonUnavailable("the daemon's answer is not a JSON-RPC response")
    failure = answer.get("error")
    if isinstance(failure, dict):
        code = failure.get("code")
        raise ApiError(code if isinstance(code, int) else -32603, str(failure.get("message")))
    result = answer.get("result")
    if not isinstance(result, dict):
        raise DaemonUnavailable("the daemon's answer carries no result")
    return result


def call(state_dir: Path, method: str, params: dict[str, Any], *,
         timeout: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
    """One request to the daemon of ``state_dir`` on a connection of its own (see
    :func:`request` for what it raises)."""
    sock = connect(state_dir)
    try:
        with sock.makefile("rb") as reader:
            return request(sock, reader, method, params, timeout=timeout)
    finally:
        sock.close()


# --------------------------------------------------------------------------- commands

def _terminal() -> dict[str, Any]:
    try:
        columns: int | None = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = None
    try:
        tty = sys.stdout.isatty()
    except (ValueError, AttributeError):
        tty = False
    return {"tty": tty, "columns": columns,
            "vars": {k: os.environ[k] for k in TERMINAL_VARS if k in os.environ}}


def _stdin_text(*, as_bytes: bool = False) -> str | None:
    """This process's stdin (``None`` on a terminal or when unreadable). ``as_bytes``: read
    it as bytes, and keep any that are not UTF-8 as surrogates (PEP 383) for the command
    to name (``remember -``)."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return None
        if as_bytes:
            return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
        return sys.stdin.read()
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return None


def run_served(argv: Sequence[str]) -> tuple[int | None, str | None]:
    """Run ``argv`` on the daemon when one serves its vault with the same settings.

    Returns ``(exit_code, None)`` when the daemon answered (its output is written to this
    process's stdout and stderr), or ``(None, why)`` when the command must run in-process:
    ``why`` is one line for stderr, or ``None`` when there is nothing to say (the command is
    not one the daemon serves, or this is the first run with these inputs). ``stdin`` is read
    here for ``context --hook`` and ``remember -`` and handed on in ``served_stdin``."""
    invocation = parse_invocation(argv)
    if invocation is None or invocation.command not in SERVED_COMMANDS:
        return None, None
    if invocation.command == "forget" and not {"--yes", "-y"} & set(invocation.args):
        return None, None  # it asks the user first, on this process's terminal
    resolution = find_resolution(invocation)
    note = _stderr_first(invocation, resolution) if resolution is not None else None
    if resolution is None or note is None:
        return None, None
    stdin = _stdin_text(as_bytes=not invocation.hook) if invocation.reads_stdin else None
    global served_stdin
    served_stdin = stdin
    params = {"argv": [invocation.command, *invocation.args], "settings": resolution.settings,
              "stdin": stdin, "terminal": _terminal()}
    timeout = HOOK_TIMEOUT_S if invocation.hook else READ_TIMEOUT_S \
        if invocation.command in _READS else ANSWER_TIMEOUT_S
    try:
        answer = call(resolution.state_dir, "cli", params, timeout=timeout)
    except DaemonUnavailable as error:
        if isinstance(error, RequestTooLong):
            return None, None  # answered here, as a command the daemon does not serve
        if invocation.hook and _session_start(invocation, resolution.state_dir, stdin):
            return 0, None
        if isinstance(error, NoDaemon):
            if resolution.autostart and resolution.vault:
                return None, _autostart(invocation, resolution)
            return None, _once(resolution.state_dir, str(error))
        return None, str(error)
    except ApiError as error:
        if error.code == USAGE:
            return None, None  # typer prints the usage error in this process
        if error.code == OTHER_SETTINGS:
            return None, _once(resolution.state_dir, str(error),
                               f"{FALLBACK_NOTED}-{resolution.settings[:16]}")
        return None, f"the running daemon did not answer: {error}"
    code = answer.get("exit_code")
    if not isinstance(code, int):
        return None, "the running daemon's answer has no exit code"
    _write(sys.stderr, note)
    _write(sys.stdout, answer.get("stdout"))
    _write(sys.stderr, answer.get("stderr"))
    return code, None


def _stderr_first(invocation: Invocation, resolution: Resolution) -> str | None:
    """What to say on stderr before the daemon's answer to ``invocation`` (``""``: nothing),
    or ``None`` when the command line does not mean the daemon's vault. One naming no vault
    where the settings name none (``implicit``) means the vault holding the working folder
    (indexed, or holding ``.obsidian/``), else the only one indexed
    (:func:`daemon.vault_choice.choose_vault`): the
    daemon answers only while that is its own."""
    if not resolution.implicit:
        return ""
    cwd = working_folder()
    choice = choose_vault(indexed_vaults(resolution.state_dir.parent.parent), cwd,
                          obsidian_vault(cwd))
    if choice is None or str(choice.vault) != resolution.vault:
        return None
    return "" if invocation.hook or choice.note is None else choice.note + "\n"


#: State-folder file: when a client last started a daemon (``daemon.autostart``).
AUTOSTARTED = "autostarted.json"
#: Seconds after a start during which no other client starts one (it is still loading;
#: a second one would only find the vault's lock taken).
AUTOSTART_GRACE_S = 60.0


def _autostart(invocation: Invocation, resolution: Resolution) -> str | None:
    """Start ``dreamd run`` for the vault in the background, detached from this process
    (its own session; stderr in ``<state dir>/autostart.log``), unless one was started in
    the last :data:`AUTOSTART_GRACE_S`. Returns the line to say (``None``: nothing new)."""
    import subprocess
    import time

    marker = resolution.state_dir / AUTOSTARTED
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError, RecursionError):
        if time.time() - float(json.loads(marker.read_text("utf-8"))["at"]) < AUTOSTART_GRACE_S:
            return None
    command = [sys.executable, "-P", "-m", "daemon"]
    if invocation.config is not None:
        command += ["--config", invocation.config]
    if invocation.env is not None:
        command += ["--env", invocation.env]
    for item in invocation.sets:
        command += ["--set", item]
    command += ["run", resolution.vault]
    try:
        marker.write_text(json.dumps({"at": time.time(), "by": os.getpid()}), "utf-8")
        with (resolution.state_dir / "autostart.log").open("ab") as log:
            subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=log, start_new_session=True, close_fds=True)
    except OSError as error:
        return f"no daemon is running and starting one failed ({error})"
    return ("no daemon was running; started one in the background (daemon.autostart), "
            "which answers from the next command on")


def session_key(args: Sequence[str]) -> str | None:
    """The session-start snapshot key of a ``context --hook`` command's ``--budget`` and
    ``--owner`` (:mod:`daemon.session_snapshot`); ``None`` for a budget that is not a
    number (the CLI reports it)."""
    from daemon.session_snapshot import snapshot_key

    budget = option(args, "--budget")
    if budget is not None and not (budget.isascii() and budget.isdigit()):
        return None
    return snapshot_key(int(budget) if budget is not None else None, option(args, "--owner"))


def hook_prompt(stdin: str | None) -> str | None:
    """The prompt of a hook event on stdin ("" for a session start or no input); ``None``
    for input that is not a hook's JSON object (the CLI reports it)."""
    if not stdin or not stdin.strip():
        return ""
    try:
        event = json.loads(stdin)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict):
        return None
    prompt = event.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def _session_start(invocation: Invocation, state_dir: Path, stdin: str | None) -> bool:
    """Answer a session start (a hook event with no prompt) from the snapshot the daemon or
    an earlier hook kept, when it is still current; True when it did."""
    prompt = hook_prompt(stdin)
    if prompt is None or prompt.strip():
        return False
    key = session_key(invocation.args)
    if key is None:
        return False
    from daemon.session_snapshot import read

    text = read(state_dir, key)
    if text is None:
        return False
    _write(sys.stdout, text + "\n")
    return True


#: What :func:`run_served` read from stdin for the command (a hook's JSON, the text of
#: ``remember -``), so a command run in-process after all reads the same input.
served_stdin: str | None = None


def _write(stream: Any, text: object) -> None:
    """Write the daemon's text as this process would have: bytes it could not decode
    (kept as surrogates) go out as they came in."""
    if isinstance(text, str) and text:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text)
        else:
            buffer.write(text.encode(stream.encoding or "utf-8", "surrogateescape"))
        stream.flush()


def proxy_mcp(argv: Sequence[str]) -> str | None:
    """``dreamd mcp`` (stdio) as a pipe to the daemon's MCP service: returns ``None`` after
    the session ended, or why it could not start (the caller serves in-process then)."""
    invocation = parse_invocation(argv)
    if invocation is None or invocation.command != "mcp" or "--http" in invocation.args:
        return NO_RECORD
    owner = option(invocation.args, "--owner")
    resolution = find_resolution(invocation)
    if resolution is None:
        return NO_RECORD
    try:
        sock = connect(resolution.state_dir)
    except DaemonUnavailable as error:
        return str(error)
    reader = sock.makefile("rb")
    try:
        request(sock, reader, "mcp", {"owner": owner, "settings": resolution.settings},
                timeout=CONNECT_TIMEOUT_S * 5)
    except (DaemonUnavailable, ApiError) as error:
        reader.close()
        sock.close()
        return f"the running daemon did not start the MCP session ({error})"
    sock.settimeout(None)
    # from here the connection is the session; the reader may hold its first bytes
    if _pipe(sock, reader):
        return None
    sys.stderr.write("dreamd mcp: the daemon ended the session (it stopped or restarted); "
                     "the assistant starts a new one\n")
    return SESSION_LOST


def _pipe(sock: socket.socket, reader: Any) -> bool:
    """Copy stdin to the socket (a helper thread) and the socket to stdout (this thread)
    until the daemon ends the session; stdin's end ends the session from this side.
    Returns whether it ended from this side (the client closed stdin)."""
    closed = threading.Event()

    def pump_in() -> None:
        stdin = sys.stdin.buffer.fileno()
        try:
            while data := os.read(stdin, 65536):
                sock.sendall(data)
            closed.set()
            sock.shutdown(socket.SHUT_WR)  # the daemon ends the session and closes
        except OSError:
            pass

    threading.Thread(target=pump_in, name="dreamd-mcp-stdin", daemon=True).start()
    stdout = sys.stdout.buffer.fileno()
    try:
        while data := reader.read1(65536):
            view = memoryview(data)
            while view:
                view = view[os.write(stdout, view):]
    except (OSError, KeyboardInterrupt):
        pass
    finally:
        sock.close()
    return closed.is_set()
