"""Run `tensorlib-bench` from a checkout: `python benchmarks/run.py [--quick] [--only matmul]`.

Thin on purpose: the runner lives in tensorlib._bench so the installed console script and
this script can never drift apart. The repo root goes first on sys.path so an in-place
build (`python setup.py build_ext --inplace`) works without installing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tensorlib._bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
