"""torch.nn.factory_kwargs: a module's **kwargs checked and reduced to what factories take."""

_SIMPLE = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs):
    r"""The device / dtype / memory_format of `kwargs` (and of its `factory_kwargs` entry,
    which lets a signature that already takes `dtype` still pass one on) as one dict; a
    TypeError for any other key or a key given twice."""
    if kwargs is None:
        return {}
    expected = _SIMPLE | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
