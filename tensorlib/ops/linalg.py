"""matmul with PyTorch's rules (1-D operands, batch broadcasting) over the batched GEMM
primitive."""
import functools
import inspect
import math

from tensorlib import _capture_state
from tensorlib._C import views as _views
from tensorlib._C.grad_mode import is_grad_enabled
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib.ops._composites import optional_kernel
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import TensorImpl as _TensorImpl, numel
from tensorlib._layout import strided as _strided
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._autocast import autocast_op as _autocast_op


def _check(a, b):
    if a._device is not b._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a._device} and {b._device}!")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a._dtype.name} != {b._dtype.name}")
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.dim()}D and {b.dim()}D")


def _matrix_product(a, b):
    """matrix @ matrix (or vector) with the sizes, dtypes and device agreeing and k > 0, on a
    backend with an `mm` kernel: straight to it, skipping the views and the batch logic (an
    8x8 product spent ~5 us of its ~9 us there); None for everything else."""
    sa, sb = a._sizes, b._sizes
    if len(sa) != 2 or not 0 < len(sb) <= 2 or sa[1] != sb[0] or sa[1] == 0 \
            or a._device is not b._device or a._dtype is not b._dtype:
        return None
    mm = optional_kernel(a._device, "mm")
    if mm is None:
        return None
    out = empty((sa[0], sb[1]) if len(sb) == 2 else (sa[0],), a._dtype, a._device)
    mm(out, a, b)
    return out


@differentiable("matmul")
def matmul(a, b):
    out = _matrix_product(a, b)
    if out is not None:
        return out
    if a.layout is not _strided or b.layout is not _strided:     # tensorlib/sparse/_ops.py
        from tensorlib.sparse._ops import sparse_matmul
        return sparse_matmul(a, b)
    _check(a, b)
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(1) if b.dim() == 1 else b
    m, k = a2._sizes[-2:]
    k2, n = b2._sizes[-2:]
    if k != k2:
        if a.dim() == 1 or b.dim() == 1:
            raise RuntimeError(f"size mismatch, got input ({a2._sizes[0]}), mat ({m}x{k}), "
                               f"vec ({k2})" if b.dim() == 1 else
                               f"size mismatch, got input ({k}), mat ({k2}x{n})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    batch = broadcast_shapes(a2._sizes[:-2], b2._sizes[:-2])
    nbatch = numel(batch)
    shape = batch + ((m,) if a.dim() > 1 else ()) + ((n,) if b.dim() > 1 else ())
    out = empty(shape, a._dtype, a._device)        # the result owns its memory (not a view)
    if not batch:       # matrices: the primitive's batch of one, as raw views (no op calls)
        a3, b3 = _views.unsqueeze(a2, 0), _views.unsqueeze(b2, 0)
        gemm_out = _views.view(out, (1, m, n))
    elif len(a2._sizes) == 3 and len(b2._sizes) == 3 and a2._sizes[0] == b2._sizes[0]:
        a3, b3, gemm_out = a2, b2, out      # bmm's operands as they are (no op calls)
    else:
        a3 = a2.expand(batch + (m, k)).reshape(nbatch, m, k)
        b3 = b2.expand(batch + (k, n)).reshape(nbatch, k, n)
        gemm_out = out.view((nbatch, m, n))
    if k == 0:
        lookup("fill", a._device)(gemm_out, 0)
    else:
        lookup("matmul", a._device)(gemm_out, a3, b3)
    return out


@differentiable("mm")
def mm(input, mat2):  # noqa: A002 - torch's names
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.dim()}D and {mat2.dim()}D")
    return matmul(input, mat2)


# ---- products with PyTorch's checks (compositions of matmul: differentiable as they stand) ----
def _same_device(*xs):
    for x in xs[1:]:
        if x._device is not xs[0]._device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {xs[0]._device} and {x._device}!")


@_autocast_op("bmm")
def bmm(input, mat2):  # noqa: A002 - torch's names
    """(B, n, m) @ (B, m, p) -> (B, n, p); no broadcasting."""
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2._sizes[:2] != (input._sizes[0], input._sizes[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input._sizes[0]}, {input._sizes[2]}] but got: "
                           f"[{mat2._sizes[0]}, {mat2._sizes[1]}].")
    return matmul(input, mat2)


