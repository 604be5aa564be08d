"""The core's import graph keeps DESIGN.md's layers: no circle, no import runs up the layer list.

The graph is parsed with ``ast`` by ``benchmarks/import_graph.py`` (function-local imports
included, ``if TYPE_CHECKING:`` imports left out), so a lazy import cannot hide an upward arrow.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def graph():
    """``benchmarks/import_graph.py`` loaded as a module."""
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "benchmarks" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("import_graph", None)


def test_the_graph_reader_sees_local_imports_and_skips_type_checking_ones(graph, tmp_path):
    pkg = tmp_path / "quadriga"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from quadriga.cli import run\n")
    (pkg / "cli" / "run.py").write_text("from ..errors import f\n")
    (pkg / "artifacts.py").write_text(
        "import quadriga.errors\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from quadriga.cli import run\n"
    )
    result = graph.measure(pkg)
    assert result["circles"] == [["quadriga.cli.run", "quadriga.errors"]]
    assert result["wrong_way"] == [["quadriga.errors", "ground", "quadriga.cli.run", "presentation"]]
    # artifacts sits on the circle {errors, cli.run} (one floor), so on floor 1
    assert result["floor_of"]["quadriga.artifacts"] == 1 and result["floor_of"]["quadriga.errors"] == 0
    assert result["floors"] == 2


def test_no_import_circle(graph):
    result = graph.measure(ROOT / "framework" / "quadriga")
    assert result["modules"] > 50  # the real package was read
    assert result["circles"] == [], f"import circles (modules importing each other): {result['circles']}"


def test_no_import_runs_up_the_layers(graph):
    result = graph.measure(ROOT / "framework" / "quadriga")
    assert result["modules"] > 50  # the real package was read
    to_presentation = [a for a in result["wrong_way"] if a[3] == "presentation"]
    assert not to_presentation, f"lower layers importing presentation: {to_presentation}"
    assert result["wrong_way"] == [], f"imports from a lower layer to a higher one: {result['wrong_way']}"


def test_the_shared_helpers_live_below_their_users(graph):
    """The helpers that presentation shares with lower layers are defined on the lowest one."""
    names = graph.module_names(ROOT / "framework" / "quadriga")
    edges = graph.edges(names)
    assert "quadriga.cli._common" not in edges["quadriga.progress_display"] | edges["quadriga.summary"]
    assert "quadriga.markup" in edges["quadriga.progress_display"] & edges["quadriga.summary"]
    assert "quadriga.notebook" not in edges["quadriga.testing.trackers"]
    assert "quadriga.registry.local" in edges["quadriga.testing.trackers"]  # quadriga.register
    assert "quadriga.claims.fingerprint" not in edges["quadriga.claims.record"]
    assert graph.layer_of("quadriga.markup") == "ground"
    assert graph.layer_of("quadriga.registry.local") == "contract"


def test_the_graph_reader_sees_names_taken_from_the_lazy_facade(graph, tmp_path):
    pkg = tmp_path / "quadriga"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        '_LAZY = {"build": "quadriga.notebook", "Samples": "quadriga.artifacts"}\n'
    )
    (pkg / "notebook.py").write_text("")
    (pkg / "artifacts.py").write_text("")
    (pkg / "fileio.py").write_text("def f():\n    from quadriga import build\n")
    (pkg / "interfaces.py").write_text(
        "import quadriga\n\ndef f():\n    return quadriga.build, quadriga.other\n"
    )
    # `import quadriga.fileio` binds the name quadriga too
    (pkg / "errors.py").write_text("import quadriga.fileio\n\nx = quadriga.build\n")
    (pkg / "seeding.py").write_text("from quadriga import Samples\n")
    result = graph.measure(pkg)
    assert sorted(map(tuple, result["wrong_way"])) == [
        ("quadriga.errors", "ground", "quadriga.notebook", "presentation"),
        ("quadriga.fileio", "ground", "quadriga.notebook", "presentation"),
        ("quadriga.interfaces", "contract", "quadriga.notebook", "presentation"),
        ("quadriga.seeding", "ground", "quadriga.artifacts", "contract"),
    ]


#: the low modules the layering is about: the artifact and component contract, file helpers, the
#: run directory; none may reach a presentation module (or the progress display), directly or not
LOW = ("quadriga.interfaces", "quadriga.artifacts", "quadriga.fileio", "quadriga.rundir")


def test_low_modules_reach_no_presentation_module_even_through_others(graph):
    names = graph.module_names(ROOT / "framework" / "quadriga")
    edges = graph.edges(names)
    shown = {m for m in names if graph.layer_of(m) == "presentation"} | {"quadriga.progress_display"}
    assert {"quadriga.cli", "quadriga.notebook", "quadriga.report"} <= shown
    low = [m for m in names if any(m == p or m.startswith(p + ".") for p in LOW)]
    assert len(low) >= 6  # the four modules and rundir's submodules were read
    for module in low:
        seen, todo = set(), [module]
        while todo:
            for target in edges[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        assert not seen & shown, f"{module} reaches {sorted(seen & shown)}"


def test_every_core_module_is_placed_on_a_layer(graph):
    assert graph.measure(ROOT / "framework" / "quadriga")["unplaced"] == []
