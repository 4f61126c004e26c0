"""Light, REM and deep sleep: how a line of the diary earns a memory (issue 21).

Run by :meth:`daemon.dream.DreamRunner.dream` under the dream's lock, after consolidation:

1. **Light sleep** reads the diary of the last ``lookback_days`` (the vault's daily notes and
   attached OpenClaw ``memory/`` days, :func:`ccb.daily_notes.diary_notes`) and the
   assistant transcripts written in those days (the user's statements said in them,
   :mod:`daemon.transcript_snippets`; a transcript that did not change since the last night
   is not read again), cuts them into snippets
   (:func:`consistency.snippet_cut.cut_snippets`), puts them in MAGMA's ``snippets`` table
   (a note whose snippets did not change is not written again), embeds the snippets that
   have no vector for the model in use (when there is one) and stages the new ones. It
   marks for REM every candidate that is new or was hit by a search since REM last looked
   at it.
2. **REM sleep** finds the themes of the marked candidates and gives each a confidence
   (:func:`consistency.promotion.rem_themes`, :func:`consistency.promotion.rem_confidence`).
3. **Deep sleep** scores every staged candidate (:func:`consistency.promotion.deep_score`) and
   promotes those that pass every gate through ``remember`` (type from the statement kind,
   duplicates merged, contradictions superseded, ``source: dream``, ``derived_from:`` the
   snippet's evidence). A candidate past the age gate, or whose line left its note, is
   dropped.

No phase ever writes a daily note or a transcript: they read them, and write the store, the
state file and (through ``remember``) memory files. What was decided about each snippet lives in
``<state>/dream-snippets.json`` (status, the nights light sleep saw it, REM's confidence, the
memory it became); ``DREAMS.md`` only shows it and is never read back.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import structlog

from ccb.atomic import read_json_object, write_json_atomic
from ccb.daily_notes import DiaryNote
from ccb.memory_file import normalise_text
from config.errors import DreamdError
from consistency.promotion import (
    DeepScore,
    PromotionGates,
    Theme,
    deep_score,
    memory_type_of,
    rem_confidence,
    rem_themes,
)
from consistency.snippet_cut import cut_snippets
from daemon.transcript_snippets import transcript_label, transcript_signature, transcript_snippets
from magma.embedder import Embedder
from magma.snippet_store import SnippetRecalls, SnippetStore
from magma.snippets import Snippet

__all__ = ["SNIPPETS_FILE", "Explanation", "SleepCycle", "SleepPolicy", "SleepReport",
           "diary_status", "forget_snippets"]

log = structlog.get_logger("dreamd.dream")

#: The dream's state of each snippet, in the state folder.
SNIPPETS_FILE = "dream-snippets.json"
#: Nights of light sleep kept per snippet (the phase boost counts up to two).
LIGHT_NIGHTS_KEPT = 7

#: Nights between two compactions of the snippet tables (dreamd's choice: a year of nightly
#: and per-search appends left uncompacted made the reads of a night 10-50 times slower,
#: measured with ``bench/diary_bench.py``; a compaction of that year took 0.7 s).
COMPACT_EVERY_DAYS = 7
#: Most snippets embedded in one night (dreamd's choice: a day's diary and sessions are tens;
#: a store filled before snippets had vectors catches up, newest first, at ≈1.6 s a night at
#: the ≈80 texts/s DESIGN.md measured for the default model: a year of diary in a month).
MAX_EMBEDDED_PER_NIGHT = 128

#: ``remember(text, memory type, derived_from) -> (memory path, action)``.
RememberSnippet = Callable[[str, str, tuple[str, ...]], tuple[str, str]]
#: ``transcripts(since) -> transcript files written after the aware moment ``since``.
TranscriptFiles = Callable[[datetime], Sequence[Path]]
#: ``reword(heading, body) -> (statement, None)``, or ``(None, why the line's own words
#: stay)``: the model's wording of a promoted line, checked (:mod:`daemon.dream_blocks`).
Reword = Callable[[str, str], tuple[str | None, str | None]]


@dataclass(frozen=True, slots=True)
class SleepPolicy:
    """``dream.light.lookback_days`` (days of diary light sleep reads, today included) and
    the deep-sleep gates (``[dream.deep]``); defaults from issue 21."""

    lookback_days: int = 2
    gates: PromotionGates = field(default_factory=PromotionGates)


@dataclass(frozen=True, slots=True)
class SleepReport:
    """What one night did: snippets newly ``staged``, candidates REM looked at (``rem``:
    key → confidence) and its ``themes``, ``promoted`` (key, memory path, remember's
    action), ``dropped`` (key, why), the candidates still staged, the memory files written,
    why none was promoted (when none was), the snippets by key and timings (ms)."""

    staged: tuple[str, ...] = ()
    rem: Mapping[str, float] = field(default_factory=dict)
    themes: tuple[Theme, ...] = ()
    promoted: tuple[tuple[str, str, str], ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    waiting: int = 0
    written: tuple[str, ...] = ()
    why_none: str | None = None
    snippets: Mapping[str, Snippet] = field(default_factory=dict, repr=False)
    recalls: Mapping[str, SnippetRecalls] = field(default_factory=dict, repr=False)
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether the night staged, promoted or dropped anything, or REM looked again."""
        return bool(self.staged or self.rem or self.promoted or self.dropped)


