"""The project's modules import each other without cycles: not at module level, and not through
an import inside a function either (a cycle hidden that way still ties the two modules into one,
and breaks as soon as someone moves the import up). Imports for type checkers alone (under
`if TYPE_CHECKING:`) never run, and are left out."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "pipeline"


# Imports of a `pipeline...` module that is not there, per tree read (a moved module's importer
# that was not updated: an import inside a function fails only when that function runs).
MISSING: dict[Path, list[str]] = {}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(path, package.parent): path for path in sorted(package.rglob("*.py"))}


def imports(path: Path, known: dict[str, Path], root: Path = ROOT) -> set[str]:
    """The project modules `path` imports anywhere in it: `import a.b`, `from a.b import c` (c
    itself when it is a module), relative forms resolved; and each package on the way, whose
    `__init__` runs first."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    unresolved = MISSING.setdefault(root, [])
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(n) for block in ast.walk(tree) if _type_checking(block) for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        if targets and targets[0].split(".")[0] == "pipeline":
            base = targets[0]
            if base not in known:
                unresolved.append(f"{name}: {base}")
            elif isinstance(node, ast.ImportFrom) and known[base].name == "__init__.py":
                # `from package import x`: x is a module of it, or a name its __init__ defines.
                defined = package_names(known[base])
                unresolved += [f"{name}: {base}.{a.name}" for a in node.names if f"{base}.{a.name}" not in known and a.name not in defined]
        for target in targets:
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                candidate = ".".join(parts[:k])
                if candidate in known and candidate != name and not name.startswith(candidate + "."):
                    found.add(candidate)
    return found


def package_names(init: Path) -> set[str]:
    """The names a package's `__init__` defines (assigned, def, class, imported), and those it
    loads on first use (the keys of its `_LAZY` table, as pipeline's own)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(init.read_text(), str(init))):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "_LAZY" and isinstance(node.value, ast.Dict):
                        names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    return names


def _type_checking(node: ast.AST) -> bool:
    """An `if TYPE_CHECKING:` block (or `typing.TYPE_CHECKING`)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_modules_of_the_project_import_each_other_without_a_cycle() -> None:
    known = modules()
    graph = {name: imports(path, known) for name, path in known.items()}
    found = cycles(graph)
    shown = [" <-> ".join(c) + ": " + "; ".join(f"{a} -> {', '.join(sorted(graph[a] & set(c)))}" for a in c) for c in found]
    assert not found, "import cycles:\n" + "\n".join(shown)


def test_every_import_of_the_project_names_one_of_its_modules() -> None:
    MISSING.pop(ROOT, None)
    known = modules()
    for path in known.values():
        imports(path, known)
    assert not MISSING.get(ROOT), "imports of modules that are not there:\n" + "\n".join(MISSING[ROOT])


def test_the_check_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    package = tmp_path / "game"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "a.py").write_text("from game.inner import b\n")
    (package / "inner" / "b.py").write_text("def late():\n    from .. import a\n    return a\n")
    (package / "c.py").write_text("import game.a\n")
    (package / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from game import c\n")
    (package / "inner" / "e.py").write_text("import game.d\n")  # d -> c for types alone: no cycle
    known = modules(package)
    graph = {name: imports(path, known, tmp_path) for name, path in known.items()}
    assert cycles(graph) == [["game.a", "game.inner.b"]]
