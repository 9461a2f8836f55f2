r"""nn.functional: convolutions (1-D, 2-D, 3-D, transposed) and fold/unfold (im2col/col2im).

NOTE [ Convolution as three bilinear ops ]
A convolution and its two gradients form a family closed under differentiation:

    F(x, w)    the forward convolution                       (x: input, w: weight)
    T(g, w)    its adjoint in x: the transposed convolution  (g: output-shaped)
    W(x, g)    its adjoint in w: the weight gradient

with <F(x, w), g> = <x, T(g, w)> = <w, W(x, g)>. Each is linear in each argument, so the
derivative of any of them is another member of the family (see the formulas at the end of
this file). They are three `@differentiable` ops named ``conv{n}d``, ``conv_transpose{n}d``
and ``conv{n}d_weight_grad``; double backward and gradgradcheck work through them.

Each op first asks the device for a kernel of its name (`optional_kernel`): a backend may register
a composite kernel ``kernel(out, x, w, stride, padding, dilation, groups)`` (for the weight
gradient ``kernel(out, x, g, stride, padding, dilation, groups)``; for the transposed op
``out`` is input-shaped and gives the input size). Otherwise the op is decomposed into
tensorlib primitives, so it runs on every backend:

    F: im2col (a strided window view of the zero-padded input copied into columns
       (N, C*prod(k), L)) then one batched GEMM with the weight (groups as a batch dim);
    W: the same columns times the output gradient, summed over the batch;
    T: the weight times the gradient gives columns, scattered back by col2im: one strided
       `add` per kernel offset into a zero-padded buffer, then the padding is cropped.

Outside a graph of the backward (no create_graph), the gradients of a 2-D convolution are one
call of the device's ``conv2d_backward(grad_x, grad_w, grad_b, x, g, w, stride, padding,
dilation, groups)`` where it has one (each output None when not wanted): the CPU's reads the
output gradient into oneDNN's layout once for both gradients and sums the bias gradient in
the weight gradient's pass.

The ops take zero padding only, symmetric per dim, as normalised int tuples; padding modes
('reflect', 'replicate', 'circular') and the asymmetric padding of ``padding='same'`` with an
even effective kernel are applied by F.pad before.
"""
import itertools

import tensorlib
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib.ops._composites import optional_kernel
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import TensorImpl, numel
from tensorlib.autograd.recording import formula
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._autocast import autocast_op
from tensorlib.ops.memory_format import empty_in, in_layout_of_inputs, suggest_for_output

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold"]


