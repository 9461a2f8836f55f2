"""The tensor collectives and point-to-point operations (torch.distributed's signatures).

Each checks its arguments as PyTorch does, stages its tensors as host buffers (_staging) and
hands the MPI call to the communication thread (_engine). async_op=True returns the Work;
otherwise the call waits for it, up to the group's timeout. Ranks named by src/dst are global
ranks, group_src/group_dst ranks within the group, as in PyTorch. A process that is not a
member of `group` does nothing and gets None."""
import time

import numpy as np

from tensorlib.distributed._engine import engine
from tensorlib.distributed._process_group import GroupMember, resolve
from tensorlib.distributed._reduce_op import ReduceOp, check_op
from tensorlib.distributed._staging import Staged, check_tensor, finish_all
from tensorlib.distributed._work import Work

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
           "all_to_all_single", "send", "recv", "isend", "irecv", "barrier"]


def _launch(pg, description, fn, finish=None, async_op=False, outputs=(), keep=None):
    """Run fn (the MPI part) for group pg; wait unless async_op. keep: for send/recv, the
    buffers that must outlive the MPI request fn returns."""
    work = Work(f"{description} on group {pg.name()} (ranks {pg._ranks})",
                GroupMember.WORLD.rank(), pg.timeout_s, finish, outputs)
    work._is_p2p = keep is not None
    work._keep = keep
    if pg._comm.local:
        work._run(fn)
    elif async_op or work._is_p2p:
        engine.submit(work, fn)
    elif not engine.run_here_if_idle(work, _with_deadline(pg, fn)):
        engine.submit(work, fn)
    if async_op:
        return work
    work.wait()
    return None


def _with_deadline(pg, fn):
    """fn run on the caller's thread: the wait for the other ranks gives up at the group's
    timeout (on the communication thread, Work.wait keeps the time instead)."""
    def run():
        comm = pg._comm
        comm.deadline = time.monotonic() + pg.timeout_s
        try:
            return fn()
        finally:
            comm.deadline = None
    return run


