"""torch.func.stack_module_state: the parameters and buffers of several models of one class,
each name's tensors stacked along a new first dimension (the inputs functional_call and
vmap take to run an ensemble as one batched model)."""
import tensorlib


def stack_module_state(models):
    """({name: stacked parameters}, {name: stacked buffers}); stacked parameters are new
    leaves requiring grad when the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked([p[k] for p in params], k) for k in params[0]},
            {k: _stacked([b[k] for b in buffers], k) for k in buffers[0]})


def _stacked(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) != 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = tensorlib.stack(tensors)
    return out.detach().requires_grad_() if grads.pop() else out
