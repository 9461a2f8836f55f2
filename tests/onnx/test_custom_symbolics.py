"""torch.onnx.register_custom_op_symbolic on tensorlib: a custom op is written to ONNX by the
symbolic function registered for it, called as PyTorch's exporter calls it (`g.op`)."""
import io

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
from tensorlib.library import custom_op
from tensorlib.onnx import symbolic_helper, symbolic_opset11

pytest.importorskip("onnx")


@custom_op("onnxsym::scaled_clip", mutates_args=())
def scaled_clip(x, scale):
    return (x * scale).clamp(-1.0, 1.0)


@symbolic_helper.parse_args("v", "f")
def scaled_clip_symbolic(g, x, scale):
    k = g.op("Constant", value_t=tl.tensor([scale], dtype=tl.float32))
    lo = g.op("Constant", value_t=tl.tensor(-1.0))
    hi = g.op("Constant", value_t=tl.tensor(1.0))
    cast = g.op("Cast", x, to_i=tl.onnx.TensorProtoDataType.FLOAT)
    return g.op("Clip", g.op("Mul", cast, k), lo, hi)


class Clipper(nn.Module):
    def forward(self, x):
        return scaled_clip(x, 0.5) + 1


def test_registered_symbolic_writes_the_custom_op():
    ort = pytest.importorskip("onnxruntime")
    tl.onnx.register_custom_op_symbolic("onnxsym::scaled_clip", scaled_clip_symbolic, 11)
    try:
        x = tl.linspace(-5, 5, 12).reshape(3, 4)
        buf = io.BytesIO()
        proto = tl.onnx.export(Clipper(), (x,), buf)
        assert "Clip" in [n.op_type for n in proto.graph.node]
        got = ort.InferenceSession(buf.getvalue()).run(None, {"x": x.numpy()})[0]
        np.testing.assert_allclose(got, Clipper()(x).numpy(), rtol=1e-6)
    finally:
        tl.onnx.unregister_custom_op_symbolic("onnxsym::scaled_clip", 11)


def test_newest_symbolic_not_above_the_opset_is_used_and_absence_is_named():
    calls = []
    tl.onnx.register_custom_op_symbolic("onnxsym::scaled_clip",
                                        lambda g, x, s: calls.append(11) or x, 11)
    tl.onnx.register_custom_op_symbolic("onnxsym::scaled_clip",
                                        lambda g, x, s: calls.append(18) or x, 18)
    try:
        tl.onnx.export(Clipper(), (tl.ones(2),), io.BytesIO(), opset_version=17)
        assert calls == [11]
    finally:
        tl.onnx.unregister_custom_op_symbolic("onnxsym::scaled_clip", 11)
        tl.onnx.unregister_custom_op_symbolic("onnxsym::scaled_clip", 18)
    with pytest.raises(tl.onnx.errors.UnsupportedOperatorError, match="onnxsym::scaled_clip"):
        tl.onnx.export(Clipper(), (tl.ones(2),), io.BytesIO())


def test_custom_domain_nodes_get_an_opset_import():
    tl.onnx.register_custom_op_symbolic("onnxsym::scaled_clip",
                                        lambda g, x, s: g.op("mydomain::ScaledClip", x,
                                                             scale_f=s), 17)
    try:
        proto = tl.onnx.export(Clipper(), (tl.ones(2),), io.BytesIO())
    finally:
        tl.onnx.unregister_custom_op_symbolic("onnxsym::scaled_clip", 17)
    node = next(n for n in proto.graph.node if n.op_type == "ScaledClip")
    assert node.domain == "mydomain" and node.attribute[0].f == 0.5
    assert "mydomain" in [o.domain for o in proto.opset_import]


def test_names_are_checked_and_missing_helpers_say_so():
    with pytest.raises(ValueError, match="domain::name"):
        tl.onnx.register_custom_op_symbolic("no_domain", lambda g: None, 11)
    with pytest.raises(NotImplementedError, match="symbolic_opset11.unsqueeze"):
        symbolic_opset11.unsqueeze
    with pytest.raises(ValueError, match="descriptors"):
        symbolic_helper.parse_args("q")
    assert symbolic_helper.parse_args("v", "i", "is")(lambda g, *a: a)(None, "x", 2.0, (1, 2)) \
        == ("x", 2, [1, 2])
