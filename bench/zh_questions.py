"""Chinese questions on the Chinese help vault: dreamd's search against its own baselines.

    .venv/bin/python bench/zh_questions.py [--workdir DIR] [--json bench/results/zh_questions.json]

Vault: ``../shared/corpora/obsidian-help/zh`` (173 notes, the Obsidian help in Chinese), copied
into ``<workdir>/vault`` and indexed by dreamd itself with the default embedding model (a
rerun with the same workdir reuses the index). Questions: :data:`QUESTIONS`, written for this
bench in a user's words (not the notes' titles), each with the one note that answers it,
checked by reading the note.

Four systems, each asked once for 10 hits: ``full-text`` (LanceDB's BM25 over chunks,
:func:`magma.search.fulltext_only`), ``vector`` (:func:`magma.search.vector_only`),
``hybrid`` (:func:`magma.search.hybrid_search`, plain reciprocal rank fusion) and
``dreamd`` (``App.search``, the whole pipeline, recalls not counted). Figures: hit@1, hit@5
and hit@10 (share of questions whose note is among the first k) and MRR@10. Prints a
markdown table and each question's rank per system; never fails on its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from daemon.app import App, load  # noqa: E402
from daemon.logs import configure_logging  # noqa: E402
from magma.search import fulltext_only, hybrid_search, vector_only  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-help" / "zh"
KS = (1, 5, 10)
SYSTEMS = ("full-text", "vector", "hybrid", "dreamd")

#: (question, the note that answers it). Written for this bench; each note was read to check
#: that it answers.
QUESTIONS: Sequence[tuple[str, str]] = (
    ("提交信息", "快速入门/同步笔记.md"),
    ("怎么把印象笔记里的内容迁移过来", "导入笔记/Evernote.md"),
    ("发布的网站能用自己的域名吗", "Obsidian Publish/自定义域名.md"),
    ("同步服务的数据是端到端加密的吗", "Obsidian Sync/同步安全和隐私.md"),
    ("怎么给一篇笔记起别名", "链接笔记与文件/别名.md"),
    ("怎么写标注块", "编辑与格式化/标注.md"),
    ("买了之后不满意可以退款吗", "许可证与支付/退款政策.md"),
    ("学生购买有没有折扣", "许可证与支付/教育和非营利组织折扣.md"),
    ("怎样折叠标题和列表", "编辑与格式化/折叠.md"),
    ("如何同时在多个位置输入", "编辑与格式化/多光标模式.md"),
    ("仓库里可以用符号链接吗", "文件与文件夹/符号链接.md"),
    ("同步的存储容量上限是多少", "Obsidian Sync/订阅计划与容量限制.md"),
    ("怎么开启两步验证", "Obsidian/两步验证.md"),
    ("网页剪藏时怎么高亮文字", "Obsidian 网页剪藏器/高亮.md"),
    ("每天自动创建一篇日记", "插件/日记.md"),
    ("如何找回以前版本的笔记", "Obsidian Sync/版本历史.md"),
    ("怎么安装社区插件", "扩展 Obsidian/第三方插件.md"),
    ("如何更换主题外观", "扩展 Obsidian/主题.md"),
)


def build(workdir: Path) -> App:
    """dreamd indexed on a copy of the Chinese help vault under ``workdir``."""
    vault = workdir / "vault"
    if not vault.is_dir():
        shutil.copytree(CORPUS, vault, symlinks=True)
    app = App.create(load(None, None, {"vault.path": str(vault),
                                       "storage.data_dir": str(workdir / "data")}))
    app.sync()
    return app


def systems(app: App) -> dict[str, Callable[[str], list[str]]]:
    """Each system: question -> note paths, best first (10 at most)."""
    return {
        "full-text": lambda q: [h.path for h in fulltext_only(app.store, q, limit=10)],
        "vector": lambda q: [h.path for h in vector_only(app.store, app.embedder, q, limit=10)],
        "hybrid": lambda q: [h.path for h in hybrid_search(
            app.store, app.embedder, q, limit=10, rrf_k=app.settings.retrieval.rrf_k)],
        "dreamd": lambda q: [h.path for h in app.search(q, limit=10, count_recall=False)],
    }


def measure(app: App) -> dict[str, Any]:
    """Ranks per question and system (``None``: not in the top 10) and the figures."""
    ranks: dict[str, dict[str, int | None]] = {}
    for name, rank in systems(app).items():
        for question, answer in QUESTIONS:
            found = rank(question)
            ranks.setdefault(question, {})[name] = (
                found.index(answer) + 1 if answer in found else None)
    figures: dict[str, dict[str, float]] = {}
    for name in SYSTEMS:
        got = [ranks[q][name] for q, _ in QUESTIONS]
        row = {f"hit@{k}": sum(r is not None and r <= k for r in got) / len(got) for k in KS}
        row["mrr@10"] = sum(1 / r for r in got if r is not None) / len(got)
        figures[name] = row
    return {"questions": len(QUESTIONS), "figures": figures, "ranks": ranks}


def render(result: dict[str, Any]) -> str:
    head = ["system", *[f"hit@{k}" for k in KS], "mrr@10"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in SYSTEMS:
        row = result["figures"][name]
        lines.append(f"| {name} | " + " | ".join(f"{row[h]:.3f}" for h in head[1:]) + " |")
    lines.append("")
    lines.append("| question | " + " | ".join(SYSTEMS) + " |")
    lines.append("|" + "---|" * (len(SYSTEMS) + 1))
    for question, by in result["ranks"].items():
        lines.append(f"| {question} | " + " | ".join(str(by[s] or "-") for s in SYSTEMS) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None,
                        help="Keeps the vault copy and its index; a rerun reuses them.")
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/zh_questions.json")
    args = parser.parse_args()
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="dreamd-zh-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    for key in [k for k in os.environ if k.startswith("DREAMD_")]:
        del os.environ[key]
    os.environ["DREAMD_CONFIG"] = str(workdir / "no-config.toml")
    os.environ.setdefault("LANCEDB_LOG", "error")
    configure_logging("warning", "console")
    app = build(workdir)
    try:
        result = measure(app)
    finally:
        app.close()
    print(render(result))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n",
                         encoding="utf-8")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
