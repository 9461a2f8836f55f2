"""The CPU backend's thread count at import: OMP_NUM_THREADS when it is a positive integer
(its first entry), as PyTorch reads it; else every logical core."""
import os
import subprocess
import sys

import pytest

_PRINT = "import tensorlib; print(tensorlib.get_num_threads())"


def _threads_with(value):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if value is not None:
        env["OMP_NUM_THREADS"] = value
    out = subprocess.run([sys.executable, "-c", _PRINT], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("value, expected", [("1", 1), ("3,1", 3)])
def test_omp_num_threads_is_honoured(value, expected):
    assert _threads_with(value) == expected


@pytest.mark.parametrize("value", ["0", "abc"])
def test_unset_or_invalid_means_every_core(value):
    assert _threads_with(value) == max(1, os.cpu_count() or 1)
