"""Search as the user's use case: the retrieval pipeline, the search log, and recalls.

:class:`SearchService` runs :class:`daemon.retrieval.Retriever` over an indexed vault, appends
each search to the state folder's search log (``dreamd status`` and the daemon's metrics read
it; a failed search is logged by its error's kind) and counts every memory it returns as a
recall (statistics in MAGMA, never in the file). Neither the log nor a recall that cannot be
counted ever fails a search.

Every hit leaves with credentials withheld from its title, heading and snippet
(:func:`withhold_in_hit`): the index already holds none a user wrote by hand
(:mod:`consistency.withheld`), and this is where every caller — ``dreamd search`` and its
``--json``, the MCP ``memory_search`` tool, the local API, the context — gets its hits, so
nothing indexed before, or cut so that the index did not see it, slips out either.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import structlog

from ccb.owner import Owner
from config.errors import DreamdError
from consistency.secrets import redact_secrets
from daemon.derived_marks import marked
from daemon.metrics import SearchRecord, append_search, search_record
from daemon.retrieval import Retriever, SearchTrace
from daemon.snippet_recall import SnippetRecaller
from daemon.transcript_hits import TranscriptFound, TranscriptSearch
from magma.catalogue import CatalogueEntry
from magma.recalls import RecallLog
from magma.search import SearchHit

__all__ = ["SearchService", "above_floor", "withhold_in_hit"]

log = structlog.get_logger("dreamd.app")


class SearchService:
    """Searches one vault. ``retriever()`` and ``recalls()`` give the pipeline and the
    recall log (built on first use by the composition root); ``require_indexed(action)``
    raises when the vault has not been indexed yet; ``snippets`` counts the hits on diary
    snippets (:class:`daemon.snippet_recall.SnippetRecaller`; ``None``: not counted);
    ``transcripts`` finds the statements of assistant sessions a search may list after its
    hits, at most ``transcript_hits`` of them (:mod:`daemon.transcript_hits`; ``None`` or 0:
    none); ``marks()`` gives the memories to mark as derived from a changed source
    (:class:`daemon.derived_marks.ChangedSourceMarks`; ``None``: none marked)."""

    def __init__(self, *, retriever: Callable[[], Retriever], recalls: Callable[[], RecallLog],
                 state_dir: Path, require_indexed: Callable[[str], None],
                 snippets: SnippetRecaller | None = None,
                 transcripts: TranscriptSearch | None = None, transcript_hits: int = 0,
                 marks: Callable[[], Mapping[str, str]] | None = None) -> None:
        self._retriever = retriever
        self._recalls = recalls
        self._snippets = snippets
        self._transcripts = transcripts
        self._transcript_hits = transcript_hits
        self._marks = marks
        self._state_dir = state_dir
        self._require_indexed = require_indexed
        #: The trace of the last search (``dreamd search --explain``).
        self.last_trace: SearchTrace | None = None

    def search(
        self, query: str, *, limit: int = 10, memory_types: Collection[str] | None = None,
        path_prefix: str | None = None, owner: Owner | None = None,
        include_hidden: bool = False, count_recall: bool = True, as_of: date | None = None,
        now: datetime | None = None, layers: Collection[int] | None = None,
        transcripts: bool = False, relevance_floor: float = 0.0,
    ) -> list[SearchHit]:
        """The retrieval pipeline over the indexed vault (:mod:`daemon.retrieval`: intent,
        progressive stages with deadlines, fusion, MMR); ``layers`` keeps notes of those
        layers (1–5); with ``owner``, other owners' memories are never returned. Archived,
        superseded and expired memories, and the dream diary, are left out unless
        ``include_hidden`` (then marked) or ``as_of`` (what was current on that day). Each
        memory returned counts as a recall (``count_recall``; statistics in MAGMA, never in
        the file). With ``transcripts``, the statements of assistant sessions the query
        matches follow the hits (``origin="transcript"``, :mod:`daemon.transcript_hits`;
        never with a filter — types, folder, layers, owner, a past day — since they are none
        of those), each listed one counted as its recall. ``relevance_floor`` leaves out the
        hits under that share of the first one's score (:func:`above_floor`; the context's,
        :data:`daemon.context.RELEVANCE_FLOOR`): no recall is counted for them. The trace is
        kept in :attr:`last_trace`."""
        self._require_indexed("search")
        retriever = self._retriever()
        try:
            result = retriever.search(
                query, limit=limit, memory_types=memory_types, path_prefix=path_prefix,
                owner=owner, include_hidden=include_hidden, as_of=as_of, now=now, layers=layers)
        except DreamdError as error:
            append_search(self._state_dir, SearchRecord(
                at=datetime.now(UTC).isoformat(timespec="milliseconds"), total_ms=0.0,
                error=type(error).__name__))
            raise
        hits = above_floor(self._marked([withhold_in_hit(hit) for hit in result.hits],
                                        retriever.last_entries()), relevance_floor)
        raw = TranscriptFound()
        if transcripts and result.trace.stages and not (
                memory_types is not None or path_prefix or layers is not None
                or owner is not None or as_of is not None):
            raw = self._statements(query)
        self.last_trace = replace(result.trace, transcripts=raw.trace)
        if result.trace.stages:  # a search that ran no stage (empty query) is not one
            # for the daemon's metrics and dreamd status; never fails the search
            append_search(self._state_dir,
                          search_record(result.trace, hits=len(hits), at=datetime.now(UTC)))
        recalled = [h.note_id for h in hits if h.memory_type and h.note_id]
        at = (now or datetime.now(UTC)).astimezone(UTC)  # (a search "as of now" votes then)
        if count_recall and recalled:
            try:
                self._recalls().record(recalled, query, at=at)
                retriever.note_recalls(recalled, at)
            except DreamdError as error:  # a recall not counted never fails a search
                log.warning("recall.not_counted", error=str(error))
        if count_recall and self._snippets is not None and result.trace.stages:
            try:
                self._snippets.recall(query, hits, at, shown=raw.matches)
            except DreamdError as error:
                log.warning("recall.snippets_not_counted", error=str(error))
        return hits + [withhold_in_hit(hit) for hit in raw.hits]

    def changed_source_marks(self) -> Mapping[str, str]:
        """``{memory path: why}`` of the memories derived from a changed source, the marks
        search gives their hits (:mod:`daemon.derived_marks`); none when the memory files
        cannot be read (logged: a mark never fails what asked for it)."""
        if self._marks is None:
            return {}
        try:
            return self._marks()
        except (OSError, DreamdError) as error:
            log.warning("search.marks_failed", error=str(error))
            return {}

    def _marked(self, hits: list[SearchHit], entries: Mapping[str, CatalogueEntry]
                ) -> list[SearchHit]:
        """Memory hits derived from a changed source marked (:mod:`daemon.derived_marks`);
        a memory file that cannot be read leaves them unmarked, never fails the search.

        Only a memory with ``derived_from`` of its own (as the hits' catalogue ``entries``
        have it) can carry a mark; with none among the hits the memory folder is not walked
        (a stat of every memory file: 8–20 ms a search at 1,000 memories, measured with
        cProfile over ``bench/search_bench.py``'s queries)."""
        if self._marks is None or not any(
                h.memory_type and _derived(entries.get(h.path)) for h in hits):
            return hits
        try:
            return marked(hits, self._marks())
        except (OSError, DreamdError) as error:
            log.warning("search.marks_failed", error=str(error))
            return hits

    def _statements(self, query: str) -> TranscriptFound:
        """The statements of sessions to list after the hits; on a failure none (logged,
        and said in the trace): they never fail a search."""
        if self._transcripts is None or self._transcript_hits < 1:
            return TranscriptFound(trace="off: retrieval.transcript_hits = 0")
        try:
            return self._transcripts.find(query, self._transcript_hits)
        except DreamdError as error:
            log.warning("search.transcripts_failed", error=str(error))
            return TranscriptFound(trace=f"skipped: {type(error).__name__}")


def _derived(entry: CatalogueEntry | None) -> bool:
    """Does the indexed memory name sources of its own (``derived_from``)? A note the
    catalogue does not hold counts as derived: read from its file then."""
    return entry is None or bool(entry.properties.get("derived_from"))


def above_floor(hits: list[SearchHit], share: float) -> list[SearchHit]:
    """``hits`` (best first) without those whose score is under ``share`` times the first
    one's; the first is always kept, and so is every hit when the first scores 0 or less
    (``share`` 0: all of them)."""
    if not hits or share <= 0 or hits[0].score <= 0:
        return hits
    least = share * hits[0].score
    return [hits[0], *(hit for hit in hits[1:] if hit.score >= least)]


def withhold_in_hit(hit: SearchHit) -> SearchHit:
    """``hit`` with every credential in its title, heading and snippet replaced by
    :data:`consistency.secrets.REDACTED` (the same hit when there is none). Pure."""
    heading = None if hit.heading is None else redact_secrets(hit.heading)
    title, snippet = redact_secrets(hit.title), redact_secrets(hit.snippet)
    if (title, heading, snippet) == (hit.title, hit.heading, hit.snippet):
        return hit
    return replace(hit, title=title, heading=heading, snippet=snippet)
