"""Requests the MCP SDK cannot read, answered instead of dropped.

JSON lets a string escape a lone UTF-16 surrogate (``"\\ud800"``); such a string is no text
(no UTF-8 encodes it). The SDK's stdio transport parses each line with pydantic, which
rejects it as invalid JSON and hands the transport the exception; the SDK's dispatcher only
logs that, so the request is never answered and the client waits until its own timeout,
its other requests stuck behind it in its queue.

:class:`AnsweringReads` stands between the transport and the server: a request the SDK could
not read, which Python's own JSON reader reads as an object with an ``id`` and a string
holding a lone surrogate, is answered on the spot — a ``tools/call`` with a tool error
result (``isError``, as every refused input of a tool is answered), any other request with
a JSON-RPC ``invalid params`` error — and the session goes on. Everything else passes
through unchanged.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["AnsweringReads", "answer_to_unread", "lone_surrogate"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any, name: str = "") -> str | None:
    """``"<name> holds a lone surrogate (U+D800), not text"`` for the first string in
    ``value`` (a JSON value: nested dicts and lists, keys too) that holds a lone surrogate;
    ``None`` when none does. ``name`` is where ``value`` sits (``query``, ``items[2]``)."""
    if isinstance(value, str):
        found = _LONE_SURROGATE.search(value)
        return None if found is None else (
            f"{name or 'a string'} holds a lone surrogate (U+{ord(found.group()):04X}), "
            "not text")
    if isinstance(value, dict):
        for key, item in value.items():
            said = lone_surrogate(key, "a name") or lone_surrogate(
                item, f"{name}.{key}" if name else str(key))
            if said is not None:
                return said
    if isinstance(value, list):
        for i, item in enumerate(value):
            said = lone_surrogate(item, f"{name}[{i}]")
            if said is not None:
                return said
    return None


def answer_to_unread(error: Exception) -> types.JSONRPCMessage | None:
    """The answer to the request the SDK failed to read with ``error`` (its pydantic
    ``ValidationError`` names the line), when that line is a request holding a lone
    surrogate; ``None`` otherwise (the SDK's own handling stands)."""
    if not isinstance(error, ValidationError):
        return None
    lines = [e.get("input") for e in error.errors() if e.get("type") == "json_invalid"]
    if not lines or not isinstance(lines[0], str | bytes):
        return None
    try:
        request = json.loads(lines[0])
    except ValueError:
        return None
    if not isinstance(request, dict) or not isinstance(request.get("method"), str) \
            or not isinstance(request.get("id"), int | str) or isinstance(request["id"], bool):
        return None
    params = request.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    said = lone_surrogate(arguments) if request["method"] == "tools/call" else None
    if said is not None:
        result = types.CallToolResult(content=[types.TextContent(type="text", text=said)],
                                      is_error=True)
        return types.JSONRPCResponse(jsonrpc="2.0", id=request["id"], result=result.model_dump(
            by_alias=True, exclude_none=True, mode="json"))
    said = lone_surrogate(request)
    if said is None:
        return None
    return types.JSONRPCError(jsonrpc="2.0", id=request["id"], error=types.ErrorData(
        code=types.INVALID_PARAMS, message=said))


class AnsweringReads:
    """The transport's read stream, less the requests :func:`answer_to_unread` answers
    (sent on ``write``, the transport's write stream); satisfies the SDK's ``ReadStream``."""

    def __init__(self, read: ReadStream[SessionMessage | Exception],
                 write: WriteStream[SessionMessage]) -> None:
        self._read = read
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK's context-carrying streams)."""
        return getattr(self._read, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """The next item the server is to handle (answered requests skipped)."""
        while True:
            item = await self._read.receive()
            if not await self._answered(item):
                return item

    async def _answered(self, item: SessionMessage | Exception) -> bool:
        answer = answer_to_unread(item) if isinstance(item, Exception) else None
        if answer is not None:
            await self._write.send(SessionMessage(answer))
        return answer is not None

    async def aclose(self) -> None:
        await self._read.aclose()

    def __aiter__(self) -> AnsweringReads:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:  # the stream's own end (StopAsyncIteration) ends this one
            item = await self._read.__anext__()
            if not await self._answered(item):
                return item

    async def __aenter__(self) -> AnsweringReads:
        await self._read.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None
                        ) -> bool | None:
        return await self._read.__aexit__(exc_type, exc_val, exc_tb)
