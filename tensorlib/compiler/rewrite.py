"""Rewrites of a replay program (`replay._Kernels` steps) that the per-op eager code cannot do
because they need to know what runs later.

`accumulate_products`: autograd sums a tensor's gradients over its uses one out-of-place add
at a time, so a weight used at each of an LSTM's 100 steps gets 100 products `T = a @ b`,
each added onto the running sum `N = A + T` in a new buffer. When the program shows that the
running sum A is read by nothing after that add, the product is accumulated onto A where it
is made (`addmm`, beta 1: C += a @ b inside the GEMM, as PyTorch's AccumulateGrad does for a
leaf's .grad) and N's later readers read A: one kernel and two buffers fewer per use.
A Linear's backward makes its two products in one `mm_pair` step (both side by side on the
threads, as eager runs them); a product of a pair that is folded so splits the pair into an
`mm` for the other product and the `addmm`.
"""
from tensorlib._C.tensor_impl import contiguous_strides


class _Refs:
    """slot -> sorted step indices whose arguments name one of the slot's views."""

    def __init__(self, steps, views, view_type):
        self.views, self.view_type = views, view_type
        self.by_slot = {}
        for n, st in enumerate(steps):
            for v in self.view_numbers(st):
                self.by_slot.setdefault(views[v][0], set()).add(n)

    def view_numbers(self, st):
        out = []

        def walk(a):
            if isinstance(a, self.view_type):
                out.append(a.i)
            elif isinstance(a, (list, tuple)):
                for x in a:
                    walk(x)
        for a in st.args:
            walk(a)
        for a in st.kwargs.values():
            walk(a)
        return out

    def between(self, slot, lo, hi):
        """Whether a step with index in (lo, hi) names `slot`."""
        return any(lo < n < hi for n in self.by_slot.get(slot, ()))


def _dense_view(view, kinds):
    """Whether a view is the whole of a buffer made during the call, contiguous from 0."""
    slot, sizes, strides, offset, dt = view
    kind = kinds[slot]
    n = 1
    for s in sizes:
        n *= s
    return (kind[0] == "new" and offset == 0 and strides == contiguous_strides(sizes)
            and kind[1] == n * dt.itemsize and len(sizes) == 2)


def accumulate_products(steps, binder, protected, step_type, view_type):
    """`steps` with each mm whose product is only added onto a dead running sum turned into an
    addmm onto that sum (see the module docstring); `binder.views` is updated so that the
    sum's later readers read the accumulator. `protected`: slots the caller reads after the
    program (its results), never reused."""
    kinds, views = binder.kinds, binder.views
    refs = _Refs(steps, views, view_type)
    producer = {}                # slot of a product's output -> (index of its step, part)
    out = list(steps)            # a step, None (removed) or [mm or addmm, mm or addmm]
    for j, st in enumerate(steps):
        tables = _tables(kinds, st, views, view_type)
        if tables is None:
            continue
        if st.fn is tables.get("mm") and len(st.args) == 3 and not st.kwargs \
                and isinstance(st.args[0], view_type):
            producer[views[st.args[0].i][0]] = (j, None)
            continue
        if st.fn is tables.get("mm_pair") and len(st.args) == 6 and not st.kwargs \
                and tables.get("mm") is not None \
                and all(isinstance(a, view_type) for a in st.args[0::3]):
            producer[views[st.args[0].i][0]] = (j, 0)
            producer[views[st.args[3].i][0]] = (j, 1)
            continue
        if not (st.fn is tables.get("add") and tables.get("addmm") is not None
                and len(st.args) == 3 and not st.kwargs
                and all(isinstance(a, view_type) for a in st.args)):
            continue
        n_view, x, y = (views[a.i] for a in st.args)
        for acc, prod in ((x, y), (y, x)):
            found = producer.get(prod[0])
            if found is not None and _fold(out, refs, kinds, views, protected, found, j, acc,
                                           prod, n_view, tables, step_type, view_type):
                break
    flat = []
    for st in out:
        if isinstance(st, list):
            flat.extend(st)
        elif st is not None:
            flat.append(st)
    return flat


def _product_args(out, i, part):
    """(out, a, b) of the product at step i: the mm, or part 0/1 of an mm_pair (split or
    not)."""
    st = out[i]
    if isinstance(st, list):
        return st[part].args[:3]
    if part is None:
        return st.args[:3]
    return st.args[3 * part:3 * part + 3]


def _tables(kinds, st, views, view_type):
    """The kernel table of the device of a step's first view (None: no view first)."""
    if not st.args or not isinstance(st.args[0], view_type):
        return None
    kind = kinds[views[st.args[0].i][0]]
    return kind[2]._kernels if kind[0] == "new" else None


def _fold(out, refs, kinds, views, protected, found, j, acc, prod, n_view, tables, step_type,
          view_type):
    """Turn the product at `found` (step i, part: T = a @ b) and step j (N = A + T) into
    A += a @ b at i when nothing between reads or writes A, nothing after j reads A, T is
    read only by j, and N is new at j; N's views become A's. True when done."""
    i, part = found
    s_acc, s_prod, s_new = acc[0], prod[0], n_view[0]
    if len({s_acc, s_prod, s_new}) != 3 or out[i] is None:
        return False
    if not all(_dense_view(v, kinds) for v in (acc, prod, n_view)):
        return False
    if not (acc[1:] == prod[1:] == n_view[1:]):
        return False
    if s_acc in protected or s_prod in protected:
        return False
    acc_refs, prod_refs, new_refs = (refs.by_slot.get(s, set()) for s in (s_acc, s_prod,
                                                                           s_new))
    if prod_refs != {i, j} or min(new_refs) != j:
        return False
    if not acc_refs or min(acc_refs) >= i or i in acc_refs or max(acc_refs) != j \
            or refs.between(s_acc, i, j):
        return False
    _, a, b = _product_args(out, i, part)
    if any(len(views[x.i][1] if isinstance(x, view_type) else getattr(x, "_sizes", ())) != 2
           for x in (a, b)):
        return False
    acc_view = next(a_ for a_ in out[j].args if views[a_.i] == acc)
    folded = step_type(tables["addmm"], (acc_view, a, b, 1, 1), {})
    if part is None:
        out[i] = folded
    else:
        if not isinstance(out[i], list):          # split the pair: the other product alone
            out[i] = [step_type(tables["mm"], _product_args(out, i, k), {})
                      for k in (0, 1)]
        out[i][part] = folded
    out[j] = None
    for v, (slot, sizes, strides, offset, dt) in enumerate(views):
        if slot == s_new or slot == s_prod:
            views[v] = (s_acc, sizes, strides, offset, dt)
    refs.by_slot[s_acc] = (acc_refs - {j}) | {i} | (new_refs - {j})
    refs.by_slot.pop(s_new, None)
    refs.by_slot.pop(s_prod, None)
    return True

