"""The daemon's local API: the CLI, the hooks and the MCP sessions of this user, answered by
the one warm process (protocol in :mod:`daemon.client`).

Served over a Unix domain socket, ``dreamd.sock`` in the vault's state folder (or, when that
path is longer than the OS takes, in a private folder of the runtime directory; ``api.json``
names it). Who may connect:

1. The socket file is created mode 0600 (umask during ``bind``, then ``chmod``), and a
   fallback folder is 0700 and ours, so the file system admits this user only.
2. Where the OS reports the peer (``SO_PEERCRED`` on Linux), a connection from another uid
   is answered 403 and closed, whatever the file's mode became.

One JSON-RPC 2.0 message per line (``json`` parses it), one thread per connection.
Every answer that touches the vault runs under the daemon's engine lock, the lock the watch
loop holds while it applies a batch: clients and the watcher never use the store, the
retriever or the writer at once, and every write goes through the daemon's one writer.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import socketserver
import stat
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from ccb.atomic import write_json_atomic
from daemon.client import (
    API_RECORD,
    BUSY,
    BUSY_WAIT_S,
    FALLBACK_NOTED,
    FORBIDDEN,
    MAX_MESSAGE,
    OTHER_PROTOCOL,
    OTHER_SETTINGS,
    PROTOCOL,
    SERVED_COMMANDS,
    USAGE,
)
from daemon.turns import NotNow, Turns

#: JSON-RPC error: the request's deadline passed before the daemon could start on it.
EXPIRED = -32005
#: JSON-RPC error: the daemon is stopping (its store changed under it); the client answers
#: the command in-process.
STOPPING = -32006

__all__ = ["SOCKET_NAME", "LocalApi", "Service", "Stopping", "socket_path"]

log = structlog.get_logger("dreamd.api")

#: The socket's file name in the state folder.
SOCKET_NAME = "dreamd.sock"
#: Longest socket path used as is, in bytes: ``sun_path`` holds 108 on Linux and 104 on
#: macOS and the BSDs, with the terminating NUL.
MAX_SOCKET_PATH = 100


class Stopping(Exception):
    """Raised by :attr:`Service.run_command` when the daemon stops instead of answering
    (the message says why); the client runs the command in-process."""


@dataclass(slots=True)
class Service:
    """What the API serves, from the daemon: the settings fingerprint clients must match
    (read per request: a reload changes it), the lock of the engines taken in turns with a
    reconcile (:class:`daemon.turns.Turns`), and the two ways of answering — a command line
    (``daemon.cli.serve_command``) and an MCP session over a
    stream (``daemon.mcp_server.serve_stream``)."""

    fingerprint: Callable[[], str]
    turns: Turns
    vault: str
    run_command: Callable[[list[str], str | None, dict[str, Any]], Any]
    run_mcp: Callable[[io.BufferedIOBase, io.BufferedIOBase, str | None], None]
    after_answer: Callable[[], None] = lambda: None


def socket_path(state_dir: Path) -> Path:
    """Where the socket of ``state_dir``'s daemon lives: ``<state_dir>/dreamd.sock``, or
    ``<runtime dir>/dreamd-<uid>/<digest>.sock`` when that path is too long for the OS
    (``$XDG_RUNTIME_DIR``, else the temporary folder). Raises OSError when the fallback
    folder exists but is not a private folder of this user."""
    candidate = state_dir / SOCKET_NAME
    if len(os.fsencode(candidate)) <= MAX_SOCKET_PATH:
        return candidate
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path(tempfile.gettempdir())
    folder = base / f"dreamd-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user; not putting the "
                      "daemon's socket there")
    digest = hashlib.sha256(str(state_dir).encode("utf-8")).hexdigest()[:16]
    return folder / f"{digest}.sock"


#: macOS and the BSDs: ``getsockopt(SOL_LOCAL, LOCAL_PEERCRED)`` gives a ``struct xucred``
#: (``cr_version``, ``cr_uid``, ...; <sys/un.h>, <sys/ucred.h>); Python names neither.
_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE = 0, 1, 76


def _peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, where the OS says (``SO_PEERCRED`` on
    Linux, ``LOCAL_PEERCRED`` on macOS); else ``None``."""
    try:
        option = getattr(socket, "SO_PEERCRED", None)
        if option is not None:
            raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
            return int(struct.unpack("3i", raw)[1])
        if sys.platform == "darwin":
            raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
            return int(struct.unpack_from("=II", raw)[1])
    except (OSError, struct.error):
        return None
    return None


