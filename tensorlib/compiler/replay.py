"""Replay: run a compiled call's recorded kernels again without running its Python.

The lazy capture (`capture`) re-runs a function's Python on every call, which is what makes it
always right and also what makes it no faster than eager code where the kernels are cheap (a
small model's training step spends most of its time in Python: argument checks, shape
inference, autograd recording). Once two consecutive calls with the same guards recorded the
same program, later calls with those guards replay it: the kernels and fused kernels run in
order on buffers allocated for the call, and one autograd node (`ReplayBackward`) stands for
the whole graph, its backward being the backward program traced once from the recorded graph
(PyTorch's AOTAutograd does the same with a joint graph).

Guards (`guards.py`): the input tensors' layouts, grad mode, autocast, and a fingerprint of the
Python state the function can read -- the module tree (training flags, hyperparameters,
parameter identities), a bound method's object (an optimizer's groups and state), the globals
and closure cells the code names. A call whose fingerprint changes while it runs (a step
counter, a new momentum buffer, an appended list) has Python side effects: it is not replayed.
A call that runs backward itself (a whole training step) returns a spent graph: its program
has no backward, and the guarded tensors' `.grad`s it replaced are rebound on each replay.

Not replayable, so always run through the capture: calls with graph breaks, calls that run
kernels outside the recording (`compiler.disable`), random ops (their seeds differ between
the two recordings), outputs that are not tensors, tuples, lists, dicts or constants, and
graphs reaching leaves that no guard covers.
"""
import sys
from threading import get_ident

from tensorlib import _capture_state
from tensorlib._C import grad_mode as _grad_mode
from tensorlib._C.autograd import Node, edge
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides, wrap
from tensorlib.compiler import capture as _capture
from tensorlib.compiler import plan as _plan
from tensorlib.compiler import rewrite as _rewrite


class NotReplayable(Exception):
    """A recording that cannot become a program (the reason is the message)."""


class _View:
    """Argument marker: the replay's view number `i`."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def logging_runner(fuse):
    """The capture's segment runner that also logs each planned segment into `cap.program`."""
    def run(nodes, cap):
        key, plan = _plan.plan_segment(nodes, cap, fuse)
        plan.run(nodes)
        if cap.program is not None:
            cap.program.append(("segment", nodes, plan))
        return key
    return run


def _steps(log):
    """(kernel, args, kwargs) in the order they ran."""
    for entry in log:
        if entry[0] == "node":
            n = entry[1]
            yield n.kernel, n.args, n.kwargs
            continue
        nodes, plan = entry[1], entry[2]
        for step in plan.steps:
            if step[0] == "node":
                n = nodes[step[1]]
                yield n.kernel, n.args, n.kwargs
            else:
                kernel, refs, fills = step[1], step[2], step[3]
                yield kernel, ([nodes[i].args[p] for i, p in refs],
                               [nodes[i].args[1] for i in fills]), {}


