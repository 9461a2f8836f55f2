"""gather, scatter_add, index_select and sort over numpy."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h


def _check_bounds(index, size, dim):
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index.max() if index.max() >= size else index.min()
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _positions(index, dim):
    """Full index tuple addressing index's positions, with `index` along `dim`."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def gather(out, x, dim, index):
    xv, iv = _h(x), _h(index)
    _check_bounds(iv, xv.shape[dim], dim)
    _h(out)[...] = xv[_positions(iv, dim)]


def scatter_add(out, dim, index, src):
    o, iv = _h(out), _h(index)
    _check_bounds(iv, o.shape[dim], dim)
    sv = _h(src)[tuple(slice(0, n) for n in iv.shape)]
    np.add.at(o, _positions(iv, dim), sv)


def index_select(out, x, dim, index):
    xv, iv = _h(x), _h(index)
    _check_bounds(iv, xv.shape[dim], dim)
    np.take(xv, iv, axis=dim, out=_h(out))


def sort(values, indices, x, dim, descending=False, stable=True):
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


KERNELS = {"gather": gather, "scatter_add": scatter_add, "index_select": index_select,
           "sort": sort}
