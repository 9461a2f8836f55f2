"""torch.ao.nn.quantized.dynamic.LSTM: nn.LSTM with each layer's and direction's two weights
quantized to qint8 ahead of time and the activations quantized on each product, as PyTorch's
fbgemm path does: a layer's input projection runs once over the whole sequence (one
activation scale for all time steps), the hidden projection once per step; the gates, cell
and hidden state stay float32. Inference only (PyTorch's is too)."""
import tensorlib
from tensorlib.ao.nn.quantized.dynamic.modules.linear import (linear_dynamic,
                                                               observed_qint8_weight,
                                                               quantized_weight,
                                                               take_scale_shapes,
                                                               weight_buffers)
from tensorlib.ao.quantization import _qtypes as qt
from tensorlib.nn.modules.container import ModuleList
from tensorlib.nn.modules.module import Module
from tensorlib.nn.utils.rnn import PackedSequence


class PackedParameter(Module):
    """One layer-direction's quantized weights (int8 int_repr and scale: 0-d, or one per
    output channel; buffers) and float biases: state_dict keys `weight_ih`,
    `weight_ih_scale`, `weight_hh`, ..., `bias_hh`."""

    def __init__(self, w_ih, w_hh, b_ih, b_hh):
        super().__init__()
        for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
            int_repr, scale = weight_buffers(w, "LSTM")
            self.register_buffer(name, int_repr)
            self.register_buffer(name + "_scale", scale)
        self.register_buffer("bias_ih", None if b_ih is None else b_ih.detach().float().clone())
        self.register_buffer("bias_hh", None if b_hh is None else b_hh.detach().float().clone())

    def quantized(self, name):
        return quantized_weight(getattr(self, name), getattr(self, name + "_scale"))

    def _load_from_state_dict(self, state_dict, prefix, *args):
        take_scale_shapes(self, state_dict, prefix, ("weight_ih_scale", "weight_hh_scale"))
        super()._load_from_state_dict(state_dict, prefix, *args)


class LSTM(Module):
    """DynamicQuantizedLSTM: forward(input, hx=None) -> (output, (h_n, c_n)) as nn.LSTM's."""

    _FLOAT_MODULE = None   # nn.LSTM, set below (import order)

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=qt.qint8):
        super().__init__()
        if dtype is not qt.qint8:
            raise ValueError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        self.mode, self.dtype = "LSTM", dtype
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        self._all_weight_values = ModuleList()

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"

    def _names(self):
        suffixes = ["", "_reverse"] if self.bidirectional else [""]
        return [f"l{layer}{suffix}" for layer in range(self.num_layers) for suffix in suffixes]

    def get_weight(self):
        out = {}
        for name, packed in zip(self._names(), self._all_weight_values):
            out[f"weight_ih_{name}"] = packed.quantized("weight_ih")
            out[f"weight_hh_{name}"] = packed.quantized("weight_hh")
        return out

    def get_bias(self):
        out = {}
        for name, packed in zip(self._names(), self._all_weight_values):
            out[f"bias_ih_{name}"], out[f"bias_hh_{name}"] = packed.bias_ih, packed.bias_hh
        return out

    def _check(self, x, hx):
        if isinstance(x, PackedSequence):
            raise NotImplementedError("DynamicQuantizedLSTM: PackedSequence input is not "
                                      "supported by tensorlib; pad the batch instead")
        if x.dtype is not tensorlib.float32:
            raise RuntimeError(f"expected scalar type Float but found {x.dtype.scalar_name}")
        if x.dim() != 3:          # PyTorch's quantized LSTM takes batched input only
            raise RuntimeError(f"input must have 3 dimensions, got {x.dim()}")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")

    def forward(self, input, hx=None):  # noqa: A002
        self._check(input, hx)
        x = input.transpose(0, 1) if self.batch_first else input
        batch = x.shape[1]
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            h0 = c0 = tensorlib.zeros(shape, device=x.device)
        else:
            h0, c0 = hx
            for name, h in (("hidden", h0), ("cell", c0)):
                if tuple(h.shape) != shape:
                    raise RuntimeError(f"Expected {name} size {shape}, got {tuple(h.shape)}")
        h_n, c_n = [], []
        with tensorlib.no_grad():
            layer_input = x
            for layer in range(self.num_layers):
                outs = []
                for d in range(directions):
                    k = layer * directions + d
                    out, h, c = self._direction(self._all_weight_values[k], layer_input,
                                                h0[k], c0[k], reverse=d == 1)
                    outs.append(out)
                    h_n.append(h)
                    c_n.append(c)
                layer_input = outs[0] if directions == 1 else tensorlib.cat(outs, dim=2)
        output = layer_input
        h_n, c_n = tensorlib.stack(h_n), tensorlib.stack(c_n)
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, (h_n, c_n)

    def _direction(self, p, x, h, c, reverse):
        steps, batch = x.shape[0], x.shape[1]
        pre = linear_dynamic(x.reshape(steps * batch, x.shape[2]), p.weight_ih,
                             p.weight_ih_scale, p.bias_ih).reshape(steps, batch, -1)
        hh_scale = p.weight_hh_scale
        outputs = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            gates = pre[t] + linear_dynamic(h, p.weight_hh, hh_scale, p.bias_hh)
            i, f, g, o = gates.chunk(4, dim=1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h = o.sigmoid() * c.tanh()
            outputs[t] = h
        return tensorlib.stack(outputs) if steps else pre[:, :, :self.hidden_size], h, c

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of a float nn.LSTM (no projections), each weight observed by the
        qconfig's weight observer."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"nnqd.LSTM.from_float only works for {cls._FLOAT_MODULE}")
        if not mod.bias:
            raise AssertionError("mod.bias must be True")      # as PyTorch's
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("DynamicQuantizedLSTM: proj_size > 0 is not supported")
        qconfig = getattr(mod, "qconfig", None)
        new = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                  mod.dropout, mod.bidirectional)
        for name in new._names():
            weights = [observed_qint8_weight(getattr(mod, f"weight_{kind}_{name}"), qconfig,
                                             "LSTM") for kind in ("ih", "hh")]
            biases = [getattr(mod, f"bias_{kind}_{name}") if mod.bias else None
                      for kind in ("ih", "hh")]
            new._all_weight_values.append(PackedParameter(*weights, *biases))
        return new


def _float_module():
    from tensorlib import nn
    return nn.LSTM


LSTM._FLOAT_MODULE = _float_module()
