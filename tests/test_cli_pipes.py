"""A ``quadriga`` command piped into a reader that stops early (``| head``) ends quietly, exit code 0."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("reader", ["head -1", "true"])
def test_output_piped_into_a_reader_that_stops_early_exits_zero(reader):
    """``quadriga list --full`` writes about 75 kB here, more than a pipe holds (64 KiB on Linux):
    ``head -1`` stops reading after one line, ``true`` before the first write."""
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("QUADRIGA_DISABLE", None)
    quadriga = f"{sys.executable} -m quadriga list --full"
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f'{quadriga} | {reader}; echo "status=${{PIPESTATUS[0]}}" >&2'],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "status=0" in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    if reader == "head -1":
        assert len(proc.stdout.splitlines()) == 1
