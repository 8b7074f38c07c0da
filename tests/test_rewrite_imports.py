"""The rewrite engine's modules import one way: shared helpers below the kinds' units, units below
the table, the table below the readers. Every import counts, at module level or inside a
function, so that no cycle hides in a function body."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "pipeline.rewrite"
ROOT = Path(__file__).resolve().parents[1] / "pipeline" / "rewrite"


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join((PACKAGE, *parts[:-1])) if parts[-1] == "__init__" else ".".join((PACKAGE, *parts))
        found[name] = path
    return found


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules `path` imports anywhere in it (a module's packages included)."""
    targets: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *([base] if base else [])])
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    deps = set()
    for target in targets:
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                deps.add(prefix)
    return deps


def import_cycles() -> list[list[str]]:
    """Every cycle of imports among the package's modules, each once, as module names."""
    modules = _modules()
    graph = {name: _imports(path, name, modules) for name, path in modules.items()}
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycle = path[path.index(dep) :]
                if frozenset(cycle) not in seen:
                    seen.add(frozenset(cycle))
                    cycles.append([*cycle, dep])
            elif dep not in state:
                visit(dep)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def test_the_rewrite_package_has_no_import_cycles() -> None:
    cycles = import_cycles()
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from pipeline.rewrite import program\n", encoding="utf-8")
    assert _imports(module, f"{PACKAGE}.late", {**_modules(), f"{PACKAGE}.late": module}) == {f"{PACKAGE}.program"}


if __name__ == "__main__":
    for cycle in import_cycles() or [["no import cycles in " + PACKAGE]]:
        print(" -> ".join(cycle))
