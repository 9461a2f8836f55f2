"""where(condition, input, other): promotion of input/other, broadcasting of all three."""
import tensorlib._C.dtypes as dt
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty, scalar_tensor, cast
from tensorlib._C.memory_format import empty_in_layout_of
from tensorlib._C.promotion import result_type
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib._C.views import expand as _expand
from tensorlib.ops._opdef import differentiable


def _operand(x, dtype, device, shape):
    if not isinstance(x, TensorImpl):
        x = scalar_tensor(x, dtype, device)
    else:
        if x._device is not device:
            x = x.to(device)
        if x._dtype is not dtype:
            x = cast(x, dtype)
    return _expand(x, shape) if x._sizes != shape else x


@differentiable("where")
def where(condition, input, other):  # noqa: A002
    if not isinstance(condition, TensorImpl):
        raise TypeError("where(): argument 'condition' must be Tensor")
    if condition._dtype is not dt.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition._dtype.scalar_name}")
    dtype = result_type((input, other))
    device = condition._device
    for x in (input, other):
        if isinstance(x, TensorImpl) and x._device is not device and x.dim() > 0:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {device} and {x._device}!")
    shape = broadcast_shapes(condition._sizes, *(x._sizes for x in (input, other)
                                                  if isinstance(x, TensorImpl)))
    like = next((x for x in (condition, input, other) if isinstance(x, TensorImpl)
                 and x._sizes == shape and x._device is device), None)
    out = empty(shape, dtype, device) if like is None else empty_in_layout_of(like, dtype)
    cond = _expand(condition, shape) if condition._sizes != shape else condition
    lookup("where", device)(out, cond, _operand(input, dtype, device, shape),
                            _operand(other, dtype, device, shape))
    return out