class _Binder:
    """Numbers the storages a recording touched and says how a replay gets each one:
    ("in", i) the storage of input tensor i, ("grad", p) the .grad of guarded tensor p,
    ("new", nbytes, device) allocated per replay, ("const", storage) kept as it is (a
    parameter, a buffer, a cached scalar: guarded by the fingerprint), or, for a backward
    program, ("gin", k) the incoming gradient k and ("fwd", slot) a forward buffer."""

    def __init__(self, classify):
        self.classify = classify
        self.index = {}             # id(storage) -> slot
        self.kinds = []
        self.storages = []          # held so that ids stay unique while building
        self.views = []             # (slot, sizes, strides, offset, dtype)
        self.view_of = {}           # id(TensorImpl) -> view number
        self.held = []

    def slot(self, st):
        k = self.index.get(id(st))
        if k is None:
            k = self.index[id(st)] = len(self.kinds)
            self.kinds.append(self.classify(st))
            self.storages.append(st)
        return k

    def arg(self, a):
        """The template of one argument: a tensor to rebind becomes a `_View`."""
        if isinstance(a, TensorImpl):
            k = self.slot(a._storage)
            if self.kinds[k][0] == "const":
                return a
            v = self.view_of.get(id(a))
            if v is None:
                v = self.view_of[id(a)] = len(self.views)
                self.views.append((k, a._sizes, a._strides, a._offset, a._dtype))
                self.held.append(a)
            return _View(v)
        if isinstance(a, (list, tuple)) and any(isinstance(x, TensorImpl) for x in a):
            return type(a)(self.arg(x) for x in a)
        return a

    def key_of(self, a):
        """A hashable description of a template argument, for comparing recordings."""
        if isinstance(a, _View):
            k, sizes, strides, offset, dt = self.views[a.i]
            kind = self.kinds[k]
            return ("V", a.i, k, kind[0], kind[1] if kind[0] in ("in", "gin", "fwd") else
                    (kind[1] if kind[0] == "new" else id(kind[1])), sizes, strides, offset,
                    dt.name)
        if isinstance(a, TensorImpl):
            return ("C", id(a._storage), a._sizes, a._strides, a._offset, a._dtype.name)
        if isinstance(a, (list, tuple)):
            return (type(a).__name__,) + tuple(self.key_of(x) for x in a)
        return _plan._value_key(a)      # an ndarray (pool windows, host data) by its bytes


class _Step:
    """One kernel call of a program: its kernel and argument templates (a `_View` where the
    replay's view goes)."""
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, tuple(args), dict(kwargs)


def _straight_line(steps):
    """The steps as one generated Python function `run(v)` that calls each kernel with its
    views (`v[i]`) and constants in place: no per-step loop over argument templates (what a
    replayed small model spends its time on besides the kernels; Inductor's wrapper code does
    the same)."""
    env, lines = {}, []

    def expr(a, name):
        if isinstance(a, _View):
            return f"v[{a.i}]"
        if isinstance(a, (list, tuple)) and any(isinstance(x, _View) for x in a):
            items = ", ".join(expr(x, f"{name}_{j}") for j, x in enumerate(a))
            return f"[{items}]" if isinstance(a, list) else f"({items},)"
        env[name] = a
        return name

    for n, st in enumerate(steps):
        env[f"k{n}"] = st.fn
        args = [expr(a, f"c{n}_{i}") for i, a in enumerate(st.args)]
        args += [f"{k}={expr(a, f'c{n}_{k}')}" for k, a in st.kwargs.items()]
        lines.append(f"    k{n}({', '.join(args)})")
    source = "def run(v):\n" + ("\n".join(lines) if lines else "    pass") + "\n"
    exec(compile(source, "<tensorlib.compile replay>", "exec"), env)
    return env["run"]


