"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian: torch.func's transforms built on
the tape (`autograd.grad`), composable with each other and with vmap.

A transform runs the function on fresh leaves (or, for tensors that already take part in an
outer transform's graph, on differentiable aliases of them) and differentiates with
`autograd.grad`. It keeps the graph of its own derivative (create_graph) only when the
result depends on something outside it that requires grad: an outer transform's input or a
captured parameter. So grad(grad(f)) and loss.backward() through grad(f) work, while a
top-level grad(f)(x) returns plain tensors, as in PyTorch.

jvp and jacfwd use the double-backward trick (the vjp is linear in its cotangent u, so
differentiating <vjp(u), v> with respect to u gives J v), not forward-mode dual tensors: it
works for every op that has a backward formula."""
import contextlib
import functools

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.graph import AccumulateGrad
from tensorlib.autograd.grad_mode import enable_grad
from tensorlib.func._batching import _autograd as _batched_autograd
from tensorlib.func._batching._batched import innermost
from tensorlib.func._tree import spec_str, tree_flatten, tree_unflatten
from tensorlib.ops import random as _random

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# ---- levels: entering a transform and leaving it ---------------------------------------------
def _enter(t):
    """The tensor a transform differentiates with respect to (inside vmap, batched at every
    level, so its gradient is per sample: see _batching/_autograd.py)."""
    return _batched_autograd.enter(t)


def _depends_on_outside(outputs, own):
    """Whether some output reaches, through the graph, a tensor requiring grad that this
    transform did not create (then its derivative must itself be differentiable)."""
    own_ids = {id(t) for t in _batched_autograd.physical(own)}
    outputs = [innermost(t) for t in outputs]
    stack, seen = [], set()
    for t in outputs:
        if isinstance(t, TensorImpl) and t.requires_grad:
            if t.grad_fn is None:
                if id(t) not in own_ids:
                    return True
            else:
                stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own_ids:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _leave(tree, keep_graph):
    """Results as the caller sees them: detached unless an outer graph needs them."""
    if keep_graph:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if isinstance(x, TensorImpl) else x for x in leaves],
                          spec)


def _grads(outputs, inputs, cotangents, create_graph, retain_graph=None):
    """autograd.grad with zeros for inputs the outputs do not reach."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [tensorlib.zeros_like(x) for x in inputs]
    res = _batched_autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                                 retain_graph=retain_graph, create_graph=create_graph,
                                 allow_unused=True)
    return [tensorlib.zeros_like(x) if g is None else g for g, x in zip(res, inputs)]


def _error_if_complex(what, leaves, is_input):
    """jacrev/jacfwd are defined for real functions only (torch's check, same message)."""
    for i, x in enumerate(leaves):
        if isinstance(x, TensorImpl) and x.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{what}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _check_tensors(leaves, what):
    for x in leaves:
        if not isinstance(x, TensorImpl):
            raise RuntimeError(f"{what}: Expected all elements to be Tensors, got "
                               f"{type(x).__name__}")


# ---- argnums -----------------------------------------------------------------------------------
def _argnums(argnums, nargs):
    """argnums as a tuple of non-negative positions, checked as PyTorch does."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and \
            all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return tuple(out)


def _enter_args(args, argnums, what):
    """(args with the differentiated ones replaced, their leaves, the spec rebuilding the
    differentiated arguments as `argnums` names them)."""
    if not args:
        raise RuntimeError(f"{what}: Expected at least one positional arg.")
    nums = _argnums(argnums, len(args))
    chosen = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
    leaves, spec = tree_flatten(chosen)
    _check_tensors(leaves, what)
    entered = [_enter(x) for x in leaves]
    new = tree_unflatten(entered, spec)
    args = list(args)
    if isinstance(argnums, int):
        args[nums[0]] = new
    else:
        for i, v in zip(nums, new):
            args[i] = v
    return tuple(args), entered, spec


def _split_aux(output, has_aux, what):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{what}: output of function f should be a tuple: (output, aux) "
                           f"if has_aux is True")
    return output


# ---- grad --------------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func with respect to `argnums`, func's value), or
    (gradient, (value, aux)) with has_aux. func must return a 0-dim tensor."""
    what = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer_grad = tensorlib.is_grad_enabled()
        with enable_grad():
            args, entered, spec = _enter_args(args, argnums, what)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, what)
            if not isinstance(output, TensorImpl):
                raise RuntimeError(f"{what}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{what}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use "
                                   f"the vjp or jacrev APIs instead?")
            keep = outer_grad and _depends_on_outside([output], entered)
            grads = _grads([output], entered, [tensorlib.ones_like(output)], keep)
        grads = tree_unflatten(grads, spec)
        value = _leave(output, keep)
        if has_aux:
            return grads, (value, _leave(aux, keep))
        return grads, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func (a 0-dim tensor) with respect to the
    arguments `argnums` names, in their structure; (gradient, aux) with has_aux."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# ---- vjp -----------------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) gives one gradient per primal."""
    outer_grad = tensorlib.is_grad_enabled()
    with enable_grad():
        leaves, spec = tree_flatten(primals)
        _check_tensors(leaves, "vjp(f, *primals)")
        entered = [_enter(x) for x in leaves]
        output, aux = _split_aux(func(*tree_unflatten(entered, spec)), has_aux,
                                 "vjp(f, *primals)")
        out_leaves, out_spec = tree_flatten(output)
        _check_tensors(out_leaves, "vjp(f, *primals): outputs")
        keep = outer_grad and _depends_on_outside(out_leaves, entered)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{spec_str(ct_spec)}, primal output: {spec_str(out_spec)}")
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{c.shape} and output[0] has a shape of {o.shape}.")
        graph = keep or bool(create_graph) or any(c.requires_grad for c in ct_leaves)
        with enable_grad():
            grads = _grads(out_leaves, entered, ct_leaves, graph, retain_graph=retain_graph)
        return tree_unflatten(grads, spec)

    result = (_leave(output, keep), vjp_fn)
    return result + (_leave(aux, keep),) if has_aux else result


