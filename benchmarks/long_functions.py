"""Count the core's long functions: those spanning more than ``--limit`` lines (default 60).

A function's span runs from its ``def`` line to its last line (signature, docstring and nested
functions included), as :mod:`ast` gives them; ``--body`` counts from the first statement after
the docstring instead. Methods and nested functions are counted on their own too. Usage::

    python benchmarks/long_functions.py [--root framework/quadriga] [--limit 60] [--body]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def long_functions(root: Path, limit: int = 60, body: bool = False) -> list[tuple[int, str, str]]:
    """``(lines, "file:line", name)`` of each function under ``root`` longer than ``limit``, longest first."""
    rows = []
    for path in sorted(root.rglob("*.py")):
        if "templates" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            start = node.lineno
            if body:
                first = node.body[0]
                docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                start = node.body[1].lineno if docstring and len(node.body) > 1 else first.lineno
            lines = (node.end_lineno or start) - start + 1
            if lines > limit:
                rows.append((lines, f"{path.relative_to(root)}:{node.lineno}", node.name))
    return sorted(rows, key=lambda r: (-r[0], r[1]))


def main(argv: list[str] | None = None) -> int:
    """Print the long functions and their count; returns the count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).parents[1] / "framework" / "quadriga")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--body", action="store_true", help="count the body after the docstring only")
    args = parser.parse_args(argv)
    rows = long_functions(args.root, args.limit, args.body)
    for lines, where, name in rows:
        print(f"{lines:4d}  {where}  {name}")
    print(f"{len(rows)} functions over {args.limit} lines")
    return len(rows)


if __name__ == "__main__":
    main()
