"""Communicators: the operations a process group runs, on flat numpy buffers (see _staging).
MPIComm calls MPI through mpi4py and runs on the communication thread; LocalComm is the
world of one process, where every collective is an identity and no MPI is needed. Data that
is only moved travels as bytes, so every dtype works; reductions use MPI's typed operations
(see _reduce_op for the dtypes MPI lacks)."""
import time

import numpy as np

from tensorlib.distributed import _reduce_op

__all__ = ["MPIComm", "LocalComm", "load_mpi"]


def load_mpi():
    """mpi4py's MPI module (initialises MPI), or a RuntimeError saying what to install."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError("tensorlib.distributed needs MPI for a world size above 1: "
                           "pip install \"tensorlib[distributed]\" (mpi4py and the mpich "
                           f"wheel), or a site MPI with mpi4py built against it ({exc})"
                           ) from exc
    return MPI


def _bytes(array):
    return array.view(np.uint8)


def _layout(counts, itemsize):
    """MPI's (counts, displacements) in bytes for consecutive pieces of `counts` elements."""
    sizes = [c * itemsize for c in counts]
    displs = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64).tolist()
    return sizes, displs


# NOTE [ waiting without spinning ]
# MPI busy-polls while it waits for other ranks. A rank that reaches a collective early would
# spin on a core that a slower rank (or another job) needs to catch up: on a machine with as
# many ranks as cores, DDP steps ran several times slower than the same steps without
# synchronisation. So each collective first waits, with short sleeps, on a non-blocking
# barrier until every rank has arrived, and only then makes the blocking MPI call, which
# then moves data at MPI's full speed. This costs one barrier latency per collective.
_SPIN_S = 50e-6          # poll without sleeping this long first (ranks already in step)
_MAX_SLEEP_S = 5e-4      # the longest sleep between polls


def _wait_quietly(request, deadline):
    """Poll `request` until done; TimeoutError once time.monotonic() passes `deadline`."""
    spin_until = time.perf_counter() + _SPIN_S
    pause = 1e-5
    while not request.Test():
        if time.perf_counter() > spin_until:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("the other ranks did not reach the collective")
            time.sleep(pause)
            pause = min(pause * 2, _MAX_SLEEP_S)


class MPIComm:
    local = False
    deadline = None      # set while a blocking collective runs on the caller's thread

    def __init__(self, comm):
        self.MPI = load_mpi()
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def allreduce(self, array, op):
        self._arrive()
        wide = _reduce_op.widened(array)
        self.comm.Allreduce(self.MPI.IN_PLACE, wide, op=_reduce_op.mpi_op(op, self.MPI))
        _reduce_op.narrow_into(array, wide, op, self.size)

    def reduce(self, array, op, root):
        self._arrive()
        wide = _reduce_op.widened(array)
        mpi_op = _reduce_op.mpi_op(op, self.MPI)
        if self.rank == root:
            self.comm.Reduce(self.MPI.IN_PLACE, wide, op=mpi_op, root=root)
            _reduce_op.narrow_into(array, wide, op, self.size)
        else:
            self.comm.Reduce(wide, None, op=mpi_op, root=root)

    def bcast(self, array, root):
        self._arrive()
        self.comm.Bcast(_bytes(array), root=root)

    def allgather(self, send, recv, counts):
        self._arrive()
        sizes, displs = _layout(counts, send.itemsize)
        self.comm.Allgatherv(_bytes(send), [_bytes(recv), (sizes, displs), self.MPI.BYTE])

    def reduce_scatter(self, send, recv, counts, op):
        self._arrive()
        wide_send, wide_recv = _reduce_op.widened(send), _reduce_op.widened(recv)
        self.comm.Reduce_scatter(wide_send, wide_recv, recvcounts=list(counts),
                                 op=_reduce_op.mpi_op(op, self.MPI))
        _reduce_op.narrow_into(recv, wide_recv, op, self.size)

    def gather(self, send, recv, counts, root):
        self._arrive()
        if self.rank != root:
            self.comm.Gatherv(_bytes(send), None, root=root)
            return
        sizes, displs = _layout(counts, send.itemsize)
        self.comm.Gatherv(_bytes(send), [_bytes(recv), (sizes, displs), self.MPI.BYTE],
                          root=root)

    def scatter(self, send, counts, recv, root):
        self._arrive()
        if self.rank != root:
            self.comm.Scatterv(None, _bytes(recv), root=root)
            return
        sizes, displs = _layout(counts, recv.itemsize)
        self.comm.Scatterv([_bytes(send), (sizes, displs), self.MPI.BYTE], _bytes(recv),
                           root=root)

    def alltoall(self, send, send_counts, recv, recv_counts):
        self._arrive()
        s_sizes, s_displs = _layout(send_counts, send.itemsize)
        r_sizes, r_displs = _layout(recv_counts, recv.itemsize)
        self.comm.Alltoallv([_bytes(send), (s_sizes, s_displs), self.MPI.BYTE],
                            [_bytes(recv), (r_sizes, r_displs), self.MPI.BYTE])

    def barrier(self):
        self._arrive()

    def _arrive(self):
        """Return once every rank of the communicator is here (see the note above)."""
        _wait_quietly(self.comm.Ibarrier(), self.deadline)

    def isend(self, array, dst, tag):
        return self.comm.Isend(_bytes(array), dest=dst, tag=tag)

    def irecv(self, array, src, tag):
        source = self.MPI.ANY_SOURCE if src is None else src
        return self.comm.Irecv(_bytes(array), source=source, tag=tag)

    def status(self):
        return self.MPI.Status()

    def allgather_object(self, obj):
        self._arrive()
        return self.comm.allgather(obj)

    def bcast_object(self, obj, root):
        self._arrive()
        return self.comm.bcast(obj, root=root)

    def gather_object(self, obj, root):
        self._arrive()
        return self.comm.gather(obj, root=root)

    def split(self, member, key):
        color = 0 if member else self.MPI.UNDEFINED
        sub = self.comm.Split(color, key)
        return MPIComm(sub) if member else None

    def free(self):
        if self.comm != self.MPI.COMM_WORLD:
            self.comm.Free()

    def abort(self, code):
        self.MPI.COMM_WORLD.Abort(code)


class LocalComm:
    """A group of one process: reductions and broadcasts leave the data as it is, gathers and
    scatters copy."""
    local = True
    rank = 0
    size = 1

    def allreduce(self, array, op):
        pass

    def reduce(self, array, op, root):
        pass

    def bcast(self, array, root):
        pass

    def allgather(self, send, recv, counts):
        np.copyto(recv, send)

    def reduce_scatter(self, send, recv, counts, op):
        np.copyto(recv, send)

    def gather(self, send, recv, counts, root):
        np.copyto(recv, send)

    def scatter(self, send, counts, recv, root):
        np.copyto(recv, send)

    def alltoall(self, send, send_counts, recv, recv_counts):
        np.copyto(recv, send)

    def barrier(self):
        pass

    def allgather_object(self, obj):
        return [obj]

    def bcast_object(self, obj, root):
        return obj

    def gather_object(self, obj, root):
        return [obj]

    def split(self, member, key):
        return LocalComm() if member else None

    def free(self):
        pass

    def abort(self, code):
        import os
        os._exit(code)
