"""`dreamd mcp` as Claude Code runs it: a real stdio subprocess and the MCP client library.

The history tools are driven in process (the real server from ``build_server`` and the real
MCP client, no subprocess) on an App with the token-hash fake embedder (conftest): they are
about versions and owners, not meaning.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ccb.owner import Owner
from daemon.app import App
from daemon.mcp_server import build_server

REPO = Path(__file__).resolve().parents[2]
DREAMD = Path(sys.executable).with_name("dreamd")


async def _session(
    vault: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str
) -> list[Any]:
    params = StdioServerParameters(command=str(DREAMD),
                                   args=["mcp", "--vault", str(vault), *extra],
                                   env=dict(os.environ), cwd=str(REPO))
    results = []
    with (REPO / ".pytest-mcp-stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            results.append(sorted(tool.name for tool in tools.tools))
            for name, arguments in calls:
                results.append(await session.call_tool(name, arguments))
    (REPO / ".pytest-mcp-stderr.log").unlink(missing_ok=True)
    return results


def _in_process(
    app: App, calls: list[tuple[str, dict[str, Any]]], owner: Owner | None = None
) -> list[Any]:
    """Call tools of ``build_server(app, owner)`` through the MCP client, in this process."""

    async def run() -> list[Any]:
        async with Client(build_server(app, owner)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content)
    return json.loads(result.content[0].text)


@pytest.mark.slow
def test_an_assistant_writes_searches_reads_and_forgets(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    subprocess.run([str(DREAMD), "sync", str(vault)], check=True, capture_output=True,
                   timeout=300)
    token = "AKIA" + "QWERTYUIOPASDFGH"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_write", {"text": "Always add a 10 s timeout to the flaky billing API.",
                          "type": "feedback", "subject": "billing.timeout"}),
        ("memory_write", {"text": "always add a 10 s timeout to the flaky billing API",
                          "type": "feedback", "subject": "billing.timeout"}),
        ("memory_write", {"text": f"the deploy key is {token}", "type": "project"}),
        ("memory_search", {"query": "billing API timeout", "limit": 3}),
        ("memory_read", {"memory": "../../etc/passwd"}),
        ("build_context", {"query": "sourdough", "budget_tokens": 2000}),
        ("memory_forget", {"memory": "Always add a 10 s timeout to the flaky billing API."}),
    ]
    listed, first, again, secret, search, escape, context, forgot = anyio.run(
        _session, vault, calls)
    assert listed == ["build_context", "memory_forget", "memory_history", "memory_note",
                      "memory_read", "memory_rollback", "memory_search", "memory_write"]
    written = _data(first)
    assert written["action"] == "created"
    assert _data(again)["action"] == "duplicate"
    assert secret.is_error and "credential" in secret.content[0].text
    assert token not in secret.content[0].text
    assert any(h["path"] == written["path"] for h in _data(search))
    assert escape.is_error and "no memory has that id or name" in escape.content[0].text
    text = _data(context) if not context.content else context.content[0].text
    assert text.startswith('<background source="dreamd">')
    assert "Memory/prefers-metric-units.md" in text  # a resident user memory
    assert "Sourdough" in text  # retrieved for the query
    assert not (vault / written["path"]).exists() and _data(forgot)["path"] == written["path"]


@pytest.mark.slow
def test_one_owners_assistant_never_sees_anothers_memories(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault_example", vault)
    subprocess.run([str(DREAMD), "sync", str(vault)], check=True, capture_output=True,
                   timeout=300)
    secretish = "The studio door code rotates every Monday; ask Dana for it."
    alice = anyio.run(_session, vault, [
        ("memory_write", {"text": secretish, "type": "project", "subject": "studio.door"}),
    ], "--owner", "alice/claude-code")
    written = _data(alice[1])
    assert "owner: alice/claude-code" in (vault / written["path"]).read_text(encoding="utf-8")
    bob = anyio.run(_session, vault, [
        ("memory_search", {"query": "studio door code rotates Monday", "limit": 50}),
        ("build_context", {"query": "studio door code"}),
        ("memory_read", {"memory": written["memory_id"]}),
    ], "--owner", "bob/claude-code")
    assert written["path"] not in {hit["path"] for hit in _data(bob[1])}
    assert "door code" not in bob[2].content[0].text
    assert bob[3].is_error and "no memory has that id" in bob[3].content[0].text
    again = anyio.run(_session, vault, [
        ("memory_search", {"query": "studio door code rotates Monday", "limit": 5}),
    ], "--owner", "alice/claude-code")
    assert written["path"] in {hit["path"] for hit in _data(again[1])}


Builder = Callable[..., tuple[App, object]]


@pytest.fixture
def app(vault: Path, make_app: Builder) -> App:
    application, _ = make_app(vault)
    application.sync()
    return application


def test_an_assistant_sees_the_history_of_a_memory_and_rolls_it_back(
    app: App, vault: Path
) -> None:
    service = app.memories()
    first = service.remember("Always add a 30 s timeout to the billing API client.",
                             type="feedback", subject="billing.timeout")
    update = service.remember("Always add a 30 s timeout to the billing API client. "
                              "Log every retry with the request id.",
                              type="feedback", subject="billing.timeout")
    assert update.action == "updated" and update.path == first.path
    file = vault / first.path
    file.write_bytes(file.read_bytes().replace(b"request id", b"request id and the status"))
    app.sync()
    key = first.memory_id

    history, diff, back, after, missing, swapped = _in_process(app, [
        ("memory_history", {"memory": first.memory_id}),
        ("memory_history", {"memory": first.path, "diff_from": 1}),
        ("memory_rollback", {"memory": first.memory_id, "version": 1}),
        ("memory_history", {"memory": first.memory_id, "diff_from": 1, "diff_to": 4}),
        ("memory_rollback", {"memory": first.memory_id, "version": 99}),
        ("memory_history", {"memory": first.memory_id, "diff_to": 2}),
    ])

    listed = _data(history)
    assert listed["memory_id"] == key and listed["current"] == 3
    versions = listed["versions"]
    assert [(v["n"], v["kind"], v["origin"]) for v in versions] == [
        (1, "edit", "api"), (2, "edit", "api"), (3, "edit", "user-edit")]
    assert all(v["path"] == first.path and "T" in v["created_at"] for v in versions)

    changed = _data(diff)["diff"].splitlines()
    assert changed[:2] == ["--- version 1", f"+++ {first.path} (now)"]
    assert "+Log every retry with the request id and the status." in changed

    restored = _data(back)
    assert restored["path"] == first.path and restored["restored"] == 1
    assert restored["status"] == "written"
    assert file.read_bytes() == app.versions.content(key, 1)

    rolled = _data(after)
    assert rolled["current"] == 4
    assert rolled["versions"][-1]["origin"] == "rollback"
    assert "rollback to version 1" in rolled["versions"][-1]["change_log"]
    assert rolled["diff"] == ""  # version 4 holds version 1's bytes

    assert missing.is_error
    assert "no version 99" in missing.content[0].text
    assert "versions 1-4" in missing.content[0].text
    assert swapped.is_error and "diff_to needs diff_from" in swapped.content[0].text

    file.write_bytes(file.read_bytes() + b"\nUnrecorded: the billing API is slow on Mondays.\n")
    again, = _in_process(app, [("memory_rollback", {"memory": key, "version": 2})])
    assert _data(again)["restored"] == 2 and file.read_bytes() == app.versions.content(key, 2)
    kept, restored_again = app.versions.history(key)[-2:]
    assert (kept.n, kept.origin, restored_again.origin) == (5, "user-edit", "rollback")
    assert b"Unrecorded: the billing API" in app.versions.content(key, 5)  # nothing lost


def test_an_owners_assistant_never_sees_anothers_history(app: App, vault: Path) -> None:
    alice, bob = Owner("alice", "claude-code"), Owner("bob", "claude-code")
    written = app.memories(alice).remember(
        "The studio door code rotates every Monday; ask Dana for it.", type="project",
        subject="studio.door")
    app.memories(alice).remember(
        "The studio door code rotates every Monday; ask Dana for it. Never write it down.",
        type="project", subject="studio.door")
    before = (vault / written.path).read_bytes()

    by_bob = _in_process(app, [
        ("memory_history", {"memory": written.memory_id}),
        ("memory_history", {"memory": written.path, "diff_from": 1}),
        ("memory_rollback", {"memory": written.memory_id, "version": 1}),
    ], bob)
    assert all(result.is_error for result in by_bob)
    assert all("no memory or history has that id or name" in result.content[0].text
               for result in by_bob)
    assert not any("door code" in result.content[0].text for result in by_bob)
    assert (vault / written.path).read_bytes() == before

    by_alice, = _in_process(app, [("memory_history", {"memory": written.memory_id})], alice)
    assert len(_data(by_alice)["versions"]) == 2


def test_context_leaves_out_archived_memories_and_keeps_promoted_ones(
    app: App, vault: Path
) -> None:
    import daemon_harness as h

    h.write_memory(vault, "tabs", "Indent with tabs.", subject="indent", days_old=5)
    h.write_memory(vault, "tabs-again", "indent with TABS", subject="indent", days_old=2)
    h.write_memory(vault, "deploy-window", "Deploys happen on Tuesdays.", type="project",
                   subject="deploy", days_old=2, expires=None)
    promoted = vault / "Memory/deploy-window.md"
    promoted.write_bytes(promoted.read_bytes().replace(b"pinned: false", b"pinned: false\n"
                                                       b"resident: true"))
    app.sync()
    app.dreamer().dream()
    (context,) = _in_process(app, [("build_context", {})])
    text = _data(context)
    assert "Memory/tabs.md" in text and "Memory/tabs-again.md" not in text
    assert "Memory/deploy-window.md" in text


@pytest.mark.parametrize("limit", [0, -1])
def test_a_search_for_no_hits_is_refused_as_the_cli_refuses_it(app: App, limit: int) -> None:
    # a limit of 0 or -1 once returned hits; `dreamd search -n 0` is refused
    (result,) = _in_process(app, [("memory_search", {"query": "kiln", "limit": limit})])
    assert result.is_error
    assert "limit" in result.content[0].text
    assert "Input should be greater than or equal to 1" in result.content[0].text



def test_the_tools_read_as_plain_text_and_name_the_memory_types(app: App) -> None:
    """An assistant reads each tool's description and schema: no docstring indentation nor
    reST quoting (``limit`` read "at most         ``limit`` hits"), and the memory types
    as an enum of the schema, so that "preference" is never tried."""
    async def run() -> list[Any]:
        async with Client(build_server(app)) as client:
            return list((await client.list_tools()).tools)

    tools = {tool.name: tool for tool in anyio.run(run)}
    assert {"memory_search", "memory_write", "memory_note", "build_context"} <= set(tools)
    for tool in tools.values():
        said = tool.description or ""
        assert said and "``" not in said and "  " not in said and "\n\n\n" not in said, said
        assert all(line == line.strip() for line in said.splitlines()), said
    types = ["user", "feedback", "project", "reference"]
    assert tools["memory_write"].input_schema["properties"]["type"]["enum"] == types
    searched = tools["memory_search"].input_schema["properties"]["type"]["anyOf"]
    assert types[0] in searched[0]["enum"] and set(types) <= set(searched[0]["enum"])
    refused, kept, filtered = _in_process(app, [
        ("memory_write", {"text": "I like my tea without sugar.", "type": "preference"}),
        ("memory_write", {"text": "I like my tea without sugar.", "type": "user"}),
        ("memory_search", {"query": "tea sugar", "type": ""}),  # (no filter, as before)
    ])
    assert refused.is_error and "'user', 'feedback', 'project' or 'reference'" in \
        refused.content[0].text
    assert _data(kept)["action"] == "created"
    assert not filtered.is_error

def _raw_lines(vault: Path, messages: list[dict[str, Any]], timeout: float = 240
               ) -> dict[int, dict[str, Any]]:
    """Send ``messages`` to ``dreamd mcp`` as raw JSON lines (``json.dumps`` escapes a lone
    surrogate as ``\\ud800``, as a client written in another language may send it); the
    answers by id, read until every request is answered or ``timeout`` passes."""
    return _raw_session(vault, messages, timeout)[0]


def _raw_session(vault: Path, messages: list[dict[str, Any]], timeout: float = 240,
                 stop: int = signal.SIGKILL) -> tuple[dict[int, dict[str, Any]], int]:
    """:func:`_raw_lines`, the server then sent ``stop``: the answers and its exit code."""
    import queue
    import threading
    import time

    wanted = {m["id"] for m in messages if "id" in m}
    proc = subprocess.Popen([str(DREAMD), "mcp", "--vault", str(vault)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or ()],
                     daemon=True).start()
    answers: dict[int, dict[str, Any]] = {}
    try:
        assert proc.stdin is not None
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while set(answers) != wanted and time.monotonic() < deadline:
            try:
                answer = json.loads(lines.get(timeout=1))
            except queue.Empty:
                continue
            answers[answer.get("id")] = answer
    finally:
        proc.send_signal(stop)
        code = proc.wait(timeout=60)
    return answers, code


_HELLO = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-03-26", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]


@pytest.mark.slow
def test_a_stdio_server_stopped_by_sigterm_after_a_write_leaves_the_memory_searchable(
    tmp_path: Path,
) -> None:
    """An MCP client stops its stdio server with SIGTERM, right after ``memory_write``
    answered (no daemon runs): the server ends (code 143, its own handler's), once the index
    write that follows the answer is in, and a plain ``dreamd search`` finds the memory
    without a sync."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln\nThe kiln fires at cone 6.\n", encoding="utf-8")
    subprocess.run([str(DREAMD), "sync", str(vault)], check=True, capture_output=True,
                   timeout=300)
    answers, code = _raw_session(vault, [*_HELLO, {
        "jsonrpc": "2.0", "method": "tools/call", "id": 2, "params": {
            "name": "memory_write", "arguments": {
                "text": "The glaze bucket lid code is saffron-3391.", "type": "reference"}}}],
        stop=signal.SIGTERM)
    assert set(answers) == {1, 2} and not answers[2]["result"].get("isError"), answers
    assert code == 143
    found = subprocess.run([str(DREAMD), "search", "glaze bucket saffron-3391", "--json",
                            "--vault", str(vault)], capture_output=True, text=True,
                           timeout=300, check=True)
    assert any("saffron" in json.dumps(hit) for hit in json.loads(found.stdout))


