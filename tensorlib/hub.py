"""tensorlib.hub: torch.hub for repositories already on disk.

`load(dir, model, source='local')`, `list(dir, source='local')` and `help(...)` import the
directory's hubconf.py and call its entry points, as PyTorch's. Anything that would download
(source='github', load_state_dict_from_url, download_url_to_file) raises a RuntimeError that
says so: tensorlib fetches nothing from the network."""
import contextlib
import importlib.util
import os
import re
import sys
# names libraries import from torch.hub beside its functions (timm: `urlparse`)
from urllib.error import HTTPError, URLError  # noqa: F401
from urllib.parse import urlparse  # noqa: F401
from urllib.request import Request, urlopen  # noqa: F401

__all__ = ["load", "list", "help", "get_dir", "set_dir", "load_state_dict_from_url",
           "download_url_to_file"]

try:
    from tqdm import tqdm     # the progress bar torch.hub (and torchvision's datasets) use
except ImportError:
    class tqdm:  # noqa: N801 - PyTorch's name
        """The progress bar torch.hub falls back to without the tqdm package: counts `update`s
        towards `total` and prints the percentage to stderr."""

        def __init__(self, total=None, disable=False, unit=None, unit_scale=None,
                     unit_divisor=None, **kwargs):
            self.total, self.disable, self.n = total, disable, 0

        def update(self, n):
            if self.disable:
                return
            self.n += n
            if self.total is None:
                sys.stderr.write(f"\r{self.n:.1f} bytes")
            else:
                sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
            sys.stderr.flush()

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            if not self.disable:
                sys.stderr.write("\n")
            self.close()

MODULE_HUBCONF = "hubconf.py"
# the hash prefix in a checkpoint's file name (resnet18-f37072fd.pth), which PyTorch checks
# against the download's SHA-256; libraries that download themselves import it from here
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
VAR_DEPENDENCY = "dependencies"
_hub_dir = None


def _no_downloads(what):
    return RuntimeError(f"tensorlib.hub does not download ({what}): fetch the repository or "
                        f"file yourself, then use source='local' with its directory, or "
                        f"tensorlib.load on the file.")


def _get_torch_home():
    """$TORCH_HOME, or $XDG_CACHE_HOME/torch (~/.cache/torch): where PyTorch and libraries
    built on it (torchvision's weights) keep downloads."""
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch")
    return os.path.expanduser(home)


def get_dir():
    """Where hub files would be cached: set_dir's value or _get_torch_home()/hub, as
    PyTorch's."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _check_source(source):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    return source


@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No {MODULE_HUBCONF} in {repo_dir}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [name for name in getattr(module, VAR_DEPENDENCY, None) or []
               if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _local_dir(repo_or_dir, source, what):
    if _check_source(source) == "github":
        raise _no_downloads(f"{what} from GitHub repository {repo_or_dir!r}")
    return os.path.abspath(os.path.expanduser(repo_or_dir))


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point `model` of the hubconf.py in directory `repo_or_dir`
    (source='local'; downloading from GitHub is not supported)."""
    repo_dir = _local_dir(repo_or_dir, source, "load")
    with _on_sys_path(repo_dir):
        return _entry(_import_hubconf(repo_dir), model)(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True,  # noqa: A001
         source="github"):
    """The entry points (public callables) of a local repository's hubconf.py."""
    repo_dir = _local_dir(github, source, "list")
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [name for name in dir(module)
            if callable(getattr(module, name)) and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None,  # noqa: A001
         source="github"):
    """The docstring of entry point `model` of a local repository."""
    repo_dir = _local_dir(github, source, "help")
    with _on_sys_path(repo_dir):
        return _entry(_import_hubconf(repo_dir), model).__doc__


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Reads a file already in the hub cache (model_dir or get_dir()/checkpoints); a file
    that would have to be downloaded raises."""
    from urllib.parse import urlparse
    import tensorlib
    directory = model_dir or os.path.join(get_dir(), "checkpoints")
    cached = os.path.join(directory, file_name or os.path.basename(urlparse(url).path))
    if not os.path.isfile(cached):
        raise _no_downloads(f"{url} is not in {directory}")
    return tensorlib.load(cached, map_location=map_location)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    raise _no_downloads(url)

