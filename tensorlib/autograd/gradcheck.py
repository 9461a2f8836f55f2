"""gradcheck / gradgradcheck: compare autograd's gradients with central finite differences
(in float64), column by column of the Jacobian."""
import numpy as np


class GradcheckError(RuntimeError):
    pass


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _flat_outputs(fn, inputs):
    return [o for o in _tuple(fn(*inputs)) if hasattr(o, "_dtype") and o._dtype.is_floating_point]


def _numerical_jacobians(fn, inputs, eps):
    """J[i][j]: d(outputs j, flattened)/d(input i, flattened), by central differences."""
    import tensorlib
    jacobians = []
    with tensorlib.no_grad():
        outs = _flat_outputs(fn, inputs)
        sizes = [o.numel() for o in outs]
        for x in inputs:
            if not (hasattr(x, "_requires_grad") and x._requires_grad):
                jacobians.append(None)
                continue
            base = x.detach().cpu().numpy().copy()
            cols = np.zeros((x.numel(), sum(sizes)))
            for k in range(x.numel()):
                values = []
                for delta in (eps, -eps):
                    bumped = base.copy().reshape(-1)
                    bumped[k] += delta
                    x.data = tensorlib.tensor(bumped.reshape(base.shape), dtype=x.dtype,
                                              device=x.device)
                    values.append(np.concatenate(
                        [o.detach().cpu().numpy().astype(np.float64).reshape(-1)
                         for o in _flat_outputs(fn, inputs)] or [np.zeros(0)]))
                cols[k] = (values[0] - values[1]) / (2 * eps)
            x.data = tensorlib.tensor(base, dtype=x.dtype, device=x.device)
            jacobians.append(cols)
    return jacobians


def _analytical_jacobians(fn, inputs):
    import tensorlib
    diff = [x for x in inputs if hasattr(x, "_requires_grad") and x._requires_grad]
    outs = _flat_outputs(fn, inputs)
    sizes = [o.numel() for o in outs]
    jac = {id(x): np.zeros((x.numel(), sum(sizes))) for x in diff}
    col = 0
    for o in outs:
        for k in range(o.numel()):
            seed = np.zeros(o.numel())
            seed[k] = 1.0
            if o.requires_grad:
                grads = tensorlib.autograd.grad(
                    o, diff, tensorlib.tensor(seed.reshape(o.shape), dtype=o.dtype,
                                              device=o.device),
                    retain_graph=True, allow_unused=True)
            else:
                grads = [None] * len(diff)
            for x, g in zip(diff, grads):
                if g is not None:
                    jac[id(x)][:, col] = g.detach().cpu().numpy().astype(np.float64).reshape(-1)
            col += 1
    return [jac.get(id(x)) if hasattr(x, "_requires_grad") and x._requires_grad else None
            for x in inputs]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              **_unused):
    """True when autograd's Jacobian of func at inputs matches finite differences."""
    inputs = _tuple(inputs)
    for x in inputs:
        if hasattr(x, "_requires_grad") and x._requires_grad and x.dtype.name != "float64":
            import warnings
            warnings.warn("Input to gradcheck is not double precision floating point; the "
                          "check is likely to fail.", stacklevel=2)
    numerical = _numerical_jacobians(func, inputs, eps)
    analytical = _analytical_jacobians(func, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                 f"numerical:{n}\nanalytical:{a}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, **_unused):
    """gradcheck of the backward pass itself (second derivatives via create_graph)."""
    import tensorlib
    inputs = _tuple(inputs)
    outs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [tensorlib.tensor(rng.standard_normal(o.shape), dtype=o.dtype,
                                         device=o.device, requires_grad=True) for o in outs]
    grad_outputs = _tuple(grad_outputs)
    diff = [x for x in inputs if hasattr(x, "_requires_grad") and x._requires_grad]

    def first_derivative(*args):
        xs, gs = args[:len(inputs)], args[len(inputs):]
        outputs = [o for o in _flat_outputs(func, xs) if o.requires_grad]
        wanted = [x for x in xs if hasattr(x, "_requires_grad") and x._requires_grad]
        grads = tensorlib.autograd.grad(outputs, wanted, gs[:len(outputs)], create_graph=True,
                                        allow_unused=True)
        return tuple(g for g in grads if g is not None)
    del diff
    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
