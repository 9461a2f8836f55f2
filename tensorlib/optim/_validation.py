r"""Constructor argument checks shared by the optimizers, raising PyTorch's exact errors."""

__all__ = ["check_hyperparameters", "check_fused"]


def _negative(value, allow_nan):
    """SGD tests `value < 0`, which lets NaN through; the others test `not 0 <= value`."""
    return value < 0.0 if allow_nan else not 0.0 <= value


def check_hyperparameters(*, allow_nan=False, **values):
    """Raise PyTorch's ValueError for the first invalid option, in the order given: each
    optimizer checks its options in its own order, and the first failure is the one
    reported. `lr` may be a 1-element tensor, `betas` lie in [0, 1), `rho` in [0, 1]; any
    other option must be non-negative."""
    for name, value in values.items():
        if name == "lr":
            if hasattr(value, "numel") and value.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            if _negative(value, allow_nan):
                raise ValueError(f"Invalid learning rate: {value}")
        elif name == "betas":
            for i in (0, 1):
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif _negative(value, allow_nan):
            label = "epsilon" if name == "eps" else name
            raise ValueError(f"Invalid {label} value: {value}")


def check_fused(fused, foreach, differentiable):
    """fused=True excludes differentiable and foreach=True (checked once the groups are
    built, as in PyTorch)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
