"""Building C++ extensions over tensorlib tensors, as torch.utils.cpp_extension does.

Sources include <torch/extension.h> (tensorlib's header-only API in tensorlib/include) and
pybind11; g++ builds them into a module cached by a hash of sources, flags and versions.
"""
import functools
import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile

import tensorlib

_CFLAGS = ["-O3", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden"]


def _pybind11():
    try:
        import pybind11
    except ImportError as exc:
        raise RuntimeError("C++ extensions need pybind11: pip install 'tensorlib[cpp]'") from exc
    return pybind11


def include_paths(cuda=False):
    """The include folders an extension compiles against (tensorlib's API, pybind11, Python)."""
    if cuda:
        raise NotImplementedError("cpp_extension: CUDA sources are not supported yet")
    here = os.path.join(os.path.dirname(tensorlib.__file__), "include")
    return [here, _pybind11().get_include(), sysconfig.get_paths()["include"]]


def _build_root(build_directory):
    if build_directory:
        return build_directory
    root = os.environ.get("TENSORLIB_EXTENSIONS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tensorlib_extensions")
    return root


def _import(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile_command(name, sources, output, extra_cflags, extra_include_paths, extra_ldflags):
    includes = [f"-I{p}" for p in list(extra_include_paths or []) + include_paths()]
    return (["g++"] + _CFLAGS + [f"-DTORCH_EXTENSION_NAME={name}"] + includes
            + list(extra_cflags or []) + list(sources) + ["-o", output] + list(extra_ldflags or []))


def load(name, sources, extra_cflags=None, extra_ldflags=None, extra_include_paths=None,
         build_directory=None, verbose=False, is_python_module=True):
    """Build (or reuse) the extension `name` from C++ `sources` and import it."""
    if isinstance(sources, str):
        sources = [sources]
    if any(s.endswith((".cu", ".cuh")) for s in sources):
        raise NotImplementedError("cpp_extension: CUDA sources are not supported yet")
    if not is_python_module:
        raise NotImplementedError("cpp_extension: only Python-module extensions are supported")
    key = hashlib.sha256()
    for part in [name, sys.version, tensorlib.__version__, _pybind11().__version__,
                 repr(extra_cflags), repr(extra_ldflags), repr(extra_include_paths)]:
        key.update(part.encode() + b"\0")
    for src in sources:
        with open(src, "rb") as f:
            key.update(f.read() + b"\0")
    for folder in include_paths()[:1]:   # tensorlib's headers are part of the build
        for base, _, files in sorted(os.walk(folder)):
            for fname in sorted(files):
                with open(os.path.join(base, fname), "rb") as f:
                    key.update(f.read())
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    root = _build_root(build_directory)
    # the module name carries the hash (as PyTorch's `name_v1`): a process can then hold the
    # old and a rebuilt extension side by side, which one init symbol per name would forbid
    module = f"{name}_{key.hexdigest()[:16]}"
    final = os.path.join(root, module)
    so = os.path.join(final, module + suffix)
    if not os.path.exists(so):
        os.makedirs(root, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{name}-", dir=root)
        cmd = _compile_command(module, [os.path.abspath(s) for s in sources],
                               os.path.join(tmp, module + suffix), extra_cflags,
                               extra_include_paths, extra_ldflags)
        if verbose:
            print(" ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"Error building extension '{name}':\n{proc.stderr}")
        try:
            os.rename(tmp, final)      # atomic: a concurrent build of the same key wins
        except OSError:
            if not os.path.exists(so):
                raise
    elif verbose:
        print(f"Using the cached build of extension '{name}' in {final}", file=sys.stderr)
    return _import(module, so)


def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                extra_ldflags=None, extra_include_paths=None, build_directory=None,
                verbose=False, is_python_module=True):
    """Build an extension from source strings; `functions` generates the PYBIND11_MODULE."""
    if cuda_sources:
        raise NotImplementedError("cpp_extension: cuda_sources are not supported yet")
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    text = "#include <torch/extension.h>\n" + "\n".join(cpp_sources)
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, (list, tuple)):
            functions = {f: f for f in functions}
        defs = "".join(f'  m.def("{f}", &{f}, "{doc}");\n' for f, doc in functions.items())
        text += f"\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n{defs}}}\n"
    root = _build_root(build_directory)
    os.makedirs(os.path.join(root, "sources"), exist_ok=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(root, "sources", f"{name}_{digest}.cpp")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".cpp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return load(name, [path], extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
                extra_include_paths=extra_include_paths, build_directory=build_directory,
                verbose=verbose, is_python_module=is_python_module)


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools Extension compiled against tensorlib's C++ API and pybind11."""
    from setuptools import Extension
    kwargs["include_dirs"] = list(kwargs.get("include_dirs", [])) + include_paths()
    kwargs["language"] = "c++"
    return Extension(name, sources, *args, **kwargs)


@functools.lru_cache(maxsize=None)
def _build_ext_class():
    from setuptools.command.build_ext import build_ext

    class BuildExtension(build_ext):
        """build_ext defining TORCH_EXTENSION_NAME per extension and building as C++17."""

        @classmethod
        def with_options(cls, **options):
            return cls

        def build_extension(self, ext):
            short = ext.name.split(".")[-1]
            ext.extra_compile_args = ["-std=c++17", "-fvisibility=hidden",
                                      f"-DTORCH_EXTENSION_NAME={short}"] + list(
                ext.extra_compile_args or [])
            super().build_extension(ext)

    return BuildExtension


def __getattr__(attr):
    # setuptools is imported only by setup.py builds
    if attr == "BuildExtension":
        return _build_ext_class()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
