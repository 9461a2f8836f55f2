"""torch.onnx.symbolic_helper: `parse_args`, the decorator symbolic functions use to receive
their non-tensor arguments as Python values."""

_CONVERT = {"v": lambda v: v, "i": int, "f": float, "b": bool, "s": str, "t": lambda v: v,
            "is": lambda v: [int(x) for x in v], "fs": lambda v: [float(x) for x in v],
            "none": lambda v: None}


def parse_args(*arg_descriptors):
    """`@parse_args("v", "i", "f")`: the symbolic's arguments after `g`, converted by their
    descriptors ("v" an ONNX value as is, "i"/"f"/"b"/"s" int/float/bool/str, "is"/"fs" lists,
    "none" dropped). Arguments given as None stay None."""
    unknown = [d for d in arg_descriptors if d not in _CONVERT]
    if unknown:
        raise ValueError(f"parse_args: unknown argument descriptors {unknown}; expected some of "
                         f"{sorted(_CONVERT)}")

    def decorator(fn):
        def wrapper(g, *args, **kwargs):
            if len(args) > len(arg_descriptors):
                raise TypeError(f"{fn.__name__}: got {len(args)} arguments for "
                                f"{len(arg_descriptors)} descriptors")
            converted = [a if a is None else _CONVERT[d](a)
                         for d, a in zip(arg_descriptors, args)]
            return fn(g, *converted, **kwargs)
        wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
        wrapper.__wrapped__ = fn
        return wrapper
    return decorator


__all__ = ["parse_args"]
