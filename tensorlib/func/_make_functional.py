"""functorch's module-to-function API, still called by programs written for functorch:
`make_functional`, `make_functional_with_buffers` and `combine_state_for_ensemble`. Each
copies the module and returns a callable taking its parameters (and buffers) as arguments;
the call runs through `functional_call` on the copy, so the caller's module is never touched."""
import copy

from tensorlib.func._functional_call import functional_call


class FunctionalModule:
    """`fmodel(params, *args, **kwargs)`: the copied module run with `params` in place of its
    parameters (in `named_parameters()` order)."""

    def __init__(self, stateless_model, param_names):
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)

    def __call__(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, _named(self.param_names, params, "params"),
                               args, kwargs)

    def __repr__(self):
        return f"FunctionalModule({self.stateless_model!r})"


class FunctionalModuleWithBuffers(FunctionalModule):
    """`fmodel(params, buffers, *args, **kwargs)`: as FunctionalModule, buffers replaced too."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__(stateless_model, param_names)
        self.buffer_names = tuple(buffer_names)

    def __call__(self, params, buffers, *args, **kwargs):
        values = _named(self.param_names, params, "params")
        values.update(_named(self.buffer_names, buffers, "buffers"))
        return functional_call(self.stateless_model, values, args, kwargs)

    def __repr__(self):
        return f"FunctionalModuleWithBuffers({self.stateless_model!r})"


def _named(names, values, what):
    values = tuple(values)
    if len(values) != len(names):
        raise RuntimeError(f"the functional module expects {len(names)} {what}, got "
                           f"{len(values)}")
    return dict(zip(names, values))


def _copy(model, disable_autograd_tracking):
    clone = copy.deepcopy(model)
    names, params = zip(*clone.named_parameters()) if any(True for _ in clone.parameters()) \
        else ((), ())
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return clone, names, tuple(params)


def make_functional(model, disable_autograd_tracking=False):
    """(fmodel, params): fmodel(params, *args) runs a copy of `model` with `params`. A model
    with buffers needs make_functional_with_buffers, as in functorch."""
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    clone, names, params = _copy(model, disable_autograd_tracking)
    return FunctionalModule(clone, names), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(fmodel, params, buffers): fmodel(params, buffers, *args) runs a copy of `model`."""
    clone, names, params = _copy(model, disable_autograd_tracking)
    buffer_names = [name for name, _ in clone.named_buffers()]
    buffers = tuple(b for _, b in clone.named_buffers())
    return FunctionalModuleWithBuffers(clone, names, buffer_names), params, buffers


def combine_state_for_ensemble(models):
    """(fmodel, params, buffers) for vmap over an ensemble: each parameter and buffer stacked
    along a new first dimension, one entry per model (detached, as functorch's)."""
    import tensorlib
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    fmodel, _, _ = make_functional_with_buffers(models[0])
    per_model = [make_functional_with_buffers(m)[1:] for m in models]
    params = tuple(tensorlib.stack([state[0][i] for state in per_model]).detach()
                   for i in range(len(per_model[0][0])))
    buffers = tuple(tensorlib.stack([state[1][i] for state in per_model]).detach()
                    for i in range(len(per_model[0][1])))
    return fmodel, params, buffers
