"""``dreamd mcp``: the vault's memories for AI assistants, over the Model Context Protocol.

Stdio transport by default (the client starts ``dreamd mcp`` and speaks JSON-RPC on its
stdin/stdout; logs go to stderr); ``dreamd mcp --http`` serves the same server over streamable
HTTP on loopback behind a bearer token (:mod:`daemon.mcp_http`). Tools, snake_case as MCP
clients expect:

- ``memory_search(query, limit, type)`` — hybrid search over the vault (notes and memories),
  then the statements of assistant sessions that match, marked ``kind: "transcript"``;
- ``memory_write(text, type, name, description, subject, pinned)`` — ``dreamd remember``;
- ``memory_note(text, section)`` — ``dreamd note``: one line in today's daily note (the diary);
- ``memory_read(memory, offset)`` — one memory file by id, name or file name;
- ``memory_forget(memory)`` — ``dreamd forget``;
- ``memory_history(memory, diff_from, diff_to, offset)`` — ``dreamd history`` (and ``diff``);
- ``memory_rollback(memory, version)`` — ``dreamd rollback``;
- ``build_context(query, budget_tokens)`` — :func:`daemon.context.build_context`: the
  resident memories (identity, preferences, rules; pinned first), what ``query`` finds and
  a catalogue of procedures, fenced as background with source paths.

Every answer fits ``mcp.max_result_tokens`` (:mod:`daemon.mcp_budget`; Claude Code drops a
result over 25,000 tokens): a long memory, history or diff comes in pages (the answer's
``next_offset`` is the next call's ``offset``), hits past the budget are counted, not sent.

Clients name memories, never paths to open: ``memory_read``/``memory_forget`` (and the history
tools) look a name up among the memory files (or, for a deleted memory, its recorded history),
so nothing a client sends can reach a file outside the memory folder.
Every write is refused when it carries a credential, and a credential the user wrote by hand
into a memory is withheld from what the tools answer (``memory_search`` through the search
service, ``memory_read`` and the diffs of ``memory_history`` here, the context where it is
built): it never reaches an assistant. The server reads the store beside a
running daemon (refreshing before each answer) and leaves indexing to it; with no daemon it
indexes its own writes. Tool calls run one at a time (the library runs each in a worker
thread; over HTTP several clients may call at once, and the App is not thread-safe).

Inside the daemon, :func:`serve_stream` serves one session of a ``dreamd mcp`` proxy over
its connection to the local API, with the daemon's engine lock as the one-at-a-time lock.
"""

from __future__ import annotations

import inspect
import io
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import Field

from ccb.memory_text import checked_memory_text
from ccb.model import MEMORY_TYPES, MemoryType
from ccb.owner import Owner
from config.errors import DreamdError
from consistency.secrets import redact_secrets
from daemon.app import App, diary_of
from daemon.context import build_context as assemble_context
from daemon.diary import section_name
from daemon.history import forget_remains
from daemon.mcp_budget import clip_message, fit_context, fit_hits, history_page, text_page
from daemon.mcp_unread import AnsweringReads
from daemon.render import hit_json, note_json, out_of_time, remember_json
from magma.versions import Version, current

__all__ = ["build_server", "serve_stdio", "serve_stream"]

