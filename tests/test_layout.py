"""The layout's rules, read from the source with ``ast``: each room keeps to its job.

- no module under ``app/`` is over ``MAX_LINES`` lines (but those in ``OVER``, which may only
  shrink);
- no import cycle under ``app/`` (module-level imports; ``if TYPE_CHECKING:`` ones excepted);
- ``app/table`` and ``app/engine`` import nothing that does I/O, directly or through another
  module of ``app``;
- ``app/store`` defines no type that ``app/service`` or ``app/api`` construct: the store takes
  and returns the table's records (``app.table.model``), and builds its own rows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
MAX_LINES = 500

# Modules over MAX_LINES today, each with its size now: the list may only shrink. A module
# that grows past its size fails, and one back under MAX_LINES (or gone) must leave the list.
OVER: dict[str, int] = {}

# Imports that do I/O, or reach a layer above the pure core.
IMPURE = (
    "aiohttp",
    "aiosqlite",
    "asyncio",
    "asyncpg",
    "fastapi",
    "httpx",
    "redis",
    "requests",
    "socket",
    "sqlalchemy",
    "starlette",
    "subprocess",
    "urllib.request",
    "uvicorn",
    "app.api",
    "app.bus",
    "app.main",
    "app.service",
    "app.store",
)
PURE = ("app.table", "app.engine")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports run when the module is: at its top level, in ``try``/``if`` blocks."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)


def _package(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import names: ``from a import b`` is ``a.b`` if that is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = _package(module).split(".")
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(), str(MODULES[module]))


def _graph(*, every_import: bool = False) -> dict[str, set[str]]:
    """Each app module's imports of app modules (``every_import``: wherever they are)."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        tree = _tree(module)
        nodes = (
            [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
            if every_import
            else list(_module_level(tree.body))
        )
        graph[module] = {t for n in nodes for t in _targets(module, n)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), or self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
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
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_no_module_over_the_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in MODULES.values()
    }
    over = {name: size for name, size in sizes.items() if size > OVER.get(name, MAX_LINES)}
    assert not over, f"modules over {MAX_LINES} lines (or grown past their size in OVER): {over}"
    shrunk = {name for name in OVER if sizes.get(name, 0) <= MAX_LINES}
    assert not shrunk, f"back under {MAX_LINES} lines or gone: take them out of OVER: {shrunk}"


def test_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_cycles_are_found() -> None:
    """The cycle finder itself: a cycle of three, a self-import, and none in a tree."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]
    assert _cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_table_and_engine_do_no_io() -> None:
    """Nothing the pure core imports, directly or through other app modules, does I/O."""
    graph = _graph(every_import=True)
    bad = []
    for start in (m for m in MODULES if _within(m, PURE)):
        seen, todo = {start}, [(start, [start])]
        while todo:
            module, path = todo.pop()
            for target in sorted(graph[module]):
                if _within(target, IMPURE):
                    bad.append(" -> ".join([*path, target]))
                elif target in MODULES and target not in seen:
                    seen.add(target)
                    todo.append((target, [*path, target]))
    assert not bad, "the pure core reaches I/O:\n" + "\n".join(bad)


def _store_types() -> dict[str, set[str]]:
    """Each app.store module's classes (the ORM rows, the Database...)."""
    return {
        module: {n.name for n in _tree(module).body if isinstance(n, ast.ClassDef)}
        for module in MODULES
        if _within(module, ("app.store",))
    }


def test_service_and_api_build_no_store_type() -> None:
    types = _store_types()
    built = []
    for module in MODULES:
        if not _within(module, ("app.service", "app.api")):
            continue
        tree = _tree(module)
        names: dict[str, str] = {}  # a name bound here -> the store class it is
        aliases: dict[str, str] = {}  # a name bound here -> the store module it is
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            for alias in node.names:
                bound = alias.asname or alias.name
                if node.module in types and alias.name in types[node.module]:
                    names[bound] = f"{node.module}.{alias.name}"
                elif f"{node.module}.{alias.name}" in types:
                    aliases[bound] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in names:
                built.append(f"{module}:{node.lineno} builds {names[func.id]}")
            elif (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in aliases
                and func.attr in types[aliases[func.value.id]]
            ):
                built.append(f"{module}:{node.lineno} builds {aliases[func.value.id]}.{func.attr}")
    assert not built, "\n".join(built)
