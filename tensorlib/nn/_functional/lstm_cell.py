r"""The pointwise part of an LSTM step: from the input and hidden gates (each x W^T + b, one
addmm apiece) and the cell state c, ``c' = f c + i g`` and ``h' = o tanh(c')`` with
``i, f, o = sigmoid(...)``, ``g = tanh(...)`` (PyTorch's gate order i, f, g, o).

NOTE [ Fused LSTM cell kernels ]
A backend may register a pair of kernels (outputs first, like every kernel); each returns
False, having written nothing, for dtypes or layouts it does not take (then the composite
path runs):

* ``lstm_cell(h_out, c_out, act, igates, hgates, c)``: igates, hgates (N, 4H) and c (N, H)
  read by rows; writes h', c' (N, H) and act = (i, f, g, o, tanh(c')) (N, 5H), the
  activated gates and the cell's tanh, which the backward reads.
* ``lstm_cell_backward(grad_gates, grad_c, grad_h, grad_c_new, c, act)``: the gradient of
  the pre-activation gates (N, 4H) and, unless grad_c is None, of c (N, H), from the
  gradients of h' and c' (either may be None: zero).

The fused op is one autograd node with three outputs (h', c', act); its backward is the
backward kernel. A backward that must itself be differentiable (create_graph=True), or one
that receives a gradient for act, is written in tensorlib ops from the saved outputs, which
carry this node as their history, so second derivatives are right. Under forward AD the
composite runs (its ops carry the tangents).
"""
import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd import forward_ad as _forward_ad
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable

__all__ = ["lstm_pointwise"]

_FLOATS = (tensorlib.float32, tensorlib.float64)


def lstm_pointwise(igates, hgates, c):
    """(h', c') of one LSTM step from its input gates, hidden gates and cell state."""
    if (c._dtype in _FLOATS and igates._dtype is c._dtype and hgates._dtype is c._dtype
            and _forward_ad._level is None
            and optional_kernel(c._device, "lstm_cell") is not None):
        try:
            h_new, c_new, _ = _fused_op(igates, hgates, c)
            return h_new, c_new
        except _Declined:
            pass
    return _composite(igates + hgates, c)


def _composite(gates, c):
    i, f, g, o = gates.split(c.shape[-1], -1)
    c_new = tensorlib.sigmoid(f) * c + tensorlib.sigmoid(i) * tensorlib.tanh(g)
    return tensorlib.sigmoid(o) * tensorlib.tanh(c_new), c_new


class _Declined(Exception):
    """The kernel did not take the call; raised inside the op so nothing is recorded."""


@differentiable("lstm_cell_fused")
def _fused_op(igates, hgates, c):
    rows, hidden = c.shape if c.dim() == 2 else (0, -1)
    if hidden < 0 or tuple(igates.shape) != (rows, 4 * hidden) \
            or tuple(hgates.shape) != (rows, 4 * hidden):
        raise _Declined
    dt, dev = c._dtype, c._device
    h_new, c_new = empty((rows, hidden), dt, dev), empty((rows, hidden), dt, dev)
    act = empty((rows, 5 * hidden), dt, dev)
    if not optional_kernel(dev, "lstm_cell")(h_new, c_new, act, igates, hgates, c):
        raise _Declined
    return h_new, c_new, act


@formula("lstm_cell_fused", save=(2,), save_output=True)
def _fused_grad(ctx, grad_h=None, grad_c=None, grad_act=None):
    c = ctx.args[2]
    act = ctx.out[2]
    want_c = ctx.needs_input_grad[2]
    kernel = optional_kernel(c._device, "lstm_cell_backward")
    if kernel is not None and grad_act is None and not tensorlib.is_grad_enabled():
        grad_gates = empty(ctx.args[0].shape, c._dtype, c._device)
        grad_c_old = empty(c._sizes, c._dtype, c._device) if want_c else None
        if kernel(grad_gates, grad_c_old, _dense(grad_h, c), _dense(grad_c, c), c, act):
            return grad_gates, grad_gates, grad_c_old
    grad_gates, grad_c_old = _grad_in_ops(grad_h, grad_c, grad_act, c, act)
    return grad_gates, grad_gates, (grad_c_old if want_c else None)


def _dense(grad, like):
    """A gradient the backward kernel can read by rows (a broadcast one is expanded)."""
    if grad is None:
        return None
    return grad.to(like.dtype).contiguous()


def _grad_in_ops(grad_h, grad_c, grad_act, c, act):
    """The backward in tensorlib ops, differentiable again (act carries the node)."""
    i, f, g, o, t = act.split(c.shape[-1], -1)
    zero = tensorlib.zeros((), dtype=c.dtype, device=c.device)
    dh = grad_h if grad_h is not None else zero
    dt = dh * o
    if grad_act is not None:
        a_i, a_f, a_g, a_o, a_t = grad_act.split(c.shape[-1], -1)
        dt = dt + a_t
    dc = dt * (1 - t * t)
    if grad_c is not None:
        dc = dc + grad_c
    d_i, d_f, d_g, d_o = dc * g, dc * c, dc * i, dh * t
    if grad_act is not None:
        d_i, d_f, d_g, d_o = d_i + a_i, d_f + a_f, d_g + a_g, d_o + a_o
    grad_gates = tensorlib.cat([d_i * i * (1 - i), d_f * f * (1 - f), d_g * (1 - g * g),
                                d_o * o * (1 - o)], -1)
    return grad_gates, dc * f
