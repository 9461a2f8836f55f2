"""functional_call: run a module with some of its parameters and buffers replaced by the
tensors of a dict, then put the originals back (even when the call raises). This makes a
module a function of its weights, which grad/vmap/jacrev then transform."""
import contextlib

from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["functional_call"]


def _merge(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    merged = {}
    for d in dicts:
        repeated = sorted(set(merged) & set(d))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        merged.update(d)
    return merged


def _tied_groups(module):
    """name -> every name of the same tensor (tied weights appear under several names)."""
    by_id = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(name)
    return {name: names for names in by_id.values() for name in names}


def _tie(module, values):
    """Give every tied name the value supplied for any of its names."""
    groups = _tied_groups(module)
    out = dict(values)
    for name in list(values):
        names = groups.get(name, [name])
        given = [n for n in names if n in values]
        if any(values[n] is not values[given[0]] for n in given[1:]):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in names:
            out.setdefault(n, values[name])
    return out


def _check_strict(module, values):
    expected = set(_tied_groups(module))
    unexpected = sorted(set(values) - expected)
    missing = sorted(expected - set(values))
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                         + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
        raise RuntimeError("\n".join(lines))


def _slot(module, name):
    """(the dict that holds `name` on its submodule, the attribute name)."""
    owner_path, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            return table, attr
    return owner.__dict__, attr


@contextlib.contextmanager
def reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False,
                         stack_weights=False):
    """Within the block, the module's named parameters/buffers are the dict's tensors; the
    originals come back on exit (even on an error). A value the module replaced in its own
    tables meanwhile is written back into the dict, as PyTorch does. stack_weights (LIFO
    restore for nested swaps of one name) is accepted for PyTorch's signature: each slot is
    swapped once here, and restores run in reverse order regardless."""
    values = parameters_and_buffers
    if tie_weights:
        values = _tie(module, values)
    if strict:
        _check_strict(module, values)
    missing = object()
    saved = []
    try:
        for name, t in values.items():
            table, attr = _slot(module, name)
            saved.append((name, table, attr, table.get(attr, missing)))
            table[attr] = t
        yield
    finally:
        for name, table, attr, old in reversed(saved):
            if name in parameters_and_buffers and attr in table:
                parameters_and_buffers[name] = table[attr]
            if old is missing:
                del table[attr]
            else:
                table[attr] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters/buffers replaced for this call."""
    values = _merge(parameter_and_buffer_dicts)
    for name, t in values.items():
        if t is not None and not isinstance(t, TensorImpl):
            raise TypeError(f"functional_call: the value for '{name}' must be a Tensor, got "
                            f"{type(t).__name__}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **(kwargs or {}))
