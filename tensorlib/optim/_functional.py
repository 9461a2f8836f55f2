r"""Shared machinery of the optimizers' functional tier.

NOTE [ Optimizer tiers: single-tensor and foreach (flat) ]
Every algorithm writes its math once, as `_<algo>_update(param, grad, *state, scalars)` on
whole tensors, in in-place tensor ops that go through the dispatch table (so any backend
runs it). The functional `<algo>(...)` hands it to one of two drivers:

* `run_single` (torch's `_single_tensor_<algo>`): once per parameter. About ten kernel
  launches per parameter per step.
* `run_foreach` (torch's `_multi_tensor_<algo>`; foreach=True, or fused=True): parameters
  are bucketed by (device, dtype, step-dependent scalars) and each bucket is updated as
  ONE flat 1-D tensor, so a step costs the same ten launches per bucket whatever the
  number of parameters.
  The flat operands come from `_FlatBucket`:
    - a list of tensors that already sit back to back in one storage (contiguous, in
      order) is used through a single 1-D view: no copy. Optimizer state is allocated this
      way (`flat_zeros_like`) and re-homed there after `load_state_dict` (`rehome_state`),
      and parameters are when the model's parameters share one flat storage
      (`flatten_parameters_`), which makes the step a single fused pass;
    - any other list is gathered into a scratch flat tensor (one copy per tensor) and,
      when the update writes it, scattered back afterwards. Gradients are always gathered
      (autograd allocates each one separately).
  The elementwise math is identical on both paths, so single-tensor and foreach results
  agree bitwise.

Measured (CPU backend, 2 cores shared with other jobs, so +-30%; float32; ms per step;
`python tests/optim/bench_step.py`):

    784-512-256-10 MLP (6 tensors)   single  foreach  foreach+flat  torch  torch foreach
    SGD momentum                      0.19    0.33     0.23         0.11   0.12
    Adam                              0.89    0.99     0.84         0.39-1.3 (noisy)
    200 tensors of 64 values
    SGD momentum                      1.88    1.74     0.40         1.28   1.54
    Adam                             10.6     2.98     1.28        11.3    6.8

Large tensors: the math dominates and the gathers (one extra pass over the gradients, two
over non-flat parameters) make foreach slightly slower than single-tensor on CPU, equal
with flat parameters. Many small tensors: launch overhead dominates and foreach is 3-8x
faster. Launches per Adam step: ~13 per parameter (single) vs ~13 per bucket plus one
gradient copy per parameter (foreach). foreach=None picks the flat path only off the CPU
(as torch.optim does for CUDA); pass foreach=True to use it on CPU.

Above both tiers, SGD and Adam/AdamW first offer the whole group to the device's
multi-tensor kernel (`multi_kernel`: the CPU's "sgd_update_multi"/
"adam_update_multi_capturable", one OpenMP pass over every parameter, bitwise equal to the
per-parameter math; the GPUs' "adam_update_multi") whatever
`foreach` says; it declines (and the tiers run) for mixed dtypes or devices, non-contiguous
tensors, a differentiable step or a compile capture.
"""
import tensorlib._C.dtypes as dt
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import wrap, contiguous_strides, is_contiguous, numel
from tensorlib._C import grad_mode as _grad_mode
from tensorlib.ops._composites import optional_kernel
from tensorlib.optim.optimizer import _default_foreach, _resolve_foreach

__all__ = ["flatten_parameters_"]


# ---- arithmetic helpers (one place to switch to fused in-place kernels) -------------------
def add_scaled_(x, y, alpha):
    """x += alpha * y (torch's x.add_(y, alpha=alpha))."""
    if alpha == 1:
        return x.add_(y)
    if alpha == -1:
        return x.sub_(y)
    return x.add_(y * alpha)


def addcmul_(x, a, b, value):
    """x += value * a * b."""
    t = a * b
    if value != 1:
        t.mul_(value)
    return x.add_(t)


def addcdiv_(x, a, b, value):
    """x += value * a / b."""
    t = a / b
    if value != 1:
        t.mul_(value)
    return x.add_(t)


def lerp_(x, end, weight):
    """x += weight * (end - x) (torch's lerp_ with a scalar weight)."""
    t = end - x
    t.mul_(weight)
    return x.add_(t)


def ema_square_(avg, x, decay):
    """avg = decay * avg + (1 - decay) * x**2 in place: the running mean of squares of Adam's
    family, RMSprop and Adadelta."""
    avg.mul_(decay)
    return addcmul_(avg, x, x, 1 - decay)


