"""Measure the core's import graph: floors, circles and imports that run up the layer list.

Parses every module of ``framework/quadriga`` with :mod:`ast`, including imports made inside
functions (they run later, but they are still dependencies), and leaves out imports under
``if TYPE_CHECKING:`` (they never run). From the module graph it reports:

- **floors**: the longest chain of imports below each module, counted on the graph of strongly
  connected components (a circle is one floor); the core's number of floors is the highest + 1;
- **circles**: the strongly connected components with more than one module (Tarjan's algorithm);
- **wrong-way arrows**: imports from a module to a module on a higher layer of
  ``DESIGN.md``'s list (presentation → claims and sweeps → run → pipeline → contract → ground);
- the modules placed on no layer yet (a new module is added to ``_LAYER_OF``).

``tests/test_core_layers.py`` asserts the limits on the current tree.

The package facade ``quadriga/__init__.py`` is on no layer: its public names are loaded lazily
(PEP 562), which is what keeps ``import quadriga`` light. Usage::

    python benchmarks/import_graph.py [--json] [--root framework/quadriga]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

#: the layers of DESIGN.md, lowest first
LAYERS = ("ground", "contract", "pipeline", "run", "claims-sweeps", "presentation")

#: module (or package prefix, ending in ``.``) → layer; the first matching entry wins
_LAYER_OF: tuple[tuple[str, str], ...] = (
    # presentation
    ("quadriga.cli.", "presentation"),
    ("quadriga.cli", "presentation"),
    ("quadriga.__main__", "presentation"),
    ("quadriga.report", "presentation"),
    ("quadriga.notebook", "presentation"),
    ("quadriga.progress_display", "run"),
    ("quadriga.scaffold", "presentation"),
    # claims and sweeps (and the conformance kit, which runs components like a sweep)
    ("quadriga.claims.", "claims-sweeps"),
    ("quadriga.claims", "claims-sweeps"),
    ("quadriga.sweep.", "claims-sweeps"),
    ("quadriga.sweep", "claims-sweeps"),
    ("quadriga.summary", "claims-sweeps"),
    ("quadriga.testing.", "claims-sweeps"),
    ("quadriga.testing", "claims-sweeps"),
    ("quadriga.pytest_plugin", "claims-sweeps"),
    # run
    ("quadriga.runner", "run"),
    ("quadriga.runs", "run"),
    ("quadriga.rundir.", "run"),
    ("quadriga.rundir", "run"),
    ("quadriga.api", "run"),
    ("quadriga.tracking", "run"),
    ("quadriga.progress", "run"),
    ("quadriga.provenance", "run"),
    ("quadriga.workbench.", "run"),
    ("quadriga.workbench", "run"),
    # pipeline
    ("quadriga.pipeline", "pipeline"),
    ("quadriga.pipeline_source", "pipeline"),
    ("quadriga.pipeline_checks", "pipeline"),
    ("quadriga.expansion", "pipeline"),
    ("quadriga.pipeline_schema", "pipeline"),
    # contract
    ("quadriga.interfaces", "contract"),
    ("quadriga.artifacts", "contract"),
    ("quadriga.components", "contract"),
    ("quadriga.registry.", "contract"),
    ("quadriga.registry", "contract"),
    ("quadriga.hookspecs", "contract"),
    ("quadriga.catalogue", "contract"),
    # ground
    ("quadriga.errors", "ground"),
    ("quadriga.stage_names", "ground"),
    ("quadriga.serialization", "ground"),
    ("quadriga.params", "ground"),
    ("quadriga.seeding", "ground"),
    ("quadriga.validators", "ground"),
    ("quadriga.stats.", "ground"),
    ("quadriga.stats", "ground"),
    ("quadriga.fileio", "ground"),
    ("quadriga.threads", "ground"),
    ("quadriga.versions", "ground"),
    ("quadriga.tags", "ground"),
    ("quadriga._repr", "ground"),
    ("quadriga.markup", "ground"),
    ("quadriga.health", "ground"),
)

#: the package facade: lazy public names, on no layer
FACADE = "quadriga"


def layer_of(module: str) -> str | None:
    """The layer of ``module``; ``None`` for the facade and for a module not yet placed in ``_LAYER_OF``."""
    if module == FACADE:
        return None
    for prefix, layer in _LAYER_OF:
        if module == prefix or (prefix.endswith(".") and module.startswith(prefix)):
            return layer
    return None


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file under the package directory ``root``."""
    base = root.parent
    names = {}
    for path in sorted(root.rglob("*.py")):
        if "templates" in path.relative_to(root).parts:
            continue
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree`` (function bodies included), skipping ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def facade_names(names: Mapping[str, Path]) -> dict[str, str]:
    """The facade's lazy public names: ``quadriga.NAME`` → the module defining it (its ``_LAZY`` table)."""
    path = names.get(FACADE)
    if path is None:
        return {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets) and isinstance(
            node.value, ast.Dict
        ):
            return {
                k.value: v.value
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
    return {}


def _facade_uses(tree: ast.AST, lazy: Mapping[str, str]) -> set[str]:
    """Modules reached through ``quadriga.NAME`` in a module that binds the facade's name.

    ``import quadriga`` binds it, and so does ``import quadriga.artifacts`` (Python binds the top
    package).
    """
    imports_facade = any(
        isinstance(node, ast.Import)
        and any(a.asname is None and a.name.split(".")[0] == FACADE for a in node.names)
        for node in _imports(tree)
    )
    if not imports_facade:
        return set()
    return {
        lazy[node.attr]
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == FACADE
        and node.attr in lazy
    }


def edges(names: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module → the core modules it imports (resolving ``from pkg import submodule``).

    A name taken from the lazy facade (``from quadriga import build``, or ``quadriga.build`` after
    ``import quadriga``) counts as an import of the module defining it (:func:`facade_names`),
    so the facade cannot hide an arrow.
    """
    graph: dict[str, set[str]] = {name: set() for name in names}
    lazy = facade_names(names)
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        if name != FACADE:
            graph[name] |= {m for m in _facade_uses(tree, lazy) if m in names and m != name}
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    mod = ".".join([*anchor, node.module] if node.module else anchor)
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in names else mod for a in node.names]
                if mod == FACADE and name != FACADE:
                    targets = [lazy.get(a.name, t) for a, t in zip(node.names, targets, strict=True)]
            for target in targets:
                while target and target not in names:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def floors(graph: Mapping[str, set[str]], components: list[list[str]]) -> dict[str, int]:
    """Module → its floor: 0 for a module importing no core module, else 1 + its highest import."""
    comp_of = {m: i for i, comp in enumerate(components) for m in comp}
    memo: dict[int, int] = {}

    def floor(c: int) -> int:
        if c not in memo:
            below = {comp_of[w] for m in components[c] for w in graph[m]} - {c}
            memo[c] = 1 + max((floor(d) for d in below), default=-1)
        return memo[c]

    return {m: floor(comp_of[m]) for m in graph}


def wrong_way(graph: Mapping[str, set[str]]) -> list[tuple[str, str, str, str]]:
    """Imports that go up the layer list: ``(importer, its layer, imported, its layer)``."""
    out = []
    for src, targets in sorted(graph.items()):
        low = layer_of(src)
        for dst in sorted(targets):
            high = layer_of(dst)
            if low is not None and high is not None and LAYERS.index(high) > LAYERS.index(low):
                out.append((src, low, dst, high))
    return out


def measure(root: Path) -> dict[str, object]:
    """Every number of the report, as a JSON-able dict."""
    names = module_names(root)
    graph = edges(names)
    comps = strongly_connected(graph)
    floor = floors(graph, comps)
    circles = [c for c in comps if len(c) > 1]
    return {
        "modules": len(names),
        "imports": sum(len(t) for t in graph.values()),
        "floors": max(floor.values()) + 1,
        "largest_circle": len(circles[0]) if circles else 1,
        "circles": circles,
        "wrong_way": [list(arrow) for arrow in wrong_way(graph)],
        "unplaced": sorted(m for m in names if m != FACADE and layer_of(m) is None),
        "floor_of": dict(sorted(floor.items(), key=lambda kv: (kv[1], kv[0]))),
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Print the report (or its JSON) for the package at ``--root``; returns the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).parents[1] / "framework" / "quadriga")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.root)
    if args.json:
        print(json.dumps(result, indent=2))
        return result
    print(f"modules {result['modules']}, imports {result['imports']}, floors {result['floors']}")
    circles = result["circles"]
    assert isinstance(circles, list)
    print(f"circles: {[len(c) for c in circles]} (largest {result['largest_circle']})")
    for comp in circles:
        print("  " + " ".join(comp))
    if result["unplaced"]:
        print(f"on no layer (add them to _LAYER_OF): {' '.join(result['unplaced'])}")  # type: ignore[arg-type]
    arrows = result["wrong_way"]
    assert isinstance(arrows, list)
    print(f"wrong-way arrows: {len(arrows)}")
    for src, low, dst, high in arrows:
        print(f"  {src} ({low}) -> {dst} ({high})")
    return result


if __name__ == "__main__":
    main()
