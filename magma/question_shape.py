"""The events a question names apart, each to be searched for by itself.

A pure function of the query text (English and Chinese), for the search pipeline
(:mod:`daemon.retrieval`): :func:`event_phrases` gives the parts of a question that each name
one event or thing, cut at the question's own joints (quoted titles, "A or B", "between A and
B", "… when …", "… before …", "和", "还是"). One evidence note often names one event only, and
the whole question's embedding sits between them ("which did I plant first, the basil or the
chillies?": one note is about the basil, another about the chillies).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_PHRASES", "MIN_PHRASE_WORDS", "event_phrases"]

#: Most parts searched for one question (our choice: the questions of LongMemEval_S name at
#: most six events; each part costs one embedding and one scan of the vector index).
MAX_PHRASES = 6
#: Content words a part needs to be searched by itself (our choice: "the tomatoes" is one
#: word and names a thing; a part of stop words alone names nothing).
MIN_PHRASE_WORDS = 1

def _normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


#: A quoted title: 'The Nightingale', "Walk for Hunger", ‘…’, “…”, 《…》, 「…」 (an apostrophe
#: inside a word, "friend's", is no quote: the opening mark follows a space or a line start).
_QUOTED = re.compile(r"(?:(?<=\s)|^)(?:'([^']{2,80})'|\"([^\"]{2,80})\")(?=[\s,.?!;:)]|$)"
                     r"|[‘“]([^’”]{2,80})[’”]|[《「『]([^》」』]{1,40})[》」』]")
#: The joints a question names its events at (English words on word boundaries; 时候 "at the
#: time of", never inside 什么时候 "when?", which asks about one event).
_JOINTS = re.compile(
    r",|;|\?|\b(?:or|and|between|before|after|when|while|since|until|versus|vs)\b"
    r"|还是|或者|和|与|跟|以及|之前|之后|以前|以后|的时候|(?<!什么)时候", re.IGNORECASE)
#: Words that name nothing by themselves: function words, the question's own frame.
_FRAME_WORDS = frozenset({
    "a", "about", "after", "ago", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "between", "but", "by", "can", "could", "day", "days", "did", "do",
    "does", "done", "during", "each", "earliest", "event", "events", "ever", "first", "for",
    "from", "had", "happen", "happened", "has", "have", "how", "i", "i'd", "i'm", "i've", "in",
    "into", "is", "it", "its", "last", "later", "latest", "long", "many", "me", "mentioned",
    "month", "months", "more", "most", "my", "myself", "of", "on", "one", "or", "order", "our",
    "passed", "second", "since", "so", "start", "started", "take", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "third", "this", "those", "three", "time", "times",
    "to", "took", "total", "two", "until", "us", "was", "we", "week", "weeks", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "year", "years",
    "you", "your",
})
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _content_words(part: str) -> int:
    words = [w for w in _WORD.findall(part.casefold()) if w not in _FRAME_WORDS]
    han = len(_CJK.findall(part))
    return len(words) + (han // 2)


def event_phrases(query: str) -> list[str]:
    """The parts of ``query`` that each name an event or thing (module docstring), in query
    order, at most :data:`MAX_PHRASES`; ``[]`` when the question names fewer than two (there
    is nothing to search for apart from the whole question). A quoted title is one part and
    is never cut at a joint inside it ('Pride and Prejudice'). Pure; never raises."""
    text = _normalise(query)
    titles: list[str] = []

    def hold(match: re.Match[str]) -> str:
        titles.append(next(g for g in match.groups() if g))
        return f" \x00{len(titles) - 1}\x00 "

    masked = _QUOTED.sub(hold, text)
    parts: list[str] = []
    for piece in _JOINTS.split(masked):
        piece = piece.strip()
        if not piece:
            continue
        # a quoted title stands as its own part, and the words around it as another
        bare = re.sub(r"\x00\d+\x00", " ", piece)
        for index in re.findall(r"\x00(\d+)\x00", piece):
            parts.append(titles[int(index)])
        if _content_words(bare) >= MIN_PHRASE_WORDS:
            parts.append(" ".join(bare.split()))
    unique = list(dict.fromkeys(p for p in parts if p))
    return unique[:MAX_PHRASES] if len(unique) >= 2 else []
