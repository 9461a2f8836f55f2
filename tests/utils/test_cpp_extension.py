"""C++ extensions over tensorlib tensors: building, caching, the API, errors, autograd."""
import os
import textwrap

import numpy as np
import pytest

pytest.importorskip("pybind11")

import tensorlib as torch
from tensorlib.utils import cpp_extension

GUIDE = """
torch::Tensor my_func(torch::Tensor input) { return input * 2; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("my_func", &my_func); }
"""

# a fused scale-shift-tanh, y = tanh(a * x + b), with its backward, as accessor loops
FUSED = """
template <typename scalar_t>
void fwd_kernel(torch::TensorAccessor<scalar_t, 2> x, torch::TensorAccessor<scalar_t, 2> y,
                double a, double b) {
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t j = 0; j < x.size(1); ++j) y[i][j] = std::tanh(a * x[i][j] + b);
}
torch::Tensor fused_forward(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.dim() == 2, "fused_forward expects a 2-D tensor, got ", x.dim(), " dims");
  auto y = torch::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "fused_forward", [&] {
    fwd_kernel<scalar_t>(x.accessor<scalar_t, 2>(), y.accessor<scalar_t, 2>(), a, b);
  });
  return y;
}
torch::Tensor fused_backward(torch::Tensor grad, torch::Tensor y, double a) {
  auto g = torch::zeros(y.sizes(), y.options());
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "fused_backward", [&] {
    auto ga = grad.accessor<scalar_t, 2>();
    auto ya = y.accessor<scalar_t, 2>();
    auto out = g.accessor<scalar_t, 2>();
    for (int64_t i = 0; i < ya.size(0); ++i)
      for (int64_t j = 0; j < ya.size(1); ++j)
        out[i][j] = ga[i][j] * a * (1 - ya[i][j] * ya[i][j]);
  });
  return g;
}
std::vector<int64_t> describe(torch::Tensor x) {
  return {x.dim(), x.numel(), x.size(0), x.stride(0), x.is_contiguous() ? 1 : 0};
}
torch::Tensor api(torch::Tensor x, torch::Tensor w) {
  auto z = (x.matmul(w) + 1.0 - x.sum() / 4.0).exp().mean(0) * 0.5;
  return z.to(torch::kFloat64).view({1, -1}) + torch::ones({1, w.size(1)}, torch::dtype(torch::kFloat64));
}
int64_t sum_all(torch::Tensor x) {
  int64_t total = 0;
  AT_DISPATCH_ALL_TYPES(x.scalar_type(), "sum_all", [&] {
    auto c = x.contiguous();
    const scalar_t* p = c.data_ptr<scalar_t>();
    for (int64_t i = 0; i < c.numel(); ++i) total += static_cast<int64_t>(p[i]);
  });
  return total;
}
torch::Tensor same(torch::Tensor x) { return x; }
"""


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cpp_ext"))


@pytest.fixture(scope="module")
def fused(build_dir):
    return cpp_extension.load_inline(
        "fused_ext", FUSED, functions=["fused_forward", "fused_backward", "describe", "api",
                                       "sum_all", "same"], build_directory=build_dir)


def test_guide_example_builds_unchanged(build_dir):
    ext = cpp_extension.load_inline("guide_ext", GUIDE, build_directory=build_dir)
    out = ext.my_func(torch.tensor([1.0, -2.5, 3.0]))
    assert isinstance(out, torch.Tensor)
    assert out.tolist() == [2.0, -5.0, 6.0]


def test_tensor_passes_without_copy(fused):
    x = torch.randn(3, 4)
    assert fused.same(x) is x


def test_fused_op_matches_torch(fused):
    torch_ref = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((5, 7))
    for dtype in ("float32", "float64"):
        xt = torch.tensor(x.astype(dtype))
        y = fused.fused_forward(xt, 1.5, -0.25)
        ref = torch_ref.tanh(1.5 * torch_ref.tensor(x.astype(dtype)) - 0.25)
        assert str(y.dtype) == f"tensorlib.{dtype}"
        np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


def test_accessor_follows_strides(fused):
    x = torch.randn(6, 4)
    y = fused.fused_forward(x.t(), 2.0, 0.0)   # non-contiguous input
    np.testing.assert_allclose(y.numpy(), np.tanh(2.0 * x.t().numpy()), rtol=1e-6, atol=1e-6)
    assert fused.describe(x.t()) == [2, 24, 4, 1, 0]