def decayed_grad(param, grad, *, maximize, weight_decay, lr=None, decoupled=False):
    """The gradient an update follows: negated for `maximize`, plus the L2 term
    `weight_decay * param`; `decoupled` (AdamW-style) instead shrinks the parameter in place
    by `1 - lr * weight_decay`."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad + param * weight_decay
    return grad


def maximum_(x, y):
    """x = max(x, y) elementwise, in place."""
    lookup("maximum", x._device)(x, x, y)
    x._storage.version += 1
    return x


# ---- flat views ---------------------------------------------------------------------------
def _numel(t):
    return numel(t._sizes)


def flat_view(tensors):
    """The 1-D tensor covering `tensors` when they lie back to back, contiguous and in order,
    in one storage with one dtype; None otherwise."""
    if not tensors:
        return None
    first = tensors[0]
    storage, dtype, start = first._storage, first._dtype, first._offset
    end = start
    for t in tensors:
        if t is None or t._storage is not storage or t._offset != end or t._dtype is not dtype \
                or not is_contiguous(t):
            return None
        end += _numel(t)
    if len(tensors) == 1 and len(first._sizes) == 1:
        return first
    return wrap(storage, (end - start,), (1,), start, dtype)


def split_flat(flat, like):
    """Views of the 1-D `flat`, one per tensor of `like` (their shapes, back to back)."""
    out, offset = [], flat._offset
    for t in like:
        out.append(wrap(flat._storage, t._sizes, contiguous_strides(t._sizes), offset,
                        flat._dtype))
        offset += _numel(t)
    return out


def flat_empty(like):
    total = sum(_numel(t) for t in like)
    return empty((total,), like[0]._dtype, like[0]._device)


def flat_zeros_like(like, fill=0):
    """Views of one new flat buffer filled with `fill`, shaped like each tensor of `like`."""
    flat = flat_empty(like)
    lookup("fill", flat._device)(flat, fill)
    return split_flat(flat, like)


def gather(tensors):
    """A new flat tensor holding the values of `tensors` (one copy launch per tensor)."""
    flat = flat_empty(tensors)
    copy = lookup("copy", flat._device)
    for view, t in zip(split_flat(flat, tensors), tensors):
        copy(view, t)
    return flat


def scatter(flat, tensors):
    """Write the flat tensor back into `tensors` (one copy launch per tensor)."""
    copy = lookup("copy", flat._device)
    for view, t in zip(split_flat(flat, tensors), tensors):
        copy(t, view)
        t._storage.version += 1


class _FlatBucket:
    """One bucket of the foreach path: `indices` into the caller's lists. `operand(list,
    writes)` returns the flat tensor for that list (a view when possible, else a gathered
    copy, scattered back by `finish()` when `writes`)."""

    def __init__(self, indices, key):
        self.indices = indices
        self.key = key
        self._writeback = []

    def operand(self, tensors, writes=True):
        sub = [tensors[i] for i in self.indices]
        flat = flat_view(sub)
        if flat is None:
            flat = gather(sub)
            if writes:
                self._writeback.append((flat, sub))
        return flat

    def finish(self):
        for flat, sub in self._writeback:
            scatter(flat, sub)
        self._writeback = []


def buckets(params, keys=None):
    """Group parameter indices by (device, dtype, key): the foreach path's flat buckets, in
    first-seen order."""
    groups = {}
    for i, p in enumerate(params):
        k = (p._device, p._dtype, None if keys is None else keys[i])
        groups.setdefault(k, []).append(i)
    return [_FlatBucket(idx, k[2]) for k, idx in groups.items()]


def rehome_state(optimizer, params, keys):
    """Foreach path: make each state tensor `state[p][key]` of `params` a view into one flat
    buffer per (device, dtype) -- allocating it is what lazy init does; after
    `load_state_dict` (separate tensors) the values are copied over once."""
    for bucket in buckets(params):
        sub = [params[i] for i in bucket.indices]
        for key in keys:
            tensors = [optimizer.state[p].get(key) for p in sub]
            if any(t is None for t in tensors) or flat_view(tensors) is not None:
                continue
            if any(t._sizes != p._sizes or t._dtype is not p._dtype or t._device is not p._device
                   for t, p in zip(tensors, sub)):
                continue
            views = split_flat(gather(tensors), tensors)
            for p, v in zip(sub, views):
                optimizer.state[p][key] = v


def init_state_flat(optimizer, new_params, spec):
    """Lazy state init for `new_params` (no state yet) of the foreach path: every tensor entry
    of `spec` ({key: fill value}) is a view of one flat buffer per (device, dtype)."""
    for bucket in buckets(new_params):
        sub = [new_params[i] for i in bucket.indices]
        for key, fill in spec.items():
            for p, v in zip(sub, flat_zeros_like(sub, fill)):
                optimizer.state[p][key] = v


def flatten_parameters_(params):
    r"""Move `params` (leaf tensors; same device and dtype per run) into one contiguous flat
    storage per (device, dtype), in order, rebinding each parameter's data to a view of it
    (like RNN.flatten_parameters). Values, shapes and `requires_grad` are unchanged. The
    foreach optimizers then update each group in a single pass with no gather/scatter of
    the parameters. Returns the flat tensors. Call it before building the optimizer (state
    already allocated is not moved) and before any view of a parameter is taken."""
    params = list(params)
    flats = []
    prev = _grad_mode.set_grad_enabled(False)
    try:
        for bucket in buckets(params):
            sub = [params[i] for i in bucket.indices]
            flat = gather(sub)
            for p, view in zip(sub, split_flat(flat, sub)):
                p.data = view
            flats.append(flat)
    finally:
        _grad_mode.set_grad_enabled(prev)
    return flats


def scalar_dtype():
    """torch.optim's _get_scalar_dtype: float64 when that is the default dtype, else float32."""
    return dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32


def scalar_tensor(value):
    """A 0-dim CPU tensor in `scalar_dtype()` (torch keeps `step` so when not capturable)."""
    from tensorlib.ops.creation import tensor
    return tensor(float(value), dtype=scalar_dtype())


# ---- one fused kernel for a whole group ---------------------------------------------------
def multi_kernel(name, params, grads):
    """The device's multi-tensor kernel `name` (e.g. "adam_update_multi": one pass over all of
    a group's parameters, see tensorlib_cpu.optim_kernels) when it may run: every parameter
    and gradient on one device with one dtype and grad mode off (a differentiable step is
    recorded through tensor ops). None otherwise; the kernel itself still says no (False) to
    layouts it does not take. (Under `tensorlib.compile` it runs at once, after the pending
    kernels: it is in the capture's run-now list, since the fallback depends on its answer.)"""
    if not params or _grad_mode.is_grad_enabled():
        return None
    device, dtype = params[0]._device, params[0]._dtype
    kernel = optional_kernel(device, name)
    if kernel is None:
        return None
    for p, g in zip(params, grads):
        if p._device is not device or p._dtype is not dtype or g is None \
                or g._device is not device or g._dtype is not dtype:
            return None
    return kernel


# ---- the two drivers ----------------------------------------------------------------------
def driver(params, foreach, differentiable=False, fused=None):
    """The functional form's tier: foreach (or fused) runs `run_foreach`; when both are None,
    the default for where `params` live decides."""
    if foreach is None and fused is None:
        foreach = _default_foreach(params, differentiable)
    return run_foreach if (foreach or fused) else run_single


def run_single(update, params, grads, state_lists, keys, **kwargs):
    """Single-tensor tier: `update` once per parameter."""
    for i, p in enumerate(params):
        update(p, grads[i], *[None if lst is None else lst[i] for lst in state_lists],
               key=None if keys is None else keys[i], **kwargs)


def run_foreach(update, params, grads, state_lists, keys, **kwargs):
    """Foreach tier: `update` once per flat bucket (see the NOTE above)."""
    for b in buckets(params, keys):
        p = b.operand(params)
        g = b.operand(grads, writes=False)
        states = [None if lst is None else b.operand(lst) for lst in state_lists]
        update(p, g, *states, key=b.key, **kwargs)
        b.finish()


def bump_steps(state_steps):
    """step += 1 for every parameter; returns the new values as Python numbers (the foreach
    path buckets parameters by them: bias corrections depend on the step)."""
    advance_steps(state_steps)
    return step_values(state_steps)


def advance_steps(state_steps):
    """step += 1 for every parameter, on the step tensors only (a kernel that reads them
    itself needs no Python number: no graph break under tensorlib.compile)."""
    for s in state_steps:
        s.add_(1)


def step_values(state_steps):
    """The step tensors' values as Python numbers."""
    return [s.item() for s in state_steps]


def params_with_grad(group):
    """The group's parameters that have a gradient (the ones a step updates), and those
    gradients."""
    params, grads = [], []
    for p in group["params"]:
        grad = p.grad
        if grad is not None:
            params.append(p)
            grads.append(grad)
    return params, grads


def collect(optimizer, group, spec, scalar_state, foreach=None):
    """What torch's `_init_group` does: the group's parameters that have a gradient, their
    gradients, and {state key: list} for the keys of `scalar_state` (0-dim CPU tensors, e.g.
    `step`) and of `spec` (tensors like the parameter, filled with spec's value). State is
    created lazily (flat, see `init_state_flat`) and re-homed flat for the foreach path
    (`foreach=None`: resolved from the parameters that have a gradient, as Adam does)."""
    params, grads = params_with_grad(group)
    new = [p for p in params if len(optimizer.state[p]) == 0]
    for p in new:
        for k, v in scalar_state.items():
            optimizer.state[p][k] = scalar_tensor(v)
    init_state_flat(optimizer, new, spec)
    if foreach is None:
        foreach = _resolve_foreach(group, params)
    if foreach:
        rehome_state(optimizer, params, tuple(spec))
    lists = {k: [optimizer.state[p][k] for p in params] for k in (*scalar_state, *spec)}
    return params, grads, lists
