"""Complex numbers: views between a complex tensor and its (real, imag) pairs, and the ops
that are specific to complex values. Elementwise math, matmul and reductions on complex
tensors are the ordinary ops (the CPU kernels are numpy's). Complex tensors live on the CPU
only for now. Autograd follows PyTorch's convention: the gradient of a real loss L at
z = x + iy is dL/dx + i dL/dy, so view_as_real/view_as_complex are differentiable views
whose backward is the other view, and real/imag, being views of view_as_real, follow."""
import math

from tensorlib._C import dtypes as dt
from tensorlib._C.tensor_impl import TensorImpl, wrap
from tensorlib._C.factory import empty
from tensorlib._C.pointwise import complex_off_cpu
from tensorlib.ops import _conj_view
from tensorlib.ops._opdef import differentiable

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical",
           "conj_physical_", "resolve_conj", "is_conj", "resolve_neg", "is_neg", "angle",
           "polar", "complex", "is_complex", "sgn", "adjoint"]

_PART = {"complex64": dt.float32, "complex128": dt.float64}
_WHOLE = {"float32": dt.complex64, "float64": dt.complex128}


def _check_tensor(x, name):
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _alias(x, sizes, strides, offset, dtype):
    out = wrap(x._storage, sizes, strides, offset, dtype)
    out._base = x if x._base is None else x._base
    return out


def is_complex(input):  # noqa: A002
    _check_tensor(input, "is_complex")
    return input._dtype.is_complex


@differentiable("view_as_real")
def view_as_real(input):  # noqa: A002
    """The (..., 2) float view of a complex tensor: real and imaginary parts, no copy."""
    _check_tensor(input, "view_as_real")
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _alias(input, input._sizes + (2,), tuple(2 * s for s in input._strides) + (1,),
                  2 * input._offset, _PART[input._dtype.name])