class _Kernels:
    """A straight-line kernel program over slots: what a replay (forward or backward) runs.

    Buffers that nothing outside the program reads afterwards (`keep_scratch`) live with the
    program, their views made once: a replayed LSTM sequence's backward otherwise wrapped
    ~5000 views and allocated ~1600 buffers per call, a quarter of the step."""

    def __init__(self, binder, steps, key):
        self.kinds = binder.kinds
        self.views = binder.views
        self.steps = steps
        self.run = _straight_line(steps)        # run(views)
        self.key = key
        used = {v[0] for v in binder.views}
        self.new = [(k, kind[1], kind[2]) for k, kind in enumerate(binder.kinds)
                    if kind[0] == "new" and k in used]
        self._temps = []            # (slot, nbytes, device) kept with the program
        self._per_call = []         # (view number, view) made per call when _temps is set
        self._scratch = []          # spare sets of scratch views (list.pop: thread-safe)

    def keep_scratch(self, escaping):
        """Keep the "new" buffers whose slots are not in `escaping` (results, what a
        backward reads) with the program instead of allocating them per call."""
        temps = {k for k, _, _ in self.new if k not in escaping}
        if not temps:
            return
        self._temps = [n for n in self.new if n[0] in temps]
        self.new = [n for n in self.new if n[0] not in temps]
        self._per_call = [(i,) + v for i, v in enumerate(self.views) if v[0] not in temps]

    def _new_scratch(self):
        storages = {k: Storage(dev._allocate(nbytes, dev.index), nbytes, dev, dev._release)
                    for k, nbytes, dev in self._temps}
        return [wrap(storages[k], sizes, strides, offset, dt) if k in storages else None
                for k, sizes, strides, offset, dt in self.views]

    def bind(self, storages):
        """Allocate the per-call buffers into `storages` (a list by slot, inputs filled in)
        and return (views, scratch): hand `scratch` back to `done` after the run."""
        for k, nbytes, dev in self.new:
            storages[k] = Storage(dev._allocate(nbytes, dev.index), nbytes, dev, dev._release)
        if not self._temps:
            return [wrap(storages[k], sizes, strides, offset, dt)
                    for k, sizes, strides, offset, dt in self.views], None
        try:
            scratch = self._scratch.pop()
        except IndexError:          # the first call, or another thread runs the program
            scratch = self._new_scratch()
        views = scratch.copy()
        for i, k, sizes, strides, offset, dt in self._per_call:
            views[i] = wrap(storages[k], sizes, strides, offset, dt)
        return views, scratch

    def done(self, scratch):
        if scratch is not None and len(self._scratch) < 2:
            self._scratch.append(scratch)


def _build_kernels(log, binder):
    steps, key = [], []
    for fn, args, kwargs in _steps(log):
        targs = tuple(binder.arg(a) for a in args)
        tkw = {k: binder.arg(v) for k, v in kwargs.items()}
        steps.append(_Step(fn, targs, tkw))
        key.append((id(fn),) + tuple(binder.key_of(a) for a in targs) +
                   tuple((k, binder.key_of(v)) for k, v in sorted(tkw.items())))
    return steps, tuple(key)


def _output_template(obj, binder, inputs):
    if isinstance(obj, TensorImpl):
        for i, t in enumerate(inputs):
            if t is obj:
                return ("input", i)
        a = binder.arg(obj)
        if isinstance(a, TensorImpl):
            return ("const", a)
        node = obj._grad_fn
        return ("view", a.i, _NO_GRAPH if node is None else _SPENT if node._released else
                _LIVE)
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return ("seq", type(obj), tuple(_output_template(x, binder, inputs) for x in obj))
    if isinstance(obj, dict) and type(obj) is dict:
        return ("dict", tuple((k, _output_template(v, binder, inputs)) for k, v in obj.items()))
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return ("value", obj)
    raise NotReplayable(f"returns a {type(obj).__name__}")


# what the graph of a tensor output is: none, one to replay, or one the call itself already
# ran backward through (a training step returning its loss)
_NO_GRAPH, _LIVE, _SPENT = 0, 1, 2


def _template_views(template, out):
    """Every view number an output template reads, appended to `out`."""
    kind = template[0]
    if kind == "view":
        out.append(template[1])
    elif kind == "seq":
        for t in template[2]:
            _template_views(t, out)
    elif kind == "dict":
        for _, t in template[1]:
            _template_views(t, out)
    return out


def _differentiable_outputs(template, out, state=_LIVE):
    """The view numbers of outputs whose graph (made during the call) is `state`, in
    order."""
    kind = template[0]
    if kind == "view":
        if template[2] == state:
            out.append(template[1])
    elif kind == "seq":
        for t in template[2]:
            _differentiable_outputs(t, out, state)
    elif kind == "dict":
        for _, t in template[1]:
            _differentiable_outputs(t, out, state)
    return out