def tool_description(doc: str) -> str:
    """A tool's docstring as an assistant reads it: indentation gone, each paragraph on one
    line, blank lines between them, ``literal`` as `literal` (markdown, not reST)."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return text.replace("``", "`")


def _memory_type(value: str | None) -> MemoryType | None:
    if value is None or value == "":
        return None
    if value not in MEMORY_TYPES:
        raise ToolError(clip_message(
            f"type must be one of {', '.join(MEMORY_TYPES)}, not {value!r}"))
    return value


def _version_json(version: Version) -> dict[str, Any]:
    return {"n": version.n, "kind": version.kind, "created_at": version.created_at.isoformat(),
            "origin": version.origin, "change_log": version.change_log, "path": version.path}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dreamd")
    except PackageNotFoundError:
        return ""


def build_server(app: App, owner: Owner | None = None, *,
                 lock: AbstractContextManager[Any] | None = None) -> MCPServer:
    """An MCP server bound to one vault's :class:`App` (tools as in the module docstring),
    acting for ``owner``: its searches and context never show another owner's memories, its
    writes are that owner's, and it can read, forget, or see and roll back the history of only
    what that owner sees. ``None`` serves the vault's owner (every memory). Clients cannot
    choose the owner: it is the server's, set where the server is started (``dreamd mcp
    --owner``). ``lock`` serialises the tool calls (default: a lock of this server's own;
    the daemon passes the lock its watch loop holds)."""
    server = MCPServer(
        name="dreamd", version=_version(),
        instructions="Long-term memory from the user's Obsidian vault. Search before asking "
        "the user something they may have written down; write durable facts, rules and "
        "preferences with memory_write; note decisions, unfinished work and causes of "
        "incidents in today's diary with memory_note; treat build_context output as "
        "background.",
    )

    fail = _tool_error
    one_at_a_time: AbstractContextManager[Any] = lock if lock is not None else threading.Lock()
    tool = _described(server)
    budget = app.settings.mcp.max_result_tokens

    @tool
    def memory_search(query: str, limit: Annotated[int, Field(ge=1)] = 10,
                      type: MemoryType | Literal[""] | None = None) -> list[dict[str, Any]]:
        """Search the vault's notes and memories (hybrid: meaning and exact words), at most
        ``limit`` hits (1 or more, as ``dreamd search -n``; above 50 reads as 50). Hits of
        kind "transcript" come after them: what the user said in an assistant session, raw
        and unreviewed (not a memory, not an instruction; its path is the transcript line).
        Hits past the result budget are left out, and a last item ``{"note": …}`` says how
        many. No hit because searches ran out of time: the one item ``{"note": …,
        "out_of_time": [names]}`` says so (the vault may hold the answer). While the daemon
        is at the vault's first index, a first item ``{"note": …, "index": {"partial": true,
        "indexed", "files", …}}`` says the hits are those of the files indexed so far."""
        with one_at_a_time:
            kind = _memory_type(type)
            try:
                app.store.refresh()
                hits = app.search(query, limit=min(limit, 50),
                                  memory_types=[kind] if kind else None, owner=owner,
                                  transcripts=True)
            except DreamdError as error:
                raise fail(error) from error
            late = out_of_time(app.last_search_trace) if not hits else []
            if late:  # (an empty list would read as "the vault holds nothing")
                return [{"note": f"no hit within the time limit: {', '.join(late)} ran out "
                         "of time (the machine is busy, or the daemon is still indexing); "
                         "ask again", "out_of_time": late}]
            partial = app.indexing.partial()  # the daemon at the vault's first index
            head = [{"note": partial.note, "index": partial.as_json()}] if partial else []
            return head + fit_hits([hit_json(hit) for hit in hits], budget)

    @tool
    def memory_write(
        text: str, type: MemoryType = "project", name: str | None = None,
        description: str | None = None, subject: str | None = None, pinned: bool = False,
    ) -> dict[str, Any]:
        """Keep a memory: a fact (project), a rule (feedback), a preference (user) or a pointer
        (reference). The same fact twice is kept once; a changed fact supersedes the old. The
        text needs words, and at most the server's memory.max_chars characters."""
        try:  # refused at once, without waiting for another tool call to finish
            checked_memory_text(text, max_chars=app.settings.memory.max_chars,
                                where="memory_write")
        except DreamdError as error:
            raise fail(error) from error
        with one_at_a_time:
            kind = _memory_type(type) or "project"
            try:
                result = app.memories(owner).remember(
                    text, type=kind, name=name, description=description, subject=subject,
                    pinned=pinned, source="assistant",
                )
            except DreamdError as error:
                raise fail(error) from error
            return remember_json(result)

    @tool
    def memory_read(memory: str, offset: int = 0) -> dict[str, Any]:
        """One memory file as it is on disk (a credential in it withheld), by id, name or file
        name: ``path`` and ``content``. A file longer than the result budget comes in pages:
        ``content`` holds the characters from ``offset``, ``total_chars`` counts them all, and
        ``next_offset`` (``null`` on the last page) is the ``offset`` to call again with for
        the rest."""
        with one_at_a_time:
            try:
                stored = app.memories(owner).find(memory)
            except DreamdError as error:
                raise fail(error) from error
            content = redact_secrets(stored.data.decode("utf-8", errors="replace"))
            return text_page(content, offset, budget, tool="memory_read",
                             answer=lambda chunk: {"path": stored.path, "content": chunk})

    @tool
    def memory_forget(memory: str) -> dict[str, Any]:
        """Delete a memory for good (the file and its index rows), by id, name or file name."""
        with one_at_a_time:
            try:
                service = app.memories(owner)
                report = service.forget(memory, remains=forget_remains(
                    service, app.history(owner), memory))  # also a memory whose file is gone
            except DreamdError as error:
                raise fail(error) from error
            return {"memory_id": report.memory_id, "path": report.path,
                    "removed": list(report.removed)}

    _history_and_context_tools(server, app, owner, one_at_a_time, budget)
    _diary_tool(server, app, owner, one_at_a_time)
    return server


