"""What the training examples share: picking the best device and the common flags.

Imported as a sibling module (`python examples/NAME.py` puts examples/ on sys.path)."""
import argparse

import tensorlib as torch


def best_device():
    """The current accelerator device (cuda, or an OpenCL GPU), else cpu: an OpenCL device
    that is really the host CPU (PoCL) is not an accelerator (tensorlib.accelerator)."""
    return torch.accelerator.best_device()


def parser(description, epochs):
    """An ArgumentParser with the flags every training example takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default=None,
                   help="cpu, opencl[:N] or cuda (default: the best available)")
    p.add_argument("--epochs", type=int, default=epochs, help=f"epochs (default {epochs})")
    p.add_argument("--max-batches", type=int, default=None,
                   help="stop each epoch after this many batches (quick runs, tests)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    return p


def require(module, what):
    """Import an optional dependency of the examples, or exit saying how to install it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SystemExit(f"{what} needs {module}: pip install \"tensorlib[examples]\" "
                         f"(or pip install \".[examples]\" in a checkout)") from None
