"""The derivatives of the sparse ops, as autograd Functions. A sparse input gets PyTorch's
gradient: sparse, on the entries of its coalesced form (`grad_for`), except where PyTorch's
op gives a dense one (torch.mm and the other dense-named products: their derivative is the
dense matmul formula, tensorlib/autograd/formulas/linalg.py). The Functions run their
forward and backward with recording off; second derivatives through sparse ops are not
supported."""
import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.sparse import _kernels as K

__all__ = ["grad_for", "FromValues", "ToDense", "ToSparse", "Coalesce", "Values",
           "MapValues", "Unary", "Transpose", "Add", "SparseMM", "Sum", "Softmax"]


def grad_for(grad, target):
    """A gradient for the sparse `target`: a dense one as it is, a sparse one restricted to
    target's entries (PyTorch's sparse_mask onto the coalesced target)."""
    if grad is None or not grad.is_sparse:
        return grad
    c = target._coalesced_parts()
    return target._from_parts((c[0], K.values_at(grad, c[0], target._sizes)),
                              target._sizes, coalesced=True)


def _coo(indices, values, sizes, coalesced=False):
    from tensorlib.sparse._coo import SparseCooTensor
    return SparseCooTensor._from_parts((indices, values), sizes, coalesced=coalesced)


class FromValues(Function):
    """sparse_coo_tensor(indices, values): values' gradient is the incoming gradient at each
    entry (every duplicate of a position gets that position's)."""

    @staticmethod
    def forward(ctx, indices, values, sizes, coalesced):
        ctx.indices, ctx.sizes = indices, sizes
        return _coo(indices, values.detach(), sizes, coalesced)

    @staticmethod
    def backward(ctx, grad):
        return None, K.values_at(grad, ctx.indices, ctx.sizes), None, None


class ToDense(Function):
    @staticmethod
    def forward(ctx, sparse):
        ctx.sparse = sparse.detach()
        return sparse._dense()

    @staticmethod
    def backward(ctx, grad):
        return grad_for(_coo_of(grad, ctx.sparse), ctx.sparse)


def _coo_of(dense, like):
    """A dense gradient as a sparse one on like's coalesced entries."""
    c = like._coalesced_parts()
    return _coo(c[0], K.values_at(dense, c[0], like._sizes), like._sizes, coalesced=True)


class ToSparse(Function):
    """dense.to_sparse(): the dense input's gradient is the incoming one, densified."""

    @staticmethod
    def forward(ctx, dense, sparse_dim):
        from tensorlib.sparse._coo import dense_to_coo
        return dense_to_coo(dense, sparse_dim)

    @staticmethod
    def backward(ctx, grad):
        return (grad.to_dense() if grad.is_sparse else grad), None


class Coalesce(Function):
    @staticmethod
    def forward(ctx, sparse):
        ctx.sparse = sparse.detach()
        indices, values = sparse._coalesced_parts()
        return sparse._from_parts((indices, values), sparse._sizes, coalesced=True)

    @staticmethod
    def backward(ctx, grad):
        return grad_for(grad, ctx.sparse)


class Values(Function):
    """values() of a coalesced tensor: its gradient is a sparse one on the same entries."""

    @staticmethod
    def forward(ctx, sparse):
        ctx.sparse = sparse.detach()
        return sparse._values_t.view(sparse._values_t._sizes)

    @staticmethod
    def backward(ctx, grad):
        s = ctx.sparse
        return _coo(s._indices_t, grad, s._sizes, coalesced=True)


class MapValues(Function):
    """A linear map of the values, entries kept (x * 2, -x, a cast, a move): the gradient is
    `grad_fn` of the incoming gradient, dense or sparse (whose values it maps alike)."""

    @staticmethod
    def forward(ctx, sparse, fn, grad_fn, device):
        ctx.sparse, ctx.grad_fn = sparse.detach(), grad_fn
        return sparse._with(lambda name, t: fn(t) if name == sparse._components[-1]
                            else t.to(device))

    @staticmethod
    def backward(ctx, grad):
        if grad.is_sparse:
            grad = grad._map_values(ctx.grad_fn, ctx.grad_fn)
        else:
            grad = ctx.grad_fn(grad)
        return grad_for(grad, ctx.sparse), None, None, None


class Unary(Function):
    """A zero-preserving elementwise function (abs, sqrt, tanh, x ** 2, ...) of the coalesced
    values; its derivative is the dense function's, taken by autograd in backward."""

    @staticmethod
    def forward(ctx, sparse, fn):
        indices, values = sparse._coalesced_parts()
        ctx.indices, ctx.values, ctx.fn, ctx.sizes = indices, values, fn, sparse._sizes
        return _coo(indices, fn(values), sparse._sizes, coalesced=True)

    @staticmethod
    def backward(ctx, grad):
        g = K.values_at(grad, ctx.indices, ctx.sizes)
        with tensorlib.enable_grad():
            v = ctx.values.detach().requires_grad_(True)
            (gv,) = tensorlib.autograd.grad(ctx.fn(v), v, g)
        return _coo(ctx.indices, gv, ctx.sizes, coalesced=True), None


