"""Import arrows that ran from a lower layer up (issue #33) stay gone: parsed from the source,
module-level and function-level imports alike."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tensorlib"

# (importing file, imported module prefix): a lower layer reaching a higher one
FORBIDDEN = [
    ("autograd/__init__.py", "tensorlib.compiler"),     # engine -> compiler (hook instead)
    ("ops/linalg.py", "tensorlib.linalg"),              # ops -> the public linalg namespace
    ("autograd/recording.py", "tensorlib.autograd.forward_ad"),   # recording -> forward AD
    ("ops/_conj_view.py", "tensorlib._tensor"),         # ops -> the Tensor class above them
    ("backends/mkldnn.py", "tensorlib_cpu"),            # torch.backends -> a backend package
]


def _imports(source):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


@pytest.mark.parametrize("rel, target", FORBIDDEN)
def test_upward_import_is_gone(rel, target):
    found = [m for m in _imports((ROOT / rel).read_text())
             if m == target or m.startswith(target + ".")]
    assert found == [], f"{rel} imports {found}, a lower layer reaching up (use a hook)"


def test_the_parser_sees_function_level_imports():
    source = "def f():\n    from tensorlib.compiler.api import g\n    import tensorlib.linalg\n"
    assert {"tensorlib.compiler.api", "tensorlib.compiler.api.g",
            "tensorlib.linalg"} <= set(_imports(source))


# Folders above the backend line compute with tensorlib ops on the tensor's device, never with
# numpy/scipy on the host.
HOST_FREE = ["nn", "autograd", "optim", "utils/data"]
HOST_ALLOWED = {
    "autograd/gradcheck.py": "finite differences and Jacobian comparison are a host-side check",
    "utils/data/_collate.py": "default_collate turns numpy arrays from datasets into tensors",
}


def _host_imports(path):
    return [m for m in _imports(path.read_text())
            if m.split(".")[0] in ("numpy", "scipy")]


def test_no_numpy_or_scipy_above_the_backend_line():
    offenders = {}
    for folder in HOST_FREE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found = _host_imports(path)
            if found and rel not in HOST_ALLOWED:
                offenders[rel] = sorted(set(found))
    assert offenders == {}, f"numpy/scipy imported above the backend line: {offenders}"


def test_host_allow_list_has_no_stale_entries():
    stale = [rel for rel in HOST_ALLOWED if not _host_imports(ROOT / rel)]
    assert stale == [], f"these no longer import numpy/scipy; drop them from HOST_ALLOWED: {stale}"


def test_the_host_import_parser_sees_both_forms():
    (found,) = [list(m for m in _imports(s) if m.split(".")[0] in ("numpy", "scipy"))
                for s in ["def f():\n    from scipy.linalg import qr\n    import numpy as np\n"]]
    assert {"scipy.linalg", "numpy"} <= set(found)
