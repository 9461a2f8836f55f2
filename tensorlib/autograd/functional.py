"""tensorlib.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp of a function of
tensors, with PyTorch's argument names, output structures and strict-mode errors.

Everything is built on `autograd.grad`: vjp is one backward pass; jvp, hvp and the
forward-mode jacobian use the double-backward trick (the vjp is linear in its cotangent u,
so differentiating <vjp(u), v> with respect to u gives J v), exactly as PyTorch's
`autograd.functional.jvp` does. `vectorize=True` is accepted and gives the same results
by looping over the basis vectors (PyTorch batches them with vmap)."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---- inputs and outputs as tuples ------------------------------------------------------------
def _as_tuple(value, arg_name, fn_name):
    """(was it a tuple, the value as a tuple of tensors); TypeError for anything else."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, TensorImpl):
            where = (f"the value at index {i} has type {type(el)}" if is_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return is_tuple, items


def _unpack(res, was_tuple):
    """Undo _as_tuple on a result: `was_tuple` is one flag, or (outputs, inputs) flags for a
    tuple-of-tuples result (jacobian, hessian)."""
    if isinstance(was_tuple, tuple):
        outputs_tuple, inputs_tuple = was_tuple
        if not inputs_tuple:
            res = tuple(el[0] for el in res)
        return res if outputs_tuple else res[0]
    return res if was_tuple else res[0]


def _prepare(inputs, create_graph, need_graph):
    """Inputs the function is called with: differentiable aliases when create_graph must
    keep the caller's graph, else fresh leaves."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(values, create_graph):
    if values and isinstance(values[0], TensorImpl):
        return values if create_graph else tuple(v.detach() for v in values)
    return tuple(_finish(v, create_graph) for v in values)


def _validate_v(v, other, other_is_tuple):
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_NOT_DIFFERENTIABLE = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
}


def _check_requires_grad(values, kind, strict):
    if not strict:
        return
    for i, t in enumerate(values):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for unreached inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return tensorlib.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                                   allow_unused=True, create_graph=create_graph,
                                   retain_graph=retain_graph)


_ZERO_FILL_ERRORS = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros where a gradient is None (or, in strict mode, the error saying why it is)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_ERRORS[stage].format(i=i))
            g = tensorlib.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _v_or_default(v, refs, refs_tuple, fn_name, about, create_graph):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, refs, refs_tuple)
        return v
    if len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if {about} a single Tensor with a "
                           f"single element.")
    return None


def _call(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    is_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def _single_output(outputs, is_tuple, fn_name):
    if is_tuple or not isinstance(outputs[0], TensorImpl):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element")


# ---- the public functions --------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _v_or_default(v, outputs, outputs_tuple, "vjp",
                          "the user-provided function returns", create_graph)
    with set_grad_enabled(True if create_graph else tensorlib.is_grad_enabled()):
        res = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, "jvp",
                          "the input to the user-provided function is", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        cotangents = tuple(tensorlib.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, cotangents, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else tensorlib.is_grad_enabled()):
        res = _grad(grad_inputs, cotangents, v, create_graph=create_graph)
        res = _fill_in_zeros(res, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), outputs_tuple))


def _reverse_jacobian(outputs, inputs, create_graph, strict):
    """One backward pass per output element; rows stacked to out.shape + in.shape."""
    jacobian = []
    for i, out in enumerate(outputs):
        rows = tuple([] for _ in inputs)
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            grads = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {k}. This is not allowed "
                                           f"in strict mode.")
                    g = tensorlib.zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       f"strict mode when create_graph=True.")
                rows[k].append(g)
        jacobian.append(tuple(
            _stack_rows(r, inp).reshape(tuple(out.shape) + tuple(inp.shape))
            for r, inp in zip(rows, inputs)))
    return tuple(jacobian)


def _stack_rows(rows, like):
    if rows:
        return tensorlib.stack(rows, dim=0)
    return tensorlib.zeros((0,) + tuple(like.shape), dtype=like.dtype, device=like.device)


def _forward_jacobian(func, inputs, strict):
    """One jvp per input element; columns stacked last, to out.shape + in.shape."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). '
                           'Please either set `strict=False` or `strategy="reverse-mode"`.')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns, outputs, outputs_tuple = [], None, False
    for k, inp in enumerate(inputs):
        per_input = []
        for j in range(inp.nelement()):
            basis = tuple(tensorlib.zeros_like(t) for t in inputs)
            basis[k].view(-1)[j] = 1
            out, jv = jvp(func, inputs, basis)
            outputs_tuple = isinstance(out, tuple)
            outputs = out if outputs_tuple else (out,)
            per_input.append(jv if outputs_tuple else (jv,))
        columns.append(per_input)
    if outputs is None:
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided "
                                           "function", "jacobian")
    jacobian = []
    for i, out in enumerate(outputs):
        row = []
        for k, inp in enumerate(inputs):
            shape = tuple(out.shape) + tuple(inp.shape)
            if columns[k]:
                cols = tensorlib.stack([c[i] for c in columns[k]], dim=-1)
                row.append(cols.reshape(shape))
            else:
                row.append(tensorlib.zeros(shape, dtype=out.dtype, device=out.device))
        jacobian.append(row)
    # PyTorch's forward-mode jacobian nests lists, not tuples
    return _unpack(jacobian, (outputs_tuple, inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func / d inputs: a tensor of shape out.shape + in.shape, nested in tuples as the
    function's outputs and inputs are."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: '
                                      '`create_graph=True` and `strategy="forward-mode"` are '
                                      'not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian is only implemented for "
                                      "`vectorize=True`.")
        return _forward_jacobian(func, inputs, strict)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        jac = _reverse_jacobian(outputs, inputs, create_graph, strict)
    return _unpack(_finish(jac, create_graph), (outputs_tuple, inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The matrix of second derivatives of a scalar function, shaped in.shape + in.shape
    (a tuple of tuples for tuple inputs)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _single_output(outs, out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) of a scalar function."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, "vhp",
                          "the input to the user-provided function is", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "vhp", strict)
        _single_output(outputs, outputs_tuple, "vhp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else tensorlib.is_grad_enabled()):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) of a scalar function, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, "hvp",
                          "the input to the user-provided function is", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "hvp", strict)
        _single_output(outputs, outputs_tuple, "hvp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(tensorlib.zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else tensorlib.is_grad_enabled()):
        res = _grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))
