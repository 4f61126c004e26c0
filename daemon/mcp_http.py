"""``dreamd mcp --http``: the MCP server over streamable HTTP, on loopback only, behind a token.

DESIGN.md (Safety): stdio by default; HTTP only on loopback with a token. Three guards, outermost
first:

1. The socket is bound to ``127.0.0.1`` and nothing else (``mcp.host`` accepts no other value).
2. Every HTTP request must carry ``Authorization: Bearer <token>``, compared in constant time
   (:func:`hmac.compare_digest`); otherwise ``401`` with a JSON body and no tool runs
   (:class:`BearerTokenMiddleware`).
3. DNS-rebinding protection of the ``mcp`` library (``TransportSecuritySettings``, checked by
   the streamable HTTP transport on ``/mcp``): the ``Host`` header must be
   ``127.0.0.1:<port>`` or ``localhost:<port>``, else ``421 Misdirected Request``; an
   ``Origin`` header, when present, must be ``http://127.0.0.1:<port>`` or
   ``http://localhost:<port>``, else ``403``. mcp 2.x turns this on by itself for a loopback
   host but with any port allowed (``127.0.0.1:*``); we pass the exact port.

The token is ``DREAMD_MCP_TOKEN`` when set, else the file ``<state dir>/mcp-token``, created on
first use with :func:`secrets.token_urlsafe` (32 bytes, 43 characters) and mode 0600.
"""

from __future__ import annotations

import errno
import hmac
import json
import os
import secrets
import socket
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import structlog
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from ccb.atomic import write_bytes_atomic
from config.errors import ConfigError
from config.settings import MCP_LOOPBACK_HOST

__all__ = [
    "MCP_PATH",
    "MIN_TOKEN_CHARS",
    "TOKEN_ENV_VAR",
    "TOKEN_FILE_NAME",
    "BearerToken",
    "BearerTokenMiddleware",
    "bind_loopback",
    "build_http_app",
    "load_or_create_token",
    "serve_http",
    "transport_security",
]

log = structlog.get_logger("dreamd.mcp")

#: Environment variable holding the bearer token; wins over the token file.
TOKEN_ENV_VAR = "DREAMD_MCP_TOKEN"
#: Name of the token file inside the vault's state folder.
TOKEN_FILE_NAME = "mcp-token"
#: Path of the streamable HTTP endpoint (the ``mcp`` library's default).
MCP_PATH = "/mcp"
#: Shortest token accepted from the environment or a file: 128 bits as URL-safe base64 is 22
#: characters; ``secrets.token_urlsafe(32)`` gives 43.
MIN_TOKEN_CHARS = 22
#: Bytes of randomness of a generated token (``secrets.token_urlsafe``; 256 bits).
_TOKEN_BYTES = 32
#: Seconds uvicorn waits for open streams (a client's GET event stream) on shutdown.
_GRACEFUL_SHUTDOWN_S = 3


@dataclass(frozen=True)
class BearerToken:
    """The token clients must send, and where it came from (for messages; never the value)."""

    value: str
    source: str  # "environment variable DREAMD_MCP_TOKEN" or "file <path>"
    path: Path | None = None  # the token file, when the token came from one
    created: bool = False  # True when this call wrote the token file

    def __repr__(self) -> str:  # keep the secret out of tracebacks and logs
        return f"BearerToken(source={self.source!r}, created={self.created})"


def _checked(value: str, where: str) -> str:
    token = value.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"mcp: {where}: the token is too short ({len(token)} characters, at least "
            f"{MIN_TOKEN_CHARS}); python -c 'import secrets; print(secrets.token_urlsafe(32))' "
            "makes a good one"
        )
    if not (token.isascii() and token.isprintable()) or any(c.isspace() for c in token):
        raise ConfigError(
            f"mcp: {where}: the token must be printable ASCII without spaces (it is sent in an "
            "HTTP header)"
        )
    return token


def load_or_create_token(environ: Mapping[str, str], path: Path) -> BearerToken:
    """The bearer token: ``environ[TOKEN_ENV_VAR]`` if set, else the file at ``path``.

    A missing file is created with ``secrets.token_urlsafe(32)`` and mode 0600 (atomically).
    Raises ConfigError when the token is shorter than :data:`MIN_TOKEN_CHARS` or not printable
    ASCII, when the file is readable or writable by group or others (POSIX), or cannot be read.
    """
    if environ.get(TOKEN_ENV_VAR, "").strip():
        where = f"environment variable {TOKEN_ENV_VAR}"
        return BearerToken(_checked(environ[TOKEN_ENV_VAR], where), where)
    where = f"file {path}"
    try:
        info = path.stat()
    except FileNotFoundError:
        token = secrets.token_urlsafe(_TOKEN_BYTES)
        try:
            write_bytes_atomic(path, (token + "\n").encode("ascii"), mode=0o600)
        except OSError as error:
            raise ConfigError(f"mcp: cannot write the token {where}: {error}") from error
        return BearerToken(token, where, path, created=True)
    except OSError as error:
        raise ConfigError(f"mcp: cannot read the token {where}: {error}") from error
    if os.name == "posix" and info.st_mode & 0o077:
        raise ConfigError(
            f"mcp: the token {where} is open to other users "
            f"(mode {stat.S_IMODE(info.st_mode):04o}); run: chmod 600 {path}"
        )
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"mcp: cannot read the token {where}: {error}") from error
    return BearerToken(_checked(text, where), where, path)