class Program:
    """A verified recording: the forward kernels, how the result is put together, and (when
    the result carries a graph) the backward kernels and the tensors they differentiate."""

    def __init__(self, cap, log, inputs, grads_of, result, grads_before):
        if cap.breaks:
            raise NotReplayable("it has graph breaks")
        if cap.opaque:
            raise NotReplayable("kernels ran outside the recording")
        input_slot = {}
        for i, t in enumerate(inputs):
            input_slot.setdefault(id(t._storage), i)

        def classify(st):
            i = input_slot.get(id(st))
            if i is not None:
                return ("in", i)
            p = grads_of.get(id(st))
            if p is not None:
                return ("grad", p)
            if cap.is_fresh(st):
                return ("new", st._nbytes, st.device)
            return ("const", st)

        binder = _Binder(classify)
        self.input_slots = [binder.slot(t._storage) for t in inputs]
        steps, key = _build_kernels(log, binder)
        self.output = _output_template(result, binder, inputs)
        self.rebinds = _rebinds(grads_before, binder)
        self.spent = _differentiable_outputs(self.output, [], _SPENT)
        self.forward = _Kernels(binder, steps, key)
        self.grad_slots = [(k, kind[1]) for k, kind in enumerate(binder.kinds)
                           if kind[0] == "grad"]
        self.nslots = len(binder.kinds)
        self.key = (key, _template_key(self.output, binder),
                    tuple((id(p), _template_key(t, binder)) for p, t in self.rebinds))
        self._binder = binder           # until `trace_backward` has run
        self.backward = None

    # -- the backward program ------------------------------------------------------------
    def trace_backward(self, result, inputs, guarded, devices, fuse):
        """Trace the backward of the recorded graph once, with placeholder gradients, under
        a capture that records without running; the kernels become `self.backward`."""
        binder = self._binder
        self._binder = None
        outs = _differentiable_outputs(self.output, [])
        if not outs or not _grad_mode.is_grad_enabled():
            return
        import tensorlib
        out_tensors = [binder.held[v] for v in outs]
        diff = _differentiated(out_tensors, inputs, guarded)
        fwd_slot = {id(st): k for k, st in enumerate(binder.storages)
                    if binder.kinds[k][0] == "new"}
        placeholders = [tensorlib.empty(t._sizes, dtype=t.dtype, device=t.device)
                        for t in out_tensors]
        gin = {id(p._storage): k for k, p in enumerate(placeholders)}
        input_slot = {}
        for i, t in enumerate(inputs):
            input_slot.setdefault(id(t._storage), i)
        log = []
        cap = _capture.Capture(devices, _phantom_runner(fuse, log))
        cap.program = log

        def classify(st):
            if id(st) in gin:
                return ("gin", gin[id(st)])
            if id(st) in fwd_slot:
                return ("fwd", fwd_slot[id(st)])
            if id(st) in input_slot:
                return ("in", input_slot[id(st)])
            if cap.is_fresh(st):
                return ("new", st._nbytes, st.device)
            return ("const", st)

        cap.install()
        try:
            grads = tensorlib.autograd.grad(out_tensors, [t for _, t in diff], placeholders,
                                            retain_graph=True, allow_unused=True)
            cap.flush()
        finally:
            cap.uninstall()
        if cap.breaks or cap.opaque:
            raise NotReplayable("its backward has graph breaks")
        bbinder = _Binder(classify)
        steps, _ = _build_kernels(log, bbinder)
        templates = []
        for (source, _), g in zip(diff, grads):
            if g is None:
                templates.append(None)
                continue
            a = bbinder.arg(g)
            templates.append(("const", a) if isinstance(a, TensorImpl) else ("view", a.i))
        kept = [i for i, tpl in enumerate(templates) if tpl is not None]
        results = {bbinder.views[t[1]][0] for t in templates if t is not None and t[0] == "view"}
        steps = _rewrite.accumulate_products(steps, bbinder, results, _Step, _View)
        self.backward = _Kernels(bbinder, steps, None)
        self.backward.keep_scratch(results)
        self.grad_templates = [templates[i] for i in kept]
        self.diff_sources = [diff[i][0] for i in kept]
        self.out_views = outs
        self.out_metas = [(t._sizes, t._dtype, t._device) for t in out_tensors]

    def keep_scratch(self):
        """Let the forward keep the buffers that neither the result, a rebound .grad nor
        the backward program reads (once the backward is traced)."""
        views = self.forward.views
        reached = _template_views(self.output, [])
        for _, tpl in self.rebinds:
            _template_views(tpl, reached)
        escaping = {views[i][0] for i in reached}
        if self.backward is not None:
            escaping.update(kind[1] for kind in self.backward.kinds if kind[0] == "fwd")
        self.forward.keep_scratch(escaping)

    # -- running ---------------------------------------------------------------------------
    def run(self, inputs):
        """The result of one replayed call, with its graph when grad mode is on."""
        storages = [None] * self.nslots
        for i, k in enumerate(self.input_slots):
            st = inputs[i]._storage
            if storages[k] is None:
                storages[k] = st
            elif storages[k] is not st:
                return MISS
        for k, p in self.grad_slots:
            g = p._grad
            if g is None:
                return MISS
            storages[k] = g._storage
        fwd = self.forward
        views, scratch = fwd.bind(storages)
        try:
            fwd.run(views)
        finally:
            fwd.done(scratch)
        result = _assemble(self.output, views, inputs)
        for p, tpl in self.rebinds:
            p._grad = _assemble(tpl, views, inputs)
        if self.spent and _grad_mode.is_grad_enabled():
            node = _SpentBackward()
            for nr, v in enumerate(self.spent):
                t = views[v]
                t._requires_grad = True
                t._grad_fn = node
                t._output_nr = nr
        if self.backward is not None and _grad_mode.is_grad_enabled():
            node = ReplayBackward(self, storages, inputs)
            for nr, v in enumerate(self.out_views):
                t = views[v]
                t._requires_grad = True
                t._grad_fn = node
                t._output_nr = nr
        return result


