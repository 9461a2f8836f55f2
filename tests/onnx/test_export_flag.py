"""torch.onnx.is_in_onnx_export: models read it to keep export-friendly code paths."""
import io

import pytest

import tensorlib as tl

pytest.importorskip("onnx")


def test_is_in_onnx_export_is_true_only_while_exporting():
    seen = []

    class Probe(tl.nn.Module):
        def forward(self, x):
            seen.append(tl.onnx.is_in_onnx_export())
            return x + 1
    assert tl.onnx.is_in_onnx_export() is False
    tl.onnx.export(Probe(), (tl.ones(2),), io.BytesIO())
    assert seen and all(seen) and tl.onnx.is_in_onnx_export() is False


def test_the_flag_is_cleared_when_export_fails():
    class Broken(tl.nn.Module):
        def forward(self, x):
            raise ValueError("no")
    with pytest.raises(ValueError):
        tl.onnx.export(Broken(), (tl.ones(2),), io.BytesIO())
    assert tl.onnx.is_in_onnx_export() is False
