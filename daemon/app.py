"""The composition root: the only place that turns settings into concrete engines.

The CLI (and later the daemon loop and the MCP server) call :func:`load` once, build an
:class:`App`, and use its methods; engines receive plain constructor arguments and never read
settings themselves.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime, timedelta, tzinfo
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import structlog

from ccb.daily_notes import diary_notes, read_daily_note_settings
from ccb.model import MemoryType
from ccb.obsidian_cli import ObsidianCli, WriteMode, WriteRouter
from ccb.owner import Owner
from ccb.roots import ROOT_SEPARATOR, Root, derive_root_name
from ccb.scan import VaultFilter, scan_vault
from ccb.writer import NoteWriter
from config import (
    LoadedSettings,
    Settings,
    default_config_path,
    render_config,
    state_dir,
    store_uri,
)
from config.errors import ConfigError, VaultError
from config.settings import LlmRoleSettings, LlmSettings, user_zone
from consistency.lifecycle import LifecyclePolicy, RecallStats
from consistency.promotion import PromotionGates
from consistency.synthesis import ExtractedFact
from daemon.check import CheckLimits, ConsistencyService
from daemon.conflicts import ConflictDesk
from daemon.derived_marks import ChangedSourceMarks
from daemon.diary import Diary
from daemon.dream import (
    DreamPolicy,
    DreamRoles,
    DreamRunner,
    IndexReads,
    SessionCount,
    SessionLog,
    last_dream,
)
from daemon.dream_deep import transcripts_since
from daemon.dream_profile import profile_distiller
from daemon.dream_restore import Restorer
from daemon.dream_sleep import SleepCycle, SleepPolicy
from daemon.forgetting import Forgetting
from daemon.history import HistoryService, MemoryLocator, VersionRecorder
from daemon.indexing import Indexing
from daemon.llm import ChatClient
from daemon.memories import MemoryService
from daemon.memory_counts import memory_counts
from daemon.memory_index_keeper import INDEX_FILE, MemoryIndexKeeper
from daemon.memory_pool import MemoryPool
from daemon.pair_judge import PairJudge
from daemon.retrieval import Retriever, SearchTrace
from daemon.search_service import SearchService
from daemon.snippet_recall import SnippetRecaller
from daemon.status import (
    LAST_SYNC_FILE,
    StatusReport,
    read_json,
)
from daemon.sync import Progress, RootsSyncer, SyncReport
from daemon.transcript_hits import TranscriptSearch
from daemon.vault_folder import load, require_vault_folder, resolve_vault, vault_choice
from daemon.vault_status import vault_status
from daemon.verifier import FusionVerifier
from magma.embedder import Embedder, UniversalSentenceEncoder
from magma.embedding_cache import CachingEmbedder, EmbeddingCache
from magma.note_bm25_files import NOTE_INDEX_FOLDER
from magma.recalls import RecallLog
from magma.search import SearchHit
from magma.snippet_store import SnippetStore
from magma.store import MagmaStore, index_dropped_at_open
from magma.store_seal import SEAL_FILE
from magma.versions import VersionArchive

__all__ = ["App", "diary_of", "dream_policy", "embedder_in_memory", "load", "make_write_router",
           "require_vault_folder", "sleep_cycle", "status_counts", "vault_choice"]

log = structlog.get_logger("dreamd.app")

#: Settings sections that change how dreamd runs, never what it answers: a client with other
#: values there is still served by the daemon.
UNANSWERED_SECTIONS = ("logging", "metrics", "mcp", "daemon")
#: State-dir file: what the last ``MEMORY.md`` build was made from (:func:`index_fingerprint`).
MEMORY_INDEX_RECORD = "memory-index.json"


def make_write_router(settings: Settings, vault_root: Path) -> WriteRouter:
    """The Obsidian write-mode router of ``vault_root`` from ``settings.obsidian`` (mode, CLI
    command and timeout, retries, fallback) and the memory folder."""
    cfg = settings.obsidian
    return WriteRouter(
        ObsidianCli(vault_root, command=cfg.cli.command, timeout_ms=cfg.cli.timeout_ms),
        mode=cfg.mode, memory_folder=settings.vault.memory_folder,
        cli_enabled=cfg.cli.enabled, max_retries=cfg.fallback.max_retries,
        fallback=cfg.fallback.enabled,
    )


def dream_policy(settings: Settings) -> DreamPolicy:
    """The knobs of a dream from ``[dream]``, ``[lifecycle]`` and ``memory.max_chars``."""
    cfg, life = settings.dream, settings.lifecycle
    return DreamPolicy(
        lifecycle=LifecyclePolicy(
            project_inactive_days=life.project_inactive_days,
            reference_unused_days=life.reference_unused_days,
            decay_factor=life.decay_factor, decay_period_days=life.decay_period_days,
            promote_min_distinct_queries=life.promote_min_distinct_queries,
            demote_after_days=life.demote_after_days),
        max_change_share=cfg.max_change_share, max_change_free=cfg.max_change_free,
        lock_ttl=timedelta(minutes=cfg.lock_ttl_minutes), check_urls=life.check_urls,
        url_timeout_s=life.url_timeout_s, transcripts=cfg.transcripts,
        max_memory_chars=settings.memory.max_chars,
        replay_sessions=cfg.replay.sessions_per_dream)


def _shared_store(settings: Settings) -> dict[str, Any]:
    """What every table of the store opens with besides its URI: this device's name and
    LanceDB's storage options (``storage.device``, ``storage.options``)."""
    return {"device": settings.storage.device, "storage_options": settings.storage.options}