MISS = object()


def _rebinds(grads_before, binder):
    """[(tensor, output template)] for the guarded tensors whose .grad the call replaced (a
    training step: `zero_grad()` sets each to None and its `backward()` makes new ones); a
    replay binds each to the buffer it computed, as the recorded call left them."""
    out = []
    for p, before in grads_before:
        g = p._grad
        if g is before:
            continue
        if g is None:       # the fingerprint lists .grad presence: not reached when equal
            raise NotReplayable("it clears a .grad")
        a = binder.arg(g)
        out.append((p, ("const", a) if isinstance(a, TensorImpl) else ("view", a.i, _NO_GRAPH)))
    return out


def _template_key(template, binder):
    kind = template[0]
    if kind == "view":
        return ("view", binder.key_of(_View(template[1])), template[2])
    if kind == "const":
        return ("const", id(template[1]))
    if kind == "seq":
        return ("seq", template[1].__name__) + tuple(_template_key(t, binder)
                                                     for t in template[2])
    if kind == "dict":
        return ("dict",) + tuple((k, _template_key(t, binder)) for k, t in template[1])
    return template


def _assemble(template, views, inputs):
    kind = template[0]
    if kind == "view":
        return views[template[1]]
    if kind == "input":
        return inputs[template[1]]
    if kind == "const" or kind == "value":
        return template[1]
    if kind == "seq":
        return template[1](_assemble(t, views, inputs) for t in template[2])
    return {k: _assemble(t, views, inputs) for k, t in template[1]}


def _phantom_runner(fuse, log):
    def run(nodes, cap):
        key, plan = _plan.plan_segment(nodes, cap, fuse)
        log.append(("segment", nodes, plan))
        return key
    return run


