"""torch.onnx.is_in_onnx_export: False in eager code, True while export runs the model, and
False again afterwards, also when the export fails."""
import io

import pytest

import tensorlib
import tensorlib.nn as nn


class Probe(nn.Module):
    seen = []

    def forward(self, x):
        Probe.seen.append(tensorlib.onnx.is_in_onnx_export())
        return x * 2


def test_flag_is_false_in_eager_code():
    Probe.seen.clear()
    Probe()(tensorlib.ones(2))
    assert Probe.seen == [False] and tensorlib.onnx.is_in_onnx_export() is False


def test_flag_is_true_only_during_export():
    pytest.importorskip("onnx")
    Probe.seen.clear()
    tensorlib.onnx.export(Probe(), (tensorlib.ones(2),), io.BytesIO())
    assert Probe.seen and all(Probe.seen)
    assert tensorlib.onnx.is_in_onnx_export() is False


def test_flag_is_reset_when_the_traced_model_raises():
    pytest.importorskip("onnx")
    class Failing(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        tensorlib.onnx.export(Failing(), (tensorlib.ones(2),), io.BytesIO())
    assert tensorlib.onnx.is_in_onnx_export() is False