# ---- jvp -----------------------------------------------------------------------------------
def _linearize(func, primals, what, has_aux):
    """Run func once and keep what the double-backward trick needs."""
    outer_grad = tensorlib.is_grad_enabled()
    with enable_grad():
        leaves, spec = tree_flatten(primals)
        _check_tensors(leaves, what)
        entered = [_enter(x) for x in leaves]
        output, aux = _split_aux(func(*tree_unflatten(entered, spec)), has_aux, what)
        out_leaves, out_spec = tree_flatten(output)
        _check_tensors(out_leaves, f"{what}: outputs")
        keep = outer_grad and _depends_on_outside(out_leaves, entered)
        cot = [_batched_autograd.fresh_leaf(o) for o in out_leaves]
        grad_inputs = _grads(out_leaves, entered, cot, create_graph=True)
    return entered, spec, output, out_leaves, out_spec, aux, keep, cot, grad_inputs


def _push_forward(tangent_leaves, out_leaves, cot, grad_inputs, keep):
    """J v for tangents v, through the linear map u -> vjp(u)."""
    with enable_grad():
        pairs = [(g, t) for g, t in zip(grad_inputs, tangent_leaves) if g.requires_grad]
        if not pairs:
            return [tensorlib.zeros_like(o) for o in out_leaves]
        res = _batched_autograd.grad([g for g, _ in pairs], cot, [t for _, t in pairs],
                                     retain_graph=True, create_graph=keep, allow_unused=True)
    return [tensorlib.zeros_like(o) if r is None else r for r, o in zip(res, out_leaves)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents[, aux]); primals and tangents are tuples of the same
    structure."""
    what = "jvp(f, primals, tangents)"
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"{what}: Expected {name} to be a tuple. E.g. it should be "
                               f"valid to call f(*primals).")
    if strict:
        raise RuntimeError(f"{what}: strict=True is not implemented in tensorlib.func.jvp")
    t_leaves, t_spec = tree_flatten(tangents)
    p_spec = tree_flatten(primals)[1]
    if t_spec != p_spec:
        raise RuntimeError(f"{what}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{spec_str(p_spec)} and tangents with structure {spec_str(t_spec)}")
    entered, _, output, out_leaves, out_spec, aux, keep, cot, grad_inputs = _linearize(
        func, primals, what, has_aux)
    for p, t in zip(entered, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size "
                               f"than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
    jv = _push_forward(t_leaves, out_leaves, cot, grad_inputs, keep)
    result = (_leave(output, keep), tree_unflatten(jv, out_spec))
    return result + (_leave(aux, keep),) if has_aux else result


# ---- jacobians -----------------------------------------------------------------------------
def _assemble(per_output, out_spec, in_spec):
    """The jacobian tree: the output's structure, each output leaf holding the inputs'
    structure of out.shape + in.shape tensors."""
    blocks = [tree_unflatten(row, in_spec) for row in per_output]
    return tree_unflatten(blocks, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The jacobian of func with respect to `argnums` by reverse mode, as PyTorch: vmap over
    the vjp with the unit vectors as cotangents. func runs once for the outputs' shapes and
    aux, then once batched over the unit vectors (`chunk_size` of them at a time), so the
    rows are one batched backward pass; randomness inside is vmap's 'same'."""
    from tensorlib.func._vmap import vmap
    _check_chunk_size(chunk_size)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer_grad = tensorlib.is_grad_enabled()
        with enable_grad():
            new_args, entered, in_spec = _enter_args(args, argnums,
                                                     "jacrev(f, argnums)(*args)")
            _error_if_complex("jacrev", entered, is_input=True)
            output, aux = _split_aux(func(*new_args, **kwargs), has_aux, "jacrev(f)(*args)")
            out_leaves, out_spec = tree_flatten(output)
            _check_tensors(out_leaves, "jacrev(f)(*args): outputs")
            _error_if_complex("jacrev", out_leaves, is_input=False)
            keep = outer_grad and _depends_on_outside(out_leaves, entered)
            sizes = [o.numel() for o in out_leaves]
            offsets = [sum(sizes[:k]) for k in range(len(sizes))]

            def row(unit):
                again, inputs, _ = _enter_args(args, argnums, "jacrev(f, argnums)(*args)")
                out, _ = _split_aux(func(*again, **kwargs), has_aux, "jacrev(f)(*args)")
                leaves = tree_flatten(out)[0]
                cts = [unit[o:o + n].reshape(tuple(x.shape)).to(x.dtype)
                       for o, n, x in zip(offsets, sizes, leaves)]
                return tuple(_grads(leaves, inputs, cts, keep, retain_graph=keep))

            total = sum(sizes)
            if total:
                first = out_leaves[0]
                basis = tensorlib.eye(total, dtype=first.dtype, device=first.device)
                rows = vmap(row, randomness="same", chunk_size=chunk_size)(basis)
            per_output = [[rows[i][o:o + n].reshape(tuple(out.shape) + tuple(x.shape))
                           if total else _stack([], 0, x, out) for i, x in enumerate(entered)]
                          for o, n, out in zip(offsets, sizes, out_leaves)]
        jac = _assemble(per_output, out_spec, in_spec)
        return (jac, _leave(aux, keep)) if has_aux else jac

    return wrapper