def _root(pg, rank, group_rank, what):
    """The group rank of the root named by a global rank or a group rank (global 0 when
    neither is given, as PyTorch)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"Can not specify both {what} and group_{what}")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"group_{what} {group_rank} is out of range for a group of "
                             f"{pg.size()}")
        return group_rank
    return pg.group_rank(0 if rank is None else rank, what)


def _same_dtype(tensors, dtype, what):
    for i, t in enumerate(tensors):
        check_tensor(t, f"{what}[{i}]")
        if t.dtype != dtype:
            raise RuntimeError(f"{what}[{i}] has dtype {t.dtype} but the input tensor has "
                               f"{dtype}: all tensors of a collective share one dtype")


def _count(tensors, pg, what):
    if len(tensors) != pg.size():
        raise ValueError(f"{what} must hold one tensor per rank of the group "
                         f"({pg.size()}), got {len(tensors)}")
    return [t.numel() for t in tensors]


def _concat(tensors, dtype):
    arrays = [Staged(t, write=False).array for t in tensors]
    return np.concatenate(arrays) if arrays else np.empty(0, dtype)


def _unpack_into(staged, flat):
    at = 0
    for s in staged:
        n = s.array.size
        np.copyto(s.array, flat[at:at + n])
        at += n


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    check_op(op, tensor.dtype.np)
    s, comm = Staged(tensor), pg._comm
    return _launch(pg, "all_reduce", lambda: comm.allreduce(s.array, op), s.finish,
                   async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    root, comm = _root(pg, src, group_src, "src"), pg._comm
    s = Staged(tensor, read=comm.rank == root, write=comm.rank != root)
    return _launch(pg, "broadcast", lambda: comm.bcast(s.array, root), s.finish, async_op,
                   [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    check_op(op, tensor.dtype.np)
    root, comm = _root(pg, dst, group_dst, "dst"), pg._comm
    s = Staged(tensor, write=comm.rank == root)
    return _launch(pg, "reduce", lambda: comm.reduce(s.array, op, root), s.finish, async_op,
                   [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    _same_dtype(tensor_list, tensor.dtype, "tensor_list")
    counts = _count(tensor_list, pg, "tensor_list")
    comm = pg._comm
    if counts[comm.rank] != tensor.numel():
        raise RuntimeError(f"all_gather: tensor_list[{comm.rank}] has {counts[comm.rank]} "
                           f"elements but the input tensor has {tensor.numel()}")
    send = Staged(tensor, write=False)
    outs = [Staged(t, read=False) for t in tensor_list]

    def run():
        flat = np.empty(sum(counts), tensor.dtype.np)
        comm.allgather(send.array, flat, counts)
        _unpack_into(outs, flat)
    return _launch(pg, "all_gather", run, finish_all(outs), async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    _same_dtype([output_tensor], input_tensor.dtype, "output_tensor")
    n = input_tensor.numel()
    if output_tensor.numel() != n * pg.size():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to "
                         f"world_size times input tensor size ({pg.size()} x {n}), got "
                         f"{output_tensor.numel()}")
    send, out, comm = Staged(input_tensor, write=False), Staged(output_tensor, read=False), \
        pg._comm
    return _launch(pg, "all_gather_into_tensor",
                   lambda: comm.allgather(send.array, out.array, [n] * pg.size()),
                   out.finish, async_op, [output_tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    check_tensor(output, "output")
    pg = resolve(group)
    if pg._comm is None:
        return None
    check_op(op, output.dtype.np)
    _same_dtype(input_list, output.dtype, "input_list")
    counts, comm = _count(input_list, pg, "input_list"), pg._comm
    if counts[comm.rank] != output.numel():
        raise RuntimeError(f"reduce_scatter: input_list[{comm.rank}] has "
                           f"{counts[comm.rank]} elements but the output has "
                           f"{output.numel()}")
    send, out = _concat(input_list, output.dtype.np), Staged(output, read=False)
    return _launch(pg, "reduce_scatter",
                   lambda: comm.reduce_scatter(send, out.array, counts, op), out.finish,
                   async_op, [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = resolve(group)
    if pg._comm is None:
        return None
    check_op(op, output.dtype.np)
    _same_dtype([input], output.dtype, "input")
    n = output.numel()
    if input.numel() != n * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input tensor size must be equal to "
                         f"world_size times output tensor size ({pg.size()} x {n}), got "
                         f"{input.numel()}")
    send, out, comm = Staged(input, write=False), Staged(output, read=False), pg._comm
    return _launch(pg, "reduce_scatter_tensor",
                   lambda: comm.reduce_scatter(send.array, out.array, [n] * pg.size(), op),
                   out.finish, async_op, [output])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    root, comm = _root(pg, dst, group_dst, "dst"), pg._comm
    send = Staged(tensor, write=False)
    if comm.rank != root:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        return _launch(pg, "gather", lambda: comm.gather(send.array, None, None, root),
                       None, async_op)
    if gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    _same_dtype(gather_list, tensor.dtype, "gather_list")
    counts = _count(gather_list, pg, "gather_list")
    outs = [Staged(t, read=False) for t in gather_list]

    def run():
        flat = np.empty(sum(counts), tensor.dtype.np)
        comm.gather(send.array, flat, counts, root)
        _unpack_into(outs, flat)
    return _launch(pg, "gather", run, finish_all(outs), async_op, gather_list)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    root, comm = _root(pg, src, group_src, "src"), pg._comm
    out = Staged(tensor, read=False)
    if comm.rank != root:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on "
                             "non-source ranks.")
        return _launch(pg, "scatter", lambda: comm.scatter(None, None, out.array, root),
                       out.finish, async_op, [tensor])
    if scatter_list is None:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    _same_dtype(scatter_list, tensor.dtype, "scatter_list")
    counts = _count(scatter_list, pg, "scatter_list")
    send = _concat(scatter_list, tensor.dtype.np)
    return _launch(pg, "scatter", lambda: comm.scatter(send, counts, out.array, root),
                   out.finish, async_op, [tensor])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    pg = resolve(group)
    if pg._comm is None:
        return None
    if not input_tensor_list:
        raise ValueError("all_to_all: input_tensor_list is empty")
    dtype = input_tensor_list[0].dtype
    _same_dtype(input_tensor_list, dtype, "input_tensor_list")
    _same_dtype(output_tensor_list, dtype, "output_tensor_list")
    send_counts = _count(input_tensor_list, pg, "input_tensor_list")
    recv_counts = _count(output_tensor_list, pg, "output_tensor_list")
    send, comm = _concat(input_tensor_list, dtype.np), pg._comm
    outs = [Staged(t, read=False) for t in output_tensor_list]

    def run():
        flat = np.empty(sum(recv_counts), dtype.np)
        comm.alltoall(send, send_counts, flat, recv_counts)
        _unpack_into(outs, flat)
    return _launch(pg, "all_to_all", run, finish_all(outs), async_op, output_tensor_list)


def _row_counts(t, splits, pg, what):
    """Element counts of the dim-0 pieces of t (equal pieces when splits is None)."""
    if t.dim() == 0:
        raise ValueError(f"all_to_all_single: the {what} tensor needs at least one dimension")
    rows = t.shape[0]
    row = t.numel() // rows if rows else 0
    if splits is None:
        if rows % pg.size():
            raise ValueError(f"all_to_all_single: the {what} tensor's first dimension "
                             f"({rows}) must divide by the group size ({pg.size()})")
        return [rows // pg.size() * row] * pg.size()
    splits = [int(s) for s in splits]
    if len(splits) != pg.size() or sum(splits) != rows:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {splits} must have one "
                         f"entry per rank ({pg.size()}) summing to dim 0 ({rows})")
    return [s * row for s in splits]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    check_tensor(output, "output")
    check_tensor(input, "input")
    pg = resolve(group)
    if pg._comm is None:
        return None
    _same_dtype([output], input.dtype, "output")
    send_counts = _row_counts(input, input_split_sizes, pg, "input")
    recv_counts = _row_counts(output, output_split_sizes, pg, "output")
    send, out, comm = Staged(input, write=False), Staged(output, read=False), pg._comm
    return _launch(pg, "all_to_all_single",
                   lambda: comm.alltoall(send.array, send_counts, out.array, recv_counts),
                   out.finish, async_op, [output])


def _peer(pg, rank, group_rank, what):
    if rank is None and group_rank is None:
        raise ValueError(f"Either {what} or group_{what} must be set")
    peer = _root(pg, rank, group_rank, what)
    if peer == pg.rank():
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: "
                         f"should not be the same as rank of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    peer, comm = _peer(pg, dst, group_dst, "dst"), pg._comm
    s = Staged(tensor, write=False)
    return _launch(pg, f"send to group rank {peer} (tag {tag})",
                   lambda: comm.isend(s.array, peer, tag), async_op=True, keep=[s])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg._comm is None:
        return None
    if pg.size() == 1:
        raise ValueError("recv: a group of one process has no other rank to receive from")
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    comm, s = pg._comm, Staged(tensor, read=False)
    work = None

    def finish():
        s.finish()
        work._source = pg._ranks[work._status.Get_source()]
    source = "any rank" if peer is None else f"group rank {peer}"
    work = _launch(pg, f"recv from {source} (tag {tag})",
                   lambda: comm.irecv(s.array, peer, tag), finish, async_op=True,
                   outputs=[tensor], keep=[s])
    work._status = comm.status()
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into tensor; returns the sender's global rank (-1 for a non-member)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    pg = resolve(group)
    if pg._comm is None:
        return None
    comm = pg._comm
    work = _launch(pg, "barrier", comm.barrier, async_op=True)
    if async_op:
        return work
    work.wait(timeout)
    return None
