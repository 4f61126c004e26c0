"""How the CLI shows answers: rich tables and progress for people, plain dicts for ``--json``."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict
from datetime import tzinfo
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ccb.frontmatter import TEMPLATE_PROBLEM
from ccb.model import SKIPPED_KINDS
from config import LoadedSettings, describe
from daemon.check import CheckReport, ConflictRecord, Finding, FixReport
from daemon.context import Context
from daemon.diary import NoteResult
from daemon.first_index import PartialIndex
from daemon.flush import FlushReport
from daemon.history import RollbackResult
from daemon.memories import RememberResult
from daemon.retrieval import SearchTrace
from daemon.status import StatusReport
from daemon.sync import SyncReport
from daemon.terminal_text import counted, shown
from daemon.trace_words import (
    STAGE_WORDS,
    intent_words,
    lookup_words,
    stage_words,
    strategy_words,
    summary_words,
)
from daemon.work_progress import describe_work, local_stamp
from magma.search import SearchHit
from magma.versions import Version

__all__ = [
    "SyncProgress",
    "check_json",
    "config_rows",
    "conflicts_json",
    "context_json",
    "diary_line",
    "display_value",
    "flush_json",
    "history_json",
    "hit_json",
    "hit_kind",
    "note_json",
    "print_check",
    "print_conflicts",
    "print_explanation",
    "print_fix",
    "print_flush",
    "print_history",
    "print_hits",
    "print_note",
    "print_remember",
    "print_rollback",
    "print_status",
    "print_sync_report",
    "print_trace",
    "remember_json",
    "search_json",
    "status_json",
    "sync_report_json",
    "trace_json",
]

#: How many problem files the human-readable reports list before summarising the rest.
PROBLEMS_SHOWN = 20


class SyncProgress(AbstractContextManager["SyncProgress"]):
    """A rich progress bar that implements :class:`daemon.sync.Progress` (on stderr), with the
    time left at the phase's rate so far (a cold index is one phase, ``indexing``, over its
    files: reading, embedding and writing together)."""

    def __init__(self, console: Console, *, enabled: bool) -> None:
        self._progress = Progress(
            TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console, disable=not enabled, transient=True,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> SyncProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def phase(self, name: str, total: int) -> None:
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(name, total=total)

    def advance(self, units: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, units)


def sync_report_json(report: SyncReport) -> dict[str, Any]:
    return {
        "added": report.added,
        "modified": report.modified,
        "deleted": report.deleted,
        "renamed": [{"from": a, "to": b} for a, b in report.renamed],
        "unchanged": report.unchanged,
        "touched": report.touched,
        "chunks_embedded": report.chunks_embedded,
        "chunks_reused": report.chunks_reused,
        "chunks_cached": report.chunks_cached,
        "files_total": report.files_total,
        "duration_s": round(report.duration_s, 3),
        "problems": [{"path": p.path, "kind": p.kind, "reason": p.reason}
                     for p in report.problems],
        "conflict_copies": [{"path": c.path, "conflict_of": c.conflict_of}
                            for c in report.conflict_copies],
    }


def print_sync_report(console: Console, report: SyncReport) -> None:
    console.print(
        f"synced {counted(report.files_total, 'file')} in {report.duration_s:.1f} s: "
        f"[green]{report.added} new[/], [yellow]{report.modified} changed[/], "
        f"[red]{report.deleted} deleted[/], {len(report.renamed)} renamed, "
        f"{report.unchanged + report.touched} unchanged; "
        f"{counted(report.chunks_embedded, 'chunk')} embedded, "
        + (f"{report.chunks_cached} from the embedding cache, " if report.chunks_cached else "")
        + f"{report.chunks_reused} reused"
    )
    for old, new in report.renamed[:PROBLEMS_SHOWN]:
        console.print(f"  renamed {shown(old, one_line=True)} → {shown(new, one_line=True)}",
                      highlight=False)
    if report.conflict_copies:
        console.print(f"{counted(len(report.conflict_copies), 'sync-conflict copy')} left "
                      "alone (not indexed):")
        for copy in report.conflict_copies[:PROBLEMS_SHOWN]:
            console.print(f"  {shown(copy.path, one_line=True)} "
                          f"(copy of {shown(copy.conflict_of, one_line=True)})",
                          highlight=False)
    _print_problems(console, [(p.path, p.kind, p.reason) for p in report.problems])


def _print_problems(console: Console, problems: list[tuple[str, str, str]]) -> None:
    """Files skipped by the walk (:data:`ccb.model.SKIPPED_KINDS`), then the other problems;
    templates whose frontmatter is YAML only once filled in are summed up in one line (a
    stock vault holds dozens; ``dreamd check --json`` lists each)."""
    _print_skipped(console, [p for p in problems if p[1] in SKIPPED_KINDS])
    _print_list(console, [p for p in problems
                          if p[1] not in SKIPPED_KINDS and p[1] != TEMPLATE_PROBLEM],
                ("problem file[/] (indexed as text where possible, never modified):",
                 "problem files[/] (indexed as text where possible, never modified):"))
    _print_templates(console, problems, "dreamd check --json lists them")


def _print_templates(console: Console, problems: list[tuple[str, str, str]], more: str) -> None:
    """One line for the templates among ``problems``: forms whose properties hold
    placeholders (``created: {{date}}``) that are YAML only once a note is made from them.
    They are no problem of the user's: read with the placeholders as text, never
    modified."""
    templates = sum(p[1] == TEMPLATE_PROBLEM for p in problems)
    if templates:
        console.print(f"{counted(templates, 'template')} (properties with placeholders such "
                      "as {{date}}, filled in when a note is made from a template): indexed "
                      f"with the placeholders as text, never modified ({more})",
                      highlight=False)


def _print_problem_files(console: Console, problems: list[tuple[str, str, str]]) -> None:
    """Every note that did not read whole, one line each: path, kind, the parser's reason;
    the templates among them in one line (:func:`_print_templates`)."""
    _print_list(console, [p for p in problems if p[1] != TEMPLATE_PROBLEM],
                ("problem file[/] (indexed as far as it reads, never modified):",
                 "problem files[/] (indexed as far as they read, never modified):"),
                more="dreamd check --json")
    _print_templates(console, problems, "--json lists them")


def _print_skipped(console: Console, skipped: list[tuple[str, str, str]]) -> None:
    _print_list(console, skipped, ("file skipped[/] (not indexed; left as it is):",
                                   "files skipped[/] (not indexed; left as they are):"))


def _print_list(console: Console, problems: list[tuple[str, str, str]], what: tuple[str, str],
                more: str = "dreamd status --json") -> None:
    """``N what`` (``what``: said of one file, of several), then a line per file (the
    first :data:`PROBLEMS_SHOWN`, and every credential written into a file)."""
    if not problems:
        return
    said = what[0] if len(problems) == 1 else what[1]
    console.print(f"[yellow]{len(problems)} {said}", highlight=False)
    # every credential written into a file is listed, whatever else there is
    others = [p for p in problems if p[1] != "credential"]
    listed = set(others[:PROBLEMS_SHOWN])
    for path, kind, reason in problems:
        if kind == "credential" or (path, kind, reason) in listed:
            console.print(f"  {shown(path, one_line=True)}: {kind}: {shown(reason)}",
                          highlight=False)
    if len(others) > PROBLEMS_SHOWN:
        console.print(f"  … and {len(others) - PROBLEMS_SHOWN} more ({more})")


def hit_kind(hit: SearchHit) -> str:
    """``memory``, ``note``, or ``transcript`` (a statement of an assistant session: raw,
    unreviewed, never a memory)."""
    if hit.origin == "transcript":
        return "transcript"
    return "memory" if hit.memory_type else "note"


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """One hit; ``kind`` says what it is (:func:`hit_kind`): a ``transcript`` hit's ``path``
    is its evidence (``~/.claude/projects/….jsonl:LINE``) and its ``note_id`` the key of the
    statement (``dreamd promote --explain KEY``)."""
    return {
        "kind": hit_kind(hit),
        "path": hit.path,
        "title": hit.title,
        "heading": hit.heading,
        "snippet": hit.snippet,
        "score": round(hit.score, 6),
        "why": list(hit.why),
        "memory_type": hit.memory_type,
        "note_id": hit.note_id,
    }


def out_of_time(trace: Any) -> list[str]:
    """The names of the stages of a search's ``trace`` (:class:`daemon.retrieval.SearchTrace`)
    given up at their deadline: a search that found nothing for want of time says so
    instead of "no results" (the vault may well hold the answer)."""
    return [stage.name for stage in getattr(trace, "stages", ())
            if stage.status == "skipped: deadline"]


def search_json(hits: list[SearchHit], trace: SearchTrace | None, *, explain: bool = False,
                partial: PartialIndex | None = None) -> list[dict[str, Any]] | dict[str, Any]:
    """``dreamd search --json``: the list of hits (:func:`hit_json`), as ever. Three cases
    print an object instead, whose ``hits`` is that list: ``--explain`` (``trace``:
    :func:`trace_json`), a search that found nothing because stages ran out of time —
    ``{"hits": [], "out_of_time": ["magma-extend"]}`` — where a bare ``[]`` would say the
    vault holds nothing (the plain output says it too, :func:`print_hits`), and a search
    of a partial index (the daemon at its first index, ``partial``): ``"index": {"partial":
    true, "indexed", "files", "pid", "note"}``. ``out_of_time`` names the stages given up at
    their deadline; ``--explain``'s object always has it (``[]`` when every stage answered
    in time)."""
    listed = [hit_json(h) for h in hits]
    late = out_of_time(trace)
    data: dict[str, Any] = {"hits": listed}
    if explain and trace is not None:
        data.update(trace=trace_json(trace), out_of_time=late)
    elif not hits and late:
        data.update(out_of_time=late)
    if partial is not None:
        data.update(index=partial.as_json())
    return data if len(data) > 1 else listed


def print_hits(console: Console, query: str, hits: list[SearchHit], trace: Any = None,
               partial: PartialIndex | None = None) -> None:
    if partial is not None:  # (first: the hits below are those of part of the vault)
        console.print(f"[yellow]{shown(partial.note)}[/]", highlight=False)
    if not hits:
        late = out_of_time(trace)
        if late:
            console.print(f"no results for {shown(query, one_line=True)} within the time "
                          f"limit: {', '.join(late)} ran out of time (the machine is busy, "
                          "or the daemon is still indexing); ask again, or add --explain")
            return
        console.print(f"no results for {shown(query, one_line=True)}")
        return
    vault = [h for h in hits if h.origin != "transcript"]
    raw = [h for h in hits if h.origin == "transcript"]
    if not vault:
        console.print(f"no results for {shown(query, one_line=True)} in the vault")
    for rank, hit in enumerate(vault, start=1):
        where = hit.path + (f" › {hit.heading}" if hit.heading else "")
        kind = f" [magenta]({hit.memory_type} memory)[/]" if hit.memory_type else ""
        console.print(f"[bold]{rank:>2}. {shown(where, one_line=True)}[/]{kind}  "
                      f"[dim]score {hit.score:.4f}[/]", highlight=False)
        console.print(f"    {shown(hit.snippet, one_line=True)}", highlight=False)
        console.print(f"    [dim]why: {shown('; '.join(hit.why))}[/]", highlight=False)
    if raw:
        console.print("[yellow]Said in assistant sessions (raw transcripts, unreviewed: not "
                      "memories, not notes):[/]", highlight=False)
    for hit in raw:
        console.print(f"  - {shown(hit.snippet, one_line=True)}", highlight=False)
        console.print(f"    [dim]{shown(hit.path, one_line=True)} (transcript, key "
                      f"{hit.note_id[:8]}); "
                      f"why: {shown('; '.join(hit.why))}[/]", highlight=False)


def trace_json(trace: SearchTrace) -> dict[str, Any]:
    """A search's trace: intent, stages (status, milliseconds), candidates."""
    intent = trace.intent
    return {
        "intent": {"types": sorted(intent.types), "layers": sorted(intent.layers),
                   "time_range": ([intent.time_range.start.isoformat(),
                                   intent.time_range.end.isoformat()]
                                  if intent.time_range else None),
                   "confidence": intent.confidence, "source": intent.source,
                   "reasons": list(intent.reasons)},
        "stages": [{"name": t.name, "status": t.status, "elapsed_ms": round(t.elapsed_ms, 1),
                    "found": t.found} for t in trace.stages],
        "total_ms": round(trace.total_ms, 1),
        "candidates": trace.candidates,
        "duplicates_dropped": trace.duplicates_dropped,
        "strategy": trace.strategy,
        "intent_cache": trace.intent_cache,
        "intent_llm": trace.intent_llm,
        "verifier_dropped": list(trace.verifier_paths),
        "transcripts": trace.transcripts,
    }


