"""The package's architecture, held by reading its source: layers, circles and the front door.

No test counts a module's lines: a module is as long as the concept it owns.

The layers read core (``tree``, ``errors``, ``games``, ``speedups``) <- {``mcts``, ``store``} <-
{``view``, ``analysis``} <- ``play`` <- ``cli``: a module imports only from its own layer or a lower
one, and no modules import each other in a circle, at any depth. Imports inside functions (the
command line's lazy loading, a late import that saves start-up time) count like any other, and so do
imports under ``if TYPE_CHECKING:``: they never run, but a module that needs another's names to be
read depends on it all the same, so a type-only import may not point up the layers or close a circle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import treelab

PACKAGE = Path(treelab.__file__).resolve().parent
ROOT = PACKAGE.parent

LAYERS: dict[str, int] = {
    "tree": 0, "nodes": 0, "errors": 0, "games": 0, "speedups": 0, "_speedups": 0, "positions": 0,
    "mcts": 1, "store": 1, "learn": 1, "oracle": 1,
    "view": 2, "analysis": 2, "interop": 2,
    "play": 3,
    "cli": 4,
    "": 5, "__main__": 5,
}
"""Each part of ``treelab`` (its first dotted name below ``treelab``; ``""`` is ``treelab`` itself, the front
door, which re-exports every layer and wires the store and the view into the core) and its layer."""

MAX_TOP_LEVEL_MODULES = 8


def module_name(path: Path) -> str:
    """``treelab/mcts/uct.py`` -> ``treelab.mcts.uct``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every Python module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def exists(name: str) -> bool:
    """Whether a dotted name is a module or package of treelab (compiled extensions included)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or any(
        path.parent.glob(path.name + ".*.so")
    ) or path.with_suffix(".c").is_file()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: list[ast.stmt], typing: bool = True) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement: at module level, in functions and classes, at any depth; those under
    ``if TYPE_CHECKING:`` (which never runs) too, unless ``typing`` is False."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test) and not typing:
            yield from _imports(node.orelse, typing)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, ()) or ():
                    if isinstance(child, ast.stmt):
                        yield from _imports([child], typing)
                    elif isinstance(child, ast.excepthandler | ast.match_case):
                        yield from _imports(child.body, typing)


def imports_of(name: str, path: Path, typing: bool = True) -> set[str]:
    """The treelab modules that module ``name`` (at ``path``) imports, inside functions included, and under
    ``if TYPE_CHECKING:`` unless ``typing`` is False."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path)).body, typing):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "treelab")
            continue
        if node.level:
            base_parts = package.split(".")
            base = ".".join(base_parts[: len(base_parts) - node.level + 1])
            base = f"{base}.{node.module}" if node.module else base
        elif node.module and node.module.split(".")[0] == "treelab":
            base = node.module
        else:
            continue
        for alias in node.names:  # `from . import bulk` imports a module, `from .x import f` a name of x
            found.add(f"{base}.{alias.name}" if exists(f"{base}.{alias.name}") else base)
    return found


def part(name: str) -> str:
    """The part of ``treelab`` a module belongs to (``treelab.mcts.uct`` -> ``mcts``)."""
    return name.split(".")[1] if "." in name else ""


def import_graph(typing: bool = True) -> dict[str, set[str]]:
    """Imports between treelab's modules (inside functions included; under ``if TYPE_CHECKING:`` unless
    ``typing`` is False)."""
    return {name: imports_of(name, path, typing) for name, path in modules().items()}