def test_api_methods_run_tensorlib_ops(fused):
    x, w = torch.randn(4, 3), torch.randn(3, 2)
    got = fused.api(x, w)
    z = np.exp(x.numpy() @ w.numpy() + 1.0 - x.numpy().sum() / 4.0).mean(0) * 0.5
    assert str(got.dtype) == "tensorlib.float64" and tuple(got.shape) == (1, 2)
    np.testing.assert_allclose(got.numpy(), z[None].astype(np.float64) + 1, rtol=1e-5)


def test_dispatch_all_types(fused):
    assert fused.sum_all(torch.tensor([[1, 2], [3, 4]])) == 10
    assert fused.sum_all(torch.tensor([1, 2, 3], dtype=torch.int32)) == 6


def test_dispatch_rejects_unsupported_dtype(fused):
    with pytest.raises(RuntimeError, match="\"fused_forward\" not implemented for 'int64'"):
        fused.fused_forward(torch.ones(2, 2, dtype=torch.int64), 1.0, 0.0)


def test_torch_check_raises_runtime_error(fused):
    with pytest.raises(RuntimeError, match="expects a 2-D tensor, got 1 dims"):
        fused.fused_forward(torch.ones(3), 1.0, 0.0)


def test_trains_inside_autograd_function(fused):
    class Fused(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, a, b):
            y = fused.fused_forward(x, a, b)
            ctx.save_for_backward(y)
            ctx.a = a
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return fused.fused_backward(grad.contiguous(), y, ctx.a), None, None

    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    Fused.apply(x, 0.7, 0.1).sum().backward()
    ref = 0.7 * (1 - np.tanh(0.7 * x.detach().numpy() + 0.1) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-10)
    assert torch.autograd.gradcheck(lambda t: Fused.apply(t, 0.7, 0.1), (x,))

    w = torch.zeros(2, 2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.5)
    target = torch.tensor([[0.5, -0.5], [0.2, 0.0]])
    for _ in range(60):
        opt.zero_grad()
        loss = ((Fused.apply(w, 1.0, 0.0) - target) ** 2).sum()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-3


def test_cache_reuse_and_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORLIB_EXTENSIONS_DIR", str(tmp_path))
    src = tmp_path / "twice.cpp"
    src.write_text("#include <torch/extension.h>\n" + GUIDE)
    calls = []
    real_run = cpp_extension.subprocess.run
    monkeypatch.setattr(cpp_extension.subprocess, "run",
                        lambda *a, **k: calls.append(a) or real_run(*a, **k))
    first = cpp_extension.load("twice_ext", [str(src)])
    cpp_extension.load("twice_ext", [str(src)])
    assert len(calls) == 1                       # the second load built nothing
    src.write_text("#include <torch/extension.h>\n" + GUIDE.replace("input * 2", "input * 3"))
    changed = cpp_extension.load("twice_ext", [str(src)])
    assert len(calls) == 2
    assert changed.my_func(torch.ones(1)).tolist() == [3.0]
    assert first.my_func(torch.ones(1)).tolist() == [2.0]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]   # no temp dirs left


def test_compile_error_reports_compiler_message(build_dir):
    source = GUIDE.replace("return input * 2;", "return input * undefined_name;")
    with pytest.raises(RuntimeError, match="undefined_name") as info:
        cpp_extension.load_inline("broken_ext", source, build_directory=build_dir)
    assert "Error building extension 'broken_ext'" in str(info.value)
    assert "return input * undefined_name;" in str(info.value)


def test_include_paths_hold_the_headers():
    paths = cpp_extension.include_paths()
    assert os.path.isfile(os.path.join(paths[0], "torch", "extension.h"))
    assert os.path.isfile(os.path.join(paths[0], "ATen", "ATen.h"))


@pytest.fixture(scope="module")
def torch_built(build_dir):
    """The same FUSED source built by PyTorch's own cpp_extension against libtorch."""
    torch_ref = pytest.importorskip("torch")
    from torch.utils import cpp_extension as torch_cpp
    folder = os.path.join(build_dir, "torch_build")
    os.makedirs(folder, exist_ok=True)
    ext = torch_cpp.load_inline("fused_ext_torch", FUSED,
                                functions=["fused_forward", "fused_backward", "describe",
                                           "api", "sum_all"], build_directory=folder)
    return torch_ref, ext


