"""`dreamd mcp --http` as a client reaches it: a real subprocess on loopback, real HTTP requests
and the real MCP client (streamable HTTP).

One server process serves the module (started with ``--port 0``: it binds a free port itself and
prints the URL on stderr once the socket listens, so there is no port race and no sleep). The
guards are checked with raw requests on a live MCP session, so each status code is exact:
no or wrong token → 401 (JSON body), a foreign ``Host`` → 421 (the ``mcp`` library's DNS-rebinding
check answers 421 Misdirected Request, not 403), a foreign ``Origin`` → 403.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from typer.testing import CliRunner

from config.errors import ConfigError
from daemon.app import load
from daemon.cli import app as cli_app
from daemon.mcp_http import (
    TOKEN_ENV_VAR,
    TOKEN_FILE_NAME,
    BearerTokenMiddleware,
    bind_loopback,
    load_or_create_token,
    serve_http,
)

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 60.0
PROTOCOL_VERSION = "2025-06-18"
JSON_AND_SSE = "application/json, text/event-stream"


@dataclass
class Server:
    """A running ``dreamd mcp --http`` and what it printed."""

    process: subprocess.Popen[str]
    url: str
    port: int
    vault: Path
    data_dir: Path
    stderr: list[str] = field(default_factory=list)

    def token_file(self) -> Path:
        return next(self.data_dir.glob(f"vaults/*/{TOKEN_FILE_NAME}"))

    def token(self) -> str:
        return self.token_file().read_text(encoding="ascii").strip()


def _env(home: Path, **extra: str) -> dict[str, str]:
    """os.environ without DREAMD_*, with data and config under ``home`` (as tests/conftest.py)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DREAMD_")}
    env.update({
        "DREAMD_STORAGE__DATA_DIR": str(home / "data"),
        "DREAMD_CONFIG": str(home / "config.toml"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "LANCEDB_LOG": "error",
        **extra,
    })
    return env


def _start(home: Path, *args: str, **env: str) -> Server:
    vault = home / "vault"
    if not vault.exists():
        shutil.copytree(REPO / "vault_example", vault, symlinks=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "mcp", "--http", "--port", "0", "--vault", str(vault),
         *args],
        cwd=REPO, env=_env(home, **env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    collected: list[str] = []

    def drain() -> None:  # keep reading, so the server never blocks on a full pipe
        assert process.stderr is not None
        for line in process.stderr:
            collected.append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=READY_TIMEOUT_S)
        except queue.Empty:
            process.kill()
            pytest.fail(f"dreamd mcp --http not ready in {READY_TIMEOUT_S} s: {collected}")
        if line is None:
            pytest.fail(f"dreamd mcp --http exited {process.wait()}: {collected}")
        if "MCP over HTTP at " in line:
            url = line.split("MCP over HTTP at ", 1)[1].split()[0]
            port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
            return Server(process, url, port, vault, home / "data", collected)


def _stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = _start(tmp_path_factory.mktemp("mcp-http"))
    yield running
    _stop(running)


def _client(**headers: str) -> httpx2.Client:
    return httpx2.Client(trust_env=False, timeout=30.0, headers=headers)  # loopback, no proxy


def _rpc(method: str, params: dict[str, Any] | None = None, id_: int | None = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id_ is not None:
        message["id"] = id_
    return json.dumps(message)


def _events(response: httpx2.Response) -> list[Any]:
    """JSON-RPC messages of a response, whether sent as JSON or as server-sent events."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return [response.json()]
    return [json.loads(line[len("data:"):]) for line in response.text.splitlines()
            if line.startswith("data:")]


def _open_session(server: Server, client: httpx2.Client) -> dict[str, str]:
    """Initialize an MCP session with the right token; the headers that continue it."""
    base = {"content-type": "application/json", "accept": JSON_AND_SSE}
    init = client.post(server.url, headers=base, content=_rpc("initialize", {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}))
    assert init.status_code == 200, init.text
    assert _events(init)[0]["result"]["serverInfo"]["name"] == "dreamd"
    session = {**base, "mcp-session-id": init.headers["mcp-session-id"],
               "mcp-protocol-version": PROTOCOL_VERSION}
    done = client.post(server.url, headers=session,
                       content=_rpc("notifications/initialized", id_=None))
    assert done.status_code == 202, done.text
    return session


def _memory_files_mentioning(vault: Path, marker: str) -> list[Path]:
    return [path for path in vault.rglob("*.md") if marker in path.read_text(encoding="utf-8")]


def test_the_guards_refuse_before_any_tool_runs(server: Server) -> None:
    token = server.token()
    good = _client(authorization=f"Bearer {token}")
    session = _open_session(server, good)
    listed = good.post(server.url, headers=session, content=_rpc("tools/list", id_=2))
    assert listed.status_code == 200
    names = {tool["name"] for tool in _events(listed)[0]["result"]["tools"]}
    assert "memory_write" in names

    marker = "zebra-marker-7f3a"
    call = _rpc("tools/call", {"name": "memory_write",
                               "arguments": {"text": f"The {marker} fact.", "type": "project"}},
                id_=3)
    other_port = server.port + 1 if server.port < 65535 else server.port - 1
    attempts = {
        "no token": (_client(), {}),
        "wrong token": (_client(authorization=f"Bearer {token[:-1]}x"), {}),
        "wrong scheme": (_client(authorization=f"Basic {token}"), {}),
        "foreign Host": (good, {"host": "evil.example:80"}),
        "Host on another port": (good, {"host": f"127.0.0.1:{other_port}"}),
        "foreign Origin": (good, {"origin": "http://evil.example"}),
        "Origin on another port": (good, {"origin": f"http://localhost:{other_port}"}),
    }
    statuses = {}
    for name, (client, extra) in attempts.items():
        response = client.post(server.url, headers={**session, **extra}, content=call)
        statuses[name] = response.status_code
        if response.status_code == 401:
            body = response.json()
            assert body["error"] in {"unauthorized", "invalid_token"}, body
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert statuses == {
        "no token": 401, "wrong token": 401, "wrong scheme": 401,
        "foreign Host": 421, "Host on another port": 421,
        "foreign Origin": 403, "Origin on another port": 403,
    }
    # every path is behind the token, not only /mcp
    assert _client().get(server.url.replace("/mcp", "/")).status_code == 401
    assert _memory_files_mentioning(server.vault, marker) == []  # no tool ran

    # the allowed spellings pass: localhost as Host, our own origin
    local = {**session, "host": f"localhost:{server.port}",
             "origin": f"http://localhost:{server.port}"}
    again = good.post(server.url, headers=local, content=_rpc("tools/list", id_=4))
    assert again.status_code == 200, again.text
    assert not any(token in line for line in server.stderr)  # never printed nor logged


def test_the_server_listens_on_127_0_0_1_only(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass
    # All of 127/8 reaches the loopback interface on Linux: a socket bound to 0.0.0.0 would
    # answer on 127.0.0.2 too (elsewhere 127.0.0.2 is not configured and fails as well).
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", server.port), timeout=5).close()
    tcp = Path("/proc/net/tcp")
    if tcp.exists():  # Linux: every listening socket on this port is on 127.0.0.1
        rows = [line.split() for line in tcp.read_text().splitlines()[1:]]
        listening = [row[1] for row in rows
                     if row[3] == "0A" and int(row[1].split(":")[1], 16) == server.port]
        assert listening and set(listening) == {f"0100007F:{server.port:04X}"}
    tcp6 = Path("/proc/net/tcp6")
    if tcp6.exists():
        rows = [line.split() for line in tcp6.read_text().splitlines()[1:]]
        assert not [row for row in rows
                    if row[3] == "0A" and int(row[1].split(":")[1], 16) == server.port]


def test_the_token_file_is_private_and_never_printed(server: Server) -> None:
    path = server.token_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = server.token()
    assert len(token) >= 43
    assert any(str(path) in line for line in server.stderr)
    assert not any(token in line for line in server.stderr)


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content)
    return json.loads(result.content[0].text)


async def _mcp_session(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    headers = {"Authorization": f"Bearer {token}"}
    results: list[Any] = []
    async with (
        httpx2.AsyncClient(headers=headers, trust_env=False,
                           timeout=httpx2.Timeout(60.0, read=300.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        results.append(sorted(tool.name for tool in tools.tools))
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


@pytest.mark.slow
def test_an_assistant_writes_reads_and_searches_over_http(server: Server) -> None:
    """The real MCP client with the token; memory_write embeds with the real model."""
    text = "Deploys to the kiln controller go out on Tuesdays only."
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_write", {"text": text, "type": "project", "name": "Kiln deploy day"}),
        ("memory_read", {"memory": "Kiln deploy day"}),
        ("memory_search", {"query": "kiln controller deploys", "limit": 5}),
    ]
    listed, written, read, search = anyio.run(_mcp_session, server.url, server.token(), calls)
    assert listed == ["build_context", "memory_forget", "memory_history", "memory_note",
                      "memory_read", "memory_rollback", "memory_search", "memory_write"]
    created = _data(written)
    assert created["action"] == "created"
    stored = _data(read)
    assert stored["path"] == created["path"] and text in stored["content"]
    hits = _data(search)
    assert isinstance(hits, list)
    assert any(hit["path"] == created["path"] for hit in hits)


def test_env_token_wins_and_show_token_prints_it(tmp_path: Path) -> None:
    token = "env-token-for-the-test-0123456789"
    running = _start(tmp_path, "--show-token", **{TOKEN_ENV_VAR: token})
    try:
        assert any(f"environment variable {TOKEN_ENV_VAR}" in line for line in running.stderr)
        assert any(line.endswith(f"token: {token}") for line in running.stderr)
        _open_session(running, _client(authorization=f"Bearer {token}"))
        assert list((tmp_path / "data").glob(f"vaults/*/{TOKEN_FILE_NAME}")) == []
    finally:
        _stop(running)


def test_a_non_loopback_host_is_refused_in_one_line(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "daemon", "mcp", "--http", "--host", "0.0.0.0", "--vault",
         str(vault)],
        cwd=REPO, env=_env(tmp_path), capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 3, done.stderr  # ConfigError
    assert done.stderr.startswith("dreamd: config: ") and done.stderr.count("\n") == 1
    assert "mcp.host = '0.0.0.0': must be 127.0.0.1" in " ".join(done.stderr.split())


@pytest.mark.parametrize("host", ["0.0.0.0", "::1", "localhost", "192.168.1.5", ""])
def test_config_accepts_no_other_host(tmp_path: Path, host: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[default.mcp]\nhost = "{host}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mcp\.host = .*must be 127\.0\.0\.1"):
        load(config, None, {})
    assert load(None, None, {"mcp.host": "127.0.0.1"}).settings.mcp.host == "127.0.0.1"


def test_http_flags_without_http_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("daemon.cli.configure_logging", lambda **_: None)  # keep pytest's logging
    result = CliRunner().invoke(cli_app, ["mcp", "--port", "9000", "--vault", str(tmp_path)])
    assert result.exit_code == 2
    assert "--port only applies with --http" in " ".join(result.output.split())


# --------------------------------------------------------------------------- in-process units


def test_token_file_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "state" / TOKEN_FILE_NAME
    first = load_or_create_token({}, path)
    assert first.created and first.path == path and len(first.value) == 43
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = load_or_create_token({}, path)
    assert (again.value, again.created) == (first.value, False)
    assert first.value not in repr(first)
    from_env = load_or_create_token({TOKEN_ENV_VAR: " " + "e" * 30 + "\n"}, path)
    assert (from_env.value, from_env.path) == ("e" * 30, None)
    assert from_env.source == f"environment variable {TOKEN_ENV_VAR}"


@pytest.mark.parametrize(
    ("environ", "file_text", "mode", "says"),
    [
        ({TOKEN_ENV_VAR: "short"}, None, 0o600, "too short"),
        ({TOKEN_ENV_VAR: "has a space in the middle of it"}, None, 0o600, "without spaces"),
        ({}, "a" * 43, 0o644, "chmod 600"),
        ({}, "\n", 0o600, "too short"),
    ],
)
def test_bad_tokens_are_config_errors(
    tmp_path: Path, environ: dict[str, str], file_text: str | None, mode: int, says: str
) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    if file_text is not None:
        path.write_text(file_text, encoding="ascii")
        path.chmod(mode)
    with pytest.raises(ConfigError, match=says):
        load_or_create_token(environ, path)


@pytest.mark.parametrize(
    ("headers", "verdict"),
    [
        ([], None),
        ([(b"authorization", b"Bearer s3cret-token")], True),
        ([(b"authorization", b"bearer  s3cret-token ")], True),
        ([(b"authorization", b"Bearer s3cret-tokem")], False),
        ([(b"authorization", b"Bearer s3cret-token-longer")], False),
        ([(b"authorization", b"s3cret-token")], False),
        ([(b"authorization", b"Basic s3cret-token")], False),
        ([(b"authorization", b"Bearer \xff\xfe")], False),
        ([(b"authorization", b"Bearer s3cret-token")] * 2, False),
    ],
)
def test_bearer_check(headers: list[tuple[bytes, bytes]], verdict: bool | None) -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    middleware = BearerTokenMiddleware(inner, "s3cret-token")
    assert middleware.authorized({"type": "http", "headers": headers}) is verdict


def test_a_taken_port_and_a_foreign_host_are_config_errors() -> None:
    taken = bind_loopback(0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"127\.0\.0\.1:{port}: already in use"):
            bind_loopback(port)
    finally:
        taken.close()
    with pytest.raises(ConfigError, match=r"127\.0\.0\.1 only"):
        serve_http(MCPServer(name="x"), host="0.0.0.0", port=0, token="t" * 43)