def test_every_part_has_a_layer() -> None:
    """A new top-level module or subpackage must be placed in the layers on purpose."""
    unknown = sorted({part(name) for name in modules()} - set(LAYERS))
    assert unknown == [], (f"add {unknown} to LAYERS in tests/design/test_layers.py"
                           " (and to the layout table of docs/design.md)")


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{name} (layer {LAYERS[part(name)]}) imports {target} (layer {LAYERS[part(target)]})"
        for name, targets in import_graph().items()
        for target in sorted(targets)
        if LAYERS.get(part(target), 0) > LAYERS.get(part(name), 0)
    ]
    assert upward == [], "\n".join(upward)


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` (a list of its nodes, the first repeated at the end), or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_circle_between_the_parts() -> None:
    parts: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        parts.setdefault(part(name), set()).update(part(t) for t in targets if part(t) != part(name))
    assert _cycle(parts) == []


def _module_graph(typing: bool = True) -> dict[str, set[str]]:
    graph = {name: {t for t in targets if t != name} for name, targets in import_graph(typing).items()}
    # a package's __init__ runs before its modules, so `from . import x` inside the package is not a circle
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    return graph


def test_no_import_circle_between_modules() -> None:
    """No circle at any depth, counting the imports that run and the type-only ones alike."""
    assert _cycle(_module_graph(typing=False)) == []  # the imports that run
    assert _cycle(_module_graph()) == []  # and with the imports under ``if TYPE_CHECKING:``


def test_the_import_reader_sees_real_imports(tmp_path: Path) -> None:
    """The reader itself: it finds the imports the modules really make (so the tests above can fail)."""
    graph = import_graph()
    assert {"treelab.errors", "treelab.games", "treelab.speedups"} <= graph["treelab.tree"]
    assert "treelab.cli" in graph["treelab.__main__"]
    assert "treelab.store.bulk" in graph["treelab.store.persistence"]  # `from . import bulk`
    assert {"treelab.errors", "treelab.store.persistence", "treelab.view.jupyter"} <= graph["treelab"]
    assert not any(part(t) in ("store", "view") for t in graph["treelab.tree"] | graph["treelab.nodes"])
    bad = "from __future__ import annotations\nfrom typing import TYPE_CHECKING\nfrom ..cli import main\n"
    probe = tmp_path / "probe.py"  # read as if it were treelab/games/probe.py
    probe.write_text(bad + "if TYPE_CHECKING:\n    from ..play import arena\n")
    assert imports_of("treelab.games.probe", probe, typing=False) == {"treelab.cli"}
    assert imports_of("treelab.games.probe", probe) == {"treelab.cli", "treelab.play.arena"}  # type-only counts
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_at_most_eight_top_level_modules() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_public_name_is_also_a_module_name() -> None:
    """`treelab.search` is a function: no module anywhere in the package may be called `search`."""
    names = {p.stem for p in PACKAGE.rglob("*.py") if p.stem != "__init__"}
    names |= {p.parent.name for p in PACKAGE.rglob("__init__.py")}
    assert sorted((set(treelab.__all__) | set(treelab._LAZY)) & names) == []


def _front_door() -> tuple[dict[str, str], dict[str, str], list[str], set[str]]:
    """From treelab/__init__.py: the `_EXPORTS` table, the TYPE_CHECKING imports and `__all__`,
    the first two as {public name: 'module:attribute'}, and the names imported `X as X` (resolved, not advertised)."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    exports: dict[str, str] = {}
    checked: dict[str, str] = {}
    listed: list[str] = []
    quiet: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "_EXPORTS":
            for module, items in ast.literal_eval(node.value).items():
                for item in items:
                    public, attr = (item, item) if isinstance(item, str) else (item[0], item[1])
                    assert public not in exports, f"{public} exported twice"
                    exports[public] = f"{module}:{attr}"
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1 and imp.module
                for alias in imp.names:
                    assert (alias.asname or alias.name) not in checked, f"{alias.name} imported twice"
                    checked[alias.asname or alias.name] = f"{imp.module}:{alias.name}"
                    if alias.asname == alias.name:
                        quiet.add(alias.name)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            listed = ast.literal_eval(node.value)
    return exports, checked, listed, quiet


def test_front_door_table_imports_and_all_agree() -> None:
    """The front door's one table of exports: the TYPE_CHECKING imports say what it does, `__all__` advertises
    part of it (plus the errors' base and the version), and the rest is imported `X as X` for type checkers."""
    exports, checked, listed, quiet = _front_door()
    assert exports, "no _EXPORTS table found in treelab/__init__.py"
    assert checked == exports  # the TYPE_CHECKING imports say what the lazy table does
    eager = {a.asname or a.name for n in ast.parse((PACKAGE / "__init__.py").read_text()).body
             if isinstance(n, ast.ImportFrom) and n.module == "errors" for a in n.names}
    assert eager == {"TreelabError"}  # the other errors live in treelab.errors
    assert set(listed) <= set(exports) | eager | {"__version__"}
    assert quiet == set(exports) - set(listed)  # every export not advertised is marked so, and only those
    assert len(listed) == len(set(listed))
    for public, where in exports.items():
        module, attr = where.split(":")
        assert exists(f"treelab.{module}"), where
        assert getattr(treelab, public) is getattr(__import__(f"treelab.{module}", fromlist=[attr]), attr)


def test_sql_on_the_schema_lives_in_the_store() -> None:
    """view/, analysis/, play/ and the rest read a tree's file through store/ readers, never with SQL of their own."""
    outside = sorted(name for name, path in modules().items()
                     if part(name) != "store" and re.search(r"\.execute(many)?\(|\bSELECT\b", path.read_text()))
    assert outside == [], f"move their SQL into treelab/store/: {outside}"
