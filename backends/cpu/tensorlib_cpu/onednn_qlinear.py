"""The dynamically quantized Linear's int8 product on oneDNN's matmul primitive: u8
activation (m, k) x s8 weight (k, n) -> f32 (m, n), the activation's scale and zero point
and the weight's scale (one, or one per output channel) given as primitive attributes, the
bias added as the output is written. One plan per (m, k, n, per-channel, bias) is cached;
the weight is reordered once into the layout the primitive chose (its blocked AMX/VNNI
layout, with the zero-point compensation oneDNN keeps beside it) and kept per weight tensor
until that tensor is written again.

The benchmark MLP's forward (784-512-256-10, batch 128, one thread, Xeon Emerald Rapids,
AMX) took 1.36 ms on `dnnl_gemm_u8s8s32` (which re-packs the weight on every call and leaves
the rescale and bias to numpy) with the input quantized in float64 numpy; 0.22-0.27 ms on
this primitive with quant_kernels."""
import ctypes
import weakref
from collections import OrderedDict

import numpy as np

from tensorlib_cpu import onednn
from tensorlib_cpu.onednn import Memory, OneDNNError, Primitive
from tensorlib_cpu.onednn_exec import Executor, set_threads

__all__ = ["CACHE_SIZE", "K_BLOCK", "pack_count", "plan"]

# dnnl_data_type_t
_F32, _S32, _S8, _U8 = 3, 4, 5, 6
_ARG_ATTR_SCALES, _ARG_ATTR_ZERO_POINTS = 4096, 8192
_ALIGN = 64
CACHE_SIZE = 64
# The AMX kernels take K in blocks of 64 bytes: a K of 784 padded to 832 (zero weights, the
# activation's zero point) ran in 0.7x the time (128x784x512, one thread, Emerald Rapids).
K_BLOCK = 64
_plans = OrderedDict()
_UNSEEN = object()
# id(weight tensor) -> (weak reference to it, {(layout index, K): (tensor version, packed)});
# by id: a WeakKeyDictionary compares keys with ==, which is elementwise on tensors
_packed = {}
_layouts = []          # the distinct weight layouts the plans chose (Memory descriptors)
_counts = {"packs": 0}


def pack_count():
    """How many weights have been reordered into a primitive's layout (for tests)."""
    return _counts["packs"]


def _memory(lib, shape, strides, dtype):
    md = ctypes.c_void_p()
    lib.call("memory_desc_create_with_strides", ctypes.byref(md), len(shape),
             onednn.dims(shape), dtype, onednn.dims(strides))
    return Memory(lib, md)


def _aligned(nbytes):
    """A uint8 array of nbytes starting on a 64-byte boundary."""
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = (-raw.ctypes.data) % _ALIGN
    return raw[start:start + nbytes]


