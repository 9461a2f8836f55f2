"""Building C++ extensions over tensorlib tensors, as torch.utils.cpp_extension does.

Sources include <torch/extension.h> (tensorlib's header-only API in tensorlib/include) and
pybind11; g++ builds them into a module cached by a hash of sources, flags and versions.
CUDA sources (.cu) are compiled by nvcc into objects linked into the same module against
cudart: their kernels run on the CUDA backend's tensors, whose data_ptr<T>() is the device
pointer, in the primary context that backend (PyCUDA) also uses.
"""
import functools
import hashlib
import importlib.util
import os
import shutil
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


def _is_toolkit(home):
    return home is not None and os.path.isfile(os.path.join(home, "include", "cuda_runtime.h"))


def _cuda_home():
    """The CUDA toolkit root: CUDA_HOME or CUDA_PATH, else the folder above nvcc's (when nvcc
    is a wrapper script elsewhere, /usr/local/cuda)."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home is None:
        nvcc = shutil.which("nvcc")
        home = nvcc and os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        if not _is_toolkit(home):
            home = "/usr/local/cuda"
    if not _is_toolkit(home) or not os.path.isfile(os.path.join(home, "bin", "nvcc")):
        raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA "
                      "install root (building cuda_sources needs nvcc).")
    return home


def include_paths(cuda=False):
    """The include folders an extension compiles against (tensorlib's API, pybind11, Python,
    and with cuda=True the CUDA toolkit's)."""
    here = os.path.join(os.path.dirname(tensorlib.__file__), "include")
    paths = [here, _pybind11().get_include(), sysconfig.get_paths()["include"]]
    if cuda:
        paths.append(os.path.join(_cuda_home(), "include"))
    return paths


def library_paths(cuda=False):
    """The library folders an extension links against: cudart's with cuda=True."""
    if not cuda:
        return []
    home = _cuda_home()
    return [d for d in (os.path.join(home, "lib64"), os.path.join(home, "lib"))
            if os.path.isfile(os.path.join(d, "libcudart.so"))][:1]


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


def _run(name, cmd, verbose):
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}':\n{proc.stdout}{proc.stderr}")


def _build(name, module, sources, output, flags, verbose):
    """Compile the .cu sources with nvcc into objects, then g++ the C++ sources and those
    objects into the module."""
    cu = [s for s in sources if s.endswith(".cu")]
    cpp = [s for s in sources if not s.endswith(".cu")]
    defines = [f"-DTORCH_EXTENSION_NAME={module}"]
    includes = [f"-I{p}" for p in list(flags["extra_include_paths"] or [])
                + include_paths(cuda=bool(cu))]
    objects, ldflags = [], []
    for i, src in enumerate(cu):
        obj = os.path.join(os.path.dirname(output), f"cuda_{i}.o")
        _run(name, [os.path.join(_cuda_home(), "bin", "nvcc"), "-c", "-O3", "-std=c++17",
                    "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden"] + defines
             + includes + list(flags["extra_cuda_cflags"] or []) + [src, "-o", obj], verbose)
        objects.append(obj)
    if cu:
        ldflags = [f"-L{d}" for d in library_paths(cuda=True)] + [
            f"-Wl,-rpath,{d}" for d in library_paths(cuda=True)] + ["-lcudart"]
    _run(name, ["g++"] + _CFLAGS + defines + includes + list(flags["extra_cflags"] or [])
         + cpp + objects + ["-o", output] + ldflags + list(flags["extra_ldflags"] or []),
         verbose)


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
         is_python_module=True):
    """Build (or reuse) the extension `name` from C++ and CUDA (.cu) `sources`; import it."""
    if isinstance(sources, str):
        sources = [sources]
    if not is_python_module:
        raise NotImplementedError("cpp_extension: only Python-module extensions are supported")
    cuda = any(s.endswith(".cu") for s in sources)
    if with_cuda is False and cuda:
        raise ValueError("cpp_extension: with_cuda=False but the sources include .cu files")
    flags = {"extra_cflags": extra_cflags, "extra_cuda_cflags": extra_cuda_cflags,
             "extra_ldflags": extra_ldflags, "extra_include_paths": extra_include_paths}
    key = hashlib.sha256()
    for part in [name, sys.version, tensorlib.__version__, _pybind11().__version__,
                 repr(sorted(flags.items())), _cuda_home() if cuda else ""]:
        key.update(part.encode() + b"\0")
    for src in sources:
        with open(src, "rb") as f:
            key.update(src.endswith(".cu").__repr__().encode() + f.read() + b"\0")
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
        try:
            _build(name, module, [os.path.abspath(s) for s in sources],
                   os.path.join(tmp, module + suffix), flags, verbose)
            os.rename(tmp, final)      # atomic: a concurrent build of the same key wins
        except OSError:
            if not os.path.exists(so):
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    elif verbose:
        print(f"Using the cached build of extension '{name}' in {final}", file=sys.stderr)
    return _import(module, so)


def _write_source(root, name, text, ext):
    os.makedirs(os.path.join(root, "sources"), exist_ok=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(root, "sources", f"{name}_{digest}{ext}")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=ext)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return path


def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, is_python_module=True):
    """Build an extension from source strings; `functions` generates the PYBIND11_MODULE.
    `cuda_sources` become one .cu file built by nvcc and linked into the same module."""
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    if isinstance(cuda_sources, str):
        cuda_sources = [cuda_sources]
    text = "#include <torch/extension.h>\n" + "\n".join(cpp_sources)
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, (list, tuple)):
            functions = {f: f for f in functions}
        defs = "".join(f'  m.def("{f}", &{f}, "{doc}");\n' for f, doc in functions.items())
        text += f"\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n{defs}}}\n"
    root = _build_root(build_directory)
    paths = [_write_source(root, name, text, ".cpp")]
    if cuda_sources:
        cu = ("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
              + "\n".join(cuda_sources))
        paths.append(_write_source(root, name, cu, ".cu"))
    return load(name, paths, extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
                extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths,
                build_directory=build_directory, verbose=verbose, with_cuda=with_cuda,
                is_python_module=is_python_module)


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