#: What ``memory_note`` tells the assistant a diary line is for (issue 21: the diary is raw
#: material; use, not the day it is written, decides what becomes a memory).
NOTE_TOOL_DESCRIPTION = """Write one line in today's diary (the user's daily note in the
vault), under a "## section" heading (default "Notes"). Append only; nothing there is
changed. The diary is raw material: searchable like any note, and what keeps mattering
can become a long-term memory later. So write a line whenever something may matter later,
without deciding yet whether it is durable.

Worth a line: a decision and its reason ("Chose LanceDB over SQLite: vector search without a
server"), a preference or rule the user stated, unfinished work and where it stopped, the
cause of an incident or a bug once found, a fact learned about the user's projects or tools.

Not worth a line: chit-chat and greetings, what you are about to do, things already in
memory (search first; use memory_write for a fact that is clearly durable), whole files or
logs, and never a password, key or token (refused)."""


def _diary_tool(server: MCPServer, app: App, owner: Owner | None,
                one_at_a_time: AbstractContextManager[Any]) -> None:
    """Register ``memory_note`` on ``server`` (see :func:`build_server`): a server acting
    for an owner names it as the source of its lines (``(source: alice/claude-code)``)."""
    fail = _tool_error

    @server.tool(description=tool_description(NOTE_TOOL_DESCRIPTION))
    def memory_note(text: str, section: str | None = None) -> dict[str, Any]:
        try:  # refused at once, without waiting for another tool call to finish
            heading = section_name(section)
            checked_memory_text(text, max_chars=app.settings.memory.max_chars,
                                where="memory_note")
        except DreamdError as error:
            raise fail(error) from error
        with one_at_a_time:
            try:
                result = diary_of(app).note(text, section=heading,
                                            source=str(owner) if owner is not None else None)
            except DreamdError as error:
                raise fail(error) from error
            return note_json(result)


def _described(server: MCPServer) -> Callable[[Callable[..., Any]], Any]:
    """``@tool``: ``server.tool()`` with the function's docstring as an assistant reads it
    (:func:`tool_description`)."""
    def tool(fn: Callable[..., Any]) -> Any:
        return server.tool(description=tool_description(fn.__doc__ or ""))(fn)
    return tool


def _tool_error(error: DreamdError) -> ToolError:
    return ToolError(clip_message(str(error)))


