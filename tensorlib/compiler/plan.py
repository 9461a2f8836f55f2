"""Planning a captured segment: which recorded kernels fuse, which intermediates are never
written, and the cache of plans by the segment's structure.

A segment is the list of `Node`s recorded between two graph breaks. Its structural key holds,
for each node, the op, the device type and each argument: a tensor as (storage slot, sizes,
strides, offset, dtype, allocated-during-the-call), a Python value as itself. Two calls whose
segments have the same key get the same plan (fusion groups, compiled kernels) without any
analysis; the generated kernels themselves are shape-generic and cached by their source.

Fusion: consecutive elementwise nodes over one iteration shape join a group when every
storage the group writes is accessed through one view (so element i of every operand is the
same element); a group of two or more becomes one generated kernel where the device's
backend offers a code generator (`Backend.fused_kernel`), else its nodes run one by one. A
value a group writes is stored only where something can still see it: an external storage
(inputs, parameters), a later node of the segment, or a tensor Python still holds (found by
reference counts: the capture holds the only references to a dead intermediate).
"""
import sys

import numpy as np

from tensorlib._C.broadcast import collapse_dims
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.codegen.fused import FusedSpec, Step, supported
from tensorlib.compiler import logs

_PLANS = {}
_PLAN_LIMIT = 4096


def reset():
    _PLANS.clear()


def _value_key(v):
    if v is None or isinstance(v, (bool, int, float, str, type)):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_value_key(x) for x in v)
    if type(v) is np.ndarray:       # host data a recorded copy writes: its content
        return ("ndarray", v.dtype.str, v.shape, hash(v.tobytes()))
    return ("object", type(v).__name__, id(v))


class _Slots:
    """Numbers storages by first appearance; remembers which were allocated in the call."""

    def __init__(self, capture):
        self.capture = capture
        self.index = {}         # id(storage) -> slot
        self.storages = []
        self.fresh = []

    def slot(self, storage):
        k = self.index.get(id(storage))
        if k is None:
            k = self.index[id(storage)] = len(self.storages)
            self.storages.append(storage)
            self.fresh.append(self.capture.is_fresh(storage))
        return k


def _tensor_key(t, slots):
    s = slots.slot(t._storage)
    return ("T", s, t._sizes, t._strides, t._offset, t._dtype.name)


def _arg_key(a, slots):
    if isinstance(a, TensorImpl):
        return _tensor_key(a, slots)
    if isinstance(a, (list, tuple)) and any(isinstance(x, TensorImpl) for x in a):
        return (type(a).__name__,) + tuple(_arg_key(x, slots) for x in a)
    return _value_key(a)


def _live_fresh(nodes, slots):
    """For each storage slot: whether anything outside the segment may read it (external
    storages always; fresh ones when Python still references them)."""
    index, fresh = slots.index, slots.fresh
    counted = {}                # id(tensor) -> [tensor, references from the segment]
    for n in nodes:
        for t in n.args:
            if not isinstance(t, TensorImpl):
                if isinstance(t, (list, tuple)):
                    for x in t:
                        if isinstance(x, TensorImpl) and fresh[index[id(x._storage)]]:
                            _count(counted, x)
                continue
            if fresh[index[id(t._storage)]]:
                _count(counted, t)
        for t in n.kwargs.values():
            if isinstance(t, TensorImpl) and fresh[index[id(t._storage)]]:
                _count(counted, t)
    # a view in the segment refers to its base (`_base`): that reference is the segment's
    # too (the mask of a ReLU backward, broadcast by `where`, was stored for it)
    for entry in counted.values():
        base = entry[0]._base
        if base is not None:
            held = counted.get(id(base))
            if held is not None:
                held[1] += 1
        base = held = None
    live = [not f for f in fresh]
    per_storage = {}
    # (plain loops over values: an items()/enumerate() iterator keeps a reference in the
    # tuple it reuses, which would count as a user's)
    for entry in counted.values():
        t = entry[0]
        k = index[id(t._storage)]
        per_storage[k] = per_storage.get(k, 0) + 1
        # references: the nodes' argument tuples, `entry`, the loop variable, the call
        if sys.getrefcount(t) - entry[1] - 3 > 0:
            live[k] = True
    storages = slots.storages
    for k in per_storage:
        if not live[k]:
            # references: the TensorImpls in the segment, `slots.storages`, the call
            if sys.getrefcount(storages[k]) - per_storage[k] - 2 > 0:
                live[k] = True
    return tuple(live)


def _count(counted, t):
    entry = counted.get(id(t))
    if entry is None:
        counted[id(t)] = [t, 1]
    else:
        entry[1] += 1


