"""torch.result_type: dimensioned tensors outrank 0-dim tensors, which outrank Python numbers,
unless the lower tier holds a higher category (bool < integer < floating < complex)."""
from tensorlib._C.dtypes cimport (dtype, DTYPES, BOOL, INT64, promote_types, default_float,
                                  complex_of)
from tensorlib._C.tensor_impl cimport TensorImpl

from numpy import generic as _np_generic


cdef inline dtype _promote_opt(dtype a, dtype b):
    if a is None:
        return b
    return promote_types(a, b)


cdef dtype _combine(dtype higher, dtype lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if lower.category > higher.category:      # a lower tier of a higher category counts
        return promote_types(higher, lower)
    return higher


cpdef dtype scalar_dtype(object value):
    """The dtype a Python number takes alone: bool, int64 or the default float."""
    if isinstance(value, bool):
        return <dtype>DTYPES[BOOL]
    if isinstance(value, int):
        return <dtype>DTYPES[INT64]
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return complex_of(default_float())
    if isinstance(value, _np_generic):           # a NumPy scalar counts as a Python number
        return scalar_dtype(value.item())
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


cpdef dtype result_type(tuple operands):
    cdef dtype dim_t = None, zero_t = None, wrapped_t = None
    cdef TensorImpl t
    for op in operands:
        if isinstance(op, TensorImpl):
            t = <TensorImpl>op
            if len(t._sizes) > 0:
                dim_t = _promote_opt(dim_t, t._dtype)
            else:
                zero_t = _promote_opt(zero_t, t._dtype)
        else:
            wrapped_t = _promote_opt(wrapped_t, scalar_dtype(op))
    return _combine(dim_t, _combine(zero_t, wrapped_t))