def _index_store(settings: Settings) -> dict[str, Any]:
    """What the index store opens with besides its URI and model: :func:`_shared_store` and
    the size above which its maintenance builds the vector index
    (``retrieval.ann_vectors_above``) and the bound of LanceDB's index cache
    (``storage.index_cache_mb``)."""
    return {**_shared_store(settings),
            "vector_index_above": settings.retrieval.ann_vectors_above,
            "index_cache_bytes": settings.storage.index_cache_mb * 2**20}


def _last_sync_kept(store: MagmaStore, state_dir: Path) -> MagmaStore:
    """``store``, and the record of the last sync taken away when its open dropped an older
    dreamd's index: until the next sync, the vault is one not indexed yet (search, context
    and dream say to run a sync, not "no results")."""
    if index_dropped_at_open(store) is not None:
        (state_dir / LAST_SYNC_FILE).unlink(missing_ok=True)
    return store


def _index_files(state: Path) -> dict[str, Any]:
    """The index store's files in the vault's state folder ``state``: its seal
    (:mod:`magma.store_seal`) and the saved note-level BM25 index
    (:mod:`magma.note_bm25_files`)."""
    return {"seal": state / SEAL_FILE, "note_index": state / NOTE_INDEX_FOLDER}


def make_embedder(loaded: LoadedSettings) -> Embedder:
    """Build the configured embedder (the model loads lazily, on first use)."""
    cfg = loaded.settings.embedding
    if cfg.provider == "use-m3":
        return UniversalSentenceEncoder(threads=cfg.threads, batch_size=cfg.batch_size)
    raise ConfigError(
        f"embedding.provider = {cfg.provider!r} ({loaded.sources.get('embedding.provider')}): "
        "only 'use-m3' is available in this version"
    )


