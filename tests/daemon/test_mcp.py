"""`dreamd mcp` as Claude Code runs it: a real stdio subprocess and the MCP client library."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from daemon.mcp_server import render_context

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
    assert listed == ["build_context", "memory_forget", "memory_read", "memory_search",
                      "memory_write"]
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


def test_context_never_cuts_an_entry_and_says_what_it_left_out() -> None:
    resident = [(f"Memory/r{i}.md", f"Rule {i}", "x" * 300) for i in range(10)]
    text = render_context(resident, [], budget_tokens=300)
    assert text.count("- Rule") < 10 and "more entries left out" in text
    assert all(line.endswith("x" * 300 + "") or not line.startswith("- Rule")
               for line in text.splitlines())
    assert len(text) <= 300 * 4 + 200


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