def _differentiated(outputs, inputs, guarded):
    """[(source, tensor)] the backward differentiates: ("in", i) for inputs that require
    grad, ("leaf", t) for the guarded leaves the graph reaches; raises NotReplayable when it
    reaches a leaf that no guard covers."""
    diff = [(("in", i), t) for i, t in enumerate(inputs) if t._requires_grad]
    stops = {id(t._grad_fn) for t in inputs if t._requires_grad and t._grad_fn is not None}
    known = {id(t) for t in inputs}
    seen, stack = set(), [o._grad_fn for o in outputs if o._grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or id(node) in stops:
            continue
        if node._released:
            raise NotReplayable("its graph reaches nodes a backward inside the call freed")
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            if id(var) in known:
                continue
            if id(var) not in guarded:
                raise NotReplayable("its graph reaches a tensor outside its inputs and guards")
            known.add(id(var))
            diff.append((("leaf", var), var))
            continue
        stack.extend(fn for fn, _ in node.next_functions)
    return diff


class _SpentBackward(Node):
    """The grad_fn of a replayed output whose graph the recorded call had already run
    backward through (a training step's loss): as in eager mode it holds nothing, and a
    backward through it raises."""

    def __init__(self):
        self._released = True

    def name(self):
        return "CompiledFunctionBackward"

    def backward(self, *grad_outputs):
        raise RuntimeError(_SECOND_TIME)


_SECOND_TIME = ("Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Specify retain_graph=True "
                "if you need to backward the graph a second time.")


class ReplayBackward(Node):
    """The autograd node of a replayed call: its backward runs the traced backward program
    on the call's saved buffers and returns one gradient per differentiated tensor."""

    def __init__(self, program, storages, inputs):
        self._program = program
        self._storages = storages
        self.next_functions = tuple(edge(inputs[src[1]]) if src[0] == "in" else edge(src[1])
                                    for src in program.diff_sources)

    def name(self):
        return "CompiledFunctionBackward"

    def release(self):
        self._released = True
        self._storages = None

    def backward(self, *grad_outputs):
        if self._storages is None:
            raise RuntimeError(_SECOND_TIME)
        if _grad_mode.is_grad_enabled():
            raise RuntimeError("tensorlib.compile: a double backward (create_graph=True) "
                               "through a replayed compiled call is not supported; compile "
                               "with options={'replay': False} for higher-order gradients")
        cap = _capture_state.current
        if cap is not None and cap.thread == get_ident():
            cap.flush()
            cap.opaque = True
        prog = self._program
        bwd = prog.backward
        fwd_storages = self._storages
        storages = [None] * len(bwd.kinds)
        for k, kind in enumerate(bwd.kinds):
            tag = kind[0]
            if tag == "gin":
                storages[k] = _incoming(grad_outputs, kind[1], prog.out_metas[kind[1]])
            elif tag == "fwd":
                storages[k] = fwd_storages[kind[1]]
            elif tag == "in":
                storages[k] = fwd_storages[prog.input_slots[kind[1]]]
            elif tag == "const":
                storages[k] = kind[1]
        views, scratch = bwd.bind(storages)
        try:
            bwd.run(views)
        finally:
            bwd.done(scratch)
        return tuple(views[t[1]] if t[0] == "view" else t[1] for t in prog.grad_templates)


def _incoming(grad_outputs, k, meta):
    """The storage of incoming gradient k laid out as the placeholder was (contiguous,
    offset 0); zeros when it got none."""
    import tensorlib
    sizes, dt, dev = meta
    g = grad_outputs[k] if k < len(grad_outputs) else None
    if g is None:
        return tensorlib.zeros(sizes, dtype=dt, device=dev)._storage
    if g._dtype is dt and g._offset == 0 and g._strides == contiguous_strides(sizes) and \
            g._storage._nbytes == g.numel() * dt.itemsize:
        return g._storage
    laid_out = tensorlib.empty(sizes, dtype=dt, device=dev)
    laid_out.copy_(g)
    return laid_out._storage


_DEAD = "dead"


_AMP = []


def ambient():
    """Process state that changes what a call records without showing in its arguments.
    (On every compiled call: autocast's module is imported once, its empty tables cost
    nothing.)"""
    if not _AMP:
        from tensorlib.amp import autocast_mode
        _AMP.append(autocast_mode)
    amp = _AMP[0]
    enabled, dtypes = amp.enabled_state()
    return (_grad_mode.is_inference_mode_enabled(),
            tuple(sorted(enabled.items())) if enabled else (),
            tuple(sorted((k, str(v)) for k, v in dtypes.items())) if dtypes else ())


class Replayer:
    """One compiled callable's programs, by guard key: a key is learnt from two clean
    recordings that agree, then replayed; a key whose calls keep changing Python state
    stops being recorded for replay."""
    _LIMIT = 32

    def __init__(self, fn, module):
        from tensorlib.compiler import guards
        self._guard = guards.Guard(guards.roots_of(fn, module))
        self._module = module
        self.entries = {}
        self.replayed = 0               # calls that ran as a replay (for tests and logs)

    def reset(self):
        self.entries.clear()

    def _fingerprint(self):
        return self._guard.fingerprint()

    def lookup(self, signature, tensors):
        """(result, None) for a replayed call; (MISS, learning) to run it through the
        capture, `learning` being what `learn` needs (None: do not record)."""
        profiler = sys.modules.get("tensorlib.profiler._recorder")
        if profiler is not None and profiler.current is not None:
            return MISS, None           # its timing wrappers must see every kernel call
        fp = self._fingerprint()
        if fp is None:
            return MISS, None
        layouts = tuple((t._sizes, t._strides, t._offset, t._dtype, t._device,
                         t._requires_grad, t._grad_fn is not None) for t in tensors)
        key = (signature, layouts, fp.key)       # the signature holds `ambient()`
        entry = self.entries.get(key)
        if isinstance(entry, Program):
            result = entry.run(tensors)
            if result is not MISS:
                self.replayed += 1
            return result, None
        if entry == _DEAD:
            return MISS, None
        return MISS, (key, fp, [(p, p._grad) for p in fp.grads_of.values()])

    def learn(self, learning, cap, log, tensors, result, devices, fuse):
        """After a recorded call: keep its program as a candidate, or make it the key's
        program when it equals the candidate."""
        key, fp, grads_before = learning
        entries = self.entries
        after = self._fingerprint()
        if len(entries) >= self._LIMIT:
            entries.clear()
        prev = entries.get(key)
        if after is None or after.key != fp.key:        # Python side effects
            dirty = prev + 1 if isinstance(prev, int) else 1
            entries[key] = dirty if dirty < 3 else _DEAD   # this key's calls stop recording
            return
        try:
            if self._module is not None:
                _check_no_hooks(self._module)
            prog = Program(cap, log, tensors, fp.grads_of, result, grads_before)
            if not (isinstance(prev, tuple) and prev[1] == prog.key):
                tries = prev[2] + 1 if isinstance(prev, tuple) else 1
                # recordings that keep differing (random ops draw new seeds) stop here
                entries[key] = ("candidate", prog.key, tries) if tries < 4 else _DEAD
                return
            prog.trace_backward(result, tensors, fp.tensors, devices, fuse)
            prog.keep_scratch()
        except NotReplayable as exc:
            from tensorlib.compiler.logs import log as _log
            _log("recompiles", f"not replayed: {exc}")
            entries[key] = _DEAD
            return
        entries[key] = prog
        from tensorlib.compiler.logs import log as _log
        _log("recompiles", f"replaying a verified recording of {len(prog.forward.steps)} "
                           f"kernels" + (f" (backward: {len(prog.backward.steps)})"
                                         if prog.backward is not None else ""))


_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")


def _check_no_hooks(module):
    """Module hooks are Python that runs at each call: a module tree with any is not
    replayed (the fingerprint sees hooks being added later, and relearns)."""
    from tensorlib.nn.modules import module as _m
    if any(getattr(_m, "_global" + name) for name in _HOOKS):
        raise NotReplayable("global module hooks are registered")
    for m in module.modules():
        if any(getattr(m, name, None) for name in _HOOKS):
            raise NotReplayable(f"{type(m).__name__} has hooks")
