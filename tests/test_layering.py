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
