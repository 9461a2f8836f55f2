"""gradcheck / gradgradcheck: compare autograd's gradients with central finite differences
(in float64), column by column of the Jacobian.

Inputs are perturbed in place (under no_grad), so a non-contiguous input keeps its layout
and the function is checked on exactly the strides it was given; inputs whose memory
overlaps (a stride 0 dimension, as made by expand) are rejected, as in PyTorch, since one
write would move several elements at once. Inputs stay on their device (the perturbed values
are written into them there); outputs and gradients are copied to the host to be compared,
and a gradient on another device than its input is an error.

With `fast_mode=True` (PyTorch's fast gradcheck) each pair (input i, output j) is checked
through one random projection instead of the whole Jacobian: the derivative along a random
unit direction u of the input, projected on a random unit vector v of the output (two
function calls per input), against v^T J u from one vector-Jacobian product per output, so
a large input costs a few calls instead of two per element.

Complex values are checked as PyTorch's gradcheck does, as pairs of reals: a complex input
contributes two rows per element (its real and imaginary parts are perturbed apart), a
complex output two columns (the vector-Jacobian product seeded with 1 gives the real part's
row, seeded with 1j the imaginary part's), and a complex gradient g = dL/dx + i dL/dy is
read as the pair (Re g, Im g)."""
import numpy as np


class GradcheckError(RuntimeError):
    pass


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_tensor(x):
    return hasattr(x, "_dtype") and hasattr(x, "_requires_grad")


def _differentiable(x):
    return _is_tensor(x) and x._requires_grad


def _flat_outputs(fn, inputs):
    return [o for o in _tuple(fn(*inputs)) if _is_tensor(o) and o._dtype.category >= 2]


def _compared(outs):
    """Which outputs gradcheck compares: those that require grad, as in PyTorch (an output
    computed from detached values, such as a threshold read through .item(), may still move
    under finite differences); all of them when none does, whose numerical Jacobian must
    then be zero."""
    flags = [o.requires_grad for o in outs]
    return flags if any(flags) else [True] * len(outs)


def _real_coordinates(array):
    """A host array as float64 reals: complex elements become (real, imag) pairs."""
    array = np.asarray(array)
    if np.iscomplexobj(array):
        return np.stack([array.real, array.imag], -1).astype(np.float64).reshape(-1)
    return array.astype(np.float64).reshape(-1)


def _values(x):
    return _real_coordinates(x.detach().cpu().numpy())


def _n_coordinates(x):
    return x.numel() * (2 if x._dtype.is_complex else 1)


def _check_inputs(inputs):
    import warnings
    for i, x in enumerate(inputs):
        if not _differentiable(x):
            continue
        if x.dtype.name not in ("float64", "complex128"):
            warnings.warn("Input to gradcheck is not double precision floating point; the "
                          "check is likely to fail.", stacklevel=3)
        for size, stride in zip(x.shape, x.stride()):
            if stride == 0 and size > 1:
                raise RuntimeError(
                    f"The {i}th input has a dimension with stride 0. gradcheck only supports "
                    f"inputs that are non-overlapping to be able to compute the numerical "
                    f"gradients correctly. You should call .contiguous on the input before "
                    f"passing it to gradcheck.")


def _write(x, array):
    """Overwrite x's values in place (its strides stay as they are), unrecorded."""
    import tensorlib
    with tensorlib.no_grad():
        x.copy_(tensorlib.tensor(array, dtype=x.dtype, device=x.device))