class App:
    """One vault, its store and its embedder, built from loaded settings.

    ``embedder`` and ``store`` are built on first use from the settings unless given: a
    reload hands over the engines its settings did not change, and tests hand in a fake
    embedder (``tests/support``)."""

    def __init__(self, loaded: LoadedSettings, vault_root: Path, *,
                 embedder: Embedder | None = None, store: MagmaStore | None = None) -> None:
        self._given_embedder = embedder
        self._given_store = store
        self.loaded = loaded
        self.settings = loaded.settings
        self.vault_root = vault_root
        self.state_dir = state_dir(self._with_vault())
        self.store_uri = store_uri(self._with_vault())

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(cls, loaded: LoadedSettings, *, embedder: Embedder | None = None,
               action: str | None = "open") -> App:
        """Resolve the vault (``vault.path``, else :func:`vault_choice`'s) and build.

        Raises ``VaultError`` (:func:`require_vault_folder`, ``action`` naming the command)
        when the vault folder is missing or not a folder, before anything is made: no state
        folder, store or record for a path that is not a vault. ``action=None`` skips that
        check (``service uninstall`` of a vault deleted since)."""
        root, _choice = resolve_vault(loaded)
        if action is not None:
            require_vault_folder(root, action)
        return cls(loaded, root, embedder=embedder)

    def reloaded(self, loaded: LoadedSettings) -> App:
        """An App for new settings of the same vault, keeping the engines they did not change:
        the embedder (no model reload), the store (reopened on any storage change: a new key)."""
        keep_embedder = loaded.settings.embedding == self.settings.embedding
        fresh = App(loaded, self.vault_root,
                    embedder=self.embedder if keep_embedder else None)
        if keep_embedder and fresh.settings.storage == self.settings.storage:
            fresh._given_store = self.store
        return fresh

    @property
    def settings_fingerprint(self) -> str:
        """Hex digest of the settings that decide answers (every section but
        :data:`UNANSWERED_SECTIONS`, the vault resolved): a client and the daemon agree on
        it or the client answers in-process (:mod:`daemon.client`)."""
        dump = self._with_vault().model_dump(mode="json", exclude=set(UNANSWERED_SECTIONS))
        return hashlib.sha256(json.dumps(dump, sort_keys=True, default=str).encode()).hexdigest()

    @property
    def settings_with_vault(self) -> Settings:
        """The settings with ``vault.path`` set to the resolved vault folder."""
        return self._with_vault()

    def _with_vault(self) -> Settings:
        settings = self.settings
        if settings.vault.path != self.vault_root:
            settings = settings.model_copy(
                update={"vault": settings.vault.model_copy(update={"path": self.vault_root})}
            )
        return settings

    @staticmethod
    def config_path(explicit: Path | None) -> Path:
        """The config file dreamd reads: ``--config``, else ``DREAMD_CONFIG``, else default."""
        if explicit is not None:
            return explicit
        env = os.environ.get("DREAMD_CONFIG")
        return Path(env) if env else default_config_path()

    @classmethod
    def init_target(cls, config_path: Path | None, *, force: bool) -> Path:
        """The config file ``init`` would write; raises ``ConfigError`` when it exists and
        ``force`` is false (so a caller can refuse before asking the user anything)."""
        target = cls.config_path(config_path)
        if target.exists() and not force:
            raise ConfigError(f"init: {target} exists; pass --force to overwrite it")
        return target

    @classmethod
    def init_config(cls, vault: Path, *, config_path: Path | None, force: bool) -> Path:
        """Write a commented config for ``vault``; refuse to overwrite unless ``force``."""
        root = vault.expanduser().resolve()
        if not root.is_dir():
            raise VaultError(f"init {vault}: not a folder")
        target = cls.init_target(config_path, force=force)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_config(root), encoding="utf-8")
        return target

    # ------------------------------------------------------------------ engines

    @cached_property
    def vault_filter(self) -> VaultFilter:
        """The vault's ignore rules, plus dreamd's generated ``<memory folder>/MEMORY.md``:
        it repeats every memory's name and description, so indexing it would only echo the
        memories in search (and re-embed the whole list at every change)."""
        cfg = self.settings.vault
        generated = "".join(f"[{ch}]" if ch in "*?[" else ch
                            for ch in f"{cfg.memory_folder}/{INDEX_FILE}")
        return VaultFilter.for_vault(
            self.vault_root, config_folder=cfg.config_folder, include=tuple(cfg.include),
            exclude=(*cfg.exclude, generated),
        )

    @cached_property
    def roots(self) -> tuple[Root, ...]:
        """The vault (prefix ``""``) then each configured extra root, named (see
        :mod:`ccb.roots`). Raises ``ConfigError`` for an extra root that the vault already
        indexes (a visible folder inside it) or that two entries name twice."""
        roots = [Root("", self.vault_root, self.vault_filter)]
        taken: set[str] = set()
        for extra in self.settings.vault.extra_roots:
            folder = extra.path.expanduser()
            name = extra.name or derive_root_name(folder, taken)
            if name in taken:
                raise ConfigError(f"vault.extra_roots: the name {name!r} is used twice")
            taken.add(name)
            absolute = Path(os.path.abspath(folder))  # noqa: PTH100 - keep the spelling
            real, vault_real = absolute.resolve(), self.vault_root.resolve()
            if vault_real.is_relative_to(real) and real != vault_real:
                raise ConfigError(
                    f"vault.extra_roots: {folder} contains the vault; an extra root must be "
                    "a folder beside the vault or a hidden folder inside it"
                )
            for other in roots[1:]:
                other_real = other.path.resolve()
                if real.is_relative_to(other_real) or other_real.is_relative_to(real):
                    raise ConfigError(
                        f"vault.extra_roots: {folder} and {other.path} are inside one another; "
                        "their files would be indexed twice"
                    )
            if real.is_relative_to(vault_real):
                inside = real.relative_to(vault_real).as_posix()
                if inside == "." or not self.vault_filter.is_ignored(inside, is_dir=True):
                    raise ConfigError(
                        f"vault.extra_roots: {folder} is part of the vault and already indexed; "
                        "only hidden or ignored folders inside the vault can be extra roots"
                    )
            roots.append(Root(name + ROOT_SEPARATOR, absolute, VaultFilter()))
        return tuple(roots)

    @cached_property
    def writer(self) -> NoteWriter:
        """The single writer of this vault's files (compare-before-write, lost-update heal),
        writing dreamd's memory files through the Obsidian CLI when ``obsidian.mode`` says so."""
        return NoteWriter(
            self.vault_root, self.state_dir,
            router=make_write_router(self.settings, self.vault_root),
            atomic_writes=self.settings.obsidian.direct.atomic_writes,
        )

    def write_mode(self) -> WriteMode:
        """How memory files are written now (``cli`` or ``direct``) and why."""
        return self.writer.write_mode()

    @cached_property
    def embedder(self) -> Embedder:
        return self._given_embedder or make_embedder(self.loaded)

    @cached_property
    def zone(self) -> tzinfo:
        """The user's time zone (``time.zone``, else the system's): every day is counted in it."""
        return user_zone(self.settings)

    def clock(self) -> datetime:
        """Now, in the user's time zone: ``clock().date()`` is the user's today."""
        return datetime.now(self.zone)

    @cached_property
    def embedding_cache(self) -> EmbeddingCache:
        """The user's vectors of chunks embedded before (``<data_dir>/embedding-cache/``),
        shared by every vault; ``embedding.cache_mb = 0`` turns it off."""
        return EmbeddingCache.for_model(
            self.settings.storage.data_dir, self.embedder.model_id, self.embedder.dims,
            self.settings.embedding.cache_mb * 2**20)

    @cached_property
    def indexing_embedder(self) -> Embedder:
        """The embedder of chunks being indexed: the model behind the user's cache."""
        return CachingEmbedder(self.embedder, self.embedding_cache)

    @property
    def store(self) -> MagmaStore:
        """The index store once this process's pending index writes are in it
        (:meth:`daemon.indexing.Indexing.settle`)."""
        self.indexing.settle()
        return self.open_store

    @cached_property
    def open_store(self) -> MagmaStore:
        """The vault's index store as it is now (pending index writes not waited for)."""
        if self._given_store is not None:
            return self._given_store
        return _last_sync_kept(MagmaStore.open(
            self.store_uri, vault_path=str(self.vault_root), model_id=self.embedder.model_id,
            dims=self.embedder.dims, **_index_files(self.state_dir), **_index_store(self.settings),
        ), self.state_dir)

    @cached_property
    def versions(self) -> VersionArchive:
        """The version history of memories (shared by every device of the store), with this
        device's plain-text copies in ``<state dir>/versions/``."""
        return VersionArchive.open(self.store_uri, archive_dir=self.state_dir / "versions",
                                   **_shared_store(self.settings))

    @cached_property
    def recorder(self) -> VersionRecorder:
        """Records a version of every memory the indexer sees change."""
        return VersionRecorder(self.versions, self.state_dir, self.writer.origin_of)

    @cached_property
    def recalls(self) -> RecallLog:
        """Recall statistics of memories (shared by every device of the store)."""
        return RecallLog.open(self.store_uri, **_shared_store(self.settings))

    @cached_property
    def sessions(self) -> SessionLog:
        """Sessions counted for the dream gate (MCP clients, edit bursts, transcripts)."""
        return SessionLog(self.state_dir)

    def session_count(self) -> SessionCount:
        """Sessions since the last dream."""
        cfg = self.settings.dream
        return self.sessions.count(last_dream(self.state_dir), transcripts=cfg.transcripts,
                                   idle_gap=timedelta(minutes=cfg.edit_idle_gap_minutes))

    def dreamer(self, index: Callable[[Collection[str]], bool] | None = None,
                clock: Callable[[], datetime] | None = None) -> DreamRunner:
        """Dreams, ``expire`` and ``restore`` for this vault; ``index`` re-indexes written
        files (default: :meth:`daemon.indexing.Indexing.index_now`); ``clock`` gives "now"
        (default: the system's)."""
        indexed = LAST_SYNC_FILE

        def recall_stats() -> Mapping[str, RecallStats]:
            if read_json(self.state_dir / indexed) is None:
                return {}
            return self.recalls.stats()

        def unresolved(paths: Sequence[str]) -> Mapping[str, Sequence[str]]:
            found: dict[str, list[str]] = {path: [] for path in paths}
            for link in self.store.unresolved_links(sources=paths):
                found.setdefault(link.src, []).append(link.target)
            return found

        runner = DreamRunner(
            writer=self.writer, state_dir=self.state_dir, memory_index=self.memory_index,
            reads=IndexReads(
                recall_stats=recall_stats,
                unresolved_links=unresolved if read_json(self.state_dir / indexed) else None,
                embeddings=self.indexing.memory_vectors),
            index=index or self.indexing.index_now,
            policy=dream_policy(self.settings),
            clock=clock or self.clock, llm=self.chat_client(),
            remember=lambda fact: _remember_extracted(self, fact),
            roles=DreamRoles(self.pair_judge(), profile_distiller(
                self.settings, self.writer, self.state_dir)),
        )
        runner.sleep = sleep_cycle(self, clock or self.clock)
        return runner

    def pair_judge(self) -> PairJudge | None:
        """The ``llm.judge`` role for the dream, or ``None`` while it is off."""
        role = self.settings.llm.judge
        client = self.role_client(role)
        if client is None:
            return None
        return PairJudge(client, self.state_dir, max_pairs=role.max_pairs)

    def chat_client(self) -> ChatClient | None:
        """The dream's LLM endpoint, or ``None`` while ``llm.enabled`` is off."""
        return self.role_client(self.settings.llm)

    @staticmethod
    def role_client(role: LlmSettings | LlmRoleSettings) -> ChatClient | None:
        """The endpoint of one LLM role (the dream's ``llm``, ``llm.intent``,
        ``llm.verifier``), or ``None`` while the role is off."""
        if not role.enabled or not role.model:
            return None
        return ChatClient(role.base_url, role.model, timeout_s=role.timeout_s)

    def require_vault(self, action: str) -> None:
        """Raise ``VaultError`` when the vault folder is missing (a typo never makes a new
        vault)."""
        require_vault_folder(self.vault_root, action)

    def close(self) -> None:
        """Release engines (the search pipeline's stage threads), once the pending index
        writes are in the store."""
        self.indexing.settle()
        if "retriever" in self.__dict__:
            self.retriever.close()

    # ------------------------------------------------------------------ use cases

    @cached_property
    def indexing(self) -> Indexing:
        """Keeping the store in step with the vault (:class:`daemon.indexing.Indexing`)."""
        return Indexing(self)

    def sync(
        self, *, progress: Progress | None = None, allow_mass_delete: bool = False
    ) -> SyncReport:
        """:meth:`daemon.indexing.Indexing.sync` of this vault."""
        return self.indexing.sync(progress=progress, allow_mass_delete=allow_mass_delete)

    def make_syncer(self) -> RootsSyncer:
        """:meth:`daemon.indexing.Indexing.make_syncer` of this vault."""
        return self.indexing.make_syncer()

    def memories(self, owner: Owner | None = None, *,
                 clock: Callable[[], datetime] | None = None) -> MemoryService:
        """The memory service of this vault (remember, show, forget, MEMORY.md) acting for
        ``owner`` (``None``: the vault's owner); ``clock`` gives "now" (default: the system's).
        ``VaultError`` when the vault folder is missing: a typo never makes a new vault."""
        self.require_vault("memories of")
        return MemoryService(
            clock=clock or self.clock,
            writer=self.writer, pool=self.memory_pool, memory_index=self.memory_index,
            store=self.open_store, embedder=lambda: self.indexing_embedder,
            index=self.indexing, owner=owner, forgetting=Forgetting.of(self),
            max_memory_chars=self.settings.memory.max_chars)

    @cached_property
    def memory_index(self) -> MemoryIndexKeeper:
        """The one owner of this vault's ``MEMORY.md``."""
        return MemoryIndexKeeper(writer=self.writer,
                                 memory_folder=self.settings.vault.memory_folder,
                                 record=self.state_dir / MEMORY_INDEX_RECORD)

    @cached_property
    def memory_pool(self) -> MemoryPool:
        """The vault's memory files, parsed once per change, shared by every memory service
        of this App (``remember`` judges against all of them on each call)."""
        return MemoryPool(self.vault_root, self.settings.vault.memory_folder,
                          chunk_max_chars=self.settings.sync.chunk_max_chars,
                          vfilter=self.vault_filter)

    def consistency(
        self, *, index: Callable[[Collection[str]], bool] | None = None
    ) -> ConsistencyService:
        """The checker and arbiter of this vault (``dreamd check``, ``dreamd conflicts``);
        ``index`` re-indexes paths (default :meth:`daemon.indexing.Indexing.index_now`; the
        daemon passes its own)."""
        reindex = index or self.indexing.index_now
        desk = ConflictDesk(writer=self.writer, recorder=self.recorder, state_dir=self.state_dir,
                            index=reindex, memories=self.memories, clock=self.clock)
        limits = CheckLimits(timedelta(seconds=self.settings.check.orphan_grace_s),
                             self.settings.sync.max_delete_share)
        return ConsistencyService(
            root=self.vault_root, vfilter=self.vault_filter, store=self.store, desk=desk,
            memories=self.memories, index=reindex, memory_index=self.memory_index,
            limits=limits, claimed=[root.prefix for root in self.roots[1:]], clock=self.clock)

    def conflict_copies(self) -> list[tuple[str, str]]:
        """``(copy, original)`` of every conflict copy in the vault (sync tools' and
        dreamd's), from one walk."""
        scan = scan_vault(self.vault_root, self.vault_filter)
        return [(c.path, c.conflict_of) for c in scan.conflict_copies]

    def history(self, owner: Owner | None = None) -> HistoryService:
        """History, diff and rollback of memories (acting for ``owner`` when given)."""
        self.require_vault("history")
        service = self.memories(owner)
        where = MemoryLocator(service, self.versions, self.store, self.vault_root, owner)
        restorer = Restorer(writer=self.writer, memory_folder=self.settings.vault.memory_folder,
                            state_dir=self.state_dir, clock=self.clock)
        return HistoryService(self.versions, self.writer, self.recorder, where.locate,
                              where.resolve, lambda paths: service.after_change(list(paths)),
                              where.visible, restorer)

    @cached_property
    def retriever(self) -> Retriever:
        """The retrieval pipeline over this vault's store (:mod:`daemon.retrieval`)."""
        llm = self.settings.llm
        chat = (self.role_client(llm.intent)
                if self.settings.retrieval.intent_analysis.enable_llm else None)
        verifier_chat = self.role_client(llm.verifier)
        verifier = (FusionVerifier(verifier_chat, top=llm.verify_top,
                                   timeout_s=llm.verifier.timeout_s,
                                   concurrency=llm.verifier.concurrency)
                    if verifier_chat is not None else None)

        def recall_stats() -> Mapping[str, RecallStats]:
            return {} if read_json(self.state_dir / LAST_SYNC_FILE) is None \
                else self.recalls.stats()

        return Retriever(store=self.store, embedder=self.embedder, settings=self.settings,
                         recall_stats=recall_stats, chat=chat, verifier=verifier,
                         kept_graph=self.indexing.graph_keeper.step_graph,
                         vector_folder=self.state_dir)

    @cached_property
    def searcher(self) -> SearchService:
        """Search as the user's use case (:class:`daemon.search_service.SearchService`)."""
        statements = TranscriptSearch(lambda: self.snippet_recaller.store, self.state_dir,
                                      embedder=lambda: embedder_in_memory(self))
        return SearchService(retriever=lambda: self.retriever, recalls=lambda: self.recalls,
                             state_dir=self.state_dir, snippets=self.snippet_recaller,
                             require_indexed=self.indexing.require_indexed,
                             transcripts=statements,
                             marks=ChangedSourceMarks(self.memory_pool.memories),
                             transcript_hits=self.settings.retrieval.transcript_hits)

    @cached_property
    def snippet_recaller(self) -> SnippetRecaller:
        """Counts search hits on diary and transcript snippets (MAGMA's ``snippets``
        tables)."""
        return SnippetRecaller(lambda: SnippetStore.open(
            self.store_uri, **_shared_store(self.settings)),
            max_age_days=self.settings.dream.deep.max_age_days)

    def search(
        self, query: str, *, limit: int = 10, memory_types: Collection[str] | None = None,
        path_prefix: str | None = None, owner: Owner | None = None,
        include_hidden: bool = False, count_recall: bool = True, as_of: date | None = None,
        now: datetime | None = None, layers: Collection[int] | None = None,
        transcripts: bool = False, relevance_floor: float = 0.0,
    ) -> list[SearchHit]:
        """:meth:`daemon.search_service.SearchService.search` of this vault (after the
        pending index writes)."""
        self.indexing.settle()
        return self.searcher.search(
            query, limit=limit, memory_types=memory_types, path_prefix=path_prefix,
            owner=owner, include_hidden=include_hidden, count_recall=count_recall, as_of=as_of,
            now=now, layers=layers, transcripts=transcripts, relevance_floor=relevance_floor)

    @property
    def last_search_trace(self) -> SearchTrace | None:
        """The trace of this App's last search (``dreamd search --explain``)."""
        return self.searcher.last_trace

    def status(self) -> StatusReport:
        """Vault, store, counts, last sync, problems, the dream and the searches
        (:func:`daemon.vault_status.vault_status`); works before the first sync too."""
        self.require_vault("status")
        return vault_status(
            vault=self.vault_root, store_uri=self.store_uri, state_dir=self.state_dir,
            settings=self.settings, counts=lambda: status_counts(self),
            sessions=self.session_count, vector_index=lambda: self.store.vector_index(),
            memory_index_record=self.state_dir / MEMORY_INDEX_RECORD)



