"""Scripts written without spaces between words: the one definition of the CJK ranges.

Search, fusion's token estimate, the intent rules and the write-path judgement all ask "is this
character Han (or kana, or Hangul)?"; they ask it here, so a character counts the same way in
each. Ranges are Unicode blocks (Unicode 15.1, ``Blocks.txt``).
"""

from __future__ import annotations

import re

__all__ = ["CJK_CHAR", "CJK_RANGES", "HAN_RANGES"]

#: Han ideographs: CJK Unified Ideographs Extension A (U+3400–4DBF), CJK Unified Ideographs
#: (U+4E00–9FFF) and CJK Compatibility Ideographs (U+F900–FAFF), as a regex class body.
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Han plus Hiragana and Katakana (U+3040–30FF) and Hangul Syllables (U+AC00–D7AF): the
#: scripts search reads by characters rather than by space-separated words.
CJK_RANGES = "\u3040-\u30ff" + HAN_RANGES + "\uac00-\ud7af"
#: One character of :data:`CJK_RANGES`.
CJK_CHAR = re.compile(f"[{CJK_RANGES}]")