@pytest.mark.slow
def test_a_lone_surrogate_in_a_tool_call_is_answered_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    # such a request was never answered: the client waited until its own timeout
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln\nThe kiln fires at cone 6.\n", encoding="utf-8")
    subprocess.run([str(DREAMD), "sync", str(vault)], check=True, capture_output=True,
                   timeout=300)
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    answers = _raw_lines(vault, [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {**call, "id": 2, "params": {"name": "memory_search", "arguments": {"query": "\ud800"}}},
        {**call, "id": 3, "params": {"name": "memory_write",
                                     "arguments": {"text": "a\ud800b", "type": "user"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "x\udfff"}},
        {**call, "id": 5, "params": {"name": "memory_search",
                                     "arguments": {"query": "kiln", "limit": 1}}},
    ])
    assert set(answers) == {1, 2, 3, 4, 5}, answers
    for n, said in ((2, "query holds a lone surrogate (U+D800), not text"),
                    (3, "text holds a lone surrogate (U+D800), not text")):
        assert answers[n]["result"]["isError"] is True
        assert answers[n]["result"]["content"][0]["text"] == said
    assert answers[4]["error"]["message"] == "params.uri holds a lone surrogate (U+DFFF), not text"
    found = answers[5]["result"]
    assert not found.get("isError") and "kiln.md" in json.dumps(found)
    assert sorted(p.name for p in vault.iterdir()) == ["kiln.md"]  # nothing was written


@pytest.mark.parametrize(("old_text", "new_text"), [
    ("Deploy to eu-west-1", "Deploy to us-east-1"),
    ("部署到 eu-west-1 区域", "部署到 us-east-1 区域"),
])
def test_an_assistants_rollback_of_a_superseded_memory_says_what_it_superseded(
    app: App, vault: Path, old_text: str, new_text: str,
) -> None:
    """``memory_rollback`` to a version from before a supersession makes the memory the
    current one again and says which memory it superseded in turn; the next dream leaves
    it as it is (:mod:`daemon.dream_restore`)."""
    service = app.memories()
    old = service.remember(old_text, type="project", subject="deploy.region")
    new = service.remember(new_text, type="project", subject="deploy.region")
    assert new.superseded == old.path
    back, = _in_process(app, [("memory_rollback", {"memory": old.path, "version": 1})])
    answer = _data(back)
    assert answer["restored"] == 1 and answer["superseded"] == [new.path]
    assert answer["no_longer_supersedes"] == []
    kept = (vault / old.path).read_bytes()
    app.dreamer().dream(force=True)
    assert (vault / old.path).read_bytes() == kept