def print_trace(console: Console, trace: SearchTrace) -> None:
    """``--explain``: what the question was read to ask for, which searches ran and how
    long each took, in plain words (:mod:`daemon.trace_words`; ``--json`` keeps the
    stages' and settings' names)."""
    lines = [intent_words(trace.intent), strategy_words(trace.strategy, trace.stages),
             *lookup_words(trace)]
    for stage in trace.stages:
        if stage.name == "verifier":
            lines.append(f"the {STAGE_WORDS['verifier']}: {stage.status}, "
                         f"{stage.elapsed_ms:.0f} ms, "
                         f"{counted(trace.verifier_dropped, 'hit')} dropped as unrelated")
            lines += [f"  dropped as unrelated: {path}" for path in trace.verifier_paths]
            continue
        lines.append(stage_words(stage, trace.strategy))
    if trace.transcripts != "off":
        lines.append(f"statements of assistant sessions: {trace.transcripts}")
    lines.append(summary_words(trace))
    for line in lines:
        console.print(f"[dim]{shown(line, one_line=True)}[/]", highlight=False)


def context_json(context: Context) -> dict[str, Any]:
    """An assembled context: its text, entries, what was left out, tokens."""
    return {
        "text": context.text,
        "tokens": context.tokens,
        "budget_tokens": context.budget_tokens,
        "over_budget": context.over_budget,
        "entries": [{"section": e.section, "path": e.path, "title": e.title,
                     "layer": e.layer, "tokens": e.tokens, "shortened": e.shortened,
                     "pinned": e.pinned} for e in context.entries],
        "left_out": list(context.left_out),
    }