# ---- argument helpers ---------------------------------------------------------------------
def _ntuple(value, n, name="argument"):
    """An int or a sequence of n ints -> a tuple of n ints."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1 and n > 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of "
                               f"{n} values to match the convolution dimensions, but got "
                               f"{name}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _zeros(sizes, like):
    from tensorlib.ops.creation import zeros
    return zeros(tuple(sizes), dtype=like._dtype, device=like._device)


def _copy(out, src):
    if numel(out._sizes):
        lookup("copy", out._device)(out, src)
    return out


def _conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


# ---- im2col / col2im on primitives -------------------------------------------------------
def _pad_zeros(x, padding):
    """x (N, C, *S) zero-padded by padding[i] on both sides of spatial dim i."""
    if not any(padding):
        return x
    from tensorlib.ops.joining import _constant_pad
    pads = []
    for p in reversed(padding):
        pads += [p, p]
    return _constant_pad(x, tuple(pads), 0)


def _im2col(x, kernel, stride, padding, dilation):
    """Columns (N, C, *kernel, *out) (contiguous) of x (N, C, *S): element
    [n, c, j.., o..] = padded_x[n, c, o*stride + j*dilation ..]."""
    nd = len(kernel)
    xp = _pad_zeros(x, padding)
    sizes = xp._sizes
    out_sp = tuple((sizes[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                   for i in range(nd))
    st = xp._strides
    win = _v.as_strided(xp, sizes[:2] + tuple(kernel) + out_sp,
                        st[:2] + tuple(dilation[i] * st[2 + i] for i in range(nd))
                        + tuple(stride[i] * st[2 + i] for i in range(nd)), xp._offset)
    cols = empty(win._sizes, x._dtype, x._device)
    return _copy(cols, win)


def _col2im(cols, in_sp, kernel, stride, padding, dilation):
    """The adjoint of _im2col: cols (N, C, *kernel, *out) summed back into (N, C, *in_sp)."""
    nd = len(kernel)
    n, c = cols._sizes[:2]
    out_sp = cols._sizes[2 + nd:]
    padded = _zeros((n, c) + tuple(in_sp[i] + 2 * padding[i] for i in range(nd)), cols)
    st = padded._strides
    add = lookup("add", cols._device)
    if numel(cols._sizes):
        for offs in itertools.product(*(range(k) for k in kernel)):
            dst = _v.as_strided(padded, (n, c) + tuple(out_sp),
                                st[:2] + tuple(stride[i] * st[2 + i] for i in range(nd)),
                                sum(offs[i] * dilation[i] * st[2 + i] for i in range(nd)))
            src = cols
            for j in offs:
                src = _v.select(src, 2, j)
            add(dst, dst, src)
    if not any(padding):
        return padded
    crop = padded
    for i in range(nd):
        crop = _v.narrow(crop, 2 + i, padding[i], in_sp[i])
    return _copy(empty(crop._sizes, crop._dtype, crop._device), crop)


# ---- the three ops (see NOTE [ Convolution as three bilinear ops ]) ------------------------
def _forward(name, x, w, stride, padding, dilation, groups):
    nd = w.dim() - 2
    n, c = x._sizes[:2]
    o = w._sizes[0]
    kernel = w._sizes[2:]
    out_sp = tuple(_conv_out_size(x._sizes[2 + i], kernel[i], stride[i], padding[i],
                                  dilation[i]) for i in range(nd))
    fused = optional_kernel(x._device, name)    # a backend's kernel writes any dense layout
    if fused is not None:
        out = empty_in((n, o) + out_sp, x._dtype, x._device, suggest_for_output(nd + 2, x, w))
        fused(out, x, w, stride, padding, dilation, groups)
        return out
    cols = _im2col(x, kernel, stride, padding, dilation)
    big_l = numel(out_sp)
    cols = cols.view(n, groups, (c // groups) * numel(kernel), big_l)
    w2 = w.reshape(groups, o // groups, (c // groups) * numel(kernel))
    out = tensorlib.matmul(w2, cols)                     # (N, G, O/G, L)
    return out.view((n, o) + out_sp)


def _transpose(name, g, w, in_sp, stride, padding, dilation, groups):
    nd = w.dim() - 2
    n = g._sizes[0]
    o, cg = w._sizes[:2]
    kernel = w._sizes[2:]
    c = cg * groups
    fused = optional_kernel(g._device, name)
    if fused is not None:
        out = empty((n, c) + tuple(in_sp), g._dtype, g._device)
        fused(out, g, w, stride, padding, dilation, groups)
        return out
    out_sp = g._sizes[2:]
    big_l = numel(out_sp)
    g2 = g.reshape(n, groups, o // groups, big_l)
    wt = w.reshape(groups, o // groups, cg * numel(kernel)).transpose(1, 2)
    cols = tensorlib.matmul(wt, g2)                      # (N, G, C/G * K, L)
    cols = cols.view((n, c) + tuple(kernel) + tuple(out_sp))
    return _col2im(cols, in_sp, kernel, stride, padding, dilation)


def _weight_grad(name, x, g, w_shape, stride, padding, dilation, groups):
    n, c = x._sizes[:2]
    o = g._sizes[1]
    kernel = tuple(w_shape[2:])
    fused = optional_kernel(x._device, name)
    if fused is not None:
        out = empty(tuple(w_shape), x._dtype, x._device)
        fused(out, x, g, stride, padding, dilation, groups)
        return out
    cols = _im2col(x, kernel, stride, padding, dilation)
    big_l = numel(g._sizes[2:])
    cols = cols.view(n, groups, (c // groups) * numel(kernel), big_l)
    g2 = g.reshape(n, groups, o // groups, big_l)
    gw = tensorlib.matmul(g2, cols.transpose(2, 3)).sum(0)   # (G, O/G, C/G * K)
    return gw.reshape(tuple(w_shape))


def _make_ops(nd):
    fname, tname, wname = f"conv{nd}d", f"conv_transpose{nd}d", f"conv{nd}d_weight_grad"

    def fwd(x, w, stride, padding, dilation, groups):
        return _forward(fname, x, w, stride, padding, dilation, groups)

    def tr(g, w, in_sp, stride, padding, dilation, groups):
        return _transpose(tname, g, w, in_sp, stride, padding, dilation, groups)

    def wg(x, g, w_shape, stride, padding, dilation, groups):
        return _weight_grad(wname, x, g, w_shape, stride, padding, dilation, groups)

    fwd.__name__, tr.__name__, wg.__name__ = f"_{fname}", f"_{tname}", f"_{wname}"
    return differentiable(fname)(fwd), differentiable(tname)(tr), differentiable(wname)(wg)


_OPS = {nd: _make_ops(nd) for nd in (1, 2, 3)}


def _ops(nd):
    return _OPS[nd]


def _register_formulas(nd):
    fname, tname, wname = f"conv{nd}d", f"conv_transpose{nd}d", f"conv{nd}d_weight_grad"

    @formula(fname, save=(0, 1))
    def fwd_grad(ctx, g):
        x, w, stride, padding, dilation, groups = ctx.args
        if nd == 2 and _backward_in_one(x):
            gx, gw, _ = _conv2d_grads(x, w, g, (ctx.needs_input_grad[0],
                                                ctx.needs_input_grad[1], False), stride,
                                      padding, dilation, groups)
            return gx, gw, None, None, None, None
        f_op, t_op, w_op = _ops(nd)
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = t_op(g, w, tuple(x.shape[2:]), stride, padding, dilation, groups)
        if ctx.needs_input_grad[1]:
            gw = w_op(x, g, tuple(w.shape), stride, padding, dilation, groups)
        return gx, gw, None, None, None, None

    @formula(tname, save=(0, 1))
    def tr_grad(ctx, u):
        g, w, in_sp, stride, padding, dilation, groups = ctx.args
        f_op, t_op, w_op = _ops(nd)
        gg = gw = None
        if ctx.needs_input_grad[0]:
            gg = f_op(u, w, stride, padding, dilation, groups)
        if ctx.needs_input_grad[1]:
            gw = w_op(u, g, tuple(w.shape), stride, padding, dilation, groups)
        return gg, gw, None, None, None, None, None

    @formula(wname, save=(0, 1))
    def wg_grad(ctx, v):
        x, g, w_shape, stride, padding, dilation, groups = ctx.args
        f_op, t_op, w_op = _ops(nd)
        gx = gg = None
        if ctx.needs_input_grad[0]:
            gx = t_op(g, v, tuple(x.shape[2:]), stride, padding, dilation, groups)
        if ctx.needs_input_grad[1]:
            gg = f_op(x, v, stride, padding, dilation, groups)
        return gx, gg, None, None, None, None, None


for _nd in (1, 2, 3):
    _register_formulas(_nd)


# ---- conv2d with its bias, where the backend fuses the two ------------------------------------
def _conv2d_bias_forward(x, w, b, stride, padding, dilation, groups):
    n = x._sizes[0]
    o = w._sizes[0]
    out_sp = tuple(_conv_out_size(x._sizes[2 + i], w._sizes[2 + i], stride[i], padding[i],
                                  dilation[i]) for i in range(2))
    out = empty_in((n, o) + out_sp, x._dtype, x._device, suggest_for_output(4, x, w))
    optional_kernel(x._device, "conv2d_bias")(out, x, w, b, stride, padding, dilation,
                                              groups)
    return out


_conv2d_bias = differentiable("conv2d_bias")(_conv2d_bias_forward)


def _fuses_bias(x):
    """A backend kernel `conv2d_bias(out, x, w, b, ...)` (oneDNN adds the bias as it writes
    the output), next to its conv2d kernel."""
    return (optional_kernel(x._device, "conv2d_bias") is not None
            and optional_kernel(x._device, "conv2d") is not None)


def _backward_in_one(x):
    """Whether a 2-D convolution's gradients are one `conv2d_backward` call: the device has
    it and no graph of the backward is recorded (the three ops carry double backward)."""
    return (not tensorlib.is_grad_enabled()
            and optional_kernel(x._device, "conv2d_backward") is not None)


def _conv2d_grads(x, w, g, needs, stride, padding, dilation, groups):
    """(grad_x, grad_w, grad_b) of a 2-D convolution by the device's conv2d_backward; needs:
    which of the three are wanted (the others are None)."""
    gx = empty(x._sizes, g._dtype, g._device) if needs[0] else None
    gw = empty(w._sizes, g._dtype, g._device) if needs[1] else None
    gb = empty((w._sizes[0],), g._dtype, g._device) if needs[2] else None
    if needs[0] or needs[1] or needs[2]:
        optional_kernel(x._device, "conv2d_backward")(gx, gw, gb, x, g, w, stride, padding,
                                                      dilation, groups)
    return gx, gw, gb


@formula("conv2d_bias", save=(0, 1))
def _conv2d_bias_grad(ctx, g):
    x, w, b, stride, padding, dilation, groups = ctx.args
    if _backward_in_one(x):
        return _conv2d_grads(x, w, g, ctx.needs_input_grad[:3], stride, padding, dilation,
                             groups) + (None, None, None, None)
    f_op, t_op, w_op = _ops(2)
    gx = gw = gb = None
    if ctx.needs_input_grad[0]:
        gx = t_op(g, w, tuple(x.shape[2:]), stride, padding, dilation, groups)
    if ctx.needs_input_grad[1]:
        gw = w_op(x, g, tuple(w.shape), stride, padding, dilation, groups)
    if ctx.needs_input_grad[2]:
        gb = g.sum((0, 2, 3))
    return gx, gw, gb, None, None, None, None


# ---- checks --------------------------------------------------------------------------------
def _type_name(t):
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
            "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor"}.get(
        t.dtype.name, t.dtype.name)


def _check_common(name, input, weight, bias, nd, transposed=False):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(weight, TensorImpl):
        raise TypeError(f"{name}(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.dim() != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions" if weight.dim() < 3
                           else f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional "
                           f"input {list(input.shape)}, but got {weight.dim()}-dimensional "
                           f"weight of size {list(weight.shape)} instead")
    if input.device != weight.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input.device} and {weight.device}!")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({_type_name(input)}) and weight type "
                           f"({_type_name(weight)}) should be the same")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input.dtype.name}'")
    if bias is not None:
        if not isinstance(bias, TensorImpl):
            raise TypeError(f"{name}(): argument 'bias' (position 3) must be Tensor, not "
                            f"{type(bias).__name__}")
        if bias.dtype != input.dtype:
            raise RuntimeError(f"Input type ({_type_name(input)}) and bias type "
                               f"({_type_name(bias)}) should be the same")


def _check_params(stride, padding, dilation, groups, output_padding=None):
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if output_padding is not None and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")


def _batched(input, nd):  # noqa: A002
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _bias_view(bias, nd):
    return bias.reshape((1, -1) + (1,) * nd)


# ---- convolution ----------------------------------------------------------------------------
def _conv(nd, name, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    _check_common(name, input, weight, bias, nd)
    stride = _ntuple(stride, nd, "stride")
    dilation = _ntuple(dilation, nd, "dilation")
    groups = int(groups)
    kernel = weight._sizes[2:]        # _sizes (tuples), not .shape: ~1 us per look-up
    x, unbatched = _batched(input, nd)
    extra = None
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (kernel[i] - 1) for i in range(nd)]
            padding = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):          # the odd one goes on the right, as torch
                extra = []
                for t in reversed(total):
                    extra += [0, t % 2]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ntuple(padding, nd, "padding")
    _check_params(stride, padding, dilation, groups)
    c = x._sizes[1]
    o = weight._sizes[0]
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"{list(weight.shape)} instead")
    if c != weight._sizes[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {weight.shape[1] * groups} "
                           f"channels, but got {c} channels instead")
    if bias is not None and bias._sizes != (o,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {o} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if extra is not None:
        from tensorlib.ops.joining import pad
        x = pad(x, extra)
    sizes = x._sizes
    padded = [sizes[2 + i] + 2 * padding[i] for i in range(nd)]
    eff = [dilation[i] * (kernel[i] - 1) + 1 for i in range(nd)]
    if any(e > p for e, p in zip(eff, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                           f"actual input size")
    if nd == 2 and bias is not None and _fuses_bias(x):
        out = _conv2d_bias(x, weight, bias, stride, padding, dilation, groups)
    else:
        out = _ops(nd)[0](x, weight, stride, padding, dilation, groups)
        if bias is not None:
            out = out + _bias_view(bias, nd)
    return out.squeeze(0) if unbatched else in_layout_of_inputs(out, x, weight)


@autocast_op("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    r"""1-D convolution (cross-correlation) over an input (N, C_in, L) or (C_in, L).

    weight: (C_out, C_in / groups, kW); bias: (C_out,); padding: int, tuple, 'valid' or
    'same'. Output: (N, C_out, L_out), L_out = floor((L + 2p - d (k - 1) - 1) / s) + 1.
    """
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    r"""2-D convolution (cross-correlation) over an input (N, C_in, H, W) or (C_in, H, W).

    weight: (C_out, C_in / groups, kH, kW); bias: (C_out,); stride, padding, dilation: int or
    pair (padding also 'valid' or 'same'). Output: (N, C_out, H_out, W_out) with
    H_out = floor((H + 2 p - d (kH - 1) - 1) / s) + 1, likewise W_out.
    """
    return _conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    r"""3-D convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W)."""
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


# ---- transposed convolution ----------------------------------------------------------------
def _conv_transpose(nd, name, input, weight, bias, stride, padding, output_padding,  # noqa
                    groups, dilation):
    _check_common(name, input, weight, bias, nd)
    if isinstance(padding, str):
        raise RuntimeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride = _ntuple(stride, nd, "stride")
    padding = _ntuple(padding, nd, "padding")
    output_padding = _ntuple(output_padding, nd, "output_padding")
    dilation = _ntuple(dilation, nd, "dilation")
    groups = int(groups)
    _check_params(stride, padding, dilation, groups, output_padding)
    x, unbatched = _batched(input, nd)
    c_in = weight.shape[0]
    if c_in % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"{list(weight.shape)} instead")
    if x.shape[1] != c_in:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {c_in} channels, but got "
                           f"{x.shape[1]} channels instead")
    c_out = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != c_out):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected bias to be 1-dimensional with {c_out} elements, but got "
                           f"bias of size {list(bias.shape)} instead")
    for i in range(nd):
        if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
            names = ["height", "width"] if nd == 2 else (["depth", "height", "width"]
                                                         if nd == 3 else ["width"])
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, output_padding))
                + " " + " ".join(f"stride_{n}: {v}" for n, v in zip(names, stride))
                + " " + " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    kernel = tuple(weight.shape[2:])
    in_sp = tuple((x.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                  + dilation[i] * (kernel[i] - 1) + output_padding[i] + 1 for i in range(nd))
    if any(s <= 0 for s in in_sp):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})"
                           f". Calculated output size per channel: "
                           f"({' x '.join(map(str, in_sp))}). Output size is too small")
    out = _ops(nd)[1](x, weight, in_sp, stride, padding, dilation, groups)
    if bias is not None:
        out = out + _bias_view(bias, nd)
    return out.squeeze(0) if unbatched else in_layout_of_inputs(out, x, weight)


@autocast_op("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa
                     groups=1, dilation=1):
    r"""1-D transposed convolution ("deconvolution") over (N, C_in, L) or (C_in, L).

    weight: (C_in, C_out / groups, kW). Output length:
    (L - 1) s - 2 p + d (k - 1) + output_padding + 1.
    """
    return _conv_transpose(1, "conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa
                     groups=1, dilation=1):
    r"""2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W).

    weight: (C_in, C_out / groups, kH, kW). H_out = (H - 1) s - 2 p + d (kH - 1) +
    output_padding + 1, likewise W_out. It is the gradient of conv2d with respect to its input.
    """
    return _conv_transpose(2, "conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


@autocast_op("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa
                     groups=1, dilation=1):
    r"""3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    return _conv_transpose(3, "conv_transpose3d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ---- unfold / fold (im2col / col2im) -----------------------------------------------------
@differentiable("im2col")
def _im2col_op(x, kernel, stride, padding, dilation):
    cols = _im2col(x, kernel, stride, padding, dilation)
    n, c = x._sizes[:2]
    return cols.view(n, c * numel(kernel), -1)


@differentiable("col2im")
def _col2im_op(cols, out_sp, kernel, stride, padding, dilation):
    n, ck, big_l = cols._sizes
    grid = tuple(_conv_out_size(out_sp[i], kernel[i], stride[i], padding[i], dilation[i])
                 for i in range(len(kernel)))
    c = ck // numel(kernel)
    return _col2im(cols.reshape((n, c) + tuple(kernel) + grid), out_sp, kernel, stride,
                   padding, dilation)


@formula("im2col")
def _im2col_grad(ctx, g):
    x, kernel, stride, padding, dilation = ctx.args
    return (_col2im_op(g, tuple(x.shape[2:]), kernel, stride, padding, dilation),
            None, None, None, None)


@formula("col2im")
def _col2im_grad(ctx, g):
    _, out_sp, kernel, stride, padding, dilation = ctx.args
    return _im2col_op(g, kernel, stride, padding, dilation), None, None, None, None, None


def _fold_params(kernel_size, dilation, padding, stride):
    kernel = _ntuple(kernel_size, 2, "kernel_size")
    dilation = _ntuple(dilation, 2, "dilation")
    padding = _ntuple(padding, 2, "padding")
    stride = _ntuple(stride, 2, "stride")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: "
                           f"{padding[0]} pad_width: {padding[1]}")
    return kernel, dilation, padding, stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    r"""Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C * prod(kernel_size), L),
    L the number of block positions. A 3-D input (C, H, W) gives (C * prod(k), L)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    kernel, dilation, padding, stride = _fold_params(kernel_size, dilation, padding, stride)
    x, unbatched = _batched(input, 2)
    grid = [_conv_out_size(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
            for i in range(2)]
    if any(g < 1 for g in grid):
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
                           f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), calculated "
                           f"shape of the array of sliding blocks as ({grid[0]}, {grid[1]}), "
                           f"but its components must be at least one.")
    out = _im2col_op(x, kernel, stride, padding, dilation)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    r"""Combine sliding local blocks into a tensor (col2im, overlaps summed):
    (N, C * prod(kernel_size), L) -> (N, C, *output_size); (C * prod(k), L) -> (C, *out)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    out_sp = _ntuple(output_size, 2, "output_size")
    kernel, dilation, padding, stride = _fold_params(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if input.dim() == 2 else input
    k = kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size=({kernel[0]}, {kernel[1]}).")
    grid = [_conv_out_size(out_sp[i], kernel[i], stride[i], padding[i], dilation[i])
            for i in range(2)]
    if x.shape[2] != grid[0] * grid[1]:
        raise RuntimeError(f"Given output_size=({out_sp[0]}, {out_sp[1]}), "
                           f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, "
                           f"{dilation[1]}), padding=({padding[0]}, {padding[1]}), "
                           f"stride=({stride[0]}, {stride[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks "
                           f"{grid[0]} * {grid[1]} = {grid[0] * grid[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    out = _col2im_op(x, out_sp, kernel, stride, padding, dilation)
    return out.squeeze(0) if input.dim() == 2 else out

