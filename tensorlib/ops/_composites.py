"""The one way code above the backend line reaches a backend's optional composite kernel
(declared in `tensorlib.backends.interface.COMPOSITES`): an undeclared name is a programming
error, so a plugin author's guide and the framework's uses cannot drift apart."""
from tensorlib.backends.interface import COMPOSITES

__all__ = ["optional_kernel"]


def optional_kernel(device, name):
    """The kernel `name` of `device`'s backend, or None when the backend has none (the caller
    then takes the reference path). A kernel may still decline a call by returning False."""
    if name not in COMPOSITES:
        raise KeyError(f"'{name}' is not a composite kernel declared in "
                       f"tensorlib.backends.interface.COMPOSITES")
    kernels = device._kernels
    return None if kernels is None else kernels.get(name)