def segment_key(nodes, capture):
    """(key, slots): the structural key of a segment. (The loop is its own function so that
    its local variables hold no tensor when the reference counts are read.)"""
    slots = _Slots(capture)
    parts = _structure(nodes, slots, capture.fresh)
    return (parts, tuple(slots.fresh), _live_fresh(nodes, slots)), slots


def _structure(nodes, slots, handles):
    """One tight loop over the segment: this runs on every compiled call."""
    index, storages, fresh = slots.index, slots.storages, slots.fresh
    parts = []
    for n in nodes:
        items = [n.op, n.device]
        args = n.args
        if n.op == "fill" and len(args) == 2 and not n.kwargs:
            # the value is read when the plan runs: a new learning rate is not a new plan
            args = (args[0], type(args[1]))
        for a in args:
            if isinstance(a, TensorImpl):
                st = a._storage
                k = index.get(id(st))
                if k is None:
                    k = index[id(st)] = len(storages)
                    storages.append(st)
                    h = st.handle
                    fresh.append(handles.get(id(h)) is h)
                items.append((k, a._sizes, a._strides, a._offset, a._dtype))
            else:
                items.append(_arg_key(a, slots))
        if n.kwargs:
            items.append(tuple((k, _arg_key(v, slots)) for k, v in sorted(n.kwargs.items())))
        parts.append(tuple(items))
    return tuple(parts)


# -- fusion --------------------------------------------------------------------------------

def _elementwise(node, codegen_devices):
    """(out, inputs, value) when node can join a fused kernel, else None."""
    if node.kwargs or node.device not in codegen_devices:
        return None
    op, args = node.op, node.args
    if not args or not isinstance(args[0], TensorImpl):
        return None
    out = args[0]
    if op == "fill":
        if len(args) != 2 or not isinstance(args[1], (bool, int, float)) or \
                (isinstance(args[1], int) and abs(args[1]) > 2 ** 53):   # passed as a double
            return None
        inputs, value = (), args[1]
    else:
        inputs, value = args[1:], None
        expected = 3 if op == "where" else (1 if op in ("copy", "relu") or _is_unary(op) else 2)
        if len(inputs) != expected or not all(isinstance(t, TensorImpl) for t in inputs):
            return None
        if any(t._sizes != out._sizes for t in inputs):
            return None
    dtypes = [out._dtype.name] + [t._dtype.name for t in inputs]
    if not supported(op, dtypes):
        return None
    return out, inputs, value


def _is_unary(op):
    from tensorlib.backends.interface import UNARY_OPS
    return op in UNARY_OPS


def _view(t):
    return (t._sizes, t._strides, t._offset, t._dtype.name)


class _Group:
    """A run of fusible nodes being collected."""

    def __init__(self, shape, device):
        self.shape, self.device = shape, device
        self.members = []           # (node index, out, inputs, value)
        self.views = {}             # slot -> the view every access uses (if written)
        self.read_views = {}        # slot -> set of views it is read through
        self.written = set()

    def accepts(self, out, inputs, slots, device):
        if out._sizes != self.shape or device != self.device:
            return False
        ws = slots.index[id(out._storage)]
        if ws in self.written and self.views[ws] != _view(out):
            return False
        if ws not in self.written and self.read_views.get(ws, {_view(out)}) != {_view(out)}:
            return False
        for t in inputs:
            s = slots.index[id(t._storage)]
            if (s in self.written or s == ws) and _view(t) != (self.views.get(s) or _view(out)):
                return False
        return True

    def add(self, i, out, inputs, value, slots):
        for t in inputs:
            self.read_views.setdefault(slots.index[id(t._storage)], set()).add(_view(t))
        ws = slots.index[id(out._storage)]
        self.written.add(ws)
        self.views[ws] = _view(out)
        self.members.append((i, out, inputs, value))


