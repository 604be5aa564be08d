"""``quadriga info COMPONENT``: parameter types in a pipeline file's terms, nested defaults as tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import pytest

from quadriga.cli.info import doc_paragraphs, toml_value, type_text


@pytest.fixture(autouse=True)
def default_width(monkeypatch):
    """The tests run at the width a user without COLUMNS gets (80)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


def cli(capsys, *argv: str) -> tuple[int, str]:
    from quadriga.cli import main

    code = main(list(argv))
    return code, capsys.readouterr().out


def test_type_text_speaks_toml():
    from quadriga.interfaces import Sampler, Target, Task

    assert type_text(Any) == "any"
    assert type_text(Sampler) == "sampler" and type_text(Target) == "target"
    assert type_text(Task) == "target | dataset | environment"
    assert type_text(Sampler | None) == "sampler | None"
    assert type_text(tuple[float, ...]) == "list[float]" and type_text(list[list[int]]) == "list[list[int]]"
    assert type_text(Sequence[str]) == "list[str]"
    assert type_text(dict[str, Any]) == "table" and type_text(dict[str, float]) == "table[float]"
    assert type_text(Literal["a", "b"]) == '"a" | "b"'
    assert type_text("SomeForwardRef") == "SomeForwardRef"


def test_toml_value_writes_inline_tables_and_arrays():
    assert toml_value({}) == "{}"
    assert toml_value({"render_mode": None, "max_episode_steps": 200}) == (
        "{ render_mode = unset, max_episode_steps = 200 }"
    )
    assert toml_value([[1.0, 0.0], [0.0, 1.0]]) == "[[1.0, 0.0], [0.0, 1.0]]"
    assert toml_value({"odd key": "x"}) == '{ "odd key" = "x" }'


def test_info_gaussian_mixture_has_no_any(capsys):
    pytest.importorskip("quadriga_std")
    code, out = cli(capsys, "info", "gaussian-mixture")
    assert code == 0
    assert all(len(line.rstrip()) <= 80 for line in out.splitlines())
    params = out[out.index("parameters (") :]
    for line in (
        "  weights: list[float] | None = unset",
        "  means: list[list[float]] | None = unset",
        "  covariances: list[list[list[float]]] | None = unset",
        "  scale: float | list[float] | None = unset",
        "  preset: str | None = unset",
        "  dim: int | None = unset",
    ):
        assert line in params.splitlines()
    assert "any" not in params.replace("many", "")
    code, out = cli(capsys, "info", "gaussian-mixture", "--json")
    (entry,) = json.loads(out)
    types = {p["name"]: p["type"] for p in entry["parameters"]}
    assert types["means"] == "list[list[float]] | None" and "Any" not in json.dumps(types)


def test_info_nested_component_shows_its_kind_and_default_table(capsys):
    pytest.importorskip("quadriga_srmc")
    code, out = cli(capsys, "info", "srmc")
    assert code == 0
    assert '  base_kernel: sampler = { use = "mala" }' in out.splitlines()
    from quadriga_std.samplers.mcmc import MALA

    from quadriga.registry import get_registry

    # only the parameters that differ from the nested component's defaults are written
    assert toml_value(MALA(step_size=0.2, num_chains=8), get_registry()) == (
        '{ use = "mala", num_chains = 8, step_size = 0.2 }'
    )


def test_hanging_indent_in_a_section_is_one_line():
    doc = """Summary.

    Raises:
        ConfigError: a long reason that goes on
            over a second line.
        ValueError: another.
    """
    assert doc_paragraphs(doc) == [
        (0, "Summary."),
        (0, ""),
        (0, "Raises:"),
        (4, "ConfigError: a long reason that goes on over a second line."),
        (4, "ValueError: another."),
    ]


def test_info_folds_long_comment_lines_and_keeps_the_toml():
    import tomllib

    from quadriga.cli.info import wrap_comments

    text = '[pipeline]\nname = "x"  # ' + "end " * 30 + "\n"
    text += "# " + "word " * 40 + "\n  # indented " + "y " * 50 + "\n"
    folded = wrap_comments(text)
    lines = folded.splitlines()
    assert lines[1] == text.splitlines()[1]  # an end-of-line comment is left as it is
    assert all(len(line) <= 80 for line in lines[2:]) and len(lines) > 4
    assert all(line.startswith("# ") for line in lines[2:5]) and lines[-1].startswith("  # ")
    assert tomllib.loads(folded) == tomllib.loads(text)
    assert " ".join(folded.split()).count("word") == 40
