"""The import layers of the core and the boundary between the plugins and the core.

Every module's imports are read with ``ast``: imports inside functions count (they close cycles
as surely as the ones at the top), those under ``if TYPE_CHECKING:`` do not (they never run).

* The core (``core/gradhub``) imports in layers: a module imports only modules below it. The
  import graph may hold one cycle, :data:`ALLOWED_CYCLE` (Variable <-> the engine, which is
  intrinsic); see "Layers" in docs/design.md for how the core cuts it.
* A plugin package (``plugins/*/gradhub_*``) or example plugin (``docs/examples/*``) imports only
  public modules and names of the core and of other distributions: nothing whose name, or the
  name of a module on its path, starts with ``_``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "gradhub"

#: The one cycle the core's import graph may contain: Variable's ``backward``/``forward`` run the
#: engine, and the engine (through the graph) builds Variables. Every other cycle fails.
ALLOWED_CYCLE = frozenset({"gradhub.variable", "gradhub.engine"})


Edge = tuple[str, str, int, bool]  # importer, imported, line, inside a function


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import node at any depth, with whether it sits in a function, except those under
    ``if TYPE_CHECKING:``."""

    def walk(
        node: ast.AST, in_function: bool
    ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    yield from walk_one(other, in_function)
                continue
            yield from walk_one(child, in_function)

    def walk_one(
        node: ast.AST, in_function: bool
    ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
            return
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from walk(ast.Module(body=node.orelse, type_ignores=[]), in_function)
            return
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from walk(node, inner)

    yield from walk(tree, False)


def _module_names(root: Path, package: str) -> dict[str, Path]:
    """The dotted name of every module of the package in the folder ``root``."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        names[name] = path
    return names


def _targets(node: ast.Import | ast.ImportFrom, importer: str, path: Path) -> list[tuple[str, str]]:
    """What an import names, as ``(module, name)`` pairs: ``(module, "")`` for a module itself
    (``import a.b``, or ``from a import b`` where ``a.b`` may be a module) and ``(module, name)``
    for a name taken from a module. Relative imports are resolved against ``importer``."""
    if isinstance(node, ast.Import):
        return [(alias.name, "") for alias in node.names]
    module = node.module or ""
    if node.level:
        package = importer.split(".")
        if path.name != "__init__.py":
            package.pop()
        base = package[: len(package) - (node.level - 1)]
        module = ".".join([*base, module] if module else base)
    return [(module, alias.name) for alias in node.names]


def import_graph(root: Path, package: str) -> tuple[set[str], list[Edge]]:
    """The modules of the package in ``root`` and the import edges between them. ``from a import
    b`` imports the module ``a.b`` when there is one, else the module ``a``; ``import a.b.c``
    imports the longest module its name starts with (importing a submodule imports its parent
    packages too, but every module does, so that edge tells nothing about layers)."""
    modules = _module_names(root, package)
    edges: list[Edge] = []
    for name, path in modules.items():
        for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for module, attr in _targets(node, name, path):
                full = f"{module}.{attr}" if attr else module
                target = full if full in modules else module
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.append((name, target, node.lineno, in_function))
    return set(modules), edges


def cycles(nodes: set[str], edges: list[Edge]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    succ: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b, _, _ in edges:
        succ[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def _describe(component: frozenset[str], edges: list[Edge]) -> str:
    lines = [
        f"  {a} -> {b} (line {line}{', in a function' if inner else ''})"
        for a, b, line, inner in sorted(set(edges))
        if a in component and b in component
    ]
    return f"cycle {sorted(component)}:\n" + "\n".join(lines)


def test_the_core_imports_in_layers() -> None:
    nodes, edges = import_graph(CORE, "gradhub")
    assert "gradhub.engine" in nodes and len(edges) > 20  # the walk found the core
    bad = [c for c in cycles(nodes, edges) if c != ALLOWED_CYCLE]
    assert not bad, (
        "the core's modules import each other in a cycle; a lower module must not import a "
        "higher one, even inside a function (move the work up, or let the higher module bind "
        "what the lower one calls, see 'Layers' in docs/design.md):\n"
        + "\n".join(_describe(c, edges) for c in bad)
    )


def test_the_allowed_cycle_is_cut_at_call_time() -> None:
    """If Variable and the engine import each other, the variable module reaches the engine only
    inside functions: at import time the layers hold."""
    _, edges = import_graph(CORE, "gradhub")
    top_level_up = [
        e for e in edges if e[:2] == ("gradhub.variable", "gradhub.engine") and not e[3]
    ]
    assert not top_level_up, top_level_up


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_walk_counts_function_imports_and_skips_type_checking(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "def f():\n    from .high import g\n    return g\n",
            "high.py": "from . import low\ndef g():\n    return low\n",
            "typed.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .user import U\n"
            ),
            "user.py": "from .typed import TYPE_CHECKING\n",
        },
    )
    nodes, edges = import_graph(tmp_path, "pkg")
    assert cycles(nodes, edges) == [frozenset({"pkg.low", "pkg.high"})]
    assert ("pkg.low", "pkg.high", 2, True) in edges
    assert not [e for e in edges if e[0] == "pkg.typed"]


# -- plugins ----------------------------------------------------------------------------------


def _distributions() -> list[Path]:
    """The folders of the plugin distributions and example plugins."""
    return sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml")) + sorted(
        p for p in (ROOT / "docs" / "examples").iterdir() if p.is_dir()
    )


def _own_packages(dist: Path) -> set[str]:
    """The top-level packages and modules a distribution folder ships (its imports of them are
    its own business)."""
    own = set()
    for base in (dist, dist / "src"):
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if (p / "__init__.py").is_file():
                own.add(p.name)
            elif p.suffix == ".py" and p.name not in ("setup.py", "noxfile.py", "conftest.py"):
                own.add(p.stem)
    return own


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.AST) -> list[str] | None:
    """``["a", "b", "c"]`` for the expression ``a.b.c`` (None for anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def private_imports(dist: Path, root: Path = ROOT) -> list[tuple[str, str, int]]:
    """The uses in the distribution folder ``dist`` (outside its build folders) of a private
    module or name of gradhub or of another ``gradhub_*`` distribution, as ``(file relative to
    the repository ``root``, dotted name, line)``: imports of one (``from gradhub._builtin import
    sum_to``, ``from gradhub.engine import _collect``) and attributes of an imported module
    (``conv._filter_kernel`` after ``from gradhub_nn_ops import conv``; a name bound by such an
    import anywhere in the file counts wherever it is used)."""
    own = _own_packages(dist)
    found = []
    for path in sorted(dist.rglob("*.py")):
        if any(
            part in ("build", ".nox", ".venv") or part.endswith(".egg-info")
            for part in path.relative_to(dist).parts
        ):
            continue
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, list[str]] = {}  # local name -> the dotted name it was imported as
        for node, _ in _imports(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue  # within its own package
            for alias, (module, attr) in zip(node.names, _targets(node, "", path)):
                top = module.partition(".")[0]
                if top in own or not (top == "gradhub" or top.startswith("gradhub_")):
                    continue
                parts = [*module.split("."), *([attr] if attr else [])]
                if any(_is_private(p) for p in parts):
                    found.append((rel, ".".join(parts), node.lineno))
                elif alias.asname:
                    bound[alias.asname] = parts
                elif attr:
                    bound[attr] = parts
                else:
                    bound[top] = [top]  # ``import a.b`` binds ``a``
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
                continue
            dotted = _dotted(node)
            if dotted is not None and dotted[0] in bound:
                name = [*bound[dotted[0]], *dotted[1:]]
                found.append((rel, ".".join(name), node.lineno))
    return found


def test_the_walk_finds_private_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "gradhub_demo/__init__.py": (
                "import gradhub._builtin\n"
                "from gradhub.engine import _collect, grad\n"
                "from gradhub import __version__\n"
                "from gradhub_demo import _mine\n"
                "from ._own import x\n"
                "def f():\n    from gradhub_other._kernels import k\n"
                "from gradhub_other import conv\n"
                "import gradhub.ops as ops\n"
                "conv._shape(ops._cache, conv.public, _mine._x)\n"
            ),
        },
    )
    rel = (tmp_path / "gradhub_demo" / "__init__.py").relative_to(tmp_path).as_posix()
    assert private_imports(tmp_path, tmp_path) == [
        (rel, "gradhub._builtin", 1),
        (rel, "gradhub.engine._collect", 2),
        (rel, "gradhub_other._kernels.k", 7),
        (rel, "gradhub_other.conv._shape", 10),
        (rel, "gradhub.ops._cache", 10),
    ]


def test_plugins_import_only_public_names() -> None:
    dists = _distributions()
    assert any(d.name == "nn_ops" for d in dists) and any(d.name == "gradhub-mish" for d in dists)
    found = [f for d in dists for f in private_imports(d)]
    assert not found, (
        "plugins import private modules or names of gradhub or of another distribution (use a "
        "public helper, or ask the core to offer one):\n"
        + "\n".join(f"  {file}:{line}: {name}" for file, name, line in sorted(set(found)))
    )


@pytest.mark.parametrize("name", ["_builtin", "_x", "_version"])
def test_private_names(name: str) -> None:
    assert _is_private(name) and not _is_private("__version__") and not _is_private("engine")
