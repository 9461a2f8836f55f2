"""Run unchanged PyTorch programs and libraries on tensorlib: `import torch` resolves to tensorlib.

`install()` puts an import hook first on `sys.meta_path` that answers `torch` and every
`torch.X.Y` with tensorlib's module of the same path (`tensorlib.X.Y`), so third-party libraries
that import PyTorch's submodules work too. `importlib.metadata` answers for a "torch"
distribution whose version is `TORCH_VERSION` (libraries check it), and the top-level `torch`
module reports that version while `tensorlib.__version__` stays tensorlib's own.

A submodule PyTorch has and tensorlib lacks raises ModuleNotFoundError naming the torch path.
Child processes keep the mapping: `install()` puts `_child_path/` on PYTHONPATH and sys.path,
where a `torch` package installs the hook again on its first import (see `_child_path/torch`).

`tensorlib run-torch PROGRAM.py ARGS...` (or `python -m tensorlib.torch_compat`) runs a program
this way; see docs/torch_compat.md."""
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import types

CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child_path")


def _read_torch_version():
    """The version in `_child_path`'s dist-info: one place, read by children and this process."""
    for entry in os.listdir(CHILD_PATH):
        if entry.startswith("torch-") and entry.endswith(".dist-info"):
            return entry[len("torch-"):-len(".dist-info")]
    raise RuntimeError(f"tensorlib.torch_compat: no torch-*.dist-info in {CHILD_PATH}")


TORCH_VERSION = _read_torch_version()

# torch paths answered by a compat module of ours instead of `tensorlib.<same path>`
_REDIRECTS = {"torch.version": "tensorlib.torch_compat.version",
              "torch.torch_version": "tensorlib.torch_compat.version",
              "functorch": "tensorlib.torch_compat.functorch"}


class _SharedModule(types.ModuleType):
    """tensorlib's module class while a `torch` alias exists: a write or delete of one of its
    names also drops the alias's cached copy of it."""
    aliases = []

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        _forget(name)

    def __delattr__(self, name):
        super().__delattr__(name)
        _forget(name)


def _forget(name):
    for alias in _SharedModule.aliases:
        if name not in TorchModule._OWN:
            alias.__dict__.pop(name, None)


class TorchModule(types.ModuleType):
    """The `torch` module: tensorlib's namespace, with PyTorch's version.

    Attribute reads and writes go to `tensorlib` (a library that patches `torch.load` patches
    tensorlib's), except the module's own identity and `__version__`. A name read once is
    kept in this module's dict, so `torch.cat` costs a dict lookup rather than a Python
    __getattr__ call (1.3 us on every op a program calls); writing or deleting the name on
    either module drops the copy (tensorlib's module class is _SharedModule then)."""

    _OWN = frozenset({"__name__", "__spec__", "__loader__", "__package__", "__path__",
                      "__file__", "__version__", "__all__", "__doc__", "__dict__",
                      "version", "torch_version", "torch"})

    def __init__(self, tensorlib):
        super().__init__("torch", tensorlib.__doc__)
        from tensorlib.torch_compat import version
        object.__setattr__(self, "_tensorlib", tensorlib)
        self.__version__ = version.__version__
        self.version = self.torch_version = version
        self.torch = self           # PyTorch's package imports itself: torch.torch is torch
        self.__path__ = []          # a package: submodules come from the hook, not from a folder
        self.__file__ = tensorlib.__file__
        self.__all__ = [name for name in dir(tensorlib) if not name.startswith("_")]

    def __getattr__(self, name):
        value = getattr(object.__getattribute__(self, "_tensorlib"), name)
        if not name.startswith("__"):
            object.__setattr__(self, name, value)          # the next read finds it here
        return value

    def __setattr__(self, name, value):
        if name in TorchModule._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(object.__getattribute__(self, "_tensorlib"), name, value)
            self.__dict__.pop(name, None)

    def __delattr__(self, name):
        delattr(object.__getattribute__(self, "_tensorlib"), name)
        self.__dict__.pop(name, None)

    def __dir__(self):
        return sorted(set(dir(object.__getattribute__(self, "_tensorlib"))) | set(self.__dict__))

    def __repr__(self):
        return f"<module 'torch' (tensorlib {self._tensorlib.__version__}, as PyTorch {self.__version__})>"


class _AliasLoader(importlib.abc.Loader):
    """Hands out an already imported tensorlib module under a torch name, leaving it untouched
    (the import system stamps the torch spec on it; `exec_module` puts tensorlib's back)."""

    def __init__(self, module):
        self.module = module
        self.own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        if self.own_spec is not None:
            try:
                module.__spec__ = self.own_spec
            except AttributeError:
                pass


