"""The sparse-dense product on the host: scipy.sparse's COO product (C++: one pass over the
entries, duplicates and any order welcome, no conversion). tensorlib.sparse looks this kernel
up by name; a device without it runs the product on its index_select/mul/index_add
primitives."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h

# dtypes scipy's product computes in; others go through the nearest one and back
_SCIPY = {np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64, np.complex64,
                                np.complex128)}


def _compute_dtype(dtype):
    if dtype in _SCIPY:
        return dtype
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float64 if dtype.kind == "f" or dtype.itemsize > 4 else np.int64)


def sparse_coo_mm(out, rows, cols, values, dense):
    """out[m, n] = sum over entries e of values[e] * dense[cols[e], :] into row rows[e]
    (duplicate entries add up); `dense` is (k, n) and m, k are out's and dense's rows."""
    import scipy.sparse         # on first use: it costs a tenth of a second to import
    o, d, v = _h(out), _h(dense), _h(values)
    work = _compute_dtype(v.dtype)
    matrix = scipy.sparse.coo_matrix((v.astype(work, copy=False), (_h(rows), _h(cols))),
                                     shape=(o.shape[0], d.shape[0]))
    o[...] = matrix @ d.astype(work, copy=False)


KERNELS = {"sparse_coo_mm": sparse_coo_mm}
