"""The gradient reducer of DistributedDataParallel: buckets, hooks and the overlap.

Parameters are bucketed in reverse registration order (backward produces gradients roughly
in that order), per dtype and device; the first bucket is capped at ~1 MB so that its
all-reduce starts early, the others at bucket_cap_mb (PyTorch's assignment: a bucket closes
once it reaches its cap). A post-accumulate-grad hook on every parameter counts the
gradients a bucket still waits for; the hook that completes a bucket copies its gradients
into the bucket's flat tensor (on the parameters' device, allocated once), divides by the
group size and launches the all-reduce of that tensor asynchronously, so the communication
thread reduces it while backward goes on. The hook of the last bucket reduces that one
itself (nothing is left to overlap with), waits for the others and writes the averages back
into each .grad in place.

With find_unused_parameters, parameters that the forward's graph cannot reach are marked
ready right after forward, and a map of which ranks used which parameter is reduced too, so
that a parameter no rank used keeps its .grad untouched (as in PyTorch)."""
import itertools

import tensorlib
import tensorlib.distributed as dist


class _Bucket:
    """The flat gradient buffer of some parameters of one dtype and device: a tensor there,
    each parameter's gradient a contiguous piece of it."""

    def __init__(self, indices, params):
        self.indices = indices
        first = params[indices[0]]
        self.offsets = [0] + list(itertools.accumulate(params[i].numel() for i in indices))
        self.flat = tensorlib.zeros(self.offsets[-1], dtype=first.dtype, device=first.device)
        self.work = None

    def piece(self, k, shape):
        """The k-th parameter's piece, viewed in its shape."""
        return self.flat[self.offsets[k]:self.offsets[k + 1]].view(tuple(shape))


def assign_buckets(params, first_bytes, cap_bytes):
    """Lists of parameter indices, reverse registration order, one dtype and device each."""
    open_buckets, sizes, closed_count, buckets = {}, {}, {}, []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        open_buckets.setdefault(key, []).append(i)
        sizes[key] = sizes.get(key, 0) + p.numel() * p.element_size()
        limit = first_bytes if closed_count.get(key, 0) == 0 else cap_bytes
        if sizes[key] >= limit:
            buckets.append(open_buckets.pop(key))
            sizes[key] = 0
            closed_count[key] = closed_count.get(key, 0) + 1
    buckets.extend(b for b in open_buckets.values())
    return buckets


def _reachable_leaves(outputs):
    """ids of the leaf tensors the autograd graph of `outputs` reaches."""
    from tensorlib._tensor import Tensor
    nodes, leaves, stack = [], set(), [outputs]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                nodes.append(o.grad_fn)
            elif o.requires_grad:
                leaves.add(id(o))            # a parameter returned as it is
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
    seen = set()
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        nodes.extend(n for n, _ in node.next_functions if n is not None)
    return leaves


class Reducer:
    def __init__(self, params, names, group, first_bytes, cap_bytes, find_unused):
        self.params, self.names, self.group = params, names, group
        self.world = dist.get_world_size(group)
        self.find_unused = find_unused
        self.buckets = [_Bucket(idx, params) for idx in assign_buckets(params, first_bytes,
                                                                        cap_bytes)]
        self.where = {}                      # param index -> (bucket, position)
        for b in self.buckets:
            for k, i in enumerate(b.indices):
                self.where[i] = (b, k)
        self.armed = False
        self.handles = [p.register_post_accumulate_grad_hook(self._hook(i))
                        for i, p in enumerate(params)]

    def _hook(self, i):
        def on_grad_ready(param):
            # a deep copy of the module copies its parameters' hooks too: ignore the copies
            if self.armed and param is self.params[i]:
                self._mark_ready(i, used=True)
        return on_grad_ready

    def prepare_for_backward(self, outputs):
        """Called by forward when the coming backward must synchronise gradients."""
        if self.armed:
            missing = [self.names[i] for i in range(len(self.params)) if i not in self.ready]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting "
                "a new one. This error indicates that your module has parameters that were "
                "not used in producing loss. You can enable unused parameter detection by "
                "passing the keyword argument `find_unused_parameters=True` to "
                "`tensorlib.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss. Parameters "
                f"that did not receive a gradient on rank {dist.get_rank()}: {missing}")
        if not self.buckets:
            return
        self.armed = True
        self.ready = set()
        self.used = [False] * len(self.params)
        self.pending = {id(b): len(b.indices) for b in self.buckets}
        self.launched = 0                    # buckets launch in index order (see _mark_ready)
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self._mark_ready(i, used=False)

    def _mark_ready(self, i, used):
        if i in self.ready:
            raise RuntimeError(f"Expected to mark a variable ready only once: parameter "
                               f"{self.names[i]} got its gradient twice in one backward "
                               f"(reentrant backward or a second backward without forward)")
        self.ready.add(i)
        self.used[i] = used
        bucket, _ = self.where[i]
        self.pending[id(bucket)] -= 1
        # every rank must issue the buckets' all-reduces in one order, whatever order its
        # backward completed them in: a full bucket waits for the ones before it
        while self.launched < len(self.buckets) and \
                self.pending[id(self.buckets[self.launched])] == 0:
            self._launch(self.buckets[self.launched])

    def _launch(self, bucket):
        with tensorlib.no_grad():
            for k, i in enumerate(bucket.indices):
                p = self.params[i]
                if p.grad is None:
                    bucket.piece(k, p.shape).zero_()
                else:
                    bucket.piece(k, p.shape).copy_(p.grad)
            bucket.flat.div_(self.world)
        # the last bucket has nothing left to overlap with: reduce it right here
        last = self.launched == len(self.buckets) - 1
        bucket.work = dist.all_reduce(bucket.flat, group=self.group, async_op=not last)
        self.launched += 1
        if self.launched == len(self.buckets):
            self._finalize()

    def _finalize(self):
        used_somewhere = None
        if self.find_unused:
            used = tensorlib.tensor(self.used, dtype=tensorlib.uint8)
            dist.all_reduce(used, dist.ReduceOp.MAX, self.group)
            used_somewhere = used.tolist()
        for bucket in self.buckets:
            if bucket.work is not None:
                bucket.work.wait()
                bucket.work = None
            with tensorlib.no_grad():
                for k, i in enumerate(bucket.indices):
                    if used_somewhere is not None and not used_somewhere[i]:
                        continue
                    p = self.params[i]
                    if p.grad is None:
                        p.grad = bucket.piece(k, p.shape).clone()
                    else:
                        p.grad.copy_(bucket.piece(k, p.shape))
        self.armed = False

    def remove_hooks(self):
        for h in self.handles:
            h.remove()
