"""gather, scatter_add, index_select, sort, mask_count, mask_positions, nonzero and
masked_select. The three index kernels check their indices themselves (`checks_bounds`:
tensorlib/backends/interface.py), in C as they read them. sort is sort_kernels' radix sort;
numpy's stable argsort takes the dtypes it lacks. The mask kernels are mask_kernels' threaded
passes; numpy takes the masks that are not contiguous."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import index_kernels, mask_kernels, sort_kernels


def _positions(index, dim):
    """Full index tuple addressing index's positions, with `index` along `dim`."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


gather = index_kernels.gather


def scatter_add(out, dim, index, src):
    if not index_kernels.scatter_add(out, dim, index, src):     # bool, float16, complex
        o, iv = _h(out), _h(index)
        np.add.at(o, _positions(iv, dim), _h(src)[tuple(slice(0, n) for n in iv.shape)])


def index_select(out, x, dim, index):
    if not index_kernels.index_select(out, x, dim, index):
        np.take(_h(x), _h(index), axis=dim, out=_h(out))


for _kernel in (gather, scatter_add, index_select):
    _kernel.checks_bounds = True


def sort(values, indices, x, dim, descending=False, stable=True):
    if sort_kernels.sort(values, indices, x, dim, descending):
        return
    xv = _h(x)
    if descending:
        # a stable ascending sort of the reversed data, reversed again: descending with ties
        # still in their original order (torch's stable descending sort)
        flipped = np.flip(xv, dim)
        order = np.flip(np.argsort(flipped, axis=dim, kind="stable"), dim)
        order = xv.shape[dim] - 1 - order
    else:
        order = np.argsort(xv, axis=dim, kind="stable")
    _h(indices)[...] = order
    _h(values)[...] = np.take_along_axis(xv, order, axis=dim)


def mask_count(mask):
    """The number of True elements of the bool mask."""
    found = mask_kernels.count(mask)
    return int(np.count_nonzero(_h(mask))) if found is None else found


def mask_positions(out, mask):
    """out = the flat positions of the True elements of the contiguous bool mask (out holds
    exactly their count)."""
    return mask_kernels.mask_positions(out, mask)


def nonzero(out, mask):
    """out (count, ndim) = the coordinates of the True elements of the bool mask in row-major
    order (out holds exactly their count)."""
    if not mask_kernels.nonzero(out, mask):
        np.copyto(_h(out), np.argwhere(_h(mask)))
    return True


KERNELS = {"gather": gather, "scatter_add": scatter_add, "index_select": index_select,
           "sort": sort, "mask_count": mask_count, "mask_positions": mask_positions,
           "nonzero": nonzero, "masked_select": mask_kernels.masked_select}
