"""The core's import graph keeps DESIGN.md's layers: no large circle, nothing low imports presentation.

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


def test_no_import_circle_larger_than_three_modules(graph):
    result = graph.measure(ROOT / "framework" / "quadriga")
    assert result["modules"] > 50  # the real package was read
    big = [c for c in result["circles"] if len(c) > 3]
    assert not big, f"import circles of more than 3 modules: {big}"


def test_ground_and_contract_never_import_presentation(graph):
    result = graph.measure(ROOT / "framework" / "quadriga")
    low = [a for a in result["wrong_way"] if a[1] in ("ground", "contract") and a[3] == "presentation"]
    assert not low, f"low layers importing presentation: {low}"
    assert not [a for a in result["wrong_way"] if a[1] in ("ground", "contract")], result["wrong_way"]