class _TorchDistribution(importlib.metadata.PathDistribution):
    """`importlib.metadata` for "torch": the dist-info in `_child_path`."""


class TorchFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: `torch` -> the TorchModule, `torch.X.Y` -> `tensorlib.X.Y`,
    and `functorch` (shipped in PyTorch's wheel) -> tensorlib's functorch API."""

    def __init__(self, torch_module):
        self.torch_module = torch_module

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch":
            return importlib.machinery.ModuleSpec("torch", _AliasLoader(self.torch_module),
                                                  is_package=True)
        if not (fullname.startswith(("torch.", "functorch.")) or fullname == "functorch"):
            return None
        module = _tensorlib_module(fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        if context.name is not None and context.name.replace("-", "_").lower() != "torch":
            return iter(())
        import pathlib
        return iter([_TorchDistribution(pathlib.Path(CHILD_PATH, f"torch-{TORCH_VERSION}.dist-info"))])


def _tensorlib_module(torch_name):
    """tensorlib's module for a torch path, or ModuleNotFoundError naming the torch path."""
    if torch_name.startswith("functorch."):
        raise ModuleNotFoundError(f"No module named '{torch_name}': only the top-level functorch "
                                  "API is provided by tensorlib (see docs/torch_compat.md)",
                                  name=torch_name)
    target = _REDIRECTS.get(torch_name, "tensorlib" + torch_name[len("torch"):])
    try:
        if importlib.util.find_spec(target) is not None:
            return importlib.import_module(target)
    except ModuleNotFoundError:
        pass
    # a namespace object tensorlib exposes as an attribute rather than as a file
    parent, _, child = target.rpartition(".")
    holder = sys.modules.get(parent)
    if holder is not None and isinstance(getattr(holder, child, None), types.ModuleType):
        return getattr(holder, child)
    raise ModuleNotFoundError(
        f"No module named '{torch_name}': {torch_name} is not provided by tensorlib "
        f"(no module {target}); see docs/torch_compat.md for what is covered", name=torch_name)


def _foreign_torch():
    """The real PyTorch's module if it is already imported here, else None."""
    module = sys.modules.get("torch")
    if module is None or isinstance(module, TorchModule):
        return None
    return module


def is_installed():
    return any(isinstance(finder, TorchFinder) for finder in sys.meta_path)


def install():
    """Make `import torch` (and every torch submodule) resolve to tensorlib in this process and
    in the processes it starts. Returns the `torch` module. Idempotent.

    Raises RuntimeError when the real PyTorch is already imported: two frameworks answering to
    one name would mix their tensors."""
    foreign = _foreign_torch()
    if foreign is not None:
        raise RuntimeError(
            "tensorlib.torch_compat.install(): the real PyTorch is already imported in this "
            f"process (torch from {getattr(foreign, '__file__', '?')}); call install() before "
            "anything imports torch, or run the program with `tensorlib run-torch`")
    for finder in sys.meta_path:
        if isinstance(finder, TorchFinder):
            sys.modules["torch"] = finder.torch_module
            return finder.torch_module
    import tensorlib
    from tensorlib._C.dtypes import set_package_name
    set_package_name("torch")             # str(x.dtype), str(x.shape), x.type() as in PyTorch
    torch_module = TorchModule(tensorlib)
    if type(tensorlib) is types.ModuleType:
        tensorlib.__class__ = _SharedModule
    _SharedModule.aliases.append(torch_module)
    finder = TorchFinder(torch_module)
    torch_module.__spec__ = importlib.machinery.ModuleSpec("torch", _AliasLoader(torch_module),
                                                           is_package=True)
    torch_module.__loader__ = torch_module.__spec__.loader
    sys.meta_path.insert(0, finder)
    sys.modules["torch"] = torch_module
    _keep_in_children()
    return torch_module


def _keep_in_children():
    """Child processes inherit the environment: put `_child_path` first on their PYTHONPATH.
    multiprocessing's spawn hands its children the parent's sys.path instead, so it goes on
    sys.path too, ahead of site-packages (this process's imports of torch meet the hook first)."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if CHILD_PATH not in entries:
        os.environ["PYTHONPATH"] = os.pathsep.join([CHILD_PATH] + entries)
    if CHILD_PATH not in sys.path:
        sys.path.insert(1 if sys.path else 0, CHILD_PATH)
