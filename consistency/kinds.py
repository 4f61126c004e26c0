"""Things a user keeps one of at a time: an editor, a phone, a browser, a CI service.

Pure data and one lookup; no model. :func:`products` names, in a memory's text, the products
of each kind it names (English and Chinese spellings, Chinese brands included: 华为, 小米手机,
苹果手机), so that the pair judgement (:mod:`consistency.judgement`) can tell "My editor is
Neovim" / "VS Code now" or "我的手机是华为" / "换成苹果手机了" for what they are — one thing of
a kind replaced by another — at the cosines such pairs sit at (0.1–0.4: a product's name
weighs more in the embedding than the words around it, and two names share no word).

A spelling that is also a plain word ("cursor", "edge", 苹果, 小米, 荣耀) is a product only
beside its kind named in the pair ("the Cursor editor", 苹果手机) and, in Latin letters,
written as a name ("Edge", not "an edge case"). Source: written by hand for the products
assistant memories name most; its reach is the products it lists.
"""

from __future__ import annotations

import functools
import re

__all__ = ["KIND_WORDS", "products"]

#: Each kind: the words that name the kind itself (a product beside one is of that kind),
#: English and Chinese.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "editor": ("editor", "ide", "编辑器"),
    "phone": ("phone", "smartphone", "手机"),
    "browser": ("browser", "浏览器"),
    "ci": ("ci", "continuous integration", "持续集成"),
}

#: kind → product → its spellings (regular expressions, case-insensitive); an entry of
#: :data:`_BESIDE_KIND` needs the kind word in the same memory.
_PRODUCTS: dict[str, dict[str, tuple[str, ...]]] = {
    "editor": {
        "neovim": (r"neovim", r"nvim"),
        "vim": (r"vim",),
        "emacs": (r"emacs", r"spacemacs", r"doom emacs"),
        "vs code": (r"vs ?code", r"visual studio code"),
        "visual studio": (r"visual studio(?! code)",),
        "sublime": (r"sublime(?: text)?",),
        "jetbrains": (r"intellij(?: idea)?", r"pycharm", r"webstorm", r"goland", r"clion",
                      r"rider", r"rubymine"),
        "zed": (r"zed",),
        "cursor": (r"cursor",),
        "helix": (r"helix",),
        "xcode": (r"xcode",),
    },
    "phone": {
        "iphone": (r"iphone(?: ?\d{1,2})?", r"苹果手机"),
        "pixel": (r"(?:google )?pixel ?\d{1,2}a?", r"谷歌手机"),
        "galaxy": (r"(?:samsung )?galaxy(?: [a-z]\d{1,2}\w*)?", r"samsung", r"三星手机"),
        "huawei": (r"huawei", r"华为"),
        "xiaomi": (r"xiaomi", r"redmi", r"红米", r"小米手机", r"小米 ?\d{1,2}"),
        "honor": (r"荣耀手机", r"荣耀 ?\d{1,3}"),
        "oppo": (r"oppo",),
        "vivo": (r"vivo",),
        "oneplus": (r"oneplus", r"一加手机", r"一加 ?\d{1,2}"),
        "apple": (r"苹果",),
        "mi": (r"小米",),
        "honor-brand": (r"荣耀",),
    },
    "browser": {
        "chrome": (r"(?:google )?chrome", r"谷歌浏览器"),
        "firefox": (r"firefox", r"火狐"),
        "safari": (r"safari",),
        "edge": (r"(?:microsoft )?edge",),
        "arc": (r"arc",),
        "brave": (r"brave",),
        "opera": (r"opera",),
    },
    "ci": {
        "jenkins": (r"jenkins",),
        "github actions": (r"github actions", r"gh actions"),
        "gitlab ci": (r"gitlab ci(?:/cd)?", r"gitlab pipelines?"),
        "circleci": (r"circle ?ci",),
        "travis": (r"travis(?: ci)?",),
        "buildkite": (r"buildkite",),
        "bitrise": (r"bitrise",),
        "teamcity": (r"teamcity",),
        "drone": (r"drone ci",),
    },
}

#: Products whose spelling is also a plain word (a text cursor, an arc, the edge of a thing,
#: an apple, millet, glory, a helix, a brave act, an opera, a zed): a product only beside
#: its kind's word in the same memory.
_BESIDE_KIND = frozenset({("editor", "cursor"), ("editor", "zed"), ("editor", "helix"),
                          ("browser", "arc"), ("browser", "edge"), ("browser", "brave"),
                          ("browser", "opera"), ("phone", "apple"), ("phone", "mi"),
                          ("phone", "honor-brand")})

#: What a brand written alone stands for beside its kind's word ("我的手机是*苹果*", "换成
#: *小米*了" beside 手机).
_SAME_AS = {"apple": "iphone", "mi": "xiaomi", "honor-brand": "honor"}

#: Another kind of device named beside a phone brand: the brand is then that device's
#: ("家里的平板是小米的", "My laptop is a Huawei MateBook").
_OTHER_DEVICES = re.compile(r"(?i)\b(?:tablet|ipad|laptop|notebook|watch|tv|router|"
                            r"earbuds|headphones)\b|平板|笔记本|电脑|手表|手环|电视|路由器|耳机")


def _pattern(spelling: str) -> str:
    if re.match(r"[\u4e00-\u9fff]", spelling):
        return spelling
    # Latin letters bound a name; Chinese written against it does not ("是iPhone 12")
    return rf"(?<![A-Za-z0-9_.-]){spelling}(?![A-Za-z0-9_-])"


_COMPILED = {kind: {product: re.compile("|".join(_pattern(s) for s in spellings), re.I)
                    for product, spellings in table.items()}
             for kind, table in _PRODUCTS.items()}
_KIND_PATTERNS = {kind: re.compile("|".join(_pattern(w) for w in words), re.I)
                  for kind, words in KIND_WORDS.items()}


@functools.lru_cache(maxsize=4096)
def products(text: str, beside: str = "") -> frozenset[tuple[str, str]]:
    """The ``(kind, product)`` pairs ``text`` names: ``"Switched CI to GitHub Actions"`` →
    ``{("ci", "github actions")}``, ``"换成苹果手机了"`` → ``{("phone", "iphone")}``. A
    spelling that is a plain word too counts written as a name and beside its kind's word
    only, in ``text`` or in ``beside`` (the other memory of a pair: "Emacs is my main
    editor" / "Switched to Zed");
    a phone brand beside another device ("平板", "laptop") is not a phone; a spelling inside
    a longer one counts once ("Neovim" is not also "Vim", "苹果手机" not also "苹果")."""
    found: set[tuple[str, str]] = set()
    for kind, table in _COMPILED.items():
        named_kind = bool(_KIND_PATTERNS[kind].search(text)
                          or _KIND_PATTERNS[kind].search(beside))
        if kind == "phone" and _OTHER_DEVICES.search(text):
            continue
        spans: list[tuple[int, int]] = []
        for product, pattern in table.items():
            if (kind, product) in _BESIDE_KIND and not named_kind:
                continue
            for match in pattern.finditer(text):
                start, end = match.span()
                if (kind, product) in _BESIDE_KIND and match.group(0)[0].islower():
                    continue  # a plain word, not written as a name ("an edge case")
                if any(s <= start and end <= e and (s, e) != (start, end) for s, e in spans) \
                        or any(s < end and start < e and e - s > end - start for s, e in spans):
                    continue
                spans.append((start, end))
                found.add((kind, _SAME_AS.get(product, product)))
    return frozenset(found)
