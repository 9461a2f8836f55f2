"""Runs in a subprocess with the fake pycuda first on sys.path: the CUDA backend's Python glue
end to end (probe, device, allocator, compiler, copies, launches, cuBLAS absent)."""
import numpy as np

import tensorlib as tl
import pycuda.driver as drv

assert tl.cuda.is_available(), tl.backends.why_unavailable("cuda")
assert tl.cuda.device_count() == 1
assert tl.cuda.get_device_name() == "Fake H200"
assert tl.cuda.get_device_capability() == (9, 0) and tl.cuda.is_bf16_supported()
x = tl.tensor([1.0, 2.0, 3.0], device="cuda")
assert x.cpu().tolist() == [1.0, 2.0, 3.0]                 # copies really copy
assert tl.cuda.memory_allocated() >= 12
y = tl.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device="cuda")
ops = [lambda: x + 1, lambda: x.exp(), lambda: y.sum(1), lambda: y.t().contiguous(),
       lambda: y.argmax(1), lambda: y.cumsum(0), lambda: y.softmax(1), lambda: y @ y.t(),
       lambda: tl.rand(5, device="cuda"), lambda: y.sort(1), lambda: tl.where(y > 2, y, 0.0),
       lambda: y.gather(1, tl.zeros((3, 1), dtype=tl.int64, device="cuda")),
       lambda: tl.zeros(4, 4, device="cuda").index_add_(0, tl.zeros(3, dtype=tl.int64, device="cuda"), y),
       lambda: y.to(tl.bfloat16), lambda: y.sum(), lambda: tl.ones(1 << 20, device="cuda").sum(),
       lambda: tl.nn.functional.layer_norm(y, (4,), tl.ones(4, device="cuda"))]
for op in ops:
    op()
p = tl.zeros(3, device="cuda", requires_grad=True)
opt = tl.optim.Adam([p], lr=0.1)
p.grad = tl.ones(3, device="cuda")
opt.step()                                                  # the fused Adam kernel
names = {name.split("_")[0] for name, _, _, _ in drv.LAUNCHES}
assert {"ew", "red", "arg", "scan", "softmax", "gemm", "rand", "sort", "gather", "layer",
        "adam"} <= names, names
with tl.cuda.stream(tl.cuda.Stream()) as s:
    x * 2
assert tl.cuda.current_stream() == tl.cuda.default_stream()
e = tl.cuda.Event(enable_timing=True)
e.record()
e.synchronize()
tl.cuda.synchronize()
with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU,
                                     tl.profiler.ProfilerActivity.CUDA]) as prof:
    x + 1                                                   # CUDA events around the launch
kernels = [e for e in prof.events() if e.is_device_event]
assert [e.name for e in kernels] == [drv.LAUNCHES[-1][0]] and kernels[0].device == "cuda:0"
assert kernels[0].self_device_time_total == 1.0             # one fake-clock tick: 1 us
add = next(e for e in prof.events() if e.name == "add")
assert add.self_device_time_total == add.cuda_time_total == 1.0
assert "Self CUDA" in prof.key_averages().table()
assert "launch1d" not in vars(tl.backends.get("cuda").state(0).kernels)
from tensorlib.library import CUDAKernel, custom_op  # noqa: E402


@custom_op("glue::scale", mutates_args=(), device_types="cpu")
def scale(x, alpha):
    return x * alpha


scale.register_kernel("cuda", CUDAKernel(r"""
extern "C" __global__ void scale(T *out, const T *x, const float alpha, const long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (T)alpha * x[i];
}"""))
out = scale(y, 2.0)                                          # a user kernel, launched
name, grid, block, args = drv.LAUNCHES[-1]
assert name == "scale" and out.shape == y.shape and out.device == y.device
assert args[1:] == (int(y._storage.handle), 2.0, 12) and args[0] == int(out._storage.handle)
# pinned host memory, non_blocking copies, record_stream
host = tl.arange(6, dtype=tl.float32)
assert not host.is_pinned()
pinned = host.pin_memory()
assert pinned.is_pinned() and pinned[2:].is_pinned() and pinned.pin_memory() is pinned
assert tl.zeros(3, pin_memory=True).is_pinned() and not tl.zeros(3).is_pinned()
backend = tl.backends.get("cuda")
drv.EVENTS_DONE[0] = False                                  # the DMA has not finished yet
on_gpu = pinned.to("cuda", non_blocking=True)
assert backend._pinned_host().in_flight() == 1              # the source is kept alive
drv.EVENTS_DONE[0] = True
assert backend._pinned_host().in_flight() == 0
assert on_gpu.cpu().tolist() == host.tolist()
back = on_gpu.to("cpu", non_blocking=True)                  # into new pinned memory
tl.cuda.synchronize()
assert back.is_pinned() and back.tolist() == host.tolist()
assert on_gpu.cuda() is on_gpu and host.cuda(0, non_blocking=True).cpu().tolist() == host.tolist()
batches = list(tl.utils.data.DataLoader(tl.utils.data.TensorDataset(host), batch_size=3,
                                        pin_memory=True))
assert all(b[0].is_pinned() for b in batches)
side = tl.cuda.Stream()
on_gpu.record_stream(side)
alloc = backend.state(0).allocator
del on_gpu
assert alloc.pending                                        # not reused until side is done
free, total = tl.cuda.mem_get_info()
assert total == len(drv.HEAP)
from tensorlib_cuda import sources
count, _ = sources.prebuild(0, jobs=4)
assert count > 900
print("launches", len(drv.LAUNCHES))
