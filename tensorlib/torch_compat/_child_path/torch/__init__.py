"""The first `import torch` of a process started by a program under tensorlib.torch_compat.

`install()` puts this folder's parent on PYTHONPATH, so child processes (multiprocessing spawn,
DataLoader workers, MPI launches, subprocesses) find this file before any real torch. It installs
the mapping in the child and hands the import over to the `torch` module it provides."""
import sys

from tensorlib.torch_compat import install

del sys.modules["torch"]       # this file's own module: install() refuses a foreign torch
sys.modules["torch"] = install()