@_autocast_op("mv")
def mv(input, vec):  # noqa: A002 - torch's names
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, "
                           f"{vec.dim()}")
    return matmul(input, vec)


@_autocast_op("dot")
def dot(input, tensor):  # noqa: A002 - torch's names
    """1-D . 1-D -> 0-dim, same dtype and length."""
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D "
                           f"tensors")
    if input._dtype is not tensor._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input._dtype.scalar_name} and {tensor._dtype.scalar_name}")
    if input._sizes != tensor._sizes:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._sizes[0]}] and "
                           f"src [{tensor._sizes[0]}] to have the same number of elements, but got "
                           f"{input._sizes[0]} and {tensor._sizes[0]} elements respectively")
    return matmul(input, tensor)


def vdot(input, other):  # noqa: A002 - torch's names
    """dot; real dtypes only, so nothing to conjugate."""
    return dot(input, other)


def inner(a, b):
    """Contract the last dims; a 0-dim operand scales the other."""
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if a._sizes[-1] != b._sizes[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a._sizes)} and {list(b._sizes)}")
    return tensordot(a, b, ([a.dim() - 1], [b.dim() - 1]))


def outer(input, vec2):  # noqa: A002 - torch's names
    for name, x in (("self", input), ("vec2", vec2)):
        if x.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.dim()}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


def _scaled(x, factor):
    return x if factor == 1 else x * factor


def _add_scaled(input, product, beta, alpha):  # noqa: A002
    """beta * input + alpha * product; beta == 0 ignores input (NaN included), as torch."""
    product = _scaled(product, alpha)
    if beta == 0:
        return product
    return _scaled(input, beta) + product


def _broadcast(input, product):  # noqa: A002
    """input must expand to the product's shape (torch's message names the first bad dim)."""
    target, have = product._sizes, input._sizes
    if have == target[len(target) - len(have):]:       # a Linear's bias: nothing to check
        return
    ok = len(have) <= len(target) and all(h in (1, t) for h, t in
                                          zip(reversed(have), reversed(target)))
    if not ok:
        bad = next((i for i in range(1, min(len(have), len(target)) + 1)
                    if have[-i] not in (1, target[-i])), 1)
        raise RuntimeError(f"The expanded size of the tensor ({target[-bad] if target else 1}) "
                           f"must match the existing size ({have[-bad]}) at non-singleton "
                           f"dimension {len(target) - bad}.  Target sizes: {list(target)}.  "
                           f"Tensor sizes: {list(have)}")


def _fusable(input, mat1, mat2, beta):  # noqa: A002
    """Whether beta * input + alpha * mat1 @ mat2 can be one GEMM onto a copy of input: a
    backend with an `addmm` kernel, matrices whose sizes agree (k > 0), one floating dtype
    and device, and beta != 0 (beta == 0 must ignore input's NaNs). Others take the checked path."""
    sa, sb = mat1._sizes, mat2._sizes
    dev = mat1._device
    return (beta != 0 and len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and sa[1] != 0
            and input._device is dev and mat2._device is dev
            and input._dtype is mat1._dtype and mat2._dtype is mat1._dtype
            and mat1._dtype.is_floating_point and optional_kernel(dev, "addmm") is not None)


def _fused_addmm(input, mat1, mat2, beta, alpha):  # noqa: A002
    """The product written onto input broadcast to its shape: one pass over the output, not
    a product and then an add pass."""
    dev = mat1._device
    out = empty((mat1._sizes[0], mat2._sizes[1]), mat1._dtype, dev)
    _broadcast(input, out)
    if beta == 1 and alpha == 1 and len(input._sizes) == 1:
        bias = optional_kernel(dev, "addmm_bias")     # the bias copied on the GEMM's threads
        if bias is not None and bias(out, mat1, mat2, input):
            return out
    lookup("copy", dev)(out, _views.expand(input, out._sizes))    # (copy_'s checks hold)
    optional_kernel(dev, "addmm")(out, mat1, mat2, beta, alpha)
    return out