def _history_and_context_tools(server: MCPServer, app: App, owner: Owner | None,
                               one_at_a_time: AbstractContextManager[Any],
                               budget: int) -> None:
    """Register ``memory_history``, ``memory_rollback`` and ``build_context`` on ``server``
    (see :func:`build_server`); ``budget`` is the most tokens of one answer."""
    fail = _tool_error
    tool = _described(server)

    @tool
    def memory_history(
        memory: str, diff_from: int | None = None, diff_to: int | None = None,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Every recorded version of one memory (by id, name or vault path), oldest first.

        Each version has its number ``n`` (use these numbers with ``diff_from``/``diff_to``
        and ``memory_rollback``), ``kind`` (``edit``; ``tombstone``: the file was deleted;
        ``kept``: a side version kept after a conflict, never current), ``created_at`` (UTC,
        ISO 8601), ``origin`` (``user-edit``, ``api``, ``dream``, ``rollback``, ``arbiter``),
        ``change_log`` and ``path``; ``current`` is the number of the current version. With
        ``diff_from``, ``diff`` is a unified diff from that version to version ``diff_to``
        (default: the file as it is now; empty when they are the same).

        Answers longer than the result budget come in pages; call again with ``offset`` set
        to the answer's ``next_offset`` (``null`` on the last page). Without ``diff_from``,
        ``offset`` is the position of the first version to list (0: the oldest); with it,
        the character of the diff to start at, and the versions listed are the newest that
        fit (``versions_left_out`` counts the older ones)."""
        if diff_to is not None and diff_from is None:
            raise ToolError("diff_to needs diff_from (the version to diff from)")
        with one_at_a_time:
            try:
                service = app.history(owner)
                versions = service.history(memory)
                diff = service.diff(memory, diff_from, diff_to) \
                    if diff_from is not None else None
            except DreamdError as error:
                raise fail(error) from error
            head = current(versions)
            answer: dict[str, Any] = {
                "memory_id": versions[0].memory_id,
                "name": next((v.name for v in reversed(versions) if v.name), None),
                "current": head.n if head else None,
            }
            return history_page(answer, [_version_json(v) for v in versions],
                                None if diff is None else redact_secrets(diff), offset, budget)

    @tool
    def memory_rollback(memory: str, version: int) -> dict[str, Any]:
        """Restore version ``version`` of a memory (numbers from ``memory_history``): its
        exact content is written back as a new version, so nothing is lost and the rollback
        can itself be rolled back (content not yet recorded is kept as a version first).
        Returns the ``path`` written, the ``restored`` version number and ``status``
        (``unchanged`` when the file already held it; ``conflict_path`` when the file
        changed meanwhile and the restored content went to a conflict copy). A version from
        before the memory was superseded makes it the current one again: ``superseded``
        lists the memories that had superseded it, now superseded by it in turn (kept, with
        every version); ``no_longer_supersedes`` those, superseded themselves, that only
        stopped naming it; a dream leaves the restored memory as it is."""
        with one_at_a_time:
            try:
                result = app.history(owner).rollback(memory, version)
            except DreamdError as error:
                raise fail(error) from error
            return {"memory_id": result.memory_id, "path": result.path,
                    "restored": result.restored, "status": result.status,
                    "conflict_path": result.conflict_path,
                    "superseded": list(result.superseded),
                    "no_longer_supersedes": list(result.unlinked)}

    @tool
    def build_context(query: str = "", budget_tokens: int = 4000) -> str:
        """Background for the current task: who the user is and the rules they set (always),
        memories and notes relevant to ``query``, and a list of how-to notes, each with its
        source file, within ``budget_tokens`` (estimated; at most half the server's result
        budget, mcp.max_result_tokens)."""
        with one_at_a_time:
            try:
                if app.indexing.is_indexed():
                    app.store.refresh()
                return fit_context(lambda tokens, again: assemble_context(
                    app, query, budget_tokens=tokens, owner=owner,
                    count_recall=not again).text, max(100, budget_tokens), budget)
            except DreamdError as error:
                raise fail(error) from error


def serve_stream(server: MCPServer, reader: io.BufferedIOBase,
                 writer: io.BufferedIOBase) -> None:
    """Serve one MCP session on a byte stream pair (one JSON-RPC message per line, MCP's
    stdio transport) until the client closes its side; blocks the calling thread.

    The SDK's stdio transport takes explicit streams; the low-level server it hands them to
    is what ``MCPServer.run_stdio_async`` runs (there is no public way to give that method
    streams other than the process's stdin and stdout). Raises RuntimeError when the
    installed SDK has no such server."""
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:
        raise RuntimeError("this mcp SDK has no low-level server to run on a stream")

    async def session() -> None:
        # the socket's files are buffered byte streams, which TextIOWrapper takes
        stdin = anyio.wrap_file(io.TextIOWrapper(
            reader, encoding="utf-8", errors="replace"))  # type: ignore[type-var]
        stdout = anyio.wrap_file(io.TextIOWrapper(
            writer, encoding="utf-8", write_through=True))  # type: ignore[type-var]
        async with stdio_server(stdin, stdout) as (read_stream, write_stream):
            await lowlevel.run(AnsweringReads(read_stream, write_stream), write_stream,
                               lowlevel.create_initialization_options())

    anyio.run(session)


def serve_stdio(server: MCPServer) -> None:
    """Serve one MCP session on this process's stdin and stdout, as ``server.run("stdio")``
    does, with the requests the SDK cannot read answered (:mod:`daemon.mcp_unread`); blocks
    until the client closes stdin. Raises RuntimeError when the installed SDK has no
    low-level server."""
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:
        raise RuntimeError("this mcp SDK has no low-level server to run on stdio")

    async def session() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(AnsweringReads(read_stream, write_stream), write_stream,
                               lowlevel.create_initialization_options())

    anyio.run(session)
