"""A note that tells an event on its own day ("Paid rent on 2024-05-01" in the note of that
day) and its twin of another day are two hits, not copies; so are two daily notes whose
bodies are the same under two date headings (a habit logged on two days: "how many times
did I run this week?" needs both). The copy test compares a note's dates as values, its
own day included (``magma.text.copy_form``). With the product's model: the two texts sit
close enough for the semantic de-duplication to ask."""

from __future__ import annotations

from pathlib import Path

from daemon.app import App, load
from magma.embedder import UniversalSentenceEncoder

_LOGS = {
    "rent": ("Paid rent on {day}: 1200 to the landlord.\n", "when did I pay rent to the landlord"),
    "房租": ("{zh}交了房租 3500 元给房东。\n", "什么时候交的房租"),
    "Runs": ("# {day}\n\nRan 10 km around West Lake before work.\n",
              "how many times did I run around West Lake"),
    "跑步": ("# {zh}\n\n今天在西湖跑了10公里。\n", "我在西湖跑了几次步"),
}


def test_one_event_told_on_two_days_is_two_hits(vault: Path) -> None:
    days = [("2024-05-01", "2024年5月1日"), ("2024-06-01", "2024年6月1日")]
    for folder, (text, _query) in _LOGS.items():
        (vault / folder).mkdir()
        for day, zh in days:
            (vault / folder / f"{day}.md").write_text(text.format(day=day, zh=zh), "utf-8")
    for n in range(6):
        (vault / f"Garden {n}.md").write_text(f"# Garden {n}\n\nTomatoes, row {n}.\n", "utf-8")
    app = App.create(load(None, None, {"vault.path": str(vault)}),
                     embedder=UniversalSentenceEncoder(threads=2))
    try:
        app.sync()
        for folder, (_text, query) in _LOGS.items():
            found = {h.path for h in app.search(query, limit=10, count_recall=False)}
            assert {f"{folder}/{day}.md" for day, _ in days} <= found, (query, found)
    finally:
        app.close()
