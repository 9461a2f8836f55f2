"""What the training examples share: picking the best device and the common flags.

Imported as a sibling module (`python examples/NAME.py` puts examples/ on sys.path)."""
import argparse

import tensorlib as torch


def best_device():
    """cuda when usable, else an OpenCL GPU, else cpu.

    An OpenCL device that is really the host CPU (PoCL) is not "best": the CPU backend's
    BLAS and OpenMP kernels are faster on the same cores."""
    available = torch.backends.available()
    if "cuda" in available:
        return "cuda"
    if "opencl" in available:
        from tensorlib_opencl import device as opencl_devices
        for index, dev in enumerate(opencl_devices.devices()):
            if not dev.is_cpu:
                return f"opencl:{index}"
    return "cpu"


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
