"""Factories for the in-place variants of elementwise ops (`x.exp_()`, `x.hypot_(y)`): a
primitive's kernel written into x, or a composite computed out of place and copied back."""
import tensorlib._C.dtypes as dt
from tensorlib._C.grad_mode import is_grad_enabled as _grad_enabled
from tensorlib._C.pointwise import SAME, unary_


def not_implemented(name, dtype):
    """PyTorch's error for a dtype its kernel lacks."""
    return NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtype.scalar_name}'")


# PyTorch has no bool kernel for these (in place either): the kernel its error names
_NO_BOOL_KERNEL = {"abs": "abs", "floor": "floor_vml", "ceil": "ceil_vml", "round": "round_vml",
                   "trunc": "trunc_vml"}


def inplace_unary(op, kind=SAME):
    """`x.op_()` for a primitive unary op."""
    kernel = _NO_BOOL_KERNEL.get(op)

    def fn(self):
        if kernel is not None and self._dtype is dt.bool_:
            raise not_implemented(kernel, self._dtype)
        return unary_(op, self, kind)
    fn.__name__ = op + "_"
    return fn


def inplace_composite(fn, direct=None):
    """`x.fn_(...)` for an op composed of others: computed out of place, then written into x
    (while recording, through recording.apply_inplace, the one in-place path of autograd).
    direct(x, ...): where no graph is recorded, writes the result into x itself (a backend's
    one-pass kernel) and says whether it did."""
    def compute(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        if out._dtype.category > self._dtype.category:
            raise RuntimeError(f"result type {out._dtype.scalar_name} can't be cast to the "
                               f"desired output type {self._dtype.scalar_name}")
        return out

    def method(self, *args, **kwargs):
        from tensorlib.ops.copy import check_no_internal_overlap
        check_no_internal_overlap(self)
        tensors = [self, *args, *kwargs.values()]
        if _grad_enabled() and any(getattr(t, "_requires_grad", False) for t in tensors):
            from tensorlib.autograd.recording import apply_inplace
            return apply_inplace(self, lambda src: compute(src, *args, **kwargs))
        if direct is not None and direct(self, *args, **kwargs):
            self._storage.version += 1
            return self
        out = compute(self, *args, **kwargs)
        if out._sizes != self._sizes:
            raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the "
                               f"broadcast shape {list(out._sizes)}")
        return self.copy_(out)
    method.__name__ = fn.__name__ + "_"
    return method
