"""Issue 14: the package's shape, read from the source.

1. Size: no module under vyre_vk/ is over MAX_LINES lines.
2. Imports: the import graph of vyre_vk has no cycle. The graph is built with `ast`:
   - an edge is an `import` / `from ... import` statement naming a vyre_vk module; `from P import n`
     is an edge to the module P.n when that is a module (`from . import expr`), else to P itself;
     relative imports are resolved against the importing module's package;
   - module-level imports count: everything that runs when the module is imported, class bodies and
     `try`/`if` blocks included, but not `if TYPE_CHECKING:` blocks (they never run);
   - a function-level import runs at call time, after every module finished importing, so it cannot
     leave a module half-initialised; it is still a dependency, so it may close a cycle only when it
     is listed in LAZY_EDGES with the reason (each listed edge must exist, so the list stays honest);
   - the imports of vyre_vk/ops/**/__init__.py are registration (they load every op module, and the
     op modules import the registry): they are left out.
3. Errors: every exception class defined under vyre_vk/ (every module imported, nested classes
   included; warnings apart) derives from vyre_vk.errors.VyreError.
4. Raises: no `raise ValueError(...)` / TypeError / KeyError / RuntimeError / IndexError of the builtin
   class under vyre_vk/: user-visible errors are typed VyreError subclasses with a Fix hint. Exempt:
   KeyError / IndexError raised by `__getitem__` / `__delitem__` (the language's protocol) and the
   internal assertions in RAISE_ALLOWLIST.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Iterator

import pytest

import vyre_vk
from vyre_vk.errors import VyreError

ROOT = Path(vyre_vk.__file__).resolve().parent
MAX_LINES = 500

#: Function-level imports allowed to close an import cycle: (importer, imported) -> why.
LAZY_EDGES: dict[tuple[str, str], str] = {}  # none: Program's codec and validator register themselves

BUILTIN_RAISES = {"ValueError", "TypeError", "KeyError", "RuntimeError", "IndexError"}
#: Raises of a builtin exception that are internal assertions (a vyre-vk bug, never a user's input):
#: (path relative to vyre_vk/, enclosing function, exception) -> why.
RAISE_ALLOWLIST: dict[tuple[str, str, str], str] = {}
_PROTOCOL = {("__getitem__", "KeyError"), ("__getitem__", "IndexError"), ("__delitem__", "KeyError"),
             ("__delitem__", "IndexError")}


# ----------------------------------------------------------------------------- the source
def _sources() -> dict[str, Path]:
    """Module name -> file, for every .py under vyre_vk/ (a package is its __init__.py)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


