"""Real PyTorch tensors met by tensorlib (both libraries imported in one process).

Both define `__torch_function__`, so each would hand the call to the other forever; tensorlib
refuses a real torch.Tensor at once with a TypeError saying how to convert it."""


def is_torch_tensor(obj):
    """obj is an instance of the real PyTorch's Tensor (its class chain holds torch.Tensor or
    torch._C.TensorBase), not of tensorlib's, even when `torch` resolves to tensorlib."""
    for cls in type(obj).__mro__:
        if cls.__name__ in ("Tensor", "TensorBase") and cls.__module__ in ("torch", "torch._C"):
            return True
    return False


def refuse_torch_tensor(obj):
    """Raise the TypeError for a real torch.Tensor given where a tensorlib Tensor belongs."""
    raise TypeError(f"expected a tensorlib Tensor, got {type(obj).__module__}."
                    f"{type(obj).__qualname__} (a PyTorch tensor): convert it with "
                    "tensorlib.from_numpy(t.detach().cpu().numpy())")


def refuse_torch_tensors(values):
    """refuse_torch_tensor for the first real torch.Tensor among values (or in a list/tuple
    among them); nothing when there is none."""
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if is_torch_tensor(item):
                refuse_torch_tensor(item)
