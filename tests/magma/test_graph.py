"""Link resolution (Obsidian's rules) and the vault graph."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import store_reads
from hypothesis import given
from hypothesis import strategies as st

from ccb.model import Link, LinkKind, Note
from ccb.parse import parse_note
from magma.graph import LinkResolver, link_key, path_key
from magma.store import MagmaStore, NoteRecord
from magma.vault_graph import vault_graph

VAULT = [
    "Home.md",
    "Reading list.md",
    "Projects/Kiln.md",
    "Archive/Projects/Kiln.md",
    "Archive/Old/Home.md",
    "Deep/er/Note.md",
    "Other/Note.md",
    "b/Same.md",
    "a/Same.md",
    "img/cat.png",
    "Projects/assets/diagram.png",
    "日记/睡眠记录.md",
    "My Note.md",
    "Projects/Spec.md.md",
]


@pytest.mark.parametrize(
    ("target", "src", "expected"),
    [
        ("Home", "x.md", "Home.md"),  # shortest path wins over Archive/Old/Home.md
        ("home", "x.md", "Home.md"),  # case-insensitive
        ("HOME.MD", "x.md", "Home.md"),
        ("Kiln", "x.md", "Projects/Kiln.md"),
        ("Archive/Projects/Kiln", "x.md", "Archive/Projects/Kiln.md"),  # exact path first
        ("archive/projects/kiln.md", "x.md", "Archive/Projects/Kiln.md"),
        ("Projects/Kiln", "x.md", "Projects/Kiln.md"),  # exact beats suffix match
        ("Old/Home", "x.md", "Archive/Old/Home.md"),  # folder suffix
        ("Note", "x.md", "Other/Note.md"),  # shortest path
        ("Same", "x.md", "a/Same.md"),  # tie -> lexicographic
        ("cat.png", "x.md", "img/cat.png"),  # attachment by full file name
        ("cat", "x.md", None),  # attachments need their extension
        ("diagram.png", "x.md", "Projects/assets/diagram.png"),
        ("睡眠记录", "x.md", "日记/睡眠记录.md"),
        ("Reading list", "x.md", "Reading list.md"),  # case 15: never the conflict copy
        ("Spec.md", "x.md", "Projects/Spec.md.md"),
        ("Nowhere", "x.md", None),
        ("", "Home.md", "Home.md"),  # [[#Heading]] is the note itself
        ("https://example.org/a.md", "x.md", None),
    ],
)
def test_wikilink_resolution(target: str, src: str, expected: str | None) -> None:
    assert LinkResolver(VAULT).resolve(target, src) == expected


@pytest.mark.parametrize(
    ("target", "src", "expected"),
    [
        ("../Kiln.md", "Projects/sub/x.md", "Projects/Kiln.md"),
        ("Kiln.md", "Archive/Projects/x.md", "Archive/Projects/Kiln.md"),  # relative first
        ("My%20Note.md", "x.md", "My Note.md"),
        ("./assets/diagram.png", "Projects/Kiln.md", "Projects/assets/diagram.png"),
        ("../../../outside.md", "a/b.md", None),
    ],
)
def test_markdown_link_resolution(target: str, src: str, expected: str | None) -> None:
    assert LinkResolver(VAULT).resolve(target, src, kind="markdown") == expected


def test_aliases_are_never_targets() -> None:
    # the resolver knows only paths: an alias "Bee" of B.md cannot resolve
    assert LinkResolver(["B.md"]).resolve("Bee", "x.md") is None


def test_add_and_discard_keep_the_resolver_current() -> None:
    resolver = LinkResolver(["deep/Note.md"])
    assert resolver.resolve("Note", "x.md") == "deep/Note.md"
    resolver.add("Note.md")
    assert resolver.resolve("Note", "x.md") == "Note.md"
    resolver.discard("Note.md")
    resolver.discard("never-there.md")
    assert resolver.resolve("Note", "x.md") == "deep/Note.md"


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.mark.parametrize(
    ("target", "src", "kind"),
    [
        ("Café", "x.md", "wikilink"),  # typed NFC, stored NFD (a vault synced from a Mac)
        ("CAFÉ.md", "x.md", "wikilink"),
        ("Notes/Café", "x.md", "wikilink"),  # exact path
        ("Café", "Notes/Übersicht.md", "wikilink"),
        ("Caf%C3%A9.md", "Notes/x.md", "markdown"),  # URL-encoded NFC, relative
        ("./Café.md", "Notes/x.md", "markdown"),
        ("../Notes/Café.md", _nfd("Other/Übersicht.md"), "markdown"),  # an NFD source folder
    ],
)
def test_a_link_typed_composed_finds_a_file_stored_decomposed(
        target: str, src: str, kind: LinkKind) -> None:
    stored = _nfd("Notes/Café.md")
    resolver = LinkResolver([stored, "Home.md"])
    assert resolver.resolve(target, src, kind=kind) == stored  # the path as stored, for I/O
    assert link_key(target) == path_key(stored)  # the store's re-resolution key agrees


def test_a_link_typed_decomposed_finds_a_file_stored_composed() -> None:
    resolver = LinkResolver(["crème brûlée.md"])
    assert resolver.resolve(_nfd("Crème Brûlée"), "x.md") == "crème brûlée.md"
    resolver.discard(_nfd("crème brûlée.md"))  # only the path as stored is forgotten
    assert resolver.resolve("crème brûlée", "x.md") == "crème brûlée.md"


# names never start or end with spaces (Obsidian trims link text too)
segment = (
    st.text(alphabet=st.sampled_from(list("abcXYZ 睡眠🙂'.")), min_size=1, max_size=6)
    .map(str.strip)
    .filter(lambda s: s.strip(".") != "")
)
vault_paths = st.lists(
    st.lists(segment, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md"),
    min_size=1,
    max_size=20,
    unique_by=str.lower,
)


@given(paths=vault_paths, data=st.data())
def test_resolution_properties(paths: list[str], data: st.DataObject) -> None:
    resolver = LinkResolver(paths)
    path = data.draw(st.sampled_from(paths))
    stem = path.removesuffix(".md")
    # a full vault path always finds its own file, in any case, with or without .md
    assert resolver.resolve(path, "src.md") == path
    assert resolver.resolve(stem.upper(), "src.md") == path
    # a bare name finds a file of that name, the shortest such path
    name = stem.rsplit("/", 1)[-1]
    hit = resolver.resolve(name, "src.md")
    assert hit is not None and path_key(hit) == name.lower()
    same_name = [p for p in paths if path_key(p) == name.lower()]
    assert hit == min(same_name, key=lambda p: (len(p), p))
    assert link_key(name) == path_key(hit)


#: Paths that share names and folders often (one name in several folders, the same folder
#: in two cases): what the resolver's shared keys are about.
shared_name_paths = st.lists(
    st.tuples(st.sampled_from(["", "a/", "B/", "a/c/", "b/"]),
              st.sampled_from(["x", "X", "睡眠", "x y", "y"])).map(lambda p: f"{p[0]}{p[1]}.md"),
    min_size=1, max_size=12, unique=True)


@given(paths=shared_name_paths, data=st.data())
def test_a_resolver_after_adds_and_discards_answers_as_a_fresh_one(
        paths: list[str], data: st.DataObject) -> None:
    # keys shared by several paths (one name in several folders) are held as a set, a key of
    # one path as that path: adding and discarding in any order must go back and forth
    # between the two without losing or keeping a path
    resolver = LinkResolver()
    held: set[str] = set()
    for _ in range(data.draw(st.integers(min_value=1, max_value=30))):
        path = data.draw(st.sampled_from(paths))
        if data.draw(st.booleans()):
            resolver.add(path)
            held.add(path)
        else:
            resolver.discard(path)
            held.discard(path)
    fresh = LinkResolver(sorted(held))
    for path in paths:
        stem = path.removesuffix(".md")
        for target in (path, stem, stem.rsplit("/", 1)[-1], stem.upper()):
            assert resolver.resolve(target, "src.md") == fresh.resolve(target, "src.md")


def test_build_graph_nodes_and_edges(
    store: MagmaStore, note_of: Callable[..., Note], record_of: Callable[..., NoteRecord]
) -> None:
    a = note_of(
        "a.md",
        "see [[b]], ![[cat.png]], [c](c.md) and [[ghost]]",
        tags=("Garden",),
        links=(
            Link("b", "wikilink", subpath="Intro"),
            Link("cat.png", "embed"),
            Link("c.md", "markdown"),
            Link("ghost", "wikilink"),
        ),
    )
    notes = [a, note_of("b.md", "b", tags=("garden",)), note_of("c.md", "c")]
    from ccb.model import FileEntry
    from magma.store import AttachmentRecord

    store.apply(
        upserts=[record_of(n) for n in notes],
        attachments=[AttachmentRecord(FileEntry("img/cat.png", 1, 1, "attachment"), "att")],
    )
    graph = vault_graph(store_reads.all_files(store), store_reads.all_links(store))
    assert graph.nodes["attachment:img/cat.png"]["kind"] == "attachment"
    edges = {(u, v, d["kind"]) for u, v, d in graph.edges(data=True)}
    assert edges == {
        ("note:a.md", "note:b.md", "wikilink"),
        ("note:a.md", "attachment:img/cat.png", "embed"),
        ("note:a.md", "note:c.md", "markdown"),
        ("note:a.md", "unresolved:ghost", "wikilink"),
        ("note:a.md", "tag:garden", "tag"),
        ("note:b.md", "tag:garden", "tag"),
    }
    assert graph.get_edge_data("note:a.md", "note:b.md")[0]["subpath"] == "Intro"


def test_case_15_links_resolve_to_originals_even_beside_conflict_copies(
    cases_dir: Path,
) -> None:
    vault = cases_dir / "15-sync-conflict-copies" / "vault"
    paths = [p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()]
    resolver = LinkResolver(paths)  # conflict copies included on purpose: worst case
    assert resolver.resolve("Reading list", "Links here.md") == "Reading list.md"
    assert resolver.resolve("Meeting notes", "Links here.md") == "Meeting notes.md"


def test_a_markdown_embed_is_found_beside_the_note_that_embeds_it() -> None:
    """``![](pic.png)`` in ``Trips/Kyoto.md`` is ``Trips/pic.png``, as ``[t](pic.png)`` is,
    even where another ``pic.png`` sits higher up; ``![[pic.png]]`` names the shortest path."""
    resolver = LinkResolver(["pic.png", "Trips/pic.png", "Trips/Kyoto.md"])
    assert resolver.resolve("pic.png", "Trips/Kyoto.md", kind="markdown-embed") == "Trips/pic.png"
    assert resolver.resolve("pic.png", "Trips/Kyoto.md", kind="markdown") == "Trips/pic.png"
    assert resolver.resolve("pic.png", "Trips/Kyoto.md", kind="embed") == "pic.png"
    note = parse_note("Trips/Kyoto.md", b"![](pic.png) and ![[pic.png]]\n")
    assert [link.kind for link in note.links] == ["markdown-embed", "embed"]