class Transpose(Function):
    @staticmethod
    def forward(ctx, sparse, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return sparse._transposed(dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Add(Function):
    """a + alpha * b of two sparse tensors of one size: the entries of both, concatenated
    (coalesced when both were)."""

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.a, ctx.b, ctx.alpha = a.detach(), b.detach(), alpha
        values_b = b._values_t if alpha == 1 else b._values_t * alpha
        indices = tensorlib.cat([a._indices_t, b._indices_t], 1)
        values = tensorlib.cat([a._values_t, values_b], 0)
        if a._coalesced and b._coalesced:
            indices, values = K.coalesce_parts(indices, values, a._sizes)
            return _coo(indices, values, a._sizes, coalesced=True)
        return _coo(indices, values, a._sizes)

    @staticmethod
    def backward(ctx, grad):
        gb = grad if ctx.alpha == 1 else grad * ctx.alpha
        return grad_for(grad, ctx.a), grad_for(gb, ctx.b), None


class SparseMM(Function):
    """torch.sparse.mm(sparse, dense): the sparse matrix's gradient is sparse, on its
    coalesced entries: grad[r, c] = <G[r], dense[c]>; the dense one is sparse^T @ G."""

    @staticmethod
    def forward(ctx, sparse, dense):
        ctx.sparse, ctx.dense = sparse.detach(), dense.detach()
        idx = sparse._indices_t
        return K.coo_mm(idx[0], idx[1], sparse._values_t, sparse._sizes[0], dense)

    @staticmethod
    def backward(ctx, grad):
        s, d = ctx.sparse, ctx.dense
        gs = gd = None
        if ctx.needs_input_grad[0]:
            indices, _ = s._coalesced_parts()
            gs = _coo(indices, K.sampled_dot(indices[0], indices[1], grad, d), s._sizes,
                      coalesced=True)
        if ctx.needs_input_grad[1]:
            idx = s._indices_t
            gd = K.coo_mm(idx[1], idx[0], s._values_t, s._sizes[1], grad)
        return gs, gd


class Sum(Function):
    """torch.sparse.sum over `dims` (sorted, nonempty): dense when every sparse dim is summed,
    else sparse over the rest; the input's gradient is the incoming one at each entry's
    reduced position, on the coalesced entries."""

    @staticmethod
    def forward(ctx, sparse, dims):
        from tensorlib.sparse._ops import sum_forward
        ctx.sparse, ctx.dims = sparse.detach(), dims
        return sum_forward(sparse, dims)

    @staticmethod
    def backward(ctx, grad):
        s, dims = ctx.sparse, ctx.dims
        indices, values = s._coalesced_parts()
        nsparse = indices._sizes[0]
        kept = [d for d in range(nsparse) if d not in dims]
        dense_dims = [d - nsparse + 1 for d in dims if d >= nsparse]
        if kept:
            reduced_sizes = tuple(s._sizes[d] for d in kept) + \
                tuple(n for d, n in enumerate(s._sizes) if d >= nsparse and d not in dims)
            g = K.values_at(grad, indices[kept], reduced_sizes)
        else:
            g = grad.unsqueeze(0).expand((values._sizes[0],) + grad._sizes)
        for d in dense_dims:
            g = g.unsqueeze(d)
        g = g.expand(values._sizes).contiguous()
        return _coo(indices, g.to(s.dtype), s._sizes, coalesced=True), None


class Softmax(Function):
    """torch.sparse.softmax / log_softmax along `dim` over each line's specified entries."""

    @staticmethod
    def forward(ctx, sparse, dim, log):
        from tensorlib.sparse._ops import softmax_groups
        indices, values = sparse._coalesced_parts()
        groups, count = softmax_groups(indices, sparse._sizes, dim)
        out = _segment_softmax(values, groups, count, log)
        ctx.indices, ctx.groups, ctx.count, ctx.log = indices, groups, count, log
        ctx.out, ctx.sizes, ctx.sparse = out, sparse._sizes, sparse.detach()
        return _coo(indices, out, sparse._sizes, coalesced=True)

    @staticmethod
    def backward(ctx, grad):
        g = K.values_at(grad, ctx.indices, ctx.sizes)
        y = ctx.out
        if ctx.log:
            total = _segment_sum(g, ctx.groups, ctx.count)
            gx = g - y.exp() * total.index_select(0, ctx.groups)
        else:
            total = _segment_sum(g * y, ctx.groups, ctx.count)
            gx = y * (g - total.index_select(0, ctx.groups))
        return _coo(ctx.indices, gx, ctx.sizes, coalesced=True), None, None


def _segment_sum(values, groups, count):
    out = tensorlib.zeros((count,) + values._sizes[1:], dtype=values.dtype,
                          device=values.device)
    return out.index_add_(0, groups, values)


def _segment_softmax(values, groups, count, log):
    """Softmax of `values` within each group (entries of one line), numerically stable."""
    if values._sizes[0] == 0:
        return values.clone()
    peak = tensorlib.full((count,) + values._sizes[1:], float("-inf"), dtype=values.dtype,
                          device=values.device)
    peak = peak.scatter_reduce(0, _expand_index(groups, values), values, "amax",
                               include_self=True)
    shifted = values - peak.index_select(0, groups)
    e = shifted.exp()
    total = _segment_sum(e, groups, count).index_select(0, groups)
    return shifted - total.log() if log else e / total


def _expand_index(groups, values):
    return groups.reshape(groups._sizes + (1,) * (values.dim() - 1)).expand(values._sizes)
