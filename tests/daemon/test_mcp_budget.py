"""Every answer of ``dreamd mcp`` fits ``mcp.max_result_tokens``: long memories, histories and
diffs in pages an assistant can follow to the end, search hits and contexts within it.

The real server from ``build_server`` through the real MCP client, in process, on a copy of the
demo vault with the FAKE token-hash embedder (conftest): these tests are about sizes, not
meaning. The answers are measured as the client receives them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from fakes import TokenHashEmbedder
from mcp import Client

from daemon.app import App
from daemon.mcp_budget import result_tokens
from daemon.mcp_server import build_server

MakeApp = Callable[..., tuple[App, TokenHashEmbedder]]
DEFAULT_BUDGET = 20_000


def call(app: App, name: str, arguments: dict[str, Any]) -> tuple[Any, int]:
    """One tool call: (its data, the estimated tokens of what the client received)."""

    async def run() -> Any:
        async with Client(build_server(app)) as client:
            return await client.call_tool(name, arguments)

    result = anyio.run(run)
    assert not result.is_error, result.content[0].text[:500]
    texts = [block.text for block in result.content]
    tokens = sum(result_tokens(text) for text in texts)
    if name == "build_context":
        return texts[0], tokens
    data = [json.loads(text) for text in texts]
    return (data if name == "memory_search" else data[0]), tokens


def long_memory(vault: Path, stem: str, lines: int, marker: str = "") -> tuple[str, str]:
    """A memory file of about ``lines`` × 80 characters, a fifth of its lines Chinese."""
    body = "".join(
        f"第{n}行：数据库迁移必须先在测试环境运行，再上线。{marker}\n" if n % 5 == 0 else
        f"Line {n}: the nightly export writes {n * 7} rows to the archive bucket. {marker}\n"
        for n in range(lines))
    text = ("---\nname: Export runbook\ndescription: How the nightly export works\n"
            "type: project\n---\n" + body)
    (vault / "Memory" / f"{stem}.md").write_text(text, encoding="utf-8")
    return f"Memory/{stem}.md", text


def test_a_long_memory_is_read_in_pages_that_each_fit(vault: Path, make_app: MakeApp) -> None:
    path, text = long_memory(vault, "export-runbook", 3700)
    assert len(text) > 230_000
    app, _ = make_app(vault)
    try:
        app.sync()
        pages, offset = [], 0
        while offset is not None:
            page, tokens = call(app, "memory_read", {"memory": path, "offset": offset})
            assert tokens <= DEFAULT_BUDGET and page["path"] == path
            assert page["offset"] == offset and page["total_chars"] == len(text)
            pages.append(page)
            offset = page["next_offset"]
            if offset is not None:
                assert f"call memory_read again with offset={offset} for the rest" \
                    in page["note"]
                assert page["content"].endswith("\n")  # cut at a line end
        small, _ = call(app, "memory_read", {"memory": "Memory/prefers-metric-units.md"})
        wrong = anyio.run(_error, app, "memory_read", {"memory": path, "offset": len(text) + 1})
    finally:
        app.close()
    assert len(pages) >= 4
    assert "".join(page["content"] for page in pages) == text  # nothing lost between pages
    assert "note" not in pages[-1]
    assert small["next_offset"] is None and "note" not in small
    assert small["content"].startswith("---\n")
    assert f"offset must be between 0 and {len(text)}" in wrong


async def _error(app: App, name: str, arguments: dict[str, Any]) -> str:
    async with Client(build_server(app)) as client:
        result = await client.call_tool(name, arguments)
    assert result.is_error
    return str(result.content[0].text)


def test_a_diff_of_a_long_memory_comes_in_pages(vault: Path, make_app: MakeApp) -> None:
    path, _ = long_memory(vault, "export-runbook", 3700)
    app, _ = make_app(vault)
    try:
        app.sync()
        long_memory(vault, "export-runbook", 3700, marker="(checked)")
        app.sync()
        whole = app.history().diff(path, 1, None)
        assert len(whole) > 450_000
        pages, offset = [], 0
        while offset is not None:
            page, tokens = call(app, "memory_history",
                                {"memory": path, "diff_from": 1, "offset": offset})
            assert tokens <= DEFAULT_BUDGET
            assert [v["n"] for v in page["versions"]] == [1, 2] and page["current"] == 2
            pages.append(page)
            offset = page["next_offset"]
    finally:
        app.close()
    assert len(pages) >= 8
    assert "".join(page["diff"] for page in pages) == whole
    assert "call memory_history again with offset=" in pages[0]["note"]


def test_a_long_history_is_listed_in_pages(vault: Path, make_app: MakeApp) -> None:
    app, _ = make_app(vault, **{"mcp.max_result_tokens": 1000})
    try:
        app.sync()
        target = vault / "Memory" / "prefers-metric-units.md"
        original = target.read_text(encoding="utf-8")
        for n in range(14):
            target.write_text(original + f"\nEdit {n}: also give oven temperatures in °C.\n",
                              encoding="utf-8")
            app.sync()
        recorded = [v.n for v in app.history().history("Memory/prefers-metric-units.md")]
        listed, offset, pages = [], 0, 0
        while offset is not None:
            page, tokens = call(app, "memory_history",
                                {"memory": "Memory/prefers-metric-units.md", "offset": offset})
            assert tokens <= 1000
            listed += [v["n"] for v in page["versions"]]
            offset, pages = page["next_offset"], pages + 1
        with_diff, tokens = call(app, "memory_history", {
            "memory": "Memory/prefers-metric-units.md", "diff_from": 1})
    finally:
        app.close()
    assert listed == recorded and len(recorded) == 15 and pages >= 2
    assert tokens <= 1000
    kept = [v["n"] for v in with_diff["versions"]]
    assert kept == recorded[len(recorded) - len(kept):]  # the newest
    assert with_diff["versions_left_out"] == len(recorded) - len(kept) > 0


def test_search_hits_and_contexts_fit_the_budget(vault: Path, make_app: MakeApp) -> None:
    for n in range(40):
        (vault / "Memory" / f"rule-{n}.md").write_text(
            f"---\nname: Rule {n}\ndescription: Never deploy service {n} on a Friday; "
            + "wait for Monday and tell the on-call team first. " * 6
            + f"\ntype: feedback\n---\nNever deploy service {n} on a Friday.\n",
            encoding="utf-8")
    app, _ = make_app(vault, **{"mcp.max_result_tokens": 1500})
    try:
        app.sync()
        hits, hit_tokens = call(app, "memory_search", {"query": "deploy service Friday",
                                                       "limit": 50})
        context, context_tokens = call(app, "build_context",
                                       {"query": "deploy", "budget_tokens": 100_000})
    finally:
        app.close()
    assert hit_tokens <= 1500 and context_tokens <= 1500
    *found, note = hits
    assert found and all("path" in hit for hit in found)
    assert re.fullmatch(r"\d+ more hits left out to fit the result budget .*", note["note"])
    assert context.startswith('<background source="dreamd">')
    assert context.endswith("</background>")
    assert re.search(r"\(\d+ more lines cut to fit the result budget", context)


@pytest.mark.parametrize("budget", [999, "many"])
def test_a_result_budget_below_a_useful_answer_is_a_config_error(
        vault: Path, make_app: MakeApp, budget: object) -> None:
    from config.errors import ConfigError

    with pytest.raises(ConfigError, match="max_result_tokens"):
        make_app(vault, **{"mcp.max_result_tokens": budget})
