"""A C++ extension function as the CPU kernel of a tensorlib.library custom op: eager with
autograd, under tensorlib.compile (a graph break: the kernel runs where it is called) and in
jit.trace (the graph calls the op; a saved graph loads only where the op is defined)."""
import io

import numpy as np
import pytest

pytest.importorskip("pybind11")

import tensorlib as torch
from tensorlib.library import custom_op, custom_ops
from tensorlib.utils import cpp_extension

SOURCE = """
torch::Tensor scale_shift(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.device().is_cpu(), "scale_shift: a cpu tensor is expected");
  auto c = x.contiguous();
  auto y = torch::empty_like(c);
  AT_DISPATCH_FLOATING_TYPES(c.scalar_type(), "scale_shift", [&] {
    const scalar_t* p = c.data_ptr<scalar_t>();
    scalar_t* q = y.data_ptr<scalar_t>();
    for (int64_t i = 0; i < c.numel(); ++i) q[i] = static_cast<scalar_t>(a * p[i] + b);
  });
  return y;
}
"""
NAME = "cppext_test::scale_shift"


@pytest.fixture(scope="module")
def op(tmp_path_factory):
    ext = cpp_extension.load_inline("scale_shift_ext", SOURCE, functions=["scale_shift"],
                                    build_directory=str(tmp_path_factory.mktemp("lib_ext")))

    @custom_op(NAME, mutates_args=(), device_types="cpu")
    def scale_shift(x: torch.Tensor, a: float, b: float) -> torch.Tensor:
        return ext.scale_shift(x, a, b)

    # the C++ function itself is the kernel: pybind11 functions are callables like any other
    scale_shift.register_kernel("cpu", ext.scale_shift)
    scale_shift.register_fake(lambda x, a, b: torch.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.a = inputs[1]

    scale_shift.register_autograd(lambda ctx, grad: (grad * ctx.a, None, None),
                                  setup_context=setup_context)
    yield scale_shift
    del custom_ops._OPS[NAME]


def _model(x):
    return (torch.ops.cppext_test.scale_shift(x, 2.0, -0.5).relu() * 3).sum(1)


def test_eager_and_autograd(op):
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = op(x, 2.0, -0.5)
    np.testing.assert_allclose(y.detach().numpy(), 2.0 * x.detach().numpy() - 0.5)
    assert torch.autograd.gradcheck(lambda t: op(t, 2.0, -0.5), (x,))
    w = torch.zeros(4, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((op(w, 2.0, -0.5) - 1.0) ** 2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]


def test_under_compile_is_a_graph_break(op):
    x = torch.randn(5, 4)
    compiled = torch.compile(_model)
    for _ in range(3):        # the recording calls and any later one
        np.testing.assert_allclose(compiled(x).numpy(), _model(x).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="cppext_test::scale_shift"):
        torch.compile(_model, fullgraph=True)(x)


def test_jit_trace_calls_the_op_and_saves_by_name(op):
    x = torch.randn(2, 4)
    traced = torch.jit.trace(_model, (x,))
    assert any(n.target is op for n in traced.graph.nodes)
    other = torch.randn(6, 4)
    np.testing.assert_allclose(traced(other).numpy(), _model(other).numpy(), rtol=1e-6)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    np.testing.assert_allclose(loaded(other).numpy(), _model(other).numpy(), rtol=1e-6)
    # where the op is not defined, loading says which op is missing (and runs nothing)
    saved = custom_ops._OPS.pop(NAME)
    try:
        buf.seek(0)
        with pytest.raises(RuntimeError, match="custom op cppext_test::scale_shift, which is "
                                               "not defined"):
            torch.jit.load(buf)
    finally:
        custom_ops._OPS[NAME] = saved
