"""CCB, the file engine of dreamd: notes and memories as markdown files with YAML frontmatter.

Reading side (pure unless noted):

- :mod:`ccb.model` — the typed values (``Note``, ``Link``, ``MemoryMeta``, ``ScanResult`` ...).
- :mod:`ccb.frontmatter` — split the frontmatter block, load it the way Obsidian reads it.
- :mod:`ccb.markdown` — links, embeds, tags, headings and aliases of a note.
- :mod:`ccb.parse` — ``parse_note(path, data) -> Note``; conflict-copy names.
- :mod:`ccb.names` — ``nfc_key``: the form paths, names and link targets are compared in.
- :mod:`ccb.scan` — the vault's ignore rules, the vault walk and ``read_note`` (I/O).
- :mod:`ccb.obsidian_vaults` — the vaults Obsidian knows (its ``obsidian.json``), for
  ``dreamd init`` without a path.
- :mod:`ccb.daily_notes` — where daily notes live (Obsidian's Daily notes settings, an
  OpenClaw workspace's ``memory/`` days): the raw layer of the diary.
- :mod:`ccb.diary` — a diary line, and its insertion under a note's ``## heading``.

Writing side: :mod:`ccb.writer` (the single writer: compare-before-write, conflict copies,
lost-update repair), :mod:`ccb.atomic` (atomic and in-place file writes),
:mod:`ccb.obsidian_cli` (dreamd's own memory files through the Obsidian CLI: ``obsidian.mode``),
:mod:`ccb.frontmatter_edit` (minimal frontmatter edits), :mod:`ccb.memory_file`.
"""

__all__: list[str] = []