def remember_json(result: RememberResult) -> dict[str, Any]:
    return {
        "action": result.action,
        "memory_id": result.memory_id,
        "path": result.path,
        "superseded": result.superseded,
        "reason": result.reason,
        "conflict_path": result.conflict_path,
        "candidate": result.candidate,
        "verdict": result.verdict,
        "judgement": result.judgement,
        "linked_as": result.linked_as,
    }


def print_remember(console: Console, result: RememberResult, *, explain: bool = False) -> None:
    lines = {
        "created": f"remembered as {result.path}",
        "duplicate": f"already known: {result.path} (nothing written)",
        "updated": f"merged into {result.path}",
        "superseded": f"remembered as {result.path}; it supersedes {result.superseded}"
                      + (f" ({result.reason})" if result.reason else ""),
    }
    console.print(shown(lines[result.action]), highlight=False)
    if result.linked_as and result.candidate:
        kind = result.linked_as.removeprefix("possible_")
        console.print(shown(f"kept beside {result.candidate}: perhaps a {kind} (both linked "
                             f"as {result.linked_as}; dreamd check lists the pair)"),
                      highlight=False)
    if explain:
        if result.judgement:
            console.print(shown(f"judged against {result.candidate or 'the same text'}: "
                                 f"{result.judgement}"), highlight=False)
        else:
            console.print("no stored memory of this type and owner was close", highlight=False)
    if result.conflict_path:
        console.print(shown(f"the file changed meanwhile: our version is in "
                             f"{result.conflict_path}"), highlight=False)


def note_json(result: NoteResult) -> dict[str, Any]:
    """An append to the diary: ``path``, ``day`` (ISO), ``section``, the file ``lines`` of
    the new entries, ``created``, ``status`` and ``conflict_path``."""
    return {"path": result.path, "day": result.day.isoformat(), "section": result.section,
            "lines": list(result.lines), "created": result.created, "status": result.status,
            "conflict_path": result.conflict_path}