def _build_fused(group, nodes, slots, keep, backend):
    """(FusedKernel, operand references, fill node indices, spec) for a closed group of two
    or more nodes."""
    operands, refs, opindex, fills = [], [], {}, []
    written_by = {}                 # slot -> step index of its latest value
    steps, arg_tensors = [], []

    def operand(t, where):
        key = (slots.index[id(t._storage)],) + _view(t)
        k = opindex.get(key)
        if k is None:
            k = opindex[key] = len(operands)
            operands.append(t)
            refs.append(where)
        return k

    for j, (i, out, inputs, value) in enumerate(group.members):
        node = nodes[i]
        args = []
        for pos, t in enumerate(inputs):
            s = slots.index[id(t._storage)]
            if s in written_by:
                args.append(("v", written_by[s]))
            else:
                args.append(("p", operand(t, (i, pos + 1))))
        in_dt = (inputs[1] if node.op == "where" else inputs[0])._dtype.name if inputs \
            else out._dtype.name
        if node.op == "fill":
            value = len(fills)
            fills.append(i)
        steps.append(Step(node.op, tuple(args), in_dt, out._dtype.name, value))
        written_by[slots.index[id(out._storage)]] = j
        arg_tensors.append(out)
    stores = []
    for s, j in written_by.items():
        if keep(s):
            out = group.members[j][1]
            stores.append((operand(out, (group.members[j][0], 0)), j))
    views = [(t._strides) for t in operands]
    sizes, strides = collapse_dims(group.shape, [list(v) for v in views])
    inner = []
    for st in strides:
        if not sizes:
            inner.append("b")
        else:
            inner.append("c" if st[-1] == 1 else ("b" if st[-1] == 0 else "s"))
    spec = FusedSpec(tuple((t._dtype.name, kind) for t, kind in zip(operands, inner)),
                     tuple(steps), tuple(stores))
    return backend.fused_kernel(spec, sizes, strides), tuple(refs), tuple(fills), spec


class Plan:
    """What to run for a segment: ("node", i) steps and ("fused", kernel, operand refs, fill
    node indices) steps."""
    __slots__ = ("steps", "fused_specs")

    def __init__(self, steps, fused_specs):
        self.steps, self.fused_specs = steps, fused_specs

    def run(self, nodes):
        for step in self.steps:
            if step[0] == "node":
                n = nodes[step[1]]
                n.kernel(*n.args, **n.kwargs)
            else:
                kernel, refs, fills = step[1], step[2], step[3]
                kernel([nodes[i].args[p] for i, p in refs], [nodes[i].args[1] for i in fills])


# Ops generated as a kernel even alone: what a declined relu records (maximum with a
# broadcast 0), which the eager table runs as a numpy ufunc at 2.5x the time of one generated
# loop. Exact ops only, so that a lone op rounds as its eager kernel does.
_ALONE = frozenset({"maximum", "minimum"})


def build_plan(nodes, slots, live, fuse=True):
    from tensorlib._C.device import canonical
    codegen = {}
    if fuse:
        for n in nodes:
            if n.device not in codegen:
                backend = canonical(n.device)._backend
                codegen[n.device] = backend if getattr(backend, "fused_kernel", None) else None
    codegen_devices = {d for d, b in codegen.items() if b is not None}
    last_use, first_use = {}, {}
    for i, n in enumerate(nodes):
        for t in n.tensors():
            k = slots.index[id(t._storage)]
            last_use[k] = i
            first_use.setdefault(k, i)
    steps, specs = [], []
    group = None

    def close(end):
        nonlocal group
        if group is None:
            return
        if len(group.members) < 2 and nodes[group.members[0][0]].op not in _ALONE:
            steps.extend(("node", m[0]) for m in group.members)
        else:
            def keep(s, end=end):
                return live[s] or last_use.get(s, -1) >= end
            kernel, refs, fills, spec = _build_fused(group, nodes, slots, keep,
                                                     codegen[group.device])
            steps.append(("fused", kernel, refs, fills))
            specs.append(spec)
        group = None

    for i, n in enumerate(nodes):
        ew = _elementwise(n, codegen_devices) if fuse else None
        if ew is None:
            close(i)
            steps.append(("node", i))
            continue
        out, inputs, value = ew
        if n.op == "fill" and group is not None and out._sizes != group.shape and \
                first_use[slots.index[id(out._storage)]] == i:
            # a new scalar operand (x * 2 the first time): it depends on nothing the group
            # computes, so it runs before the group instead of splitting it
            steps.append(("node", i))
            continue
        if group is None or not group.accepts(out, inputs, slots, n.device):
            close(i)
            group = _Group(out._sizes, n.device)
        group.add(i, out, inputs, value, slots)
    close(len(nodes))
    return Plan(steps, specs)


def run_segment(nodes, capture, fuse=True):
    """Plan (or find the plan of) a segment and run it; returns its structural key."""
    key, plan = plan_segment(nodes, capture, fuse)
    plan.run(nodes)
    return key


def plan_segment(nodes, capture, fuse=True):
    """(structural key, plan) of a segment, from the cache or newly built."""
    key, slots = segment_key(nodes, capture)
    cache_key = (key, fuse)
    plan = _PLANS.get(cache_key)
    if plan is None:
        if len(_PLANS) >= _PLAN_LIMIT:
            _PLANS.clear()
        plan = _PLANS[cache_key] = build_plan(nodes, slots, key[2], fuse)
        if logs.enabled("graph"):
            logs.log("graph", f"new segment of {len(nodes)} kernels, {len(plan.fused_specs)} "
                              f"fused groups:\n{logs.describe_segment(nodes)}")
    return key, plan
