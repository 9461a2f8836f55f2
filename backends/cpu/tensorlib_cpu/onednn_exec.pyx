# cython: boundscheck=False, wraparound=False
"""The per-call part of a oneDNN plan, in C: binding the caller's arrays and the scratch
buffer to their memory objects, then running the primitives in order on the stream.

Done through ctypes this cost ~130 us a call on the shared AMD EPYC (a numpy `.ctypes.data`
alone is ~5 us, each foreign call ~2 us), against the ~5 us of a small convolution's own
work; here it is well under 10 us. The functions are libdnnl's, called through the addresses
onednn.Library found (no build-time dependency on oneDNN), with the GIL released while the
primitives run."""
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc

cimport numpy as cnp

cnp.import_array()

cdef extern from "omp.h":
    void omp_set_num_threads(int n) nogil

ctypedef int (*set_handle_fn)(void* memory, void* data) noexcept nogil
ctypedef int (*execute_fn)(void* primitive, void* stream, int nargs, void* args) noexcept nogil
ctypedef int (*wait_fn)(void* stream) noexcept nogil


def set_threads(int n):
    """omp_set_num_threads(n) on the calling thread (n > 0), as Executor.run does: oneDNN
    splits a primitive's work for the thread count it sees when the primitive is made."""
    if n > 0:
        omp_set_num_threads(n)


class ExecutionError(RuntimeError):
    """A oneDNN call failed while running a plan (onednn.OneDNNError derives from it)."""


cdef class Executor:
    """Runs primitives (handle, argument array, count) in order on `stream`, after binding
    `users` (memory handles, one per array given to run, in order) to those arrays and
    `inners` (memory handle, byte offset) into the scratch buffer. `functions`: the
    addresses of dnnl_memory_set_data_handle, dnnl_primitive_execute and dnnl_stream_wait.
    `keep`: the Python objects owning those handles and argument arrays, held alive here."""
    cdef set_handle_fn set_handle
    cdef execute_fn execute
    cdef wait_fn wait
    cdef void* stream
    cdef int n_users, n_inners, n_steps
    cdef void** users
    cdef void** inners
    cdef size_t* offsets
    cdef void** primitives
    cdef void** args
    cdef int* nargs
    cdef object keep

    def __cinit__(self, functions, uintptr_t stream, users, inners, steps, keep):
        cdef int i
        self.set_handle = <set_handle_fn><uintptr_t>functions[0]
        self.execute = <execute_fn><uintptr_t>functions[1]
        self.wait = <wait_fn><uintptr_t>functions[2]
        self.stream = <void*>stream
        self.keep = keep
        self.n_users, self.n_inners, self.n_steps = len(users), len(inners), len(steps)
        self.users = <void**>malloc(max(1, self.n_users) * sizeof(void*))
        self.inners = <void**>malloc(max(1, self.n_inners) * sizeof(void*))
        self.offsets = <size_t*>malloc(max(1, self.n_inners) * sizeof(size_t))
        self.primitives = <void**>malloc(max(1, self.n_steps) * sizeof(void*))
        self.args = <void**>malloc(max(1, self.n_steps) * sizeof(void*))
        self.nargs = <int*>malloc(max(1, self.n_steps) * sizeof(int))
        if not (self.users and self.inners and self.offsets and self.primitives and self.args
                and self.nargs):
            raise MemoryError()
        for i in range(self.n_users):
            self.users[i] = <void*><uintptr_t>users[i]
        for i in range(self.n_inners):
            self.inners[i] = <void*><uintptr_t>inners[i][0]
            self.offsets[i] = inners[i][1]
        for i in range(self.n_steps):
            self.primitives[i] = <void*><uintptr_t>steps[i][0]
            self.args[i] = <void*><uintptr_t>steps[i][1]
            self.nargs[i] = steps[i][2]

    def __dealloc__(self):
        free(self.users)
        free(self.inners)
        free(self.offsets)
        free(self.primitives)
        free(self.args)
        free(self.nargs)

    def run(self, tuple arrays, cnp.ndarray scratch, int threads):
        """arrays: numpy arrays (one per user memory, any strides the memory describes);
        scratch: a buffer of at least the plan's scratch size plus 64 bytes (None when it
        has none);
        threads: the OpenMP thread count to run on (0: leave it)."""
        cdef int i, status = 0
        cdef char* base = NULL
        if len(arrays) != self.n_users:
            raise ValueError(f"a oneDNN plan takes {self.n_users} arrays, got {len(arrays)}")
        if self.n_inners:     # the offsets count from the first 64-byte boundary
            base = <char*>cnp.PyArray_DATA(scratch)
            base += (64 - <uintptr_t>base % 64) % 64
        for i in range(self.n_users):
            status = self.set_handle(self.users[i], cnp.PyArray_DATA(<cnp.ndarray?>arrays[i]))
            if status:
                raise ExecutionError(f"dnnl_memory_set_data_handle failed with status {status}")
        for i in range(self.n_inners):
            status = self.set_handle(self.inners[i], base + self.offsets[i])
            if status:
                raise ExecutionError(f"dnnl_memory_set_data_handle failed with status {status}")
        with nogil:
            if threads > 0:
                omp_set_num_threads(threads)
            for i in range(self.n_steps):
                status = self.execute(self.primitives[i], self.stream, self.nargs[i],
                                      self.args[i])
                if status:
                    break
            if not status:
                status = self.wait(self.stream)
        if status:
            raise ExecutionError(f"a oneDNN primitive failed with status {status}")
