"""parameters_to_vector / vector_to_parameters: flatten parameters into one vector and back."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    if old_param_device is None:
        return param.device
    if param.device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device


def parameters_to_vector(parameters):
    r"""One 1-D tensor holding every parameter's values (differentiable: a cat of views)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return tensorlib.cat(vec)


def vector_to_parameters(vec, parameters):
    r"""Point each parameter's data at its slice of `vec` (the inverse of
    parameters_to_vector)."""
    if not isinstance(vec, TensorImpl):
        raise TypeError(f"expected tensorlib.Tensor, but got: {type(vec).__name__}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
