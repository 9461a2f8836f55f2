"""export(): the lifted graph and its signature, module() against eager, and the parts of
torch.export's ExportedProgram programs touch (state_dict, example_inputs, str, no call)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.export import InputKind, OutputKind, export

from tests.export.models import MLP, WithKwargs, cnn_eval


def _close(a, b):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_mlp_module_matches_eager(device):
    tl.manual_seed(0)
    m = MLP().to(device)
    x = tl.randn(5, 6).to(device)
    ep = export(m, (x,))
    _close(ep.module()(x), m(x))
    assert [n.op for n in ep.graph.nodes][:5] == ["placeholder"] * 5
    assert not any(n.op in ("get_attr", "call_module") for n in ep.graph.nodes)


def test_mlp_signature_names_and_kinds():
    m = MLP()
    ep = export(m, (tl.randn(2, 6),))
    sig = ep.graph_signature
    assert [(s.kind, s.arg.name, s.target) for s in sig.input_specs] == [
        (InputKind.PARAMETER, "p_fc1_weight", "fc1.weight"),
        (InputKind.PARAMETER, "p_fc1_bias", "fc1.bias"),
        (InputKind.PARAMETER, "p_fc2_weight", "fc2.weight"),
        (InputKind.PARAMETER, "p_fc2_bias", "fc2.bias"),
        (InputKind.USER_INPUT, "x", None)]
    assert sig.parameters == ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    assert sig.buffers == () and sig.user_inputs == ("x",) and sig.user_outputs == ("linear_1",)
    assert [s.kind for s in sig.output_specs] == [OutputKind.USER_OUTPUT]
    placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert placeholders == [s.arg.name for s in sig.input_specs]
    assert set(ep.state_dict) == set(m.state_dict())


def test_cnn_buffers_are_lifted_and_module_matches_eager():
    m = cnn_eval()
    x = tl.randn(2, 3, 8, 8)
    ep = export(m, (x,))
    sig = ep.graph_signature
    assert sig.buffers == ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked")
    buffers = [s for s in sig.input_specs if s.kind is InputKind.BUFFER]
    assert [s.arg.name for s in buffers] == ["b_bn_running_mean", "b_bn_running_var",
                                             "b_bn_num_batches_tracked"]
    assert all(s.persistent for s in buffers)
    mod = ep.module()
    assert list(mod.state_dict()) == list(m.state_dict())
    assert [n for n, _ in mod.named_buffers()] == [n for n, _ in m.named_buffers()]
    _close(mod(x), m(x))
    # the graph takes the weights as inputs: the lifted graph module gives the same result
    args = [ep.state_dict[t] for t in sig.parameters + sig.buffers] + [x]
    _close(ep.graph_module(*args), m(x))


def test_non_persistent_buffer_and_tensor_constant():
    class M(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", tl.full((3,), 2.0), persistent=False)
            self.offset = tl.tensor([1.0, 2.0, 3.0])        # a plain tensor attribute

        def forward(self, x):
            return x * self.scale + self.offset
    m = M()
    ep = export(m, (tl.ones(2, 3),))
    kinds = {s.arg.name: (s.kind, s.target, s.persistent)
             for s in ep.graph_signature.input_specs}
    assert kinds["b_scale"] == (InputKind.BUFFER, "scale", False)
    assert kinds["c_lifted_tensor_0"][:2] == (InputKind.CONSTANT_TENSOR, "lifted_tensor_0")
    assert "scale" not in ep.state_dict and "scale" in ep.constants
    _close(ep.module()(tl.ones(2, 3)), m(tl.ones(2, 3)))


def test_kwargs_are_user_inputs_after_args():
    tl.manual_seed(0)
    m = WithKwargs()
    x, mask = tl.randn(3, 4), (tl.rand(3, 4) > 0.5).float()
    ep = export(m, (x,), {"mask": mask})
    assert ep.graph_signature.user_inputs == ("x", "mask")
    assert ep.example_inputs[0][0] is x and ep.example_inputs[1]["mask"] is mask
    mod = ep.module()
    x2 = tl.randn(3, 4)
    _close(mod(x2, mask=mask), m(x2, mask=mask))
    with pytest.raises(TypeError, match="missing required argument: 'mask'"):
        mod(x2)
    with pytest.raises(AssertionError, match="scale == 2.0"):
        mod(x2, mask=mask, scale=3.0)       # a non-tensor input is fixed at its example


def test_exported_program_is_not_callable_and_prints():
    ep = export(MLP(), (tl.randn(2, 6),))
    with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
        ep(tl.randn(2, 6))
    text = str(ep)
    assert text.startswith("ExportedProgram:")
    assert "def forward(self, p_fc1_weight, p_fc1_bias, p_fc2_weight, p_fc2_bias, x)" in text
    assert "p_fc1_weight: PARAMETER target='fc1.weight'" in text
    assert ep.run_decompositions() is ep
    dynamic = export(MLP(), (tl.randn(2, 6),),
                     dynamic_shapes={"x": {0: tl.export.Dim("batch", min=2, max=9)}})
    assert "Range constraints: {batch: VR[2, 9]}" in str(dynamic)


def test_untraceable_internal_call_is_a_clear_error():
    lstm = tl.nn.LSTM(3, 4, batch_first=True)

    class M(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm

        def forward(self, x):
            return self.lstm(x)[0]
    with pytest.raises(tl.export.UserError, match="cannot trace through"):
        export(M(), (tl.randn(2, 5, 3),))


def test_export_leaves_buffers_and_module_shares_them():
    m = cnn_eval().train()
    x = tl.randn(4, 3, 8, 8)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    ep = export(m, (x,), dynamic_shapes={"x": {0: tl.export.Dim("b")}})     # two traces
    assert all(tl.equal(before[k], v) for k, v in m.state_dict().items())
    mod = ep.module()
    assert mod.training
    assert mod.bn.running_mean is m.bn.running_mean is ep.state_dict["bn.running_mean"]
    mod(x)      # training-mode updates run through the graph, in place, as in eager
    assert not tl.equal(before["bn.running_mean"], m.bn.running_mean)
    assert int(m.bn.num_batches_tracked) == 1


def test_export_leaves_tensorlib_functions_unpatched():
    before = (tl.nn.functional.conv2d, tl.nn.Conv2d.__dict__["_fn"].__func__,
              tl.nn.functional.linear)
    export(cnn_eval(), (tl.randn(1, 3, 8, 8),))
    assert (tl.nn.functional.conv2d, tl.nn.Conv2d.__dict__["_fn"].__func__,
            tl.nn.functional.linear) == before


def test_bad_arguments():
    with pytest.raises(ValueError, match="nn.Module"):
        export(lambda x: x, (tl.ones(1),))
    with pytest.raises(tl.export.UserError, match="tuple"):
        export(MLP(), tl.ones(2, 6))
    with pytest.raises(tl.export.UserError, match="signature"):
        export(MLP(), (tl.ones(2, 6), tl.ones(1)))


def test_reachable_from_tensorlib():
    assert tl.export.export is export and tl.export.Dim is not None


def test_preserving_submodule_call_signatures_is_refused():
    """Not supported (every submodule is inlined): a clear error, never a silent ignore."""
    with pytest.raises(NotImplementedError, match="preserve_module_call_signature"):
        export(tl.nn.Linear(2, 2), (tl.ones(1, 2),), preserve_module_call_signature=("a",))
