"""Whom a thing is done with every such day, another on each side: two entries of a schedule
as often as one whose partner changed ("Lunch with Tom on Fridays" / "Lunch with Sarah on
Fridays"), so both stay, listed, never one superseded by the other, in English and Chinese;
a change told, a tool named after "with", or a one-off plan still supersede. Found trying
dreamd as a new user: "Tennis with Julia on Thursdays" hid "Tennis with Mark on Thursdays".
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # another companion on the same recurring day: both kept, listed
    ("Tennis with Mark on Thursdays", "Tennis with Julia on Thursdays",
     "possible_contradiction"),
    ("Lunch with Tom on Fridays", "Lunch with Sarah on Fridays", "possible_contradiction"),
    ("Weekly 1:1 with Bob every Monday", "Weekly 1:1 with Alice every Monday",
     "possible_contradiction"),
    ("Pair programming with Priya on Wednesdays", "Pair programming with Ken on Wednesdays",
     "possible_contradiction"),
    ("Dinner with Mom on Sundays", "Dinner with Grandma on Sundays", "possible_contradiction"),
    ("每周四和马克打网球", "每周四和朱莉娅打网球", "kept apart"),
    ("每周一上午和小王开会", "每周一上午和小李开会", "kept apart"),
    ("每周六跟老张去钓鱼", "每周六跟老李去钓鱼", "kept apart"),
    # the change told: still a change
    ("Lunch with Tom on Fridays", "Lunch with Sarah on Fridays from now on", "contradiction"),
    ("Lunch with Tom on Fridays", "I now have lunch with Sarah on Fridays instead of Tom",
     "contradiction"),
    # a tool after "with", no schedule: the tool changed
    ("We deploy with Terraform", "We deploy with Pulumi", "contradiction"),
    ("Build the frontend with Vite", "Build the frontend with Webpack", "contradiction"),
    ("Format code with Black", "Format code with Ruff", "contradiction"),
    # one thing moved, no companion
    ("The standup is on Tuesday", "The standup is on Thursday", "contradiction"),
    ("I live in Berlin", "I live in Munich", "contradiction"),
])
def test_another_companion_of_a_schedule_keeps_both(real_embedder: UniversalSentenceEncoder,
                                                    old: str, new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)