def _check_turn(turns: Turns, command: str) -> None:
    """Refuse (:data:`BUSY`: the client answers in-process) a command that waits for the end
    of the reconcile under way (:data:`daemon.turns.IN_A_RECONCILE`)."""
    try:
        turns.check(command)
    except NotNow:
        raise _Refused(BUSY, f"the daemon is reconciling the vault with its index and runs "
                             f"{command} once that is done") from None


class _Refused(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


#: Seconds kept, of the client's deadline, for the answer to reach it (a client waiting for
#: a reconcile's turn).
TURN_MARGIN_S = 1.0
#: Seconds a connection may stay silent between requests, and a client may take to read an
#: answer, before the daemon closes it (a stalled client never holds the engines; an MCP
#: session has no such limit).
IDLE_TIMEOUT_S = 60.0
SEND_TIMEOUT_S = 2.0  # below BUSY_WAIT_S: the next client is served, not told "busy"


class _Handler(socketserver.StreamRequestHandler):
    """One connection: requests, one per line, until the client closes it or opens an MCP
    session on it."""

    server: _Server
    timeout = IDLE_TIMEOUT_S  # socketserver sets it on the connection

    def _send(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        if not (ident is None or isinstance(ident, str) or type(ident) is int):
            message = {**message, "id": None}  # NaN, floats, objects: not echoed back
        data = json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"
        self.connection.settimeout(SEND_TIMEOUT_S)
        try:
            self.wfile.write(data)
            self.wfile.flush()
        finally:
            self.connection.settimeout(IDLE_TIMEOUT_S)

    def handle(self) -> None:
        uid = _peer_uid(self.connection)
        while True:
            line = self.rfile.readline(MAX_MESSAGE + 1)
            if not line:
                return
            ident: Any = None
            try:
                if uid is not None and uid != os.getuid():
                    log.warning("api.refused", peer_uid=uid)
                    raise _Refused(FORBIDDEN, "this daemon serves its own user only")
                if not line.endswith(b"\n"):
                    raise _Refused(-32600, f"a request is one line of at most {MAX_MESSAGE} "
                                           "bytes")
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError) as error:
                    raise _Refused(-32700, f"the request is not JSON: {error}") from None
                if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                    raise _Refused(-32600, "the request is not a JSON-RPC request")
                ident = message.get("id")
                params = message.get("params")
                method = message["method"]
                if not isinstance(params, dict):
                    raise _Refused(-32602, "params must be an object")
                if method == "mcp":
                    self._check(params)
                    self._send({"jsonrpc": "2.0", "id": ident, "result": {"session": "open"}})
                    self._mcp(params)
                    return  # the session owned the connection to its end
                if method == "cli":
                    self._cli(ident, params)
                    continue
                self._send({"jsonrpc": "2.0", "id": ident, "result": self._answer(method)})
            except _Refused as refused:
                self._send({"jsonrpc": "2.0", "id": ident,
                            "error": {"code": refused.code, "message": str(refused)}})
                if refused.code in (FORBIDDEN, -32600):
                    return
            except TimeoutError:
                return  # the client stopped reading its answer: the connection ends

    def _check(self, params: dict[str, Any]) -> None:
        if type(params.get("protocol")) is not int or params.get("protocol") != PROTOCOL:
            raise _Refused(OTHER_PROTOCOL, f"protocol {params.get('protocol')} is not served; "
                                           f"this daemon speaks {PROTOCOL}")
        if params.get("settings") != self.server.service.fingerprint():
            raise _Refused(OTHER_SETTINGS, "the running daemon has other settings (another "
                                           "config, profile or --set)")

    def _answer(self, method: str) -> dict[str, Any]:
        service = self.server.service
        if method == "health":
            return {"protocol": PROTOCOL, "pid": os.getpid(), "vault": service.vault,
                    "settings": service.fingerprint()}
        raise _Refused(-32601, f"no such method: {method}")

    def _cli(self, ident: Any, params: dict[str, Any]) -> None:
        """Run a command line and send its answer; the index work its writes leave
        (:attr:`Service.after_answer`) runs once the answer is out, still under the lock, so
        the next request sees it and the client does not wait for it."""
        service = self.server.service
        self._check(params)
        argv, stdin, terminal = params.get("argv"), params.get("stdin"), params.get("terminal")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise _Refused(-32602, "argv must be a non-empty list of strings")
        if argv[0] not in SERVED_COMMANDS:
            raise _Refused(-32602, f"{argv[0]!r} is not a command the daemon serves")
        if any(a in ("--help", "-h") for a in argv):
            raise _Refused(USAGE, "help is printed by the client's own CLI")
        deadline = params.get("deadline")
        turns = service.turns
        wait_s = BUSY_WAIT_S
        if turns.reconciling:  # its next interleave lets the client in: wait for it
            _check_turn(turns, argv[0])
            if isinstance(deadline, int | float):
                wait_s = max(BUSY_WAIT_S, deadline - time.time() - TURN_MARGIN_S)
        if not turns.take(wait_s):
            raise _Refused(BUSY, f"busy indexing for over {wait_s:g} s")
        try:
            if isinstance(deadline, int | float) and time.time() > deadline:
                # the client gave up and answered in-process: never run it a second time
                raise _Refused(EXPIRED, "the client stopped waiting for this answer")
            _check_turn(turns, argv[0])  # (let in by a reconcile begun meanwhile)
            try:
                answer = service.run_command(
                    argv, stdin if isinstance(stdin, str) else None,
                    terminal if isinstance(terminal, dict) else {})
            except Stopping as stopping:
                raise _Refused(STOPPING, f"the daemon is stopping: {stopping}") from None
            if answer is None:
                raise _Refused(USAGE, "usage error")
            self._send({"jsonrpc": "2.0", "id": ident, "result": {
                "exit_code": answer.exit_code, "stdout": answer.stdout,
                "stderr": answer.stderr}})
        finally:
            try:
                service.after_answer()
            finally:
                turns.lock.release()

    def _mcp(self, params: dict[str, Any]) -> None:
        owner = params.get("owner")
        self.connection.settimeout(None)  # a session may be quiet for hours
        try:
            self.server.service.run_mcp(self.rfile, self.wfile,
                                        owner if isinstance(owner, str) else None)
        except Exception as error:  # the session ends; the daemon serves on
            log.error("api.mcp_session_failed", error=f"{type(error).__name__}: {error}")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # listen backlog: a burst of hooks and commands waits, not fails

    def __init__(self, path: str, service: Service) -> None:
        self.service = service
        super().__init__(path, _Handler, bind_and_activate=False)

    def server_bind(self) -> None:
        old = os.umask(0o177)  # the socket file is born 0600, never briefly open to others
        try:
            self.socket.bind(self.server_address)
        finally:
            os.umask(old)
        Path(str(self.server_address)).chmod(0o600)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.warning("api.connection_failed", error=str(sys.exc_info()[1]))


class LocalApi:
    """The API of one daemon: :meth:`start` binds the socket and serves in a thread, then
    writes ``api.json``; :meth:`stop` removes both. Raises OSError from :meth:`start` when
    the socket cannot be made."""

    def __init__(self, state_dir: Path, service: Service) -> None:
        self.state_dir = state_dir
        self.service = service
        self.path: Path | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Path:
        path = socket_path(self.state_dir)
        # the vault's lock is ours: a socket file left here is a dead daemon's
        path.unlink(missing_ok=True)
        server = _Server(str(path), self.service)
        try:
            server.server_bind()
            server.server_activate()
        except OSError:
            server.server_close()
            raise
        self._server, self.path = server, path
        self._thread = threading.Thread(target=server.serve_forever, name="dreamd-local-api",
                                        kwargs={"poll_interval": 0.5}, daemon=True)
        self._thread.start()
        self.refresh()
        for marker in self.state_dir.glob(f"{FALLBACK_NOTED}*"):  # say it again next time
            marker.unlink(missing_ok=True)
        log.info("api.listening", socket=str(path))
        return path

    def refresh(self) -> None:
        """Write ``api.json`` (at start, and after a reload changed the settings
        fingerprint)."""
        if self.path is not None:
            write_json_atomic(self.state_dir / API_RECORD, {
                "protocol": PROTOCOL, "pid": os.getpid(), "socket": str(self.path),
                "settings": self.service.fingerprint()})

    def stop(self) -> None:
        (self.state_dir / API_RECORD).unlink(missing_ok=True)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