def print_note(console: Console, result: NoteResult) -> None:
    where = ", ".join(f"{result.path}:{line}" for line in result.lines) or result.path
    made = " (new note)" if result.created else ""
    console.print(shown(f"noted in {where}{made} under ## {result.section}"), highlight=False)
    if result.conflict_path:
        console.print(shown(f"the note changed meanwhile: our version is in "
                             f"{result.conflict_path}"), highlight=False)


def flush_json(report: FlushReport) -> dict[str, Any]:
    """A flush: statements ``found`` past the cursor, ``withheld`` (a credential),
    ``appended``, the transcript ``offset`` read up to, who chose the statements (``by``),
    why the rules chose when the Extractor failed (``fallback``, else null), and the ``note``
    written or null."""
    return {"found": report.found, "withheld": report.withheld, "appended": report.appended,
            "offset": report.offset, "by": report.by, "fallback": report.fallback,
            "note": note_json(report.note) if report.note is not None else None}


def print_flush(console: Console, report: FlushReport) -> None:
    if report.note is None or not report.note.lines:
        present = report.found - report.withheld
        console.print(f"nothing new to note: {counted(report.found, 'statement')} since this "
                      "transcript's last flush"
                      + (f", {report.withheld} withheld for a credential" if report.withheld
                         else "")
                      + (f", {present} already in today's note" if present else ""),
                      highlight=False)
        return
    print_note(console, report.note)
    if report.withheld:
        console.print(f"{counted(report.withheld, 'statement')} left out: "
                      f"{'it carries' if report.withheld == 1 else 'they carry'} a credential",
                      highlight=False)


def status_json(report: StatusReport) -> dict[str, Any]:
    return report.as_dict()


def _add_check_row(table: Table, checked: dict[str, Any] | None, zone: tzinfo) -> None:
    """The ``last check`` row: what the last check found (``dreamd check``'s or the
    daemon's, whichever ran last), what it repaired, what it left."""
    if not checked:
        return
    drift = ", ".join(f"{k.replace('_', ' ')} {v}"
                      for k, v in (checked.get("drift") or {}).items()) or "clean"
    by = " (dreamd check)" if checked.get("reason") == "dreamd check" else ""
    table.add_row("last check", shown(
        f"{local_stamp(checked.get('at'), zone)}{by}: {drift}; "
        f"{checked.get('fixed', 0)} repaired"
        + (f", left for you (dreamd check says how): {', '.join(checked['left'])}"
           if checked.get("left") else "")))


def print_status(console: Console, report: StatusReport, zone: tzinfo) -> None:
    """``report`` as a table; times of the daemon's work in ``zone`` (the user's)."""
    data = report.as_dict()
    # no_wrap: a store path cut at 80 columns when piped is no use to anyone
    table = Table(show_header=False, box=None)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True, overflow="ignore")
    _add_store_rows(table, data, zone)
    daemon = data.get("daemon")
    checked = data.get("last_check") or (daemon or {}).get("last_check")
    if daemon is None:
        table.add_row("daemon", "not running (start it with: dreamd run)")
        _add_check_row(table, checked, zone)
    else:
        work = daemon.get("work")
        doing = describe_work(work, zone) if isinstance(work, dict) else daemon.get("state")
        table.add_row("daemon", shown(f"pid {daemon.get('pid')}, {doing}, "
                                       f"watcher {daemon.get('watcher')}, "
                                       f"queue {daemon.get('queue_depth', 0)}"))
        _add_check_row(table, checked, zone)
        batch = daemon.get("last_batch")
        if batch:
            table.add_row("last batch", shown(
                f"{local_stamp(batch.get('at'), zone)}: {_files(batch.get('paths'))} in "
                f"{batch.get('duration_ms')} ms"
                + (f", error: {batch['error']}" if batch.get("error") else "")))
    dream = data.get("dream")
    if dream:
        sessions = dream.get("sessions") or {}
        table.add_row("last dream", shown(local_stamp(dream["last"], zone) if dream.get("last")
                                          else "never"))
        table.add_row("next dream", shown(
            ("due" if dream.get("due") else "not due") + f": {dream.get('reason')}"
            + ("" if dream.get("auto") else " (auto_dream.enabled is off: dreamd dream)")
            + f" — sessions since: {counted(sessions.get('mcp', 0), 'MCP session')}, "
            f"{counted(sessions.get('transcripts', 0), 'transcript')}, "
            f"{counted(sessions.get('edit_bursts', 0), 'editing burst')}"))
        if dream.get("diary"):
            table.add_row("diary", shown(diary_line(dream["diary"])))
    searches = data.get("searches")
    if searches:
        table.add_row("intent cache", shown(cache_line(searches)))
    metrics = data.get("metrics")
    if metrics:
        table.add_row("metrics", shown(metrics_line(metrics)))
    listing = data.get("memory_index")
    if listing:
        table.add_row("memory index", shown(memory_index_line(listing)))
    vectors = data.get("vectors")
    if vectors:
        table.add_row("vector index", shown(vectors_line(vectors)))
    if console.is_terminal:
        console.print(table)
    else:  # piped: one "key: value" line per row, never cut at 80 columns
        for row in zip(*(column.cells for column in table.columns), strict=True):
            key, value = (str(cell) for cell in row)
            console.print(f"{key}: {value}", soft_wrap=True, highlight=False)
    _print_problems(console, [(p["path"], p["kind"], p["reason"]) for p in data["problems"]])