def status_counts(app: App) -> dict[str, int]:
    """``app``'s index row counts, ``memories`` as a user counts them
    (:func:`daemon.memory_counts.memory_counts`)."""
    counts: dict[str, int] = dict(asdict(app.store.counts()))
    counts.update(memory_counts(app.store.memory_properties(),
                                app.settings.vault.memory_folder, app.clock().date()))
    return counts


def diary_of(app: App, *, clock: Callable[[], datetime] | None = None) -> Diary:
    """The vault's diary (:class:`daemon.diary.Diary`): the Daily notes settings as they are
    now, the vault's one writer, "today" from ``clock`` (default :meth:`App.clock`, the user's
    time zone); inside the daemon its resident index indexes each append. ``VaultError`` when
    the vault folder is missing."""
    app.require_vault("note in")

    def index(paths: Collection[str]) -> None:
        resident = app.indexing.resident_index
        if resident is not None:
            resident(paths, False)

    return Diary(writer=app.writer, settings=read_daily_note_settings(
        app.vault_root, app.settings.vault.config_folder), clock=clock or app.clock,
        max_chars=app.settings.memory.max_chars, index=index)


def embedder_in_memory(app: App) -> Embedder | None:
    """The vault's embedder when this process holds its model in memory already (the
    daemon, or a command whose search loaded it), else ``None``: never loads a model (≈2.4 s
    for the default one). An embedder without a ``loaded`` flag (one given to the App) has
    nothing to load."""
    embedder = app.__dict__.get("embedder")  # (the cached property, if it was built)
    if embedder is None or not getattr(embedder, "loaded", True):
        return None
    return cast(Embedder, embedder)