@dataclass(frozen=True, slots=True)
class Explanation:
    """``dreamd promote --explain``: a candidate, its recalls, its state and its score."""

    snippet: Snippet
    recalls: SnippetRecalls
    state: Mapping[str, Any]
    score: DeepScore


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


class SleepCycle:
    """Light, REM and deep sleep of one vault (module docstring).

    ``store()`` opens MAGMA's snippet tables; ``diary(days)`` lists the diary notes of those
    days; ``read(path)`` gives a note's bytes by index path (``None``: gone); ``remember``
    keeps a promoted snippet (:data:`RememberSnippet`); ``clock()`` is the user's now (aware,
    in the user's zone); ``transcripts`` lists the assistant transcripts written since a
    moment (:data:`TranscriptFiles`; none by default); ``embedder()`` gives the model the
    snippets' vectors are made with (``None``, or no ``embedder``: no vectors).
    """

    def __init__(self, *, store: Callable[[], SnippetStore],
                 diary: Callable[[Sequence[date]], Sequence[DiaryNote]],
                 read: Callable[[str], bytes | None], remember: RememberSnippet,
                 state_dir: Path, policy: SleepPolicy, clock: Callable[[], datetime],
                 transcripts: TranscriptFiles | None = None,
                 embedder: Callable[[], Embedder | None] | None = None) -> None:
        self._store = store
        self._diary = diary
        self._read = read
        self._remember = remember
        self.path = state_dir / SNIPPETS_FILE
        self.policy = policy
        self._clock = clock
        self._transcripts = transcripts
        self._embedder = embedder

    # ------------------------------------------------------------------ state

    def now(self) -> datetime:
        """The cycle's clock (the user's now)."""
        return self._clock()

    def state(self) -> dict[str, dict[str, Any]]:
        """``{snippet key: its state}`` (``{}`` when there is none or it is unreadable)."""
        data = read_json_object(self.path).get("snippets")
        return {k: dict(v) for k, v in data.items() if isinstance(v, dict)} \
            if isinstance(data, dict) else {}

    def _notes(self, part: str = "notes") -> dict[str, str]:
        """``{note path: hash of the bytes light sleep last cut}`` (``part="transcripts"``:
        ``{transcript label: its size and modification time when last cut}``)."""
        data = read_json_object(self.path).get(part)
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _compacted(self) -> str | None:
        """The day (ISO) the snippet tables were last compacted, if ever."""
        day = read_json_object(self.path).get("compacted")
        return day if isinstance(day, str) else None

    def _compact(self, store: SnippetStore, today: date) -> str | None:
        """Compact the snippet tables when :data:`COMPACT_EVERY_DAYS` passed since the last
        time (or there was none) -> the day of the last compaction. A failure is logged and
        tried again next night."""
        last = self._compacted()
        if last is not None and last > (today - timedelta(days=COMPACT_EVERY_DAYS)).isoformat():
            return last
        try:
            store.optimize()
        except DreamdError as error:
            log.warning("dream.snippets_not_compacted", error=str(error))
            return last
        return today.isoformat()

    def last_night(self) -> dict[str, Any]:
        """What the last night recorded: ``at``, ``promoted``, ``staged``, ``why_none``."""
        data = read_json_object(self.path).get("last_night")
        return dict(data) if isinstance(data, dict) else {}

    # ------------------------------------------------------------------ the night

    def run(self, reword: Reword | None = None) -> SleepReport:
        """Light, REM and deep sleep, in order (module docstring); with ``reword``, a
        promoted line is kept in the words it gives when it gives some. Raises
        ``StoreError`` when MAGMA cannot be read or written (the dream reports it; no note is
        touched)."""
        now = self._clock()
        today = now.date()
        store = self._store()
        state = self.state()
        before = {k: dict(v) for k, v in state.items()}
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        notes = self._notes()
        seen = self._notes("transcripts")
        notes_before, seen_before = dict(notes), dict(seen)
        staged, dropped = self._light(store, state, notes, seen, now)
        self._embed(store)
        timings["light"] = _ms(t0)
        t0 = time.perf_counter()
        oldest = today - timedelta(days=self.policy.gates.max_age_days + 1)
        candidates = {s.key: s for s in store.snippets(since=oldest)
                      if state.get(s.key, {}).get("status") == "staged"}
        recalls = store.recall_stats()
        themes, rem = self._rem(candidates, recalls, state, today)
        timings["rem"] = _ms(t0)
        t0 = time.perf_counter()
        promoted, more_dropped, why_none = self._deep(candidates, recalls, state, now, reword)
        timings["deep"] = _ms(t0)
        dropped += more_dropped + self._expired(state, candidates, oldest)
        waiting = sum(1 for v in state.values() if v.get("status") == "staged")
        report = SleepReport(
            staged=tuple(staged), rem=rem, themes=tuple(themes), promoted=tuple(promoted),
            dropped=tuple(dropped), waiting=waiting,
            written=tuple(sorted({p for _, p, a in promoted if a != "duplicate"})),
            why_none=why_none, snippets=candidates, recalls=recalls, timings_ms=timings)
        compacted = self._compact(store, today)
        if state != before or notes != notes_before or seen != seen_before or report.changed \
                or compacted != self._compacted():
            write_json_atomic(self.path, {"snippets": state, "notes": notes,
                                          "transcripts": seen, "compacted": compacted,
                                          "last_night": {
                "at": now.isoformat(timespec="seconds"), "staged": waiting,
                "promoted": len(promoted), "why_none": why_none}})
        log.info("dream.sleep", staged=len(staged), rem=len(rem), promoted=len(promoted),
                 dropped=len(dropped), waiting=waiting,
                 **{f"{k}_ms": v for k, v in timings.items()})
        return report

    def _light(self, store: SnippetStore, state: dict[str, dict[str, Any]],
               notes: dict[str, str], seen: dict[str, str], now: datetime
               ) -> tuple[list[str], list[tuple[str, str]]]:
        """Cut the last days' notes and every older note that changed since it was cut
        (``notes``: path → hash of the bytes cut, updated here), and the transcripts written
        in those days (``seen``, updated here: :func:`_cut_transcripts`), write the notes
        whose snippets changed (a note that is gone loses its snippets), stage the new
        snippets and drop the staged ones whose lines left their notes."""
        today = now.date()
        days = [today - timedelta(days=k) for k in range(self.policy.lookback_days)]
        cut: dict[str, list[Snippet]] = {}
        for note in self._diary(days):
            self._cut(note.path, note.day, notes, cut)
        if self._transcripts is not None:
            first = datetime.combine(days[-1], datetime.min.time(), now.tzinfo)
            _cut_transcripts(store, self._transcripts(first), seen, cut, first)
        older: dict[str, date] = {}
        for old in store.snippets(origin="diary"):
            older.setdefault(old.path, old.day)
        for path, day in older.items():
            if path not in cut:
                self._cut(path, day, notes, cut, only_changed=True)
        known: dict[str, set[tuple[str, tuple[int, int]]]] = {p: set() for p in cut}
        for old in store.snippets(paths=list(cut)):
            known[old.path].add((old.key, old.lines))
        store.replace_notes({p: found for p, found in cut.items()
                             if {(s.key, s.lines) for s in found} != known[p]})
        staged: list[str] = []
        dropped: list[tuple[str, str]] = []
        noted = {normalise_text(s.body): s.evidence for found in cut.values() for s in found
                 if s.origin == "diary"}
        for snippet in (s for found in cut.values() for s in found):
            entry = state.get(snippet.key)
            if entry is None:
                state[snippet.key] = entry = _first_night(snippet, today, noted)
                if entry["status"] == "staged":
                    staged.append(snippet.key)
                else:
                    dropped.append((snippet.key, entry["why"]))
            elif today.isoformat() not in entry.get("light", []):
                entry["light"] = [*entry.get("light", []), today.isoformat()][-LIGHT_NIGHTS_KEPT:]
        current = {s.key for found in cut.values() for s in found}
        for path, olds in known.items():
            for key, _ in olds:
                entry = state.get(key)
                if key not in current and entry and entry.get("status") == "staged":
                    entry.update(status="dropped", why=f"its line left {path}")
                    dropped.append((key, entry["why"]))
        return staged, dropped

    def _cut(self, path: str, day: date, notes: dict[str, str],
             cut: dict[str, list[Snippet]], *, only_changed: bool = False) -> None:
        """Cut one note into ``cut`` (a note that is gone: no snippets), recording the hash
        of its bytes in ``notes``; with ``only_changed``, a note whose hash is recorded and
        the same is left out (an unrecorded one is recorded and left out)."""
        data = self._read(path)
        if data is None:  # gone: its snippets go
            notes.pop(path, None)
            cut[path] = []
            return
        recorded = notes.get(path)
        notes[path] = hashlib.sha256(data).hexdigest()[:16]
        if only_changed and recorded in (None, notes[path]):
            return
        cut[path] = cut_snippets(path, data.decode("utf-8", "replace"), day)

    def _embed(self, store: SnippetStore) -> None:
        """Vectors for the snippets that have none for the model in use (at most
        :data:`MAX_EMBEDDED_PER_NIGHT`, newest first) and none for the snippets gone. A
        model that fails leaves the snippets without vectors (active recall then matches
        words only); never fails the night."""
        embedder = self._embedder() if self._embedder is not None else None
        if embedder is None:
            return
        try:
            _embed_snippets(store, embedder)
        except DreamdError as error:
            log.warning("dream.snippet_vectors_failed", error=str(error))

    def _rem(self, candidates: Mapping[str, Snippet], recalls: Mapping[str, SnippetRecalls],
             state: dict[str, dict[str, Any]], today: date
             ) -> tuple[list[Theme], dict[str, float]]:
        """Themes of the marked candidates (new, or hit since REM last looked), and their
        confidence."""
        marked = [s for key, s in candidates.items()
                  if "rem" not in state[key]
                  or state[key].get("recalls_seen", 0) != recalls.get(key, SnippetRecalls()).count]
        if not marked:
            return [], {}
        themes = rem_themes(marked)
        confidence: dict[str, float] = {}
        for snippet in marked:
            seen = recalls.get(snippet.key, SnippetRecalls())
            confidence[snippet.key] = rem_confidence(snippet, seen, themes)
            state[snippet.key].update(rem=confidence[snippet.key], rem_day=today.isoformat(),
                                      recalls_seen=seen.count)
        return themes, confidence

    def score(self, snippet: Snippet, recalls: SnippetRecalls, entry: Mapping[str, Any],
              now: datetime) -> DeepScore:
        """:func:`consistency.promotion.deep_score` of one candidate with its state."""
        rem = entry.get("rem")
        return deep_score(snippet, recalls, now=now, light_nights=len(entry.get("light", [])),
                          rem=float(rem) if isinstance(rem, int | float) else None,
                          gates=self.policy.gates)

    def _deep(self, candidates: Mapping[str, Snippet], recalls: Mapping[str, SnippetRecalls],
              state: dict[str, dict[str, Any]], now: datetime, reword: Reword | None = None
              ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]], str | None]:
        """Promote what passes every gate (in the words ``reword`` gives, if any); drop what
        is past the age gate."""
        promoted: list[tuple[str, str, str]] = []
        dropped: list[tuple[str, str]] = []
        failed: dict[str, int] = {}
        for key, snippet in sorted(candidates.items(), key=lambda kv: (kv[1].day, kv[1].path,
                                                                        kv[1].lines)):
            verdict = self.score(snippet, recalls.get(key, SnippetRecalls()), state[key], now)
            if verdict.passed:
                outcome = self._promote(snippet, state[key], reword)
                if outcome is not None:
                    promoted.append((key, *outcome))
                else:
                    dropped.append((key, str(state[key].get("why"))))
            elif "age" in verdict.failed:
                state[key].update(status="dropped",
                                  why=f"older than {self.policy.gates.max_age_days} days "
                                      "without earning a memory")
                dropped.append((key, state[key]["why"]))
            else:
                for gate in verdict.failed:
                    failed[gate] = failed.get(gate, 0) + 1
        why_none = None
        if not promoted and failed:
            why_none = ", ".join(f"{n} {self._gate_phrase(gate)}"
                                 for gate, n in sorted(failed.items(), key=lambda kv: -kv[1]))
        return promoted, dropped, why_none

    def _gate_phrase(self, gate: str) -> str:
        gates = self.policy.gates
        return {"recalls": f"found by fewer than {gates.min_recalls} searches",
                "distinct_queries": f"by fewer than {gates.min_distinct_queries} different "
                                    "queries",
                "score": f"scored below {gates.min_score}",
                "age": f"older than {gates.max_age_days} days"}.get(gate, gate)

    def _expired(self, state: dict[str, dict[str, Any]], candidates: Mapping[str, Snippet],
                 oldest: date) -> list[tuple[str, str]]:
        """Drop the staged snippets too old to be read as candidates any more."""
        dropped = []
        for key, entry in state.items():
            staged = entry.get("staged")
            if entry.get("status") == "staged" and key not in candidates \
                    and isinstance(staged, str) and staged < oldest.isoformat():
                entry.update(status="dropped", why=f"older than "
                             f"{self.policy.gates.max_age_days} days without earning a memory")
                dropped.append((key, entry["why"]))
        return dropped

    def _promote(self, snippet: Snippet, entry: dict[str, Any], reword: Reword | None = None
                 ) -> tuple[str, str] | None:
        """Keep ``snippet`` through ``remember`` (in ``reword``'s words when it gives some);
        its state says what became of it and whose words it was kept in."""
        text = " ".join(snippet.body.split("\n"))
        if reword is not None:
            worded, why = reword(snippet.heading, text)
            entry["wording"] = "the model's" if worded else f"the line's: {why}"
            text = worded or text
        try:
            path, action = self._remember(text, memory_type_of(snippet), (snippet.evidence,))
        except DreamdError as error:  # a credential, a text remember refuses: never kept
            entry.update(status="dropped", why=f"remember refused it: {error}")
            log.warning("dream.not_promoted", key=snippet.key, error=str(error))
            return None
        entry.update(status="promoted", memory=path, action=action)
        return path, action

    # ------------------------------------------------------------------ explain

    def explain(self, key: str) -> Explanation | None:
        """Every signal and gate of the candidate whose key starts with ``key`` (at least
        4 characters), scored as the next dream would; ``None`` when none is known."""
        if len(key) < 4:
            return None
        state = self.state()
        store = self._store()
        found = next((s for s in store.snippets() if s.key.startswith(key)), None)
        if found is None:
            return None
        recalls = store.recall_stats().get(found.key, SnippetRecalls())
        entry = state.get(found.key, {"status": "not staged yet"})
        return Explanation(found, recalls, entry, self.score(found, recalls, entry,
                                                             self._clock()))