def _add_store_rows(table: Table, data: dict[str, Any], zone: tzinfo) -> None:
    """``dreamd status``'s first rows: the vault, its index and state folder, the last
    sync, and the index's counts, each named in words (``--json`` keeps the keys)."""
    indexing = (data.get("daemon") or {}).get("state") in {"starting", "reconciling"}
    for key in ("vault", "store", "state_dir", "last_sync"):
        value = data.get(key)
        never = "never" if key != "last_sync" else \
            "never: the daemon is indexing the vault now (see daemon)" if indexing else \
            f"never (index it: dreamd sync {shlex.quote(str(data.get('vault')))})"
        table.add_row(_STATUS_LABELS.get(key, key), shown(
            never if not value else local_stamp(value, zone) if key == "last_sync"
            else str(value)))
    if data.get("last_sync_duration_s") is not None:
        table.add_row("last sync took", f"{data['last_sync_duration_s']} s")
    for key, value in _flatten(data.get("counts", {})):
        if key == "fts_unindexed_rows":
            if value:  # searchable by their words all the same; the daemon folds them in
                table.add_row("word index", f"{counted(value, 'chunk')} not folded in yet "
                                            "(found by their words all the same)")
            continue
        if key in _SAID_WHEN_SOME and not value:
            continue
        table.add_row(key.replace("_", " "), str(value))


#: ``dreamd status``'s names of the report's keys that are not words as they are.
_STATUS_LABELS = {"store": "index", "state_dir": "state folder", "last_sync": "last sync"}


def _files(number: object) -> str:
    """``1 file``, ``2 files``; a value that is not a count (a damaged status file) as is."""
    return counted(number, "file") if isinstance(number, int) else f"{number} files"


def vectors_line(vectors: dict[str, Any]) -> str:
    """``dreamd status``'s line for the in-memory vector index
    (:func:`daemon.vault_status.vectors_status`): ``int8, a byte per dimension (120,000
    chunks; more than 100,000: retrieval.compact_vectors_above)`` (or ``…; beside the IVF
    index above 300,000: retrieval.ann_vector_form``), then how the vector stage searches
    it: ``; searched through the IVF over the in-memory rows (more than 300,000 chunks:
    retrieval.ann_vectors_above, retrieval.ann_index; filtered searches of more than 100,000
    chunks too: retrieval.filtered_scan_rows)`` (or ``the store's IvfRq index``) or ``;
    every chunk scanned (an index above …)``."""
    return _form_text(vectors) + _search_text(vectors)


_FORM_WORDS = {"int8": "int8, a byte per dimension", "float16": "float16, two bytes per dimension",
               "float32": "float32, exact"}


def _form_text(vectors: dict[str, Any]) -> str:
    limit = f"{vectors.get('compact_above') or 0:,}"
    chunks = counted(vectors.get('chunks') or 0, "chunk")
    form = vectors.get("form")
    if form is None:
        return f"not built yet (int8 above {limit} chunks: retrieval.compact_vectors_above)"
    words = _FORM_WORDS.get(form, form)
    if form == "int8" and (vectors.get("chunks") or 0) > (vectors.get("compact_above") or 0):
        return f"{words} ({chunks}; more than {limit}: retrieval.compact_vectors_above)"
    ann_above = vectors.get("ann_above")
    if form != "float32" or (ann_above is not None and (vectors.get("chunks") or 0) > ann_above):
        return (f"{words} ({chunks}; beside the IVF index above {ann_above or 0:,}: "
                "retrieval.ann_vector_form)")
    return f"{words} ({chunks}; int8 above {limit}: retrieval.compact_vectors_above)"


def _search_text(vectors: dict[str, Any]) -> str:
    if vectors.get("ann_above") is None:
        return ""
    above = f"{vectors['ann_above']:,}"
    if vectors.get("search") == "ivf index":
        filtered = vectors.get("filtered_scan_rows")
        also = "" if filtered is None else (
            f"; filtered searches of more than {filtered:,} chunks too: "
            "retrieval.filtered_scan_rows")
        which = ("the IVF over the in-memory rows" if vectors.get("ann_index") == "memory"
                 else f"the store's {vectors.get('index')} index")
        return (f"; searched through {which} (more than {above} chunks: "
                f"retrieval.ann_vectors_above, retrieval.ann_index{also})")
    return (f"; every chunk scanned (an index above {above} chunks: "
            "retrieval.ann_vectors_above)")


def memory_index_line(listing: dict[str, Any]) -> str:
    """``dreamd status``'s line for what ``MEMORY.md`` lists
    (:func:`daemon.memory_index_keeper.index_listing`): ``Memory/MEMORY.md lists 135
    memories; 265 more left out to fit what Claude Code loads (200 lines, 25 KB): dreamd
    status --json names them (memory_index.left_out_paths)``."""
    listed = listing["listed"]
    line = f"{listing['path']} lists {listed} {'memory' if listed == 1 else 'memories'}"
    left = listing.get("left_out") or 0
    if left:
        limits = listing.get("limits") or {}
        line += (f"; {left} more left out to fit what Claude Code loads ({limits.get('lines')} "
                 f"lines, {(limits.get('bytes') or 0) // 1000} KB): ")
        line += ("dreamd status --json names them (memory_index.left_out_paths)"
                 if listing.get("left_out_paths") is not None else
                 "dreamd status --json names them (memory_index.left_out_paths) once it is "
                 "rebuilt")
    if listing.get("generated") is False:
        line += " (not as dreamd last wrote it)"
    return line