SOURCES = _sources()


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str, path: Path) -> Iterator[tuple[str, bool, int]]:
    """(imported vyre_vk module, at function level?, line) for every import statement of `module`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, lazy: bool) -> Iterator[tuple[str, bool, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                yield from (x for sub in child.orelse for x in visit(ast.Module([sub], []), lazy))
                continue
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, lazy, child.lineno
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    yield (sub if sub in SOURCES else base), lazy, child.lineno
            yield from visit(child, inner)

    for target, lazy, line in visit(ast.parse(path.read_text(), str(path)), False):
        if target in SOURCES and target != module:
            yield target, lazy, line


def _registration(module: str) -> bool:
    path = SOURCES[module]
    return path.name == "__init__.py" and (ROOT / "ops") in path.parents


def _graph(lazy: bool) -> dict[str, set[str]]:
    """Module-level edges, plus (lazy=True) function-level edges not in LAZY_EDGES."""
    graph: dict[str, set[str]] = {m: set() for m in SOURCES}
    for module, path in SOURCES.items():
        if _registration(module):
            continue
        for target, at_call, _ in _imports(module, path):
            if not at_call or (lazy and (module, target) not in LAZY_EDGES):
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _describe(cycles: list[list[str]], graph: dict[str, set[str]]) -> str:
    lines = []
    for comp in cycles:
        members = set(comp)
        edges = sorted((a, b) for a in comp for b in graph[a] if b in members)
        lines.append(f"cycle among {comp}; edges: " + ", ".join(f"{a} -> {b}" for a, b in edges))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the tests
def test_no_module_over_500_lines():
    long = {str(p.relative_to(ROOT.parent)): n for p in SOURCES.values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them along cohesive lines): {long}"


def test_no_import_cycle_at_module_level():
    graph = _graph(lazy=False)
    cycles = _cycles(graph)
    assert not cycles, "\n" + _describe(cycles, graph)


def test_function_level_imports_close_no_undocumented_cycle():
    graph = _graph(lazy=True)
    cycles = _cycles(graph)
    assert not cycles, ("\nfunction-level imports closing a cycle (break it, or list the edge in LAZY_EDGES "
                        "with the reason):\n" + _describe(cycles, graph))
    lazy = {(m, t) for m, p in SOURCES.items() for t, at_call, _ in _imports(m, p) if at_call}
    stale = sorted(set(LAZY_EDGES) - lazy)
    assert not stale, f"LAZY_EDGES lists imports that no longer exist: {stale}"


def test_graph_builder_sees_the_known_edges():
    """The rules above, on edges known to exist (so an empty graph cannot pass the cycle tests)."""
    edges = {(m, t, lazy) for m, p in SOURCES.items() for t, lazy, _ in _imports(m, p)}
    assert ("vyre_vk.ir.walk", "vyre_vk.ir.expr", False) in edges  # from . import expr as E
    assert ("vyre_vk.ir.serial", "vyre_vk.ir.program", False) in edges  # from .program import ...
    assert ("vyre_vk.runtime.device", "vyre_vk.compile", True) in edges  # inside Device.compile
    assert ("vyre_vk.runtime.kernel", "vyre_vk.runtime.device", False) not in edges  # TYPE_CHECKING only
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert "a -> b, b -> c, c -> a" in _describe(_cycles(graph), graph)


def _all_modules() -> tuple[list, list[str]]:
    """(every vyre_vk module, imported; those that need a third-party module not installed here)."""
    mods, missing = [], []
    for info in pkgutil.walk_packages(vyre_vk.__path__, "vyre_vk."):
        if info.name.rpartition(".")[2] == "__main__":
            continue  # runs the CLI
        try:
            mods.append(importlib.import_module(info.name))
        except ImportError as e:
            if (e.name or "").startswith("vyre_vk"):
                raise
            missing.append(f"{info.name} (needs {e.name})")
    return mods, missing


def _classes(owner: object, module: str) -> Iterator[type]:
    for value in vars(owner).values():
        if inspect.isclass(value) and value.__module__ == module and value is not owner:
            yield value
            yield from _classes(value, module)


def test_every_exception_class_derives_from_vyre_error():
    mods, missing = _all_modules()
    bad = sorted(f"{c.__module__}.{c.__qualname__}" for mod in mods for c in _classes(mod, mod.__name__)
                 if issubclass(c, BaseException) and not issubclass(c, (Warning, VyreError)))
    assert not bad, f"exception classes not derived from vyre_vk.errors.VyreError: {bad}"
    if missing:
        pytest.skip(f"checked {len(mods)} modules; not importable here: {missing}")


def _raw_raises() -> Iterator[str]:
    for path in SOURCES.values():
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(), str(path))
        scopes = [(n, n.name) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        owner = {id(r): name for fn, name in scopes for r in ast.walk(fn) if isinstance(r, ast.Raise)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if not (isinstance(exc, ast.Name) and exc.id in BUILTIN_RAISES):
                continue
            fn = owner.get(id(node), "<module>")
            if (fn, exc.id) in _PROTOCOL or (rel, fn, exc.id) in RAISE_ALLOWLIST:
                continue
            yield f"vyre_vk/{rel}:{node.lineno}: raise {exc.id} in {fn}()"


def test_no_raw_builtin_raises():
    found = sorted(_raw_raises())
    assert not found, ("raise a typed VyreError subclass with a Fix hint instead (or allowlist an internal "
                       "assertion in RAISE_ALLOWLIST):\n" + "\n".join(found))