def _first_night(snippet: Snippet, today: date, noted: Mapping[str, str]) -> dict[str, Any]:
    """The state of a snippet light sleep sees for the first time: ``staged``, or
    ``dropped`` for a statement of a session that a diary line of these days holds word for
    word (``noted``: normalised text → evidence; ``dreamd flush`` wrote it there): the line
    is the candidate, the statement would only be promoted into the same memory again."""
    held = noted.get(normalise_text(snippet.body)) if snippet.origin == "transcript" else None
    if held is not None:
        return {"status": "dropped", "staged": today.isoformat(),
                "why": f"the diary holds it ({held})"}
    return {"status": "staged", "staged": today.isoformat(), "light": [today.isoformat()]}


def _cut_transcripts(store: SnippetStore, files: Sequence[Path], seen: dict[str, str],
                     cut: dict[str, list[Snippet]], first: datetime) -> None:
    """Into ``cut``: the snippets of each transcript of ``files`` (written since ``first``,
    the start of light sleep's first day): its statements said since that day, read again
    only when the file changed since the last night (``seen``: label → signature, left
    holding these files only), and the ones said before that day as the store has them (a
    long session's older statements are not cut again, nor lost)."""
    zone: tzinfo | None = first.tzinfo
    assert zone is not None
    before = dict(seen)
    seen.clear()
    for path in files:
        label = transcript_label(path)
        signature = transcript_signature(path)
        if signature is None or label in cut:
            continue
        stored = store.snippets(paths=[label])
        if before.get(label) == signature:
            seen[label] = signature
            cut[label] = stored
            continue
        fresh = transcript_snippets(path, label, zone, first.date())
        if fresh is None:  # unreadable now: read again next night
            continue
        seen[label] = signature
        kept = [s for s in stored if s.day < first.date()]
        keys = {s.key for s in kept}
        cut[label] = kept + [s for s in fresh if s.key not in keys]