def _numerical_jacobians(fn, inputs, eps):
    """J[i]: rows = input i's elements, columns = all outputs' elements (concatenated), by
    central differences; None for an input that does not require grad. The function runs in
    the caller's grad mode (gradgradcheck's function calls autograd.grad itself)."""
    jacobians = []
    n_cols = sum(_n_coordinates(o) for o in _flat_outputs(fn, inputs))
    for x in inputs:
        if not _differentiable(x):
            jacobians.append(None)
            continue
        base = x.detach().cpu().numpy().copy()
        cols = np.zeros((_n_coordinates(x), n_cols))
        try:
            for k in range(cols.shape[0]):
                values = []
                for delta in (eps, -eps):
                    bumped = base.copy().reshape(-1)
                    if x._dtype.is_complex:
                        bumped[k // 2] += delta if k % 2 == 0 else 1j * delta
                    else:
                        bumped[k] += delta
                    _write(x, bumped.reshape(base.shape))
                    values.append(np.concatenate(
                        [_values(o) for o in _flat_outputs(fn, inputs)] or [np.zeros(0)]))
                cols[k] = (values[0] - values[1]) / (2 * eps)
        finally:
            _write(x, base)
        jacobians.append(cols)
    return jacobians


def _check_gradient(x, g):
    """A gradient autograd gave for input x has x's size, dtype and device."""
    if g.shape != x.shape:
        raise GradcheckError(f"Gradient has incorrect size: expected {list(x.shape)}, got "
                             f"{list(g.shape)}")
    if g.dtype != x.dtype:
        raise GradcheckError(f"Gradient has dtype mismatch: expected {x.dtype}, got {g.dtype}")
    if g.device != x.device:
        raise GradcheckError(f"Gradient has device mismatch: expected {x.device}, got "
                             f"{g.device}")


def _analytical_jacobians(fn, inputs):
    import tensorlib
    diff = [x for x in inputs if _differentiable(x)]
    outs = _flat_outputs(fn, inputs)
    n_cols = sum(_n_coordinates(o) for o in outs)
    jac = {id(x): np.zeros((_n_coordinates(x), n_cols)) for x in diff}
    col = 0
    for o in outs:
        for k in range(_n_coordinates(o)):
            if o.requires_grad:
                seed = np.zeros(o.numel(), dtype=o.dtype.np)
                if o._dtype.is_complex:
                    seed[k // 2] = 1.0 if k % 2 == 0 else 1j
                else:
                    seed[k] = 1.0
                grads = tensorlib.autograd.grad(
                    o, diff, tensorlib.tensor(seed.reshape(o.shape), dtype=o.dtype,
                                              device=o.device),
                    retain_graph=True, allow_unused=True)
            else:
                grads = [None] * len(diff)
            for i, (x, g) in enumerate(zip(diff, grads)):
                if g is None:
                    continue
                _check_gradient(x, g)
                jac[id(x)][:, col] = _values(g)
            col += 1
    return [jac.get(id(x)) if _differentiable(x) else None for x in inputs], \
        [_n_coordinates(o) for o in outs], _compared(outs)


def _unit(rng, n):
    v = rng.standard_normal(n)
    return v / max(np.linalg.norm(v), 1e-300)


def _complex_from_coordinates(coords, shape):
    return (coords[0::2] + 1j * coords[1::2]).reshape(shape)


def _fast_check(func, inputs, eps):
    """[(input i, output j, numerical, analytical)] of the projections v_j^T J_ij u_i."""
    import tensorlib
    rng = np.random.default_rng(0)
    outs = _flat_outputs(func, inputs)
    vs = [_unit(rng, _n_coordinates(o)) for o in outs]
    diff = [x for x in inputs if _differentiable(x)]
    us = {id(x): _unit(rng, _n_coordinates(x)) for x in diff}
    analytical = {}
    for j, (o, v) in enumerate(zip(outs, vs)):
        if not o.requires_grad:
            continue
        seed = _complex_from_coordinates(v, o.shape) if o._dtype.is_complex else \
            v.reshape(o.shape)
        grads = tensorlib.autograd.grad(
            o, diff, tensorlib.tensor(seed, dtype=o.dtype, device=o.device),
            retain_graph=True, allow_unused=True)
        for x, g in zip(diff, grads):
            if g is not None:
                _check_gradient(x, g)
                analytical[id(x), j] = float(_values(g) @ us[id(x)])
    results = []
    for i, x in enumerate(inputs):
        if not _differentiable(x):
            continue
        base = x.detach().cpu().numpy().copy()
        u = us[id(x)]
        step = _complex_from_coordinates(u, base.shape) if x._dtype.is_complex else \
            u.reshape(base.shape)
        sides = []
        try:
            for delta in (eps, -eps):
                _write(x, base + delta * step)
                sides.append([_values(o) for o in _flat_outputs(func, inputs)])
        finally:
            _write(x, base)
        for j, (v, compared) in enumerate(zip(vs, _compared(outs))):
            if not compared:
                continue
            numerical = float((sides[0][j] - sides[1][j]) @ v) / (2 * eps)
            results.append((i, j, numerical, analytical.get((id(x), j), 0.0)))
    return results


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              fast_mode=False, **_unused):
    """True when autograd's Jacobian of func at inputs matches finite differences; otherwise
    raises GradcheckError (or returns False with raise_exception=False)."""
    inputs = _tuple(inputs)
    _check_inputs(inputs)
    if fast_mode:
        try:
            projections = _fast_check(func, inputs, eps)
        except GradcheckError:
            if raise_exception:
                raise
            return False
        for i, j, numerical, analytical in projections:
            if abs(analytical - numerical) > atol + rtol * abs(numerical):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i} (fast "
                    f"mode: v^T J u along random unit vectors),\nnumerical:{numerical}\n"
                    f"analytical:{analytical}\n")
        return True
    try:
        numerical = _numerical_jacobians(func, inputs, eps)
        analytical, sizes, compared = _analytical_jacobians(func, inputs)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    bounds = np.cumsum([0] + sizes)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        for j in (j for j in range(len(sizes)) if compared[j]):
            nj, aj = n[:, bounds[j]:bounds[j + 1]], a[:, bounds[j]:bounds[j + 1]]
            if not np.allclose(aj, nj, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to "
                                     f"input {i},\nnumerical:{nj}\nanalytical:{aj}\n")
    return True


def _random_like(rng, o):
    values = rng.standard_normal(tuple(o.shape))
    if o._dtype.is_complex:
        values = values + 1j * rng.standard_normal(tuple(o.shape))
    return values


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, fast_mode=False, **_unused):
    """gradcheck of the backward pass itself (second derivatives via create_graph): the
    function checked is (inputs, grad_outputs) -> vector-Jacobian products."""
    import tensorlib
    inputs = _tuple(inputs)
    outs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [tensorlib.tensor(_random_like(rng, o), dtype=o.dtype, device=o.device,
                                         requires_grad=True) for o in outs]
    grad_outputs = _tuple(grad_outputs)
    n_inputs = len(inputs)

    def first_derivative(*args):
        xs, gs = args[:n_inputs], args[n_inputs:]
        pairs = [(o, g) for o, g in zip(_flat_outputs(func, xs), gs) if o.requires_grad]
        wanted = [x for x in xs if _differentiable(x)]
        if not pairs or not wanted:
            return ()
        grads = tensorlib.autograd.grad([o for o, _ in pairs], wanted,
                                        [g for _, g in pairs], create_graph=True,
                                        allow_unused=True)
        return tuple(g for g in grads if g is not None)
    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