def _remember_extracted(app: App, fact: ExtractedFact) -> tuple[str, str]:
    """Keep a fact a dream extracted from a transcript, through the write path."""
    service = app.memories()
    service.origin = "dream"
    result = service.remember(fact.body, type=fact.type, name=fact.name or None,
                              description=fact.description or None, subject=fact.subject,
                              source="dream")
    return result.path, result.action


def sleep_cycle(app: App, clock: Callable[[], datetime] | None = None) -> SleepCycle:
    """Light, REM and deep sleep of the vault (:class:`daemon.dream_sleep.SleepCycle`) with
    its ``[dream.light]`` and ``[dream.deep]`` settings, the transcripts of
    ``dream.transcripts`` and the vault's embedder (the snippets' vectors); a promoted snippet
    is kept through ``remember`` as the dream (``source: dream``, ``derived_from:`` its
    evidence)."""
    light, deep = app.settings.dream.light, app.settings.dream.deep
    settings = read_daily_note_settings(app.vault_root, app.settings.vault.config_folder)

    def read(path: str) -> bytes | None:
        root = next((r for r in sorted(app.roots, key=lambda r: -len(r.prefix))
                     if r.owns(path)), None)
        try:
            return (root.path / root.relative(path)).read_bytes() if root else None
        except OSError:
            return None

    def remember(text: str, type_: str, derived_from: tuple[str, ...]) -> tuple[str, str]:
        service = app.memories()
        service.origin = "dream"
        result = service.remember(text, type=cast(MemoryType, type_), source="dream",
                                  derived_from=derived_from)
        return result.path, result.action

    pattern = app.settings.dream.transcripts

    def transcripts(since: datetime) -> list[Path]:
        return transcripts_since(pattern, since) if pattern.strip() else []

    return SleepCycle(
        store=lambda: app.snippet_recaller.store,
        diary=lambda days: diary_notes(settings, app.roots, days), read=read,
        remember=remember, state_dir=app.state_dir, clock=clock or app.clock,
        transcripts=transcripts, embedder=lambda: app.embedder,
        policy=SleepPolicy(lookback_days=light.lookback_days, gates=PromotionGates(
            min_score=deep.min_score, min_recalls=deep.min_recalls,
            min_distinct_queries=deep.min_distinct_queries, max_age_days=deep.max_age_days,
            recency_half_life_days=deep.recency_half_life_days)))
