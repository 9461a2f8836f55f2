"""torch._custom_ops: the older custom-op module; libraries still import `get_ctx` from it
(torchvision's fake kernels) and `impl_abstract`, register_fake's former name."""
from tensorlib.library.custom_ops import get_ctx


def impl_abstract(qualname, *, func=None):
    """torch._custom_ops.impl_abstract: the fake kernel of qualname (torch.library.register_fake
    under its former name)."""
    from tensorlib.library.custom_ops import register_fake
    return register_fake(qualname, func)


__all__ = ["get_ctx", "impl_abstract"]