def _embed_snippets(store: SnippetStore, embedder: Embedder) -> None:
    """Add ``embedder``'s vectors of the snippets without one (newest first, at most
    :data:`MAX_EMBEDDED_PER_NIGHT`) and remove those of snippets gone. Raises
    ``StoreError`` or ``EmbeddingError``."""
    model = embedder.model_id
    have = store.vector_keys(model)
    current = store.keys()
    gone = have - current
    wanted = sorted(store.snippets(keys=current - have),
                    key=lambda s: (s.day, s.path, s.lines), reverse=True)
    wanted = wanted[:MAX_EMBEDDED_PER_NIGHT]
    if not wanted and not gone:
        return
    rows = embedder.embed([s.text for s in wanted]) if wanted else None
    added = {s.key: rows[i] for i, s in enumerate(wanted)} if rows is not None else {}
    store.keep_vectors(model, added, gone)


def forget_snippets(state_dir: Path, stem: str) -> int:
    """Mark ``forgotten`` the snippets promoted into the memory whose file name is ``stem``
    (``dreamd forget``): a search never lists them again (:mod:`daemon.transcript_hits`),
    and light sleep, which knows their keys, never stages them again. Returns how many.
    Raises ``OSError`` when the state file cannot be written."""
    path = state_dir / SNIPPETS_FILE
    data = read_json_object(path)
    snippets = data.get("snippets")
    if not isinstance(snippets, dict):
        return 0
    marked = 0
    for entry in snippets.values():
        memory = entry.get("memory") if isinstance(entry, dict) else None
        if isinstance(memory, str) and Path(memory).stem == stem \
                and entry.get("status") != "forgotten":
            entry.update(status="forgotten")
            entry.pop("memory", None)
            marked += 1
    if marked:
        write_json_atomic(path, {**data, "snippets": snippets})
    return marked


def diary_status(state_dir: Path) -> dict[str, Any]:
    """For ``dreamd status``: how many diary snippets are ``staged``, ``promoted`` and
    ``dropped``, and the last night's ``at``, ``promoted`` and ``why_none`` (``{}`` before
    the first night)."""
    data = read_json_object(state_dir / SNIPPETS_FILE)
    snippets = data.get("snippets")
    if not isinstance(snippets, dict):
        return {}
    counts = {status: 0 for status in ("staged", "promoted", "dropped")}
    for entry in snippets.values():
        if isinstance(entry, dict) and entry.get("status") in counts:
            counts[entry["status"]] += 1
    night = data.get("last_night")
    return {**counts, "last_night": night if isinstance(night, dict) else {}}
