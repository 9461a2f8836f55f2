"""torch.distributed.nn.functional: collectives as differentiable functions. Each returns new
tensors (its input is left as it was) and autograd runs the adjoint collective in backward:
an all_reduce's gradient is the all_reduce of the gradients, an all_gather's is a
reduce_scatter, a broadcast's a reduce to the source, a scatter's a gather, an all_to_all's
the all_to_all back. Losses computed from statistics shared across ranks (a codebook's usage
averaged over the world, contrastive logits over every rank's batch) train through them.

Ranks (`src`, `dst`) are global ranks, as in torch.distributed.nn.functional."""
import tensorlib
from tensorlib import distributed as dist
from tensorlib.autograd import Function
from tensorlib.distributed._reduce_op import ReduceOp

__all__ = ["broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather",
           "all_to_all", "all_to_all_single", "all_reduce"]


def _world_size(group):
    return dist.get_world_size(group)


def _group_rank(group):
    return dist.get_rank(group)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.contiguous().clone()
        dist.all_reduce(out, op=op, group=group)
        if op in (ReduceOp.MIN, ReduceOp.MAX):
            ctx.save_for_backward(tensor, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        op, group = ctx.op, ctx.group
        if op in (ReduceOp.SUM, ReduceOp.AVG):
            return None, None, _AllReduce.apply(op, group, grad)
        if op in (ReduceOp.MIN, ReduceOp.MAX):
            # every rank's output came from the ranks holding the extreme value: the summed
            # gradient goes to them, split evenly between ties (as amax/amin split it)
            tensor, out = ctx.saved_tensors
            chosen = (tensor == out).to(grad.dtype)
            ties = _AllReduce.apply(ReduceOp.SUM, group, chosen)
            total = _AllReduce.apply(ReduceOp.SUM, group, grad)
            return None, None, total * chosen / ties
        raise RuntimeError(f"torch.distributed.nn.functional.all_reduce: no gradient for "
                           f"ReduceOp.{op.name} (differentiable ops: SUM, AVG, MIN, MAX)")


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = tensor.contiguous().clone()
        dist.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        # every rank's output is the source's input: the source's gradient is their sum
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if dist.get_rank() != ctx.src:
            gx = tensorlib.zeros_like(gx)
        return None, None, gx


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        if op is not ReduceOp.SUM and tensor.requires_grad:
            raise RuntimeError(f"torch.distributed.nn.functional.reduce: only ReduceOp.SUM is "
                               f"differentiable, got ReduceOp.{op.name}")
        ctx.dst, ctx.group = dst, group
        out = tensor.contiguous().clone()
        dist.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        outs = [tensorlib.zeros_like(tensor) for _ in range(_world_size(group))]
        tensor = tensor.contiguous()
        dist.gather(tensor, outs if dist.get_rank() == dst else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if any(t.shape != tensors[0].shape for t in tensors):
            raise ValueError(f"torch.distributed.nn.functional.scatter: the tensors must have "
                             f"one shape, got {[tuple(t.shape) for t in tensors]}")
        out = tensorlib.empty_like(tensors[0])
        parts = [t.contiguous() for t in tensors] if dist.get_rank() == src else None
        dist.scatter(out, parts, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [tensorlib.empty_like(tensor) for _ in range(_world_size(group))]
        dist.all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        # this rank's input went to every rank's output k = this rank: sum those gradients
        out = tensorlib.empty_like(grads[_group_rank(ctx.group)])
        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, out, *grads)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        if op is not ReduceOp.SUM and any(t.requires_grad for t in inputs):
            raise RuntimeError(f"torch.distributed.nn.functional.reduce_scatter: only "
                               f"ReduceOp.SUM is differentiable, got ReduceOp.{op.name}")
        ctx.group = group
        result = tensorlib.empty_like(output)
        dist.reduce_scatter(result, [t.contiguous() for t in inputs], op=op, group=group)
        output.copy_(result)        # the caller's output holds it too, as in torch
        return result

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, group, outputs, *inputs):
        ctx.group = group
        ctx.input_shapes = [t.shape for t in inputs]
        ctx.input_like = inputs[0] if inputs else None
        results = [tensorlib.empty_like(t) for t in outputs]
        dist.all_to_all(results, [t.contiguous() for t in inputs], group=group)
        for o, r in zip(outputs, results):
            o.copy_(r)
        return tuple(results)

    @staticmethod
    def backward(ctx, *grads):
        like = ctx.input_like
        back = [tensorlib.empty(s, dtype=like.dtype, device=like.device)
                for s in ctx.input_shapes]
        return (None, None) + _AllToAll.apply(ctx.group, back, *grads)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group = group
        ctx.input_shape = input.shape
        ctx.splits = (output_split_sizes, input_split_sizes)
        result = tensorlib.empty_like(output)
        dist.all_to_all_single(result, input.contiguous(), output_split_sizes,
                               input_split_sizes, group=group)
        output.copy_(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        out_splits, in_splits = ctx.splits
        back = tensorlib.empty(ctx.input_shape, dtype=grad.dtype, device=grad.device)
        return (None, None, None, None,
                _AllToAllSingle.apply(ctx.group, back, in_splits, out_splits,
                                      grad.contiguous()))


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """The reduction of `tensor` over the group, as a new tensor."""
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor, src, group=None):
    """`src`'s tensor, on every rank."""
    return _Broadcast.apply(src, group, tensor)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    """The reduction on rank `dst` (other ranks get their input back)."""
    return _Reduce.apply(dst, op, group, tensor)


def gather(tensor, dst=0, group=None):
    """Every rank's tensor, as a tuple, on `dst` (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=None):
    """Rank k gets `tensors[k]` of rank `src`."""
    return _Scatter.apply(src, group, *tensors)


def all_gather(tensor, group=None):
    """Every rank's tensor, as a tuple in rank order, on every rank."""
    return _AllGather.apply(group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """Rank k gets the reduction of every rank's `input_list[k]`."""
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_to_all(output_tensor_list, input_tensor_list, group=None):
    """Rank k's `input_tensor_list[j]` becomes rank j's output k."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None):
    """all_to_all over the rows of one tensor, split evenly or by the given sizes."""
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)
