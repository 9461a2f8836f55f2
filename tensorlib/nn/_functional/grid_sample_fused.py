r"""grid_sample through a backend's fused kernels (the CPU backend's grid_kernels.pyx), as one
autograd op whose backward is the fused backward.

NOTE [ Fused grid_sample kernels ]
A backend may register two kernels (outputs first, like every kernel); each returns False,
having written nothing, for a call it does not cover (then the composite path runs):

* ``grid_sampler_2d(out, input, grid, mode, padding_mode, align_corners)``: out
  (N, C, Ho, Wo) contiguous, input (N, C, H, W) and grid (N, Ho, Wo, 2) of any strides.
* ``grid_sampler_2d_backward(grad_input, grad_grid, grad_out, input, grid, mode,
  padding_mode, align_corners)``: grad_input (or None when not wanted) and grad_grid,
  contiguous and overwritten, from a contiguous grad_out.

A backward that must itself be differentiable (create_graph=True) runs the composite
path's backward instead, which is written in tensorlib ops.
"""
import tensorlib
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable

__all__ = ["try_fused_grid_sample"]

_OP = "grid_sampler_2d"


def try_fused_grid_sample(input, grid, mode, padding_mode, align_corners):  # noqa: A002
    """The fused result, or None where the device has no kernel or the kernel declines."""
    if optional_kernel(input._device, _OP) is None or input.dim() != 4 or mode == "bicubic":
        return None
    if input.dtype not in (tensorlib.float32, tensorlib.float64):
        return None
    return _fused(input, grid, mode, padding_mode, bool(align_corners))


class _Declined(Exception):
    """The kernel did not cover the call; raised inside the op so nothing is recorded."""


def _composite(input, grid, mode, padding_mode, align_corners):  # noqa: A002
    from tensorlib.nn._functional.vision import composite_grid_sample
    return composite_grid_sample(input, grid, mode, padding_mode, align_corners)


@differentiable("grid_sampler_2d_fused")
def _fused_op(input, grid, mode, padding_mode, align_corners):  # noqa: A002
    n, c = input.shape[:2]
    out = tensorlib.empty((n, c) + tuple(grid.shape[1:3]), dtype=input.dtype,
                          device=input.device)
    kernel = optional_kernel(input._device, _OP)
    if not kernel(out, input, grid, mode, padding_mode, align_corners):
        raise _Declined
    return out


def _fused(input, grid, mode, padding_mode, align_corners):  # noqa: A002
    try:
        return _fused_op(input, grid, mode, padding_mode, align_corners)
    except _Declined:
        return None


@formula("grid_sampler_2d_fused", save=(0, 1))
def _fused_grad(ctx, grad_out):
    input, grid, mode, padding_mode, align_corners = ctx.args  # noqa: A001
    want_input, want_grid = ctx.needs_input_grad[:2]
    kernel = optional_kernel(input.device, _OP + "_backward")
    if kernel is not None and not tensorlib.is_grad_enabled():
        grad_input = tensorlib.empty(input.shape, dtype=input.dtype, device=input.device) \
            if want_input else None
        grad_grid = tensorlib.empty(grid.shape, dtype=grid.dtype, device=grid.device)
        if kernel(grad_input, grad_grid, grad_out.to(input.dtype).contiguous(), input, grid,
                  mode, padding_mode, align_corners):
            return grad_input, (grad_grid if want_grid else None), None, None, None
    wanted = [t for t, want in ((input, want_input), (grid, want_grid)) if want]
    create_graph = tensorlib.is_grad_enabled()
    with tensorlib.enable_grad():
        out = _composite(input, grid, mode, padding_mode, align_corners)
        grads = list(tensorlib.autograd.grad(out, wanted, grad_out, create_graph=create_graph))
    return (grads.pop(0) if want_input else None), (grads.pop(0) if want_grid else None), \
        None, None, None