def transport_security(port: int) -> TransportSecuritySettings:
    """Host and Origin values the ``mcp`` transport accepts for a server on ``port``.

    ``127.0.0.1:<port>`` and ``localhost:<port>`` as ``Host``; the same with ``http://`` as
    ``Origin`` (a browser page served from elsewhere sends its own origin and is refused).
    """
    hosts = [f"{MCP_LOOPBACK_HOST}:{port}", f"localhost:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )


class BearerTokenMiddleware:
    """ASGI middleware: answer ``401`` unless the request carries ``Authorization: Bearer <token>``.

    Applies to every HTTP (and websocket) request whatever its path; ASGI ``lifespan`` events
    pass through. The 401 body is JSON ``{"error": ..., "error_description": ...}`` with a
    ``WWW-Authenticate: Bearer`` header (RFC 6750 §3: no error code when no token was sent,
    ``invalid_token`` when a wrong one was). The presented token is never logged.
    """

    def __init__(self, app: ASGIApp, token: str,
                 on_session: Callable[[], None] | None = None) -> None:
        if not token:
            raise ValueError("BearerTokenMiddleware needs a non-empty token")
        self.app = app
        self._token = token.encode("ascii")
        self._on_session = on_session

    def authorized(self, scope: Scope) -> bool | None:
        """True: the right token. False: a wrong one. None: no ``Authorization`` header."""
        values = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        if not values:
            return None
        if len(values) != 1:
            return False
        scheme, _, presented = values[0].strip().partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        return hmac.compare_digest(presented.strip(), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        verdict = self.authorized(scope)
        if verdict:
            if self._on_session is not None and _starts_session(scope):
                self._on_session()
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        log.warning("mcp.http.unauthorized", path=scope.get("path"),
                    client=f"{client[0]}:{client[1]}" if client else None,
                    reason="no token" if verdict is None else "wrong token")
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if verdict is None:
            challenge = 'Bearer realm="dreamd"'
            body = {"error": "unauthorized",
                    "error_description": "send Authorization: Bearer <token> (see dreamd mcp "
                    "--http for where the token is)"}
        else:
            challenge = 'Bearer realm="dreamd", error="invalid_token"'
            body = {"error": "invalid_token", "error_description": "wrong bearer token"}
        payload = json.dumps(body).encode("utf-8")
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode("ascii")),
                (b"www-authenticate", challenge.encode("ascii")),
            ],
        })
        await send({"type": "http.response.body", "body": payload})


def _starts_session(scope: Scope) -> bool:
    """A POST without ``Mcp-Session-Id``: a client's ``initialize``, the start of a session
    (MCP streamable HTTP transport)."""
    return scope["type"] == "http" and scope.get("method") == "POST" and not any(
        name == b"mcp-session-id" for name, _ in scope.get("headers", ()))


def build_http_app(server: MCPServer, *, port: int, token: str,
                   on_session: Callable[[], None] | None = None) -> ASGIApp:
    """The ASGI app of ``server`` at :data:`MCP_PATH`: bearer check outside, then the library's
    streamable HTTP transport with Host/Origin checks for ``port`` (see the module docstring).
    ``on_session()`` is called when a client starts a session (the dream gate counts them)."""
    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(port),
        host=MCP_LOOPBACK_HOST,
    )
    return BearerTokenMiddleware(inner, token, on_session)


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on ``127.0.0.1:port`` (``port`` 0: any free port).

    Raises ConfigError when the port is taken or cannot be bound (names the port).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if os.name == "posix":  # rebind at once after a restart (TIME_WAIT), never share
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((MCP_LOOPBACK_HOST, port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        reason = "already in use" if error.errno == errno.EADDRINUSE else str(error)
        raise ConfigError(
            f"mcp: cannot listen on {MCP_LOOPBACK_HOST}:{port}: {reason} "
            "(pick another with --port or mcp.port)"
        ) from error
    return sock


def serve_http(
    server: MCPServer, *, host: str, port: int, token: str,
    on_ready: Callable[[str], None] | None = None,
    on_session: Callable[[], None] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP at ``http://127.0.0.1:<port>/mcp`` until SIGINT or
    SIGTERM.

    ``host`` must be ``127.0.0.1`` (else ConfigError: loopback only, whatever the caller says).
    ``on_ready(url)`` is called once the socket listens, before the first request is accepted,
    with the real port when ``port`` is 0. Raises ConfigError when the port cannot be bound.
    """
    if host != MCP_LOOPBACK_HOST:
        raise ConfigError(
            f"mcp: host {host!r} refused: dreamd serves MCP over HTTP on {MCP_LOOPBACK_HOST} only"
        )
    sock = bind_loopback(port)
    bound_port = int(sock.getsockname()[1])
    app = build_http_app(server, port=bound_port, token=token, on_session=on_session)
    config = uvicorn.Config(
        app, host=MCP_LOOPBACK_HOST, port=bound_port, log_config=None, access_log=False,
        lifespan="on", timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_S,
    )
    url = f"http://{MCP_LOOPBACK_HOST}:{bound_port}{MCP_PATH}"
    if on_ready is not None:
        on_ready(url)
    log.info("mcp.http.listening", url=url)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