@differentiable("view_as_complex")
def view_as_complex(input):  # noqa: A002
    """The complex view of a float tensor whose last dimension holds (real, imag) pairs."""
    _check_tensor(input, "view_as_complex")
    whole = _WHOLE.get(input._dtype.name)
    if whole is not None and input._device.type != "cpu":
        raise complex_off_cpu("view_as_complex", whole, input._device)
    if whole is None:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {input._dtype.scalar_name}")
    if not input._sizes or input._sizes[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input._strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s, n in zip(input._strides[:-1], input._sizes) if n != 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _alias(input, input._sizes[:-1], tuple(s // 2 for s in input._strides[:-1]),
                  input._offset // 2, whole)


def real(input):  # noqa: A002
    """The real part, a view (the tensor itself when it is not complex, as PyTorch)."""
    _check_tensor(input, "real")
    return view_as_real(input).select(-1, 0) if input._dtype.is_complex else input


def imag(input):  # noqa: A002
    _check_tensor(input, "imag")
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def conj_physical(input):  # noqa: A002
    """The complex conjugate, computed into a new tensor."""
    _check_tensor(input, "conj_physical")
    if not input._dtype.is_complex:
        return input.clone()
    return _conj_physical(input)


@differentiable("conj_physical")
def _conj_physical(input):  # noqa: A002
    out = _empty_in_layout(input)
    out.copy_(input)
    view_as_real(out).select(-1, 1).neg_()
    return out


def _empty_in_layout(x):
    """An empty tensor in x's strides when x is dense (a permutation of a contiguous
    layout, as torch's preserve_format), else contiguous: conj()'s result then shares its
    input's layout, which lets views of it write back (ops/_conj_view.py)."""
    order = sorted(range(len(x._sizes)), key=lambda d: -x._strides[d])
    sizes = tuple(x._sizes[d] for d in order)
    out = empty(sizes, x._dtype, x._device)
    if all(x._strides[d] == out._strides[i] for i, d in enumerate(order)
           if x._sizes[d] > 1):
        return out.permute([order.index(d) for d in range(len(order))])
    return empty(x._sizes, x._dtype, x._device)


def conj(input):  # noqa: A002
    """The complex conjugate; the tensor itself when it is not complex. A computed
    conjugate that writes back into `input` (NOTE in ops/_conj_view.py), not PyTorch's
    lazy view; conj() of such a result is `input` again."""
    _check_tensor(input, "conj")
    if not input._dtype.is_complex:
        return input
    if _conj_view.is_view(input):
        return _conj_view.input_of(input).view_as(input)
    return _conj_view.make(_conj_physical(input), input)


def conj_physical_(input):  # noqa: A002
    """Conjugate in place (a no-op for real tensors)."""
    _check_tensor(input, "conj_physical_")
    if input._dtype.is_complex:
        input.copy_(_conj_physical(input))
    return input


def adjoint(input):  # noqa: A002
    """The conjugate transpose of the last two dims (Tensor.mH); the transpose when real."""
    _check_tensor(input, "adjoint")
    if input.dim() == 0:
        import warnings
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().")
        return conj(input)
    if input.dim() == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    return conj(input.transpose(-2, -1))


def resolve_conj(input):  # noqa: A002
    """A plain tensor holding the same values: a copy of a conj() result, else input."""
    _check_tensor(input, "resolve_conj")
    return input.clone() if _conj_view.is_view(input) else input


def is_conj(input):  # noqa: A002
    _check_tensor(input, "is_conj")
    return _conj_view.is_view(input)


def resolve_neg(input):  # noqa: A002
    """tensorlib has no negative-bit views: the tensor itself."""
    _check_tensor(input, "resolve_neg")
    return input


def is_neg(input):  # noqa: A002
    _check_tensor(input, "is_neg")
    return False


@differentiable("complex_abs")
def complex_abs(x):
    """|z| of a complex tensor, in its parts' float dtype (its gradient is sgn(z), 0 at 0)."""
    from tensorlib.ops.pointwise import hypot
    return hypot(real(x), imag(x))


def sgn(input):  # noqa: A002
    """z / |z| (0 at 0) for complex tensors; sign for real ones (torch.sgn)."""
    _check_tensor(input, "sgn")
    if not input._dtype.is_complex:
        return input.sign()
    from tensorlib.ops.pointwise import where
    modulus = complex_abs(input)
    return where(modulus == 0, 0.0, input / where(modulus == 0, 1.0, modulus))


@differentiable("angle")
def angle(input):  # noqa: A002
    """The argument of each element; for real tensors pi where negative, else 0 (nan stays)."""
    _check_tensor(input, "angle")
    from tensorlib.ops.pointwise import atan2, where
    if input._dtype.is_complex:
        return atan2(imag(input), real(input))
    x = input if input._dtype.is_floating_point else input.to(dt.get_default_dtype())
    return where(x < 0, math.pi, where(x != x, x, 0.0 * x))


@differentiable("complex")
def complex(real, imag):  # noqa: A001 - torch.complex
    """real + i imag from two float tensors of one dtype (broadcast)."""
    _check_tensor(real, "complex")
    _check_tensor(imag, "complex")
    whole = _WHOLE.get(real._dtype.name)
    if whole is None or real._dtype is not imag._dtype:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real._dtype.scalar_name} and {imag._dtype.scalar_name}")
    if real._device.type != "cpu":
        raise complex_off_cpu("complex", whole, real._device)
    from tensorlib._C.broadcast import broadcast_shapes
    shape = tuple(broadcast_shapes(real._sizes, imag._sizes))
    out = empty(shape, whole, real._device)
    parts = view_as_real(out)
    parts.select(-1, 0).copy_(real.expand(shape))
    parts.select(-1, 1).copy_(imag.expand(shape))
    return out


def polar(abs, angle):  # noqa: A002
    """abs * (cos(angle) + i sin(angle))."""
    _check_tensor(abs, "polar")
    if abs._dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"polar_cpu\" not implemented for '{abs._dtype.scalar_name}'")
    if abs._device.type != "cpu":
        raise complex_off_cpu("polar", _WHOLE.get(abs._dtype.name, dt.complex64), abs._device)
    return complex(abs * angle.cos(), abs * angle.sin())


TENSOR_METHODS = {"is_complex": is_complex, "conj": conj, "conj_physical": conj_physical,
                  "conj_physical_": conj_physical_, "resolve_conj": resolve_conj,
                  "is_conj": is_conj, "resolve_neg": resolve_neg, "is_neg": is_neg,
                  "angle": angle, "real": property(real), "imag": property(imag), "sgn": sgn,
                  "adjoint": adjoint, "mH": property(adjoint)}
