"""verify's report.md: numbers a reader can scan (per-replicate lists summarised, not printed raw)."""

from __future__ import annotations

from quadriga.claims.report import _write_report, number_rows


def test_number_rows_summarise_lists_and_expand_mappings():
    rows = dict(
        number_rows({"auc": {"dqn": [1.0, 2.0, 3.0, 6.0], "minto": 0.25}, "share": 0.123456, "tags": ["a"]})
    )
    assert rows == {
        "auc/dqn": "mean 3 (n = 4; 1 to 6)",
        "auc/minto": "0.25",
        "share": "0.1235",
        "tags": "a",
    }


def test_number_rows_print_an_interval_pair_as_an_interval():
    rows = dict(number_rows({"a/auc_iqm_ci": [64.67, 78.24], "b_interval": (0.1, 0.2), "c": [1.0, 3.0]}))
    assert rows == {
        "a/auc_iqm_ci": "[64.67, 78.24]",
        "b_interval": "[0.1, 0.2]",
        "c": "mean 2 (n = 2; 1 to 3)",
    }


def test_report_md_prints_no_raw_value_lists(tmp_path):
    record = {
        "name": "toy-claim",
        "claim": "a beats b",
        "status": "ran",
        "summary": "numbers only",
        "seconds": 1.0,
        "numbers": {"loss": {"a": [0.5, 0.25, 0.75], "b": [1.0, 2.0, 3.0]}},
    }
    path = tmp_path / "report.md"
    _write_report(path, [record], "toy-claim", "smoke")
    text = path.read_text()
    assert "| loss/a | mean 0.5 (n = 3; 0.25 to 0.75) |" in text
    assert "| loss/b | mean 2 (n = 3; 1 to 3) |" in text
    assert "[" not in text.split("## toy-claim")[1]
