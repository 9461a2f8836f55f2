"""tensorlib.onnx.export: the model zoo (and a CNN with batch norm) runs in onnxruntime with
tensorlib's outputs, with a dynamic batch size; so do the zoo's variants (stacked pre-norm
encoders, bidirectional LSTMs, adaptive pooling, attention masks); unmapped ops are named."""
import io

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn

from tests.compiler.models import ZOO, make

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


def _run(model, x, batches):
    buf = io.BytesIO()
    tl.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"],
                   dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    session = ort.InferenceSession(buf.getvalue())
    for n in batches:
        xb = x[:n].contiguous()
        got = session.run(None, {"x": xb.numpy()})[0]
        np.testing.assert_allclose(got, model(xb).detach().numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_exports_and_matches_onnxruntime(name):
    model, x, _ = make(name, "cpu")
    model.eval()
    _run(model, x, (x.shape[0], 1, 2))


def test_cnn_with_batch_norm_and_avg_pool():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 4, 3, stride=2), nn.AvgPool2d(2),
                          nn.Flatten(), nn.Dropout(0.2), nn.Linear(4, 3), nn.Softmax(-1))
    x = tl.randn(5, 3, 16, 16)
    model.train()
    model(x)                                 # running statistics that are not the defaults
    model.eval()
    _run(model, x, (5, 2))


class EncoderStack(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, activation="gelu",
                                           norm_first=True, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


class BiLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, bidirectional=True)     # sequence first

    def forward(self, x):
        out, (h, c) = self.lstm(x.transpose(0, 1))
        return out[-1] + (h + c).transpose(0, 1).flatten(1)[:, :24]


class MaskedAttention(nn.Module):
    def __init__(self, bool_mask):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        self.register_buffer("mask", mask.isinf() if bool_mask else mask)
        padding = tl.tensor([[False] * 4 + [True]] * 3)       # the last key is padding
        self.register_buffer("padding", padding if bool_mask else
                             tl.zeros(3, 5).masked_fill(padding, float("-inf")))

    def forward(self, x):
        out, _ = self.mha(x, x, x, attn_mask=self.mask, key_padding_mask=self.padding,
                          need_weights=False)
        return out


VARIANTS = {
    "encoder_stack": (EncoderStack, (4, 6, 16), (4, 1)),
    "bidirectional_lstm": (BiLSTM, (4, 7, 8), (4, 1)),
    "cnn_adaptive_pool": (lambda: nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
        nn.AdaptiveAvgPool2d((2, 2)), nn.Conv2d(8, 8, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(8, 6), nn.SiLU(), nn.BatchNorm1d(6), nn.Linear(6, 2)), (5, 3, 12, 12), (5, 2)),
    "masked_attention_float": (lambda: MaskedAttention(False), (3, 5, 16), (3,)),
    "masked_attention_bool": (lambda: MaskedAttention(True), (3, 5, 16), (3,)),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_zoo_variants_export_and_match_onnxruntime(name):
    build, shape, batches = VARIANTS[name]
    tl.manual_seed(0)
    model = build()
    x = tl.randn(*shape)
    model.train()
    model(x)                                 # batch norms get non-default statistics
    model.eval()
    _run(model, x, batches)


def test_functional_ops_in_a_custom_forward(tmp_path):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 4)
            self.scale = nn.Parameter(tl.full((4,), 2.0))

        def forward(self, x):
            h = tl.relu(self.fc(x)) * self.scale + 1
            return nn.functional.log_softmax(h.transpose(0, 1), dim=0).sum(1, keepdim=True)
    model = Net()
    x = tl.randn(3, 6)
    path = tmp_path / "net.onnx"
    tl.onnx.export(model, x, str(path))
    session = ort.InferenceSession(str(path))
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_unmapped_op_is_named():
    class Odd(nn.Module):
        def forward(self, x):
            return tl.cumsum(x, 0)
    with pytest.raises(tl.onnx.errors.UnsupportedOperatorError, match="cumsum"):
        tl.onnx.export(Odd(), tl.randn(3), io.BytesIO())
