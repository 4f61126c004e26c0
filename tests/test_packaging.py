"""House rules that a clean CI run must enforce: our packages, import layering, ruff, mypy."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "ccb", "magma", "consistency", "daemon")

# Which of our packages each package may import (DESIGN.md: daemon → consistency → magma → ccb,
# everyone may import config, nothing imports daemon).
ALLOWED = {
    "config": {"config"},
    "ccb": {"config", "ccb"},
    "magma": {"config", "ccb", "magma"},
    "consistency": {"config", "ccb", "magma", "consistency"},
    "daemon": set(PACKAGES),
}


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_is_imported_from_this_tree(name: str) -> None:
    """Generic names (config, daemon) clash with other distributions: ours must win."""
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(ROOT / name), module.__file__


def test_pyproject_lists_packages_explicitly() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert sorted(data["tool"]["setuptools"]["packages"]) == sorted(PACKAGES)
    deps = " ".join(data["project"]["dependencies"]).lower()
    assert "python-daemon" not in deps  # ships a top-level `daemon` package


def _imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_imports_flow_one_way(name: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports_of(path) - ALLOWED[name])
        for path in sorted((ROOT / name).rglob("*.py"))
        if _imports_of(path) - ALLOWED[name]
    }
    assert offenders == {}


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extra: pip install -e '.[test]'")
    return found


def test_ruff_is_clean() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", *PACKAGES, "tests", "bench"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = subprocess.run(
        [_tool("mypy")], cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nothing_is_loaded_by_path() -> None:
    """Test support and benches are imported by name (``tests/support`` and ``bench`` are on
    pytest's ``pythonpath``); a module executed by path is a second copy with its own state."""
    offenders = sorted(
        str(path.relative_to(ROOT)) for folder in ("tests", "bench", *PACKAGES)
        for path in (ROOT / folder).rglob("*.py")
        if path != Path(__file__).resolve()
        and "spec_from_file_location" in path.read_text(encoding="utf-8"))
    assert offenders == []


# Size limits (issue "one owner per idea"): no class over 450 lines, no constructor over 10
# parameters, no function over ruff's complexity 14. The lists of what may stay over them
# are empty: they may only shrink, so nothing new may pass the limits.
MAX_CLASS_LINES, MAX_INIT_PARAMS, MAX_COMPLEXITY = 450, 10, 14
OVER_TODAY_CLASSES: dict[tuple[str, str], tuple[int, int]] = {}  # (lines, ctor parameters)
OVER_TODAY_FUNCTIONS: dict[tuple[str, str], int] = {}  # (module, function): complexity


def test_no_class_grows_past_the_limits() -> None:
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for name in PACKAGES:
        for path in sorted((ROOT / name).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ClassDef):
                    continue
                init = next((f for f in node.body if isinstance(f, ast.FunctionDef)
                             and f.name == "__init__"), None)
                params = (len(init.args.args) + len(init.args.kwonlyargs) - 1) if init else 0
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_CLASS_LINES or params > MAX_INIT_PARAMS:
                    found[(path.relative_to(ROOT).as_posix(), node.name)] = (lines, params)
    grown = {key: size for key, size in found.items()
             if key not in OVER_TODAY_CLASSES
             or size[0] > max(OVER_TODAY_CLASSES[key][0], MAX_CLASS_LINES)
             or size[1] > max(OVER_TODAY_CLASSES[key][1], MAX_INIT_PARAMS)}
    assert grown == {}
    # a class brought within the limits leaves the list, so that it cannot grow back
    assert sorted(set(OVER_TODAY_CLASSES) - set(found)) == []


def test_no_function_grows_past_the_complexity_limit() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", "--select", "C90", "--output-format", "concise",
         "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}", *PACKAGES],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    found = {}
    for line in result.stdout.splitlines():
        parts = line.split(" C901 ", 1)
        if len(parts) == 2:
            name = parts[1].split("`")[1]
            found[(parts[0].split(":")[0], name)] = int(parts[1].rsplit("(", 1)[1].split()[0])
    assert result.returncode in (0, 1), result.stderr  # ruff ran (1: it found some)
    grown = {key: value for key, value in found.items()
             if value > OVER_TODAY_FUNCTIONS.get(key, MAX_COMPLEXITY)}
    assert grown == {}
    assert sorted(set(OVER_TODAY_FUNCTIONS) - set(found)) == []


def test_no_module_constant_is_bound_twice() -> None:
    """A module-level constant (an upper-case name) assigned a second time replaces the first
    for every function of the module, also for those written against the first value; ruff
    does not see it (F811 is for imports and definitions)."""
    twice: list[str] = []
    for name in PACKAGES:
        for path in sorted((ROOT / name).rglob("*.py")):
            seen: set[str] = set()
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target] if isinstance(node, ast.AnnAssign) and node.value
                           else [])
                for target in targets:
                    if isinstance(target, ast.Name) and target.id.lstrip("_").isupper():
                        if target.id in seen:
                            twice.append(f"{path.relative_to(ROOT).as_posix()}: {target.id}")
                        seen.add(target.id)
    assert twice == []
