"""Dim and the dynamic_shapes argument of export: which input dimensions may change size, in
what range, and the checks an exported module makes of its inputs (torch's guards)."""
from tensorlib.export.errors import GuardFailed, UserError

__all__ = ["Dim"]


class _DimHint:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Dim.{self.name}"


class _Dim:
    """A named dynamic dimension with an inclusive range; dims sharing one are equal."""

    def __init__(self, name, min=None, max=None):  # noqa: A002
        lo = 0 if min is None else int(min)
        if max is not None and int(max) < lo:
            raise UserError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__, self.min, self.max = name, lo, None if max is None else int(max)

    def __repr__(self):
        bounds = "".join(f", {k}={v}" for k, v in (("min", self.min), ("max", self.max))
                         if v is not None and (k != "min" or v != 0))
        return f"Dim({self.__name__!r}{bounds})"


class _DimFactory:
    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __call__(self, name, *, min=None, max=None):  # noqa: A002
        return _Dim(name, min, max)

    def __repr__(self):
        return "tensorlib.export.Dim"


Dim = _DimFactory()


def _dims_of(spec, ndim, where):
    """{dim index: _Dim} from one input's spec (None, {i: Dim}, or a per-dim tuple)."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (tuple, list)):
        items = enumerate(spec)
    else:
        raise UserError(f"dynamic_shapes of {where}: expected None, a dict or a tuple of "
                        f"Dims, got {type(spec).__name__}")
    out = {}
    for i, d in items:
        if d is None or d is Dim.STATIC:
            continue
        if not isinstance(i, int) or not -ndim <= i < ndim:
            raise UserError(f"dynamic_shapes of {where}: dimension {i} out of range for a "
                            f"{ndim}-d input")
        if isinstance(d, _DimHint):         # AUTO / DYNAMIC: unnamed, unbounded
            d = _Dim(f"{where}_dim{i % ndim}")
        if not isinstance(d, _Dim):
            raise UserError(f"dynamic_shapes of {where}: dimension {i} must be a Dim, "
                            f"Dim.STATIC or None, got {d!r}")
        out[i % ndim] = d
    return out


def resolve(dynamic_shapes, names, leaves):
    """Per user-input leaf, its dims as [int (static) or [name, min, max] (dynamic)].

    names: the top-level input of each leaf; leaves: the example tensors. dynamic_shapes is a
    dict keyed by forward's parameter names or a tuple in their order (one spec per input
    that is a single tensor)."""
    top = list(dict.fromkeys(names))
    if dynamic_shapes is None:
        specs = {}
    elif isinstance(dynamic_shapes, dict):
        unknown = set(dynamic_shapes) - set(top)
        if unknown:
            raise UserError(f"dynamic_shapes names {sorted(unknown)}, which are not tensor "
                            f"inputs of the program (inputs: {top})")
        specs = dict(dynamic_shapes)
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(top):
            raise UserError(f"dynamic_shapes has {len(dynamic_shapes)} entries for "
                            f"{len(top)} tensor inputs {top}")
        specs = dict(zip(top, dynamic_shapes))
    else:
        raise UserError("dynamic_shapes must be a dict, a tuple or None")
    seen = {}
    result = []
    for name, x in zip(names, leaves):
        spec = specs.get(name)
        if spec is not None and names.count(name) > 1:
            raise UserError(f"dynamic_shapes for the nested input '{name}' is not supported: "
                            f"give one for each tensor input")
        dims = _dims_of(spec, x.dim(), name)
        shape = []
        for i, size in enumerate(x.shape):
            d = dims.get(i)
            if d is None:
                shape.append(int(size))
                continue
            if size < d.min or (d.max is not None and size > d.max):
                raise UserError(f"Constraints violated ({d.__name__})! The example's "
                                f"{name}.size()[{i}] = {size} is outside the range "
                                f"[{d.min}, {d.max}] of {d!r}")
            if seen.setdefault(d.__name__, int(size)) != size:
                raise UserError(f"Constraints violated ({d.__name__})! Dimensions marked "
                                f"{d.__name__} have different sizes in the example "
                                f"({seen[d.__name__]} and {size})")
            shape.append([d.__name__, d.min, d.max])
        result.append(shape)
    return result


def other_sizes(shapes, leaves):
    """{Dim name: (example size, another size in its range)}: the sizes export retraces at to
    find code that specializes a dynamic dimension. Dims whose range is one size are left."""
    out = {}
    for shape, x in zip(shapes, leaves):
        for d, size in zip(shape, x.shape):
            if isinstance(d, list) and d[0] not in out:
                name, lo, hi = d
                alt = size + 1 if hi is None or size + 1 <= hi else size - 1
                if alt >= max(lo, 1) and alt != size:
                    out[name] = (int(size), alt)
    return out


def check(leaf_names, shapes, leaves):
    """The guards of an exported module: each input's rank, static sizes and dynamic ranges,
    and equal sizes where one Dim is shared."""
    if len(leaves) != len(shapes):
        raise GuardFailed(f"Guard failed: expected {len(shapes)} tensor inputs, got "
                          f"{len(leaves)}")
    bound = {}
    for name, shape, x in zip(leaf_names, shapes, leaves):
        if not hasattr(x, "dim"):
            raise GuardFailed(f"Guard failed: {name} must be a tensor, got "
                              f"{type(x).__name__}")
        if x.dim() != len(shape):
            raise GuardFailed(f"Guard failed: {name}.dim() == {len(shape)} (got {x.dim()})")
        for i, (want, got) in enumerate(zip(shape, x.shape)):
            where = f"{name}.size()[{i}]"
            if isinstance(want, int):
                if got != want:
                    raise GuardFailed(f"Guard failed: {where} == {want} (got {got})")
                continue
            dim_name, lo, hi = want
            if got < lo:
                raise GuardFailed(f"Guard failed: {where} >= {lo} (got {got})")
            if hi is not None and got > hi:
                raise GuardFailed(f"Guard failed: {where} <= {hi} (got {got})")
            first = bound.setdefault(dim_name, (where, got))
            if first[1] != got:
                raise GuardFailed(f"Guard failed: {where} == {first[0]} ({got} != {first[1]})")