def _stack(items, dim, x, out):
    """The rows (dim 0) or columns (dim -1) of one jacobian block, stacked."""
    if items:
        return tensorlib.stack(items, dim=dim)
    return tensorlib.zeros(tuple(out.shape) + tuple(x.shape), dtype=out.dtype,
                           device=out.device)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The jacobian of func with respect to `argnums` by forward products, as PyTorch: vmap
    over J v for the unit vectors v (the double-backward trick), func running once for the
    outputs and aux, then once batched over the unit vectors."""
    from tensorlib.func._vmap import vmap
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args)) if args else None
        if nums is None:
            raise RuntimeError("jacfwd(f)(*args): Expected at least one positional arg.")
        chosen = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
        in_leaves, in_spec = tree_flatten(chosen)
        _check_tensors(in_leaves, "jacfwd(f, argnums)(*args)")
        _error_if_complex("jacfwd", in_leaves, is_input=True)

        def restricted(*diff):
            full = list(args)
            diff = tree_unflatten(list(diff), in_spec)
            if isinstance(argnums, int):
                full[nums[0]] = diff
            else:
                for i, v in zip(nums, diff):
                    full[i] = v
            return func(*full, **kwargs)

        with _random_guard(randomness):     # PyTorch's jacfwd runs under vmap's flag
            entered, _, output, out_leaves, out_spec, aux, keep, _, _ = \
                _linearize(restricted, tuple(in_leaves), "jacfwd(f)(*args)", has_aux)
        _error_if_complex("jacfwd", out_leaves, is_input=False)
        sizes = [x.numel() for x in entered]
        offsets = [sum(sizes[:k]) for k in range(len(sizes))]

        def column(unit):
            _, _, _, outs, _, _, _, cot, grad_inputs = _linearize(
                restricted, tuple(in_leaves), "jacfwd(f)(*args)", has_aux)
            tangents = [unit[o:o + n].reshape(tuple(x.shape)).to(x.dtype)
                        for o, n, x in zip(offsets, sizes, entered)]
            return tuple(_push_forward(tangents, outs, cot, grad_inputs, keep))

        total = sum(sizes)
        if total:
            first = entered[0]
            basis = tensorlib.eye(total, dtype=first.dtype, device=first.device)
            columns = vmap(column, randomness=randomness)(basis)
        per_output = [[columns[i][o:o + n].movedim(0, -1).reshape(
            tuple(out.shape) + tuple(x.shape)) if total else _stack([], -1, x, out)
            for o, n, x in zip(offsets, sizes, entered)] for i, out in enumerate(out_leaves)]
        jac = _assemble(per_output, out_spec, in_spec)
        return (jac, _leave(aux, keep)) if has_aux else jac

    return wrapper


@contextlib.contextmanager
def _random_guard(randomness):
    from tensorlib.func._vmap import _RandomGuard
    previous = _random.set_vmap_random_hook(_RandomGuard(randomness,
                                                         _random.vmap_random_hook()))
    try:
        yield
    finally:
        _random.set_vmap_random_hook(previous)


def hessian(func, argnums=0):
    """jacfwd(jacrev(func, argnums), argnums), as PyTorch defines it."""
    return jacfwd(jacrev(func, argnums), argnums)


def _check_chunk_size(chunk_size):
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
