"""A setup.py with CppExtension/BuildExtension builds and installs an extension package."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pybind11")


SETUP = """
from setuptools import setup
from tensorlib.utils.cpp_extension import BuildExtension, CppExtension

setup(name="scaled_pkg", version="0.1", packages=["scaled_pkg"],
      ext_modules=[CppExtension("scaled_pkg._scaled", ["scaled_pkg/scaled.cpp"])],
      cmdclass={"build_ext": BuildExtension})
"""

SOURCE = """
#include <ATen/ATen.h>
#include <torch/extension.h>

at::Tensor scaled(const at::Tensor& x, double s) {
  TORCH_CHECK(x.is_contiguous(), "scaled needs a contiguous tensor");
  auto out = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "scaled", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = static_cast<scalar_t>(in[i] * s);
  });
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled", &scaled, "x * s"); }
"""


def test_setup_py_builds_and_installs(tmp_path):
    project = tmp_path / "project"
    (project / "scaled_pkg").mkdir(parents=True)
    (project / "setup.py").write_text(SETUP)
    (project / "scaled_pkg" / "__init__.py").write_text("from ._scaled import scaled\n")
    (project / "scaled_pkg" / "scaled.cpp").write_text(SOURCE)
    target = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                           "--no-deps", "--target", str(target), str(project)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check = textwrap.dedent("""
        import tensorlib as torch, scaled_pkg
        x = torch.tensor([1.0, -2.0, 4.0])
        print(scaled_pkg.scaled(x, 0.5).tolist(),
              scaled_pkg.scaled(x.half(), 2.0).tolist())
        try:
            scaled_pkg.scaled(torch.ones(3, 2).t(), 1.0)
        except RuntimeError as e:
            print(e)
    """)
    run_env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(target)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         env=run_env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[0.5, -1.0, 2.0] [2.0, -4.0, 8.0]",
                                       "scaled needs a contiguous tensor"]