class _Plan:
    """The matmul primitive for one shape and its executor; arrays in the order
    (activation u8, packed weight, [bias f32], out f32, activation scale f32, weight
    scale(s) f32, activation zero point s32). `kp`: the K it multiplies over (k, or k
    padded to K_BLOCK), the width of the quantized activation it reads."""

    def __init__(self, lib, m, k, kp, n, per_channel, bias, threads):
        self.lib, self.k, self.kp, self.threads = lib, k, kp, threads
        k = kp
        src = _memory(lib, (m, k), (k, 1), _U8)
        dst = _memory(lib, (m, n), (n, 1), _F32)
        self.user_weight = _memory(lib, (k, n), (1, k), _S8)     # our (n, k) int8, C order
        bias_mem = _memory(lib, (1, n), (n, 1), _F32) if bias else None
        src_scale = _memory(lib, (1,), (1,), _F32)
        wei_scale = _memory(lib, (n if per_channel else 1,), (1,), _F32)
        src_zp = _memory(lib, (1,), (1,), _S32)
        any_weight = ctypes.c_void_p()
        lib.call("memory_desc_create_with_tag", ctypes.byref(any_weight), 2,
                 onednn.dims((k, n)), _S8, onednn.FORMAT_ANY)
        attr = ctypes.c_void_p()
        lib.call("primitive_attr_create", ctypes.byref(attr))
        pd = ctypes.c_void_p()
        try:
            lib.call("primitive_attr_set_scales_mask", attr, onednn.ARG_SRC, 0)
            lib.call("primitive_attr_set_scales_mask", attr, onednn.ARG_WEIGHTS,
                     2 if per_channel else 0)           # per output column: dim 1 of (k, n)
            lib.call("primitive_attr_set_zero_points_mask", attr, onednn.ARG_SRC, 0)
            lib.call("matmul_primitive_desc_create", ctypes.byref(pd), lib.engine, src.md,
                     any_weight, None if bias_mem is None else bias_mem.md, dst.md, attr)
        finally:
            lib.primitive_attr_destroy(attr)
            lib.memory_desc_destroy(any_weight)
        try:
            weight = Memory.chosen(lib, pd, onednn.QUERY_WEIGHTS_MD)
        except Exception:
            lib.primitive_desc_destroy(pd)
            raise
        self.layout = _layout_index(weight)
        self.weight = weight
        users = [(onednn.ARG_SRC, src), (onednn.ARG_WEIGHTS, weight)]
        users += [] if bias_mem is None else [(onednn.ARG_BIAS, bias_mem)]
        users += [(onednn.ARG_DST, dst), (_ARG_ATTR_SCALES | onednn.ARG_SRC, src_scale),
                  (_ARG_ATTR_SCALES | onednn.ARG_WEIGHTS, wei_scale),
                  (_ARG_ATTR_ZERO_POINTS | onednn.ARG_SRC, src_zp)]
        self.primitive = Primitive(lib, pd, users)
        memories = [m for _, m in users]
        self._executor = Executor(lib.run_functions, lib.stream.value,
                                  [m.handle.value for m in memories], [],
                                  [self.primitive.step()], (memories, self.primitive))

    def pack(self, wq):
        """wq (n, k) int8, C order, in this plan's weight layout (a fresh aligned array)."""
        if self.kp != self.k:
            wq = np.pad(wq, ((0, 0), (0, self.kp - self.k)))
        packed = _aligned(self.weight.nbytes)
        reorder = Primitive.reorder(self.lib, self.user_weight, self.weight)
        with self.lib.lock:
            self.user_weight.bind(wq.ctypes.data)
            self.weight.bind(packed.ctypes.data)
            reorder.run()
            self.lib.call("stream_wait", self.lib.stream)
        _counts["packs"] += 1
        return packed

    def linear(self, out, xq, zero_point, scale, weight, wq, weight_scales, bias):
        """out (m, n) float32 = scale * weight_scales * ((xq - zero_point) @ wq.T) + bias:
        xq uint8 (m, kp) C order, wq the int8 (n, k) C-order array of tensor `weight`,
        weight_scales float32 (1,) or (n,), bias float32 (n,) C order or None."""
        arrays = (xq, _packed_weight(self, weight, wq)) + (() if bias is None else (bias,))
        arrays += (out, np.array([scale], np.float32), weight_scales,
                   np.array([zero_point], np.int32))
        with self.lib.lock:
            self._executor.run(arrays, None, self.threads)


def _layout_index(weight):
    for i, known in enumerate(_layouts):
        if known.same_as(weight):
            return i
    _layouts.append(weight)
    return len(_layouts) - 1


def _build(lib, m, k, n, per_channel, bias, threads):
    """The plan for a shape: K padded to K_BLOCK where the primitive is an AMX one, else
    K as it is; None where oneDNN declines."""
    try:
        padded = -(-k // K_BLOCK) * K_BLOCK
        if padded != k:
            found = _Plan(lib, m, k, padded, n, per_channel, bias, threads)
            if "amx" in found.primitive.impl:
                return found
        return _Plan(lib, m, k, k, n, per_channel, bias, threads)
    except OneDNNError:
        return None


def plan(m, k, n, per_channel, bias):
    """The cached plan for out (m, n) = u8 (m, k) x s8 (n, k).T with one weight scale or
    one per column (per_channel) and a bias or not; None when oneDNN is off, the product is
    empty or oneDNN declines it."""
    lib = onednn.library()
    if lib is None or not (m and k and n):
        return None
    # per thread count: a primitive runs on the OpenMP team it was made for (it asks for
    # that many threads itself), so one made for 2 kept both cores busy after threads_now
    # dropped to 1 on a loaded machine
    threads = lib.threads()
    key = (lib, m, k, n, per_channel, bias, threads)
    found = _plans.get(key, _UNSEEN)
    if found is _UNSEEN:
        set_threads(threads)
        found = _plans[key] = _build(lib, m, k, n, per_channel, bias, threads)
        while len(_plans) > CACHE_SIZE:
            _plans.popitem(last=False)
    else:
        _plans.move_to_end(key)
    return found


def _packed_weight(plan, weight, wq):
    """The weight tensor's copy in plan's layout (and K), reordered on first use and again
    after the tensor is written (its version moves); dropped with the tensor."""
    key = id(weight)
    entry = _packed.get(key)
    if entry is None or entry[0]() is not weight:
        entry = _packed[key] = (weakref.ref(weight, lambda _, key=key: _packed.pop(key, None)),
                                {})
    copies = entry[1]
    layout = (plan.layout, plan.kp)
    copy = copies.get(layout)
    if copy is None or copy[0] != weight._version:
        copy = copies[layout] = (weight._version, plan.pack(wq))
    return copy[1]
