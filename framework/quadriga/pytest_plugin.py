"""quadriga's pytest plugin (entry point ``pytest11``): the conformance checks' summary line.

Items made by :func:`quadriga.testing.parametrize_with_checks` carry the marker
``quadriga_check(name)``; at the end of the session this plugin prints
``quadriga conformance: N run / M skipped / K failed``, where N counts the checks that ran
(passed or failed, expected failures included). Importing it imports nothing but pytest.
"""

from __future__ import annotations

from collections import Counter

import pytest

__all__ = ["ConformanceSummary", "pytest_configure"]


class ConformanceSummary:
    """Counts the outcomes of conformance items and prints one line at the end of the session."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count each conformance item once: its call, or its setup when that skipped or failed."""
        if "quadriga_check" not in report.keywords:
            return
        if hasattr(report, "wasxfail"):
            self.counts["xfailed" if report.skipped else "passed"] += 1
        elif report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.counts[report.outcome] += 1

    def line(self) -> str:
        """``"quadriga conformance: N run / M skipped / K failed"`` (plus expected failures, if any)."""
        c = self.counts
        ran = c["passed"] + c["failed"] + c["xfailed"]
        text = f"quadriga conformance: {ran} run / {c['skipped']} skipped / {c['failed']} failed"
        if c["xfailed"]:
            text += f" ({c['xfailed']} expected failures)"
        return text

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Print :meth:`line` when any conformance item ran."""
        if sum(self.counts.values()):
            terminalreporter.write_line(
                self.line(), red=bool(self.counts["failed"]), green=not self.counts["failed"]
            )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``quadriga_check`` marker and register the summary."""
    config.addinivalue_line(
        "markers",
        "quadriga_check(name): a quadriga conformance check (quadriga.testing.parametrize_with_checks)",
    )
    config.pluginmanager.register(ConformanceSummary(), "quadriga-conformance-summary")