@differentiable("addmm")
def _addmm(input, mat1, mat2, beta, alpha):  # noqa: A002
    """The fused product as one node (AddmmBackward0)."""
    return _fused_addmm(input, mat1, mat2, beta, alpha)


def _half_in_float(fn):
    """beta * input + alpha * product of float16/bfloat16 operands computed in float32 and
    rounded once, as PyTorch's kernels do: rounding the product, then the scaled sum, moved
    Newton-Schulz iterations (Muon's orthogonalization) off PyTorch's values by 10%."""
    first, second = list(inspect.signature(fn).parameters)[1:3]

    @functools.wraps(fn)
    def wrapper(input, a=None, b=None, *, beta=1, alpha=1, **named):  # noqa: A002
        if named:                           # the operands by fn's names (mat1=, batch2=...)
            a, b = named.pop(first, a), named.pop(second, b)
            if named:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument "
                                f"'{next(iter(named))}'")
        if a is None or b is None:
            raise TypeError(f"{fn.__name__}() missing required argument "
                            f"'{first if a is None else second}'")
        dtype = a._dtype
        if dtype.name in ("float16", "bfloat16") and input._dtype is dtype \
                and b._dtype is dtype:
            return fn(input.float(), a.float(), b.float(), beta=beta, alpha=alpha).to(dtype)
        return fn(input, a, b, beta=beta, alpha=alpha)
    return wrapper


@_autocast_op("addmm")
@_half_in_float
def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    if mat1.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    if _fusable(input, mat1, mat2, beta):
        return _addmm(input, mat1, mat2, beta, alpha)
    product = matmul(mat1, mat2)
    _broadcast(input, product)
    return _add_scaled(input, product, beta, alpha)


@_autocast_op("addmv")
@_half_in_float
def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    product = mv(mat, vec)
    _broadcast(input, product)
    return _add_scaled(input, product, beta, alpha)


@_autocast_op("baddbmm")
@_half_in_float
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    product = bmm(batch1, batch2)
    _broadcast(input, product)
    return _add_scaled(input, product, beta, alpha)


@_autocast_op("addbmm")
@_half_in_float
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    product = bmm(batch1, batch2).sum(0)
    _broadcast(input, product)
    return _add_scaled(input, product, beta, alpha)


@_autocast_op("addr")
@_half_in_float
def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002
    product = outer(vec1, vec2)
    _broadcast(input, product)
    return _add_scaled(input, product, beta, alpha)


# ---- tensordot and einsum ----------------------------------------------------------------
def _dims_pair(a, b, dims):
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(a.dim() - dims, a.dim())), list(range(dims))
    if hasattr(dims, "tolist"):
        dims = dims.tolist()
    if len(dims) != 2:
        raise RuntimeError("tensordot expects dims to be an int or a pair of dim lists")
    da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, got {len(da)} and "
                           f"{len(db)}")
    from tensorlib._C.views import wrap_dim
    return [wrap_dim(d, a.dim()) for d in da], [wrap_dim(d, b.dim()) for d in db]


@_autocast_op("tensordot")
def tensordot(a, b, dims=2):
    """Contract a's dims[0] with b's dims[1]: permute both, reshape to matrices, one matmul."""
    da, db = _dims_pair(a, b, dims)
    for x, y in zip(da, db):
        if a._sizes[x] != b._sizes[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._sizes[x]} in dim {x} and second has size {b._sizes[y]} in "
                               f"dim {y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = numel(tuple(a._sizes[d] for d in da))
    out_shape = tuple(a._sizes[d] for d in free_a) + tuple(b._sizes[d] for d in free_b)
    m = numel(tuple(a._sizes[d] for d in free_a))
    n = numel(tuple(b._sizes[d] for d in free_b))
    a2 = a.permute(free_a + da).reshape(m, k)
    b2 = b.permute(db + free_b).reshape(k, n)
    return matmul(a2, b2).reshape(out_shape)


