"""CCB, the file engine of dreamd: notes and memories as markdown files with YAML frontmatter.

Reading side (pure unless noted):

- :mod:`ccb.model` — the typed values (``Note``, ``Link``, ``MemoryMeta``, ``ScanResult`` ...).
- :mod:`ccb.frontmatter` — split the frontmatter block, load it the way Obsidian reads it.
- :mod:`ccb.markdown` — links, embeds, tags, headings and aliases of a note.
- :mod:`ccb.parse` — ``parse_note(path, data) -> Note``; conflict-copy names.
- :mod:`ccb.scan` — the vault's ignore rules, the vault walk and ``read_note`` (I/O).
"""

__all__: list[str] = []