def cache_line(searches: dict[str, Any]) -> str:
    """``63% hits (semantic 12%) over the last 240 searches`` (``dreamd status``), from
    :func:`daemon.metrics.search_summary`."""
    if not searches.get("cache_enabled"):
        return "off (cache.enabled = false)"
    count = searches.get("searches") or 0
    if not count:
        return "no searches yet"
    noun = "search" if count == 1 else "searches"
    median = searches.get("median_total_ms")
    timing = f"; median search {median:g} ms" if median is not None else ""
    ratio = searches.get("hit_ratio")
    if ratio is None:
        return f"no lookups in the last {count} {noun} (the cache was off for them){timing}"
    return (f"{ratio:.0%} hits (semantic {searches.get('semantic_ratio') or 0:.0%}) over the "
            f"last {count} {noun}{timing}")


def metrics_line(metrics: dict[str, Any]) -> str:
    """Where the Prometheus metrics go (``dreamd status``), from
    :func:`daemon.metrics.metrics_status`."""
    if not metrics.get("enabled"):
        return "off (metrics.enabled = false)"
    if not metrics.get("active"):
        targets = ", ".join(t for t in (metrics.get("url"), metrics.get("textfile")) if t)
        return ("enabled; exported while the daemon runs (dreamd run), which it does not now"
                + (f": {targets}" if targets else ""))
    where = [f"served at {metrics['url']}" if metrics.get("url") else "",
             f"written to {metrics['textfile']}" if metrics.get("textfile") else ""]
    said = "; ".join(w for w in where if w) or "exported nowhere"
    if metrics.get("error"):
        said += f"; not working: {metrics['error']}"
    return said


#: Counts of :func:`daemon.memory_counts.memory_counts` beside ``memories``, shown when not 0.
_SAID_WHEN_SOME = frozenset({"memories_superseded_or_archived", "memory_entries",
                             "memory_typed_notes_elsewhere"})