def test_same_source_matches_pytorch_build(fused, torch_built):
    torch_ref, ref = torch_built
    rng = np.random.default_rng(1)
    for dtype in ("float32", "float64"):
        x = rng.standard_normal((4, 3)).astype(dtype)
        w = rng.standard_normal((3, 2)).astype(dtype)
        ours_y = fused.fused_forward(torch.tensor(x), 0.8, 0.3)
        ref_y = ref.fused_forward(torch_ref.tensor(x), 0.8, 0.3)
        np.testing.assert_array_equal(ours_y.numpy(), ref_y.numpy())
        g = rng.standard_normal((4, 3)).astype(dtype)
        np.testing.assert_array_equal(
            fused.fused_backward(torch.tensor(g), ours_y, 0.8).numpy(),
            ref.fused_backward(torch_ref.tensor(g), ref_y, 0.8).numpy())
        np.testing.assert_allclose(fused.api(torch.tensor(x), torch.tensor(w)).numpy(),
                                   ref.api(torch_ref.tensor(x), torch_ref.tensor(w)).numpy(),
                                   rtol=1e-5)
        assert (fused.describe(torch.tensor(x).t())
                == ref.describe(torch_ref.tensor(x).t()))
    ints = np.arange(12).reshape(3, 4)
    assert fused.sum_all(torch.tensor(ints)) == ref.sum_all(torch_ref.tensor(ints))
    with pytest.raises(RuntimeError) as ours_err:
        fused.fused_forward(torch.ones(3), 1.0, 0.0)
    with pytest.raises(RuntimeError) as ref_err:
        ref.fused_forward(torch_ref.ones(3), 1.0, 0.0)
    assert str(ours_err.value).splitlines()[0] == str(ref_err.value).splitlines()[0]


# ATen idioms of graph code written against the C++ API (Pyro's spanning-tree sampler is one):
# writes through indexed views, item().to<T>(), a NoGradGuard, index/sort/select ops
GRAPH = """
torch::Tensor pair_grid(int n) {
  auto grid = torch::empty({2, n * (n - 1) / 2}, at::kLong);
  int k = 0;
  for (int b = 0; b != n; ++b)
    for (int a = 0; a != b; ++a) { grid[0][k] = a; grid[1][k] = b; k += 1; }
  return grid;
}
std::vector<double> idioms(torch::Tensor w) {
  torch::NoGradGuard no_grad;
  auto grid = pair_grid(4);
  auto order = std::get<0>(torch::randperm(6).sort());
  auto ends = torch::empty({6, 2}, at::kLong);
  for (int e = 0; e != 6; ++e) {
    ends[e][0] = grid[0][order[e]];
    ends[e][1] = grid[1][order[e]];
  }
  auto picked = w.index_select(0, grid[1]);
  auto mask = grid[0].__xor__(grid[1]).view(-1) == 3.0;
  auto kept = w.masked_select(mask);
  int first = mask.nonzero().view(-1)[0].item().to<int>();
  int drawn = (w - w.max()).exp().multinomial(1)[0].item().to<int>();
  auto tail = w.slice(0, 2, 6, 2);
  torch::Tensor copy = w;
  copy = tail;            // rebinds, writes nothing
  return {ends.sum().item().to<double>(), picked.sum().item().toDouble(),
          kept.sum().item().toDouble(), double(first), double(drawn >= 0 && drawn < 6),
          tail.sum().item().toDouble(), double(copy.numel()),
          w.requires_grad() && !torch::zeros({1}).requires_grad() ? 1.0 : 0.0};
}
"""


def test_aten_graph_idioms(build_dir):
    ext = cpp_extension.load_inline("graph_ext", GRAPH, functions=["pair_grid", "idioms"],
                                    build_directory=build_dir)
    grid = ext.pair_grid(4)
    assert grid.tolist() == [[0, 0, 1, 0, 1, 2], [1, 2, 2, 3, 3, 3]]
    w = torch.tensor([0.5, 1.0, 2.0, 4.0, 8.0, 16.0], requires_grad=True)
    ends, picked, kept, first, drawn_ok, tail, copied, grad_flags = ext.idioms(w)
    assert ends == grid.sum().item()               # every pair written once, in some order
    assert picked == w.detach()[grid[1]].sum().item()
    xor_is_3 = (grid[0] ^ grid[1]) == 3
    assert kept == w.detach()[xor_is_3].sum().item()
    assert first == int(xor_is_3.nonzero()[0, 0])
    assert drawn_ok == 1.0 and tail == 2.0 + 8.0 and copied == 2
    assert grad_flags == 1.0 and torch.is_grad_enabled()     # the guard restored the mode
