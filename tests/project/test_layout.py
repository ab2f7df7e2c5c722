"""The layout of ``maxent/`` (docs/design/index.md, "Layout: which module may import which"):
no import cycle, every module imports only from its own layer or lower ones, nothing imports
``analysis``, and only the commands import ``argparse``.

Every import counts, also inside functions; imports under ``if TYPE_CHECKING:`` do not (they
never run). Read from the source with ``ast``, so nothing is imported.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "maxent"

# Lowest first. A module may import modules of its own layer and of the layers below.
# ``name`` is one module (a package means its __init__), ``name.*`` every module below that
# package not named elsewhere, ``*.__main__`` every __main__ module.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("maxent.errors", "maxent._ctrec")),
    ("readers", ("maxent.trec", "maxent.letor")),
    ("adapters", ("maxent.inputs", "maxent.trecltr", "maxent.synthetic")),
    ("ranking", ("maxent.ranked",)),
    ("metric kernels", ("maxent.metrics._kernels", "maxent.metrics._deltas")),
    ("metric classes", ("maxent.metrics.base", "maxent.metrics.*")),
    ("metric registry", ("maxent.metrics.registry",)),
    ("metric names", ("maxent.metrics.names", "maxent.metrics")),
    ("solver", ("maxent.solver", "maxent.solver.*")),
    ("statistics", ("maxent.stats", "maxent.stats.*")),
    ("analyses", ("maxent.evaluate", "maxent.compare", "maxent.inference", "maxent.informativeness",
                  "maxent.active", "maxent.active.*", "maxent.ltr", "maxent.ltr.*", "maxent.ir_measures")),
    ("public API", ("maxent",)),
    ("commands", ("maxent.cli", "maxent.cli.*", "*.__main__")),
)

def _modules() -> dict[str, Path | None]:
    """Every module of maxent/: dotted name -> source (None for a compiled extension)."""
    mods: dict[str, Path | None] = {}
    for ext in ("*.c", "*.pyx"):               # extension modules, built at install
        for f in PACKAGE.rglob(ext):
            mods[".".join(f.relative_to(ROOT).with_suffix("").parts)] = None
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(ROOT).with_suffix("")
        mods[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = f
    return mods


MODULES = _modules()


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node, at any depth, except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.If) and _type_checking(node.test):
            children = node.orelse            # the body runs for type checkers only
        stack.extend(children)


def imported(name: str, path: Path) -> set[str]:
    """The absolute names ``name`` imports: modules, and for ``from X import a`` the module
    X.a when it is one, else X itself (a name defined in X)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        for a in node.names:
            sub = f"{base}.{a.name}"
            out.add(sub if sub in MODULES else base)
    out.discard(name)
    return out


GRAPH = {m: imported(m, f) for m, f in MODULES.items() if f is not None}
INTERNAL = {m: {d for d in GRAPH.get(m, ()) if d in MODULES} for m in MODULES}   # compiled: no imports


def layer_of(module: str) -> int:
    """Index in LAYERS of ``module``: ``*.__main__``, then an exact name, then the longest
    matching ``package.*``; a module matching none fails the test, naming it."""
    if module.endswith(".__main__") or module == "__main__":
        return next(i for i, (_, names) in enumerate(LAYERS) if "*.__main__" in names)
    best, best_len = None, -1
    for i, (_, names) in enumerate(LAYERS):
        for pattern in names:
            if pattern == module:
                return i
            if pattern.endswith(".*") and module.startswith(pattern[:-1]) and len(pattern) > best_len:
                best, best_len = i, len(pattern)
    if best is None:
        pytest.fail(f"module {module} has no layer in tests/project/test_layout.py: add it to LAYERS there "
                    "and to the drawing in docs/design/index.md")
    return best


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules in order, the first repeated at the end), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        path, iters = [root], [iter(sorted(graph[root]))]
        colour[root] = GREY
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = BLACK
                iters.pop()
            elif colour[nxt] == GREY:
                return path[path.index(nxt):] + [nxt]
            elif colour[nxt] == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                iters.append(iter(sorted(graph[nxt])))
    return None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": set(), "b": {"c"}, "c": {"b"}}) == ["b", "c", "b"]


def test_no_import_cycle():
    cycle = _cycle(INTERNAL)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_module_has_a_layer_and_every_named_module_exists():
    for module in MODULES:
        layer_of(module)
    named = [n for _, names in LAYERS for n in names if "*" not in n]
    assert [n for n in named if n not in MODULES] == []


def test_imports_go_down_the_layers():
    wrong = []
    for module, deps in sorted(INTERNAL.items()):
        mine = layer_of(module)
        for dep in sorted(deps):
            if layer_of(dep) > mine:
                wrong.append(f"{module} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[layer_of(dep)][0]})")
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong)


def test_the_library_never_imports_analysis():
    wrong = sorted(f"{m} imports {d}" for m, deps in GRAPH.items() for d in deps
                   if d == "analysis" or d.startswith("analysis."))
    assert not wrong, "\n".join(wrong)


def _is_command(module: str) -> bool:
    return module == "maxent.cli" or module.startswith("maxent.cli.") or module.endswith(".__main__")


def test_only_commands_import_argparse():
    wrong = sorted(m for m, deps in GRAPH.items() if "argparse" in deps and not _is_command(m))
    assert not wrong, "argparse imported outside maxent/cli/ and __main__ modules: " + ", ".join(wrong)