def _flatten(counts: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from counts.items()


def display_value(value: object) -> str:
    """A setting's value as it would be written in config.toml (``(unset)`` for none)."""
    if value is None:
        return "(unset)"
    return json.dumps(value, ensure_ascii=False, default=str)


def config_rows(loaded: LoadedSettings) -> list[tuple[str, object, str]]:
    return [(key, value, source) for key, value, source in describe(loaded)]


# --------------------------------------------------------------------------- history, check


def history_json(versions: list[Version]) -> list[dict[str, Any]]:
    return [{"n": v.n, "kind": v.kind, "created_at": v.created_at.isoformat(),
             "origin": v.origin, "change_log": v.change_log, "prev": v.prev, "path": v.path,
             "content_hash": v.content_hash, "device": v.device} for v in versions]


def print_history(console: Console, versions: list[Version]) -> None:
    first = versions[0]
    console.print(shown(f"{first.name or first.memory_id} ({first.memory_id})"),
                  highlight=False)
    table = Table(box=None)
    for column in ("version", "time (UTC)", "origin", "change"):
        table.add_column(column, no_wrap=column != "change")
    head = max((v.n for v in versions if v.kind != "kept"), default=None)
    for v in versions:
        label = {"edit": str(v.n), "tombstone": f"{v.n} (deleted)",
                 "kept": f"{v.n} (kept aside)"}[v.kind]
        if v.n == head and v.kind == "edit":
            label += " (current)"
        change = shown(v.change_log or ("first version" if v.prev is None else ""))
        if v.device:
            change += f" [dim]on {shown(v.device)}[/]"
        table.add_row(label, v.created_at.strftime("%Y-%m-%d %H:%M:%S"), shown(v.origin),
                      change)
    console.print(table)


def print_rollback(console: Console, result: RollbackResult) -> None:
    if result.status == "unchanged":
        console.print(shown(f"{result.path} already holds version {result.restored}; "
                             "nothing written"), highlight=False)
    else:
        console.print(shown(f"{result.path}: version {result.restored} restored as a new "
                             "version (dreamd history shows it; it can be rolled back too)"),
                      highlight=False)
    for path in result.superseded:
        console.print(shown(f"it is the current memory again: it supersedes {path} in turn "
                             "(valid_to today, every version kept; a dream archives that one "
                             f"as superseded and leaves this one as restored; dreamd restore "
                             f"{path} brings that one back)"),
                      highlight=False)
    for path in result.unlinked:
        console.print(shown(f"{path} (superseded itself) no longer names it in supersedes"),
                      highlight=False)
    if result.conflict_path:
        console.print(shown(f"the file changed meanwhile: the restored version is in "
                             f"{result.conflict_path}"), highlight=False)


def _finding_json(finding: Finding) -> dict[str, Any]:
    drift = {k: (list(v) if isinstance(v, tuple) else v)
             for k, v in asdict(finding.drift).items()}
    decision = {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in asdict(finding.decision).items()}
    return {"kind": finding.kind, "drift": drift,
            "decision": {"action": type(finding.decision).__name__, **decision},
            "automatic": finding.automatic}


def check_json(report: CheckReport, fix: FixReport | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "clean": report.clean, "counts": report.counts(), "files": report.files,
        "files_read": report.read, "memories": report.memories,
        "duration_ms": round(report.duration_s * 1000),
        "items": [_finding_json(f) for f in report.findings],
        "skipped": [{"path": p.path, "kind": p.kind, "reason": p.reason}
                    for p in report.skipped],
        "problems": [{"path": p.path, "kind": p.kind, "reason": p.reason}
                     for p in report.problems],
    }
    if fix is not None:
        data["fixed"] = [{"kind": f.kind, "outcome": outcome} for f, outcome in fix.applied]
        data["left"] = [_finding_json(f) for f in fix.left]
        data["index_deferred_to_daemon"] = fix.deferred
    return data


def _where(finding: Finding) -> str:
    drift = asdict(finding.drift)
    if finding.kind == "archive_out_of_step":
        return "the version table and the state folder's copies"
    return str(drift.get("path") or ", ".join(drift.get("paths") or ())
               or drift.get("memory_key") or "")


#: What a ``missing`` drift lacks, said after its path (a memory new to dreamd lacks both).
_MISSING = {"index": "not in the index", "history": "no version in the history"}


def _describe_drift(finding: Finding) -> str:
    where = _where(finding)
    lacks = _MISSING.get(str(getattr(finding.drift, "what", ""))) \
        if finding.kind == "missing" else None
    where += f" ({lacks})" if lacks else ""
    decision = type(finding.decision).__name__
    hint = getattr(finding.decision, "hint", None) or getattr(finding.decision, "reason", None)
    text = f"{where}" + (f" — {hint}" if hint else "")
    if decision != "Report":
        text += f" [{_ACTIONS.get(decision, decision)}{'' if finding.automatic else ', --fix'}]"
    return text


_ACTIONS = {
    "Reindex": "re-index", "Tombstone": "tombstone", "RepairArchive": "repair archive",
    "RebuildMemoryIndex": "rebuild", "KeepFile": "keep the file",
    "TakeMagma": "take the store's version",
    "ManualReview": "conflict copy", "NewId": "new id", "FinishForget": "finish the forget",
    "CancelForget": "keep the file",
}


def print_check(console: Console, report: CheckReport,
                indexing: tuple[PartialIndex, Sequence[str]] | None = None) -> None:
    """``indexing``: the daemon is at the vault's first index, and these files are not
    indexed yet (:func:`daemon.check.not_indexed_yet`): said as such, not as drift."""
    console.print(f"checked {counted(report.files, 'file')} ({report.read:,} read again), "
                  f"{counted(report.memories, 'memory history')} in "
                  f"{report.duration_s * 1000:,.0f} ms", highlight=False)
    _print_skipped(console, [(p.path, p.kind, p.reason) for p in report.skipped])
    _print_problem_files(console, [(p.path, p.kind, p.reason) for p in report.problems])
    if indexing is not None:
        partial, waiting = indexing
        console.print(f"[yellow]being indexed[/]: {counted(len(waiting), 'file')} not in the "
                      f"index yet: the daemon (pid {partial.pid}) is at the vault's first "
                      f"index ({partial.how_far}) and indexes them; nothing to fix: check "
                      "again once it is done", highlight=False)
    if report.clean:
        console.print("[green]clean[/]: " + ("nothing else: the files indexed so far, "
                                             "the index and the history agree"
                                             if indexing is not None else
                                             "the vault, the index and the history agree"))
        return
    counts = ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in report.counts().items())
    console.print(f"[yellow]drift[/]: {counts}", highlight=False)
    # a credential written into a file is listed whatever else there is: the first
    # PROBLEMS_SHOWN findings of the other kinds, then every credential (each line of it)
    others = [f for f in report.findings if f.kind != "credential"]
    for finding in others[:PROBLEMS_SHOWN]:
        _print_finding(console, finding)
    if len(others) > PROBLEMS_SHOWN:
        console.print(f"  … and {len(others) - PROBLEMS_SHOWN} more (--json lists all)")
    for finding in report.findings:
        if finding.kind == "credential":
            _print_finding(console, finding)
    if any(f.decision.__class__.__name__ != "Report" for f in report.findings):
        console.print("run [bold]dreamd check --fix[/] to apply the decisions in brackets")


def _print_finding(console: Console, finding: Finding) -> None:
    console.print(f"  {finding.kind.replace('_', ' ')}: {shown(_describe_drift(finding))}",
                  highlight=False)


def print_fix(console: Console, fix: FixReport) -> None:
    for finding, outcome in fix.applied:
        where = _where(finding)
        console.print(shown(f"  fixed {finding.kind.replace('_', ' ')}: "
                             + (f"{where}: " if where and where not in outcome else "")
                             + outcome), highlight=False)
    for finding in fix.left:  # described above: named once more, by where it is
        console.print(shown(f"  left for you: {finding.kind.replace('_', ' ')}: "
                             f"{_where(finding) or _describe_drift(finding)}"), highlight=False)
    if fix.deferred:
        console.print("the running daemon re-indexes the repaired files")


def _other_copies(records: list[ConflictRecord],
                  copies: list[tuple[str, str]]) -> list[tuple[str, str]]:
    listed = {r.copy for r in records}
    return [(c, o) for c, o in copies if c not in listed]


def conflicts_json(records: list[ConflictRecord], copies: list[tuple[str, str]],
                   pairs: Sequence[tuple[str, str, str]] = ()) -> dict[str, Any]:
    copies = _other_copies(records, copies)
    return {"open": [asdict(r) for r in records],
            "other_conflict_copies": [{"copy": c, "of": o} for c, o in copies],
            "possible_pairs": [{"kind": k, "paths": [a, b]} for k, a, b in pairs]}