@_autocast_op("einsum")
def einsum(equation, *operands):
    """Einstein summation, any number of operands, explicit ('ij,jk->ik') or implicit output,
    repeated labels in one operand (diagonals), '...' (broadcast), size-1 broadcasting.
    Each operand first loses its repeated labels (diagonal) and the labels no one else needs
    (summed); then operands are contracted left to right, each pair by one batched matmul."""
    if isinstance(equation, _TensorImpl):
        equation, operands = _einsum_sublists((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _einsum_parse(equation, operands)
    for x in operands[1:]:
        if x._dtype is not operands[0]._dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, got "
                               f"{operands[0]._dtype.scalar_name} and {x._dtype.scalar_name}")
    _same_device(*operands)
    work = [_einsum_diagonal(x, labels) for x, labels in zip(operands, terms)]
    for i, (x, labels) in enumerate(work):
        needed = set(output).union(*(ls for j, (_, ls) in enumerate(work) if j != i))
        work[i] = _einsum_sum(x, labels, needed)
    x, labels = work[0]
    for i in range(1, len(work)):
        needed = set(output).union(*(ls for _, ls in work[i + 1:]))
        x, labels = _einsum_pair(x, labels, *work[i], needed)
    x, labels = _einsum_sum(x, labels, set(output))
    return x.permute([labels.index(lab) for lab in output]) if labels != output else x


_SUBLIST_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_sublists(args):
    """torch's sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2]) as an equation: labels
    0..51 are letters, Ellipsis is '...'."""
    def term(sublist):
        letters = []
        for label in sublist:
            if label is Ellipsis:
                letters.append("...")
            elif isinstance(label, int) and 0 <= label < 52:
                letters.append(_SUBLIST_LETTERS[label])
            else:
                raise RuntimeError(f"einsum(): expected subscript to be within the range [0, "
                                   f"52), but got {label}")
        return "".join(letters)
    operands, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    output = None
    if len(operands) > len(terms):          # the last one is the output sublist
        output = operands.pop()
        output = term(output)
    equation = ",".join(terms) + ("" if output is None else "->" + output)
    return equation, tuple(operands)


def _einsum_parse(equation, operands):
    """Per-operand label lists and the output's; '...' dims become labels '.0', '.1', ...
    right-aligned across operands (so they broadcast like numpy's)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    for term in terms + [rhs]:
        letters = term.replace("...", "", 1)
        if not all(c.isalpha() and c.isascii() for c in letters):
            raise RuntimeError(f"einsum(): invalid subscript given in the equation "
                               f"'{equation}': subscripts are letters a-z/A-Z and one '...'")
    n_ell = []
    for i, (term, x) in enumerate(zip(terms, operands)):
        letters = len(term.replace("...", ""))
        if "..." not in term and letters != x.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) "
                               f"does not match the number of dimensions ({x.dim()}) for "
                               f"operand {i} and no ellipsis was given")
        if "..." in term and letters > x.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) "
                               f"is more than the number of dimensions ({x.dim()}) for operand "
                               f"{i}")
        n_ell.append(x.dim() - letters if "..." in term else 0)
    total = max(n_ell, default=0)
    ell = [f".{k}" for k in range(total)]
    labels = [_einsum_labels(term, ell[total - n:]) for term, n in zip(terms, n_ell)]
    if not arrow:
        counts = {}
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        return labels, ell + sorted(c for c, n in counts.items() if n == 1)
    output = _einsum_labels(rhs, ell)
    seen = {lab for ls in labels for lab in ls}
    for c in output:
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                               f"output")
        if c not in seen and not c.startswith("."):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               f"equation for any input operand")
    return labels, [c for c in output if c in seen]


def _einsum_labels(term, ell):
    before, dots, after = term.partition("...")
    return list(before) + (ell if dots else []) + list(after)


def _einsum_diagonal(x, labels):
    """Repeated labels in one operand select its diagonal ('ii->i')."""
    labels = list(labels)
    for lab in list(labels):
        while labels.count(lab) > 1:
            p = labels.index(lab)
            q = labels.index(lab, p + 1)
            if x._sizes[p] != x._sizes[q]:
                raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand but the "
                                   f"sizes don't match, {x._sizes[p]} != {x._sizes[q]}")
            x = x.diagonal(0, p, q)
            labels = [lab_ for i, lab_ in enumerate(labels) if i not in (p, q)] + [lab]
    return x, labels


def _einsum_sum(x, labels, needed):
    dims = [i for i, lab in enumerate(labels) if lab not in needed]
    if not dims:
        return x, labels
    return x.sum(dims), [lab for lab in labels if lab in needed]


def _einsum_pair(x, xl, y, yl, needed):
    """Contract two operands: shared labels still needed later are batch dims, the other
    shared labels are summed by the matmul; size-1 dims broadcast."""
    x, xl = _einsum_sum(x, xl, needed | set(yl))
    y, yl = _einsum_sum(y, yl, needed | set(xl))
    size = {}
    for t, ls in ((x, xl), (y, yl)):
        for lab, n in zip(ls, t._sizes):
            if size.get(lab, 1) != 1 and n != 1 and size[lab] != n:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes: "
                                   f"subscript {lab} has size {size[lab]} and {n}")
            size[lab] = n if size.get(lab, 1) == 1 else size[lab]
    batch = [lab for lab in xl if lab in yl and lab in needed]
    summed = [lab for lab in xl if lab in yl and lab not in needed]
    x_only = [lab for lab in xl if lab not in yl]
    y_only = [lab for lab in yl if lab not in xl]

    def arrange(t, ls, order):
        t = t.permute([ls.index(lab) for lab in order])
        return t.expand(tuple(size[lab] for lab in order))

    nb, nx, ns, ny = (numel(tuple(size[lab] for lab in group))
                      for group in (batch, x_only, summed, y_only))
    a = arrange(x, xl, batch + x_only + summed).reshape(nb, nx, ns)
    b = arrange(y, yl, batch + summed + y_only).reshape(nb, ns, ny)
    out = matmul(a, b).reshape(tuple(size[lab] for lab in batch + x_only + y_only))
    return out, batch + x_only + y_only


def kron(a, b):
    """Kronecker product: out[i*m + k] = a[i] * b[k], over every dim (the shorter operand
    gets leading 1s)."""
    nd = max(a.dim(), b.dim())
    a = a.reshape((1,) * (nd - a.dim()) + tuple(a._sizes))
    b = b.reshape((1,) * (nd - b.dim()) + tuple(b._sizes))
    a_idx = tuple(s for n in a._sizes for s in (n, 1))
    b_idx = tuple(s for n in b._sizes for s in (1, n))
    out = a.reshape(a_idx) * b.reshape(b_idx)
    return out.reshape(tuple(x * y for x, y in zip(a._sizes, b._sizes)))


# ---- norms (tensorlib.linalg) --------------------------------------------------------------
def _norm_dtype(name, x, dtype):
    if dtype is not None:
        x = x.to(dtype)
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{x._dtype.scalar_name}")
    return x


@differentiable("vector_norm")
def _vector_norm(x, ord, dims, keepdim):  # noqa: A002
    kernel = optional_kernel(x._device, "vector_norm")
    if kernel is not None:
        sizes = tuple(1 if d in dims else n for d, n in enumerate(x._sizes)) if keepdim \
            else tuple(n for d, n in enumerate(x._sizes) if d not in dims)
        out = empty(sizes, x._dtype, x._device)
        if kernel(out, x, ord, dims):
            return out
    if ord == 2:                # x * x is |x|^2 (x is real here): no pass for |x|
        return (x * x).sum(dims, keepdim).sqrt()
    a = x.abs()
    if ord == math.inf:
        return a.amax(dims, keepdim)
    if ord == -math.inf:
        return a.amin(dims, keepdim)
    if ord == 0:
        return a.ne(0).sum(dims, keepdim, dtype=x._dtype)
    if ord == 1:
        return a.sum(dims, keepdim)
    return (a ** ord).sum(dims, keepdim) ** (1.0 / ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """(sum |x|^ord)^(1/ord) over dim (all dims by default); inf/-inf: max/min |x|; 0: the
    count of non-zeros."""
    from tensorlib.ops._args import dims_arg
    x = _norm_dtype("linalg.vector_norm", x, dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    if dim == () or dim == []:
        dim = None
    dims = dims_arg(dim, x.dim())
    if x.numel() == 0 and ord < 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           f"tensor because the operation does not have an identity")
    if ord == float("inf") and x.numel() == 0:
        for d in (dims if dims else range(x.dim())):
            if x._sizes[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the inf norm on the "
                                   f"dimension {d} because this dimension is empty and the "
                                   f"operation does not have an identity")
    if x._dtype.is_complex:          # the norm of the moduli, in the parts' dtype
        x = x.abs()
    if x._dtype.name in ("float16", "bfloat16"):
        # squares and sums in float32, rounded once at the end, as PyTorch's: bfloat16
        # squares summed in bfloat16 gave 0.996 for a unit vector (Newton-Schulz
        # orthogonalization divides by this norm)
        return _vector_norm(x.float(), float(ord), dims, bool(keepdim)).to(x._dtype)
    return _vector_norm(x, float(ord), dims, bool(keepdim))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', 1/-1 (max/min column sum of |A|), inf/-inf (max/min row sum) over the two dims;
    2, -2 and 'nuc': the largest, smallest and summed singular values (SVD)."""
    from tensorlib._C.views import wrap_dim
    A = _norm_dtype("linalg.matrix_norm", A, dtype)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {tuple(dim)}")
    rows, cols = (wrap_dim(d, A.dim()) for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {cols})")
    if ord in ("nuc", 2, -2):
        from tensorlib.ops.decompositions import svdvals
        moved = A.movedim((rows, cols), (-2, -1))
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return out.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols)) if keepdim else out
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, picked = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(picked, keepdim=True) if ord > 0 else sums.amin(picked, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """linalg.norm: a vector norm for 1 dim (or a flattened input when ord and dim are None),
    a matrix norm for 2."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.dim()}D.")
        dim = tuple(range(A.dim()))
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)


__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
           "addmv", "addbmm", "baddbmm", "addr", "tensordot", "einsum", "kron"]


def _inplace(fn):
    def method(self, *args, **kwargs):
        from tensorlib.ops._inplace import inplace_composite
        return inplace_composite(fn)(self, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


TENSOR_METHODS = {name: globals()[name] for name in
                  ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
                   "addmv", "addbmm", "baddbmm", "addr", "kron")}
TENSOR_METHODS.update({f"{name}_": _inplace(globals()[name])
                       for name in ("addmm", "addmv", "addbmm", "baddbmm", "addr")})


def linear_relu_no_grad(x, weight, bias):
    """relu(x @ weight.T + bias) by the backend's fused kernel (bias and relu in the GEMM's
    epilogue: no second pass over the output), for 2-D x when no gradient is wanted; None
    where that does not apply (the caller runs linear, then relu). Not while a compile
    capture records: its kernels answer only when the graph runs."""
    if (_capture_state.current is not None or bias is None or x.dim() != 2
            or bias.dim() != 1 or weight.dim() != 2):
        return None
    if is_grad_enabled() and (x._requires_grad or weight._requires_grad
                              or bias._requires_grad):
        return None
    weight_t = weight.t()
    kernel = optional_kernel(x._device, "addmm_bias_relu")
    if kernel is None or not _fusable(bias, x, weight_t, 1):
        return None
    out = empty((x._sizes[0], weight_t._sizes[1]), x._dtype, x._device)
    return out if kernel(out, x, weight_t, bias) else None


@differentiable("linear")
def linear(x, weight, bias=None):
    """x @ weight.T + bias as one op, so its backward gives the weight's gradient in the
    weight's own (row-major) layout: the optimizer then updates it in one fused pass."""
    if (bias is not None and x._dtype.name in ("float16", "bfloat16")
            and weight._dtype is x._dtype and bias._dtype is x._dtype
            and (x.dim() == 2 or (bias.dim() == 1 and x.is_contiguous()))):
        # PyTorch folds these into one addmm, computed in float32 and rounded once; its
        # other inputs take matmul, then add_ (rounded twice), as below
        return linear(x.float(), weight.float(), bias.float()).to(x._dtype)
    weight_t = weight.t()
    if bias is not None and len(x._sizes) == 2 and _fusable(bias, x, weight_t, 1):
        return _fused_addmm(bias, x, weight_t, 1, 1)
    out = matmul(x, weight_t)
    if bias is not None:
        out.add_(bias)
    return out
