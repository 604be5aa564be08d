"""Sweep workers cap their BLAS/OpenMP and torch threads so that workers x threads <= cores."""

from __future__ import annotations

import os
import subprocess
import sys

from quadriga.sweep import worker_threads


def test_worker_threads_divide_the_cores():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for workers in (1, 2, 3, cores, 4 * cores):
        threads = worker_threads(workers)
        assert threads >= 1 and (workers * threads <= cores or threads == 1)
    assert worker_threads(1) == cores


CHILD = """
import os, sys
import numpy  # a BLAS loaded before the cap
from quadriga.sweep import cap_threads
cap_threads(1)
import torch  # loaded after the cap: reads the environment
from threadpoolctl import threadpool_info
pools = [p["num_threads"] for p in threadpool_info()]
print(torch.get_num_threads(), max(pools), os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"])
"""


def test_cap_threads_limits_loaded_and_later_libraries():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["1", "1", "1", "1"], out.stdout + out.stderr


def test_cap_threads_keeps_a_smaller_setting():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    code = (
        "import os; from quadriga.sweep import cap_threads; cap_threads(2); "
        "print(os.environ['OMP_NUM_THREADS'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "1"