def print_conflicts(console: Console, records: list[ConflictRecord],
                    copies: list[tuple[str, str]],
                    pairs: Sequence[tuple[str, str, str]] = ()) -> None:
    copies = _other_copies(records, copies)
    for kind, a, b in pairs:
        console.print(shown(f"{kind.replace('_', ' ')}: {a}  ←→  {b}"), highlight=False)
    if pairs:
        console.print("settle one with: dreamd conflicts resolve FILE-OR-ID --as "
                      "same|changed|different (either memory of the pair)")
    if not records and not copies:
        if not pairs:
            console.print("no open conflicts")
        return
    for r in records:
        console.print(shown(f"{r.memory_key}  {r.path}  ←→  {r.copy}  (version {r.head_n}, "
                             f"since {r.opened[:19]})"), highlight=False)
    if records:
        console.print("settle one with: dreamd conflicts resolve ID --keep file|magma|both")
    for copy, of in copies:
        console.print(shown(f"conflict copy {copy} of {of}: compare, keep what you want, "
                             "delete the copy"), highlight=False)


def dream_json(report: Any) -> dict[str, Any]:
    """``dreamd dream --json`` / ``expire --json``: counts, changes, diff, what was written."""
    plan = report.plan
    return {
        "applied": report.applied, "counts": dict(plan.counts), "share": round(plan.share, 4),
        "changes": list(plan.changes), "diff": plan.diff if not report.applied else None,
        "written": list(report.written), "diary": report.diary,
        "memory_index": report.memory_index, "resumed": report.resumed,
        "timings_ms": dict(report.timings_ms),
    }


def diary_line(diary: dict[str, Any]) -> str:
    """``dreamd status``'s diary row: ``4 staged, 1 promoted, 2 dropped; last night none
    promoted: 3 below the recalls gate``."""
    line = (f"{diary.get('staged', 0)} staged, {diary.get('promoted', 0)} promoted, "
            f"{diary.get('dropped', 0)} dropped")
    night = diary.get("last_night") or {}
    if night.get("why_none"):
        line += f"; last night none promoted: {night['why_none']}"
    elif night.get("promoted"):
        line += f"; last night {night['promoted']} promoted"
    return line


def print_explanation(console: Console, found: Any) -> None:
    """``dreamd promote --explain KEY``: the candidate, every signal and every gate."""
    snippet, recalls, score = found.snippet, found.recalls, found.score
    console.print(f"{snippet.key}  {snippet.evidence}  ({found.state.get('status')})",
                  highlight=False, markup=False)
    console.print(f"  {snippet.text}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"  tags: {', '.join(snippet.tags) or 'none'}; recalls: {recalls.count} "
                  f"({recalls.distinct_queries} queries, {recalls.days} days, mean match "
                  f"{recalls.mean_score:.2f})", highlight=False, markup=False)
    for name, value in score.signals.items():
        console.print(f"  {name:<14}{value:.3f}", highlight=False, markup=False)
    console.print(f"  {'phase boost':<14}{score.boost:.3f}", highlight=False, markup=False)
    console.print(f"  {'score':<14}{score.score:.3f}", highlight=False, markup=False)
    for name, (ok, what) in score.gates.items():
        console.print(f"  gate {name:<17}{'pass' if ok else 'FAIL'}  {what}",
                      highlight=False, markup=False)


def print_dream(console: Console, report: Any, *, what: str) -> None:
    """The plan (a dry run: with its diff) or what a dream or expiry did."""
    plan = report.plan
    c = plan.counts
    console.print(
        f"{what}: read {c.get('memories', 0):,} memories — {c.get('skipped', 0):,} unchanged "
        f"since the last dream, {c.get('updated', 0):,} updated, {c.get('added', 0):,} added",
        highlight=False)
    kinds = ", ".join(f"{c[k]} {k.replace('_', ' ')}" for k in (
        "merged", "superseded", "linked", "archived", "broken_links", "promoted", "demoted")
        if c.get(k))
    index_note = plan.memory_index[1] if plan.memory_index else None
    if plan.empty and not report.resumed and not plan.changes:
        console.print("no memory to change" if index_note and "rebuilt" in index_note
                      else "nothing to change")
    elif plan.empty and not report.resumed and not kinds:  # only the phases after the plan
        console.print("done:" if report.applied else "plan:",
                      f"{counted(len(report.written), 'file')} written" if report.applied
                      else "the phases after consolidation",
                      highlight=False)
    elif not report.applied:
        changed = c.get("changed_memories", 0)
        console.print(f"plan: {kinds} — {changed} memory file{'' if changed == 1 else 's'} "
                      f"({plan.share:.0%} of the live memories) would change:",
                      highlight=False)
    else:
        console.print(f"done: {kinds or 'finished an interrupted dream'} — "
                      f"{counted(len(report.written), 'file')} written", highlight=False)
    for line in plan.changes:
        console.print(f"  - {line}", markup=False, highlight=False)
    if report.resumed:
        console.print(f"  (finished {report.resumed} writes of an interrupted dream first)")
    if report.applied and report.memory_index:
        console.print(f"  - {report.memory_index}", markup=False, highlight=False)
    elif index_note:
        console.print(f"  - {index_note}", markup=False, highlight=False)
    if report.diary:
        console.print("  diary entry appended to DREAMS.md", highlight=False)
    if not report.applied and plan.diff:
        console.print()
        console.print(plan.diff, markup=False, highlight=False, end="")
