r"""Recurrent layers: RNN (tanh/relu), LSTM (optional projection), GRU and their cells.

Parameters, names (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``,
``weight_hr_l0``, ``..._reverse``), gate orders (LSTM i, f, g, o; GRU r, z, n), default inits
and output shapes are PyTorch's, so torch weights load one to one.

The math is composed from tensorlib ops: the input projection of a whole layer is one matmul
over the sequence, then each time step costs one addmm with the hidden weights plus the gate
pointwise ops (for the LSTM one fused op where the backend has the kernels, see
nn/_functional/lstm_cell.py); autograd comes from the ops. A PackedSequence input runs each step on the
sequences still running at that step, so h_n/c_n hold each sequence's last valid state.
"""
import math
import numbers
import warnings

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn._functional.attention import _dropout
from tensorlib.nn._functional.lstm_cell import lstm_pointwise
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter
from tensorlib.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ---- one time step (gi: the input part of the gates, bias_ih included) ----------------------
def _hidden_gates(h, w_hh, b_hh):
    return F.linear(h, w_hh, b_hh)


def _rnn_step(gi, h, w_hh, b_hh, relu):
    pre = gi + _hidden_gates(h, w_hh, b_hh)
    return F.relu(pre) if relu else tensorlib.tanh(pre)


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr):
    h, c = lstm_pointwise(gi, _hidden_gates(h, w_hh, b_hh), c)
    if w_hr is not None:
        h = tensorlib.matmul(h, w_hr.t())
    return h, c


def _gru_step(gi, h, w_hh, b_hh):
    gh = _hidden_gates(h, w_hh, b_hh)
    hs = h.shape[-1]
    rz = tensorlib.sigmoid(gi.narrow(-1, 0, 2 * hs) + gh.narrow(-1, 0, 2 * hs))
    r, z = rz.split(hs, -1)
    n = tensorlib.tanh(gi.narrow(-1, 2 * hs, hs) + r * gh.narrow(-1, 2 * hs, hs))
    return n + z * (h - n)


def _input_gates(x, w_ih, b_ih):
    return F.linear(x, w_ih, b_ih)


# ---- RNN / LSTM / GRU ----------------------------------------------------------------------
class RNNBase(Module):
    r"""The parameters and the layer/direction loop shared by RNN, LSTM and GRU.

    Args:
        mode: ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``
        input_size, hidden_size: features of the input and of the hidden state
        num_layers: stacked recurrent layers. Default: 1
        bias: use ``bias_ih``/``bias_hh``. Default: ``True``
        batch_first: input and output are (N, L, H) instead of (L, N, H)
        dropout: dropout on the outputs of every layer but the last (training only)
        bidirectional: run a reverse direction too; outputs are concatenated
        proj_size: LSTM only: project h to this size (``weight_hr_l{k}``)
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,  # noqa: C901
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: "
                            f"{type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else \
                    real_hidden_size * num_directions
                params = [tensorlib.empty((gate_size, layer_input_size), **factory),
                          tensorlib.empty((gate_size, real_hidden_size), **factory)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [tensorlib.empty(gate_size, **factory),
                               tensorlib.empty(gate_size, **factory)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(tensorlib.empty((proj_size, hidden_size), **factory))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, p in zip(names, params):
                    setattr(self, name, Parameter(p))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) if hasattr(self, n) else None
                for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (PyTorch packs weights for cuDNN here)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks (PyTorch's messages) --
    def check_input(self, input, batch_sizes=None):  # noqa: A002
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def get_expected_hidden_size(self, input, batch_sizes=None):  # noqa: A002
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None):  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- the computation --
    def _layer_weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda n: getattr(self, f"{n}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), \
            get("weight_hr")

    def _run(self, input, h0, c0=None, batch_sizes=None):  # noqa: A002
        """input (L, N, H_in) sequence first, or packed data (sum of lengths, H_in) with its
        batch_sizes; h0 (D * num_layers, N, H_out) [c0 likewise].
        Returns output (L, N, D * H_out) (packed: (sum of lengths, D * H_out)), h_n [, c_n].
        """
        num_directions = 2 if self.bidirectional else 1
        packed = batch_sizes is not None
        if packed:
            batch_sizes = [int(n) for n in batch_sizes]
        else:
            batch_sizes = [input.shape[1]] * input.shape[0]
        lstm = self.mode == "LSTM"
        layer_input = input
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                weights = self._layer_weights(layer, direction)
                idx = layer * num_directions + direction
                gi = _input_gates(layer_input, weights[0], weights[2])
                steps = _step_slices(gi, batch_sizes) if packed else list(gi.unbind(0))
                outs, h, c = self._run_direction(steps, h0[idx], c0[idx] if lstm else None,
                                                 weights, direction == 1)
                if not outs:
                    outputs.append(tensorlib.empty((0,) + tuple(h.shape), dtype=h.dtype,
                                                   device=h.device))
                else:
                    outputs.append(tensorlib.cat(outs) if packed else tensorlib.stack(outs))
                h_n.append(h)
                if lstm:
                    c_n.append(c)
            layer_input = outputs[0] if num_directions == 1 else tensorlib.cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = _dropout(layer_input, self.dropout, True)
        hidden = tensorlib.stack(h_n)
        if lstm:
            return layer_input, hidden, tensorlib.stack(c_n)
        return layer_input, hidden

    def _run_direction(self, steps, h0, c0, weights, reverse):
        """One direction of one layer over `steps` (the input gates of each time step, the
        rows of a step being the sequences still running, longest first). A sequence's
        state stops changing after its last step, so the returned h (and c) hold each
        sequence's state at its own last step. Returns (outputs per step, h, c)."""
        _, w_hh, _, b_hh, w_hr = weights
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        # reverse: sequences join as the steps go back; forward: they leave
        h = h0[:steps[order[0]].shape[0]] if reverse and steps else h0
        c = (c0[:h.shape[0]] if c0 is not None else None)
        outs = [None] * len(steps)
        for t in order:
            rows = steps[t].shape[0]
            if h.shape[0] < rows:
                h = tensorlib.cat([h, h0[h.shape[0]:rows]])
                c = tensorlib.cat([c, c0[c.shape[0]:rows]]) if c is not None else None
            h_t, c_t = h[:rows] if h.shape[0] > rows else h, \
                (c[:rows] if c is not None and c.shape[0] > rows else c)
            if self.mode == "LSTM":
                h_t, c_t = _lstm_step(steps[t], h_t, c_t, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                h_t = _gru_step(steps[t], h_t, w_hh, b_hh)
            else:
                h_t = _rnn_step(steps[t], h_t, w_hh, b_hh, self.mode == "RNN_RELU")
            outs[t] = h_t
            h = tensorlib.cat([h_t, h[rows:]]) if h.shape[0] > rows else h_t
            if c is not None:
                c = tensorlib.cat([c_t, c[rows:]]) if c.shape[0] > rows else c_t
        return outs, h, c

    def _prepare(self, input, hx, name):  # noqa: A002
        """Unbatched/batch_first handling shared by RNN and GRU (one hidden tensor)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"tensor instead" if name == "RNN" else
                             f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                       f"got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = tensorlib.zeros((self.num_layers * num_directions, input.shape[batch_dim],
                                  self.hidden_size), dtype=input.dtype, device=input.device)
        self.check_forward_args(input, hx, None)
        return input, hx, is_batched, batch_dim

    def _forward_packed(self, packed, hx):
        """PackedSequence in, PackedSequence out; the hidden state is given and returned in
        the caller's batch order (packed sequences run sorted by length)."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        lstm = self.mode == "LSTM"
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            size = self.proj_size if self.proj_size > 0 else self.hidden_size
            shape = (self.num_layers * num_directions, int(batch_sizes[0]))
            kw = {"dtype": data.dtype, "device": data.device}
            hx = tensorlib.zeros(shape + (size,), **kw)
            if lstm:
                hx = (hx, tensorlib.zeros(shape + (self.hidden_size,), **kw))
        else:
            if not lstm and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        if lstm:
            output, h_n, c_n = self._run(data, hx[0], hx[1], batch_sizes)
            hidden = (h_n, c_n)
        else:
            output, hidden = self._run(data, hx, batch_sizes=batch_sizes)
        return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                self.permute_hidden(hidden, unsorted_indices))

    def _single_hidden_forward(self, input, hx, name):  # noqa: A002
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        input, hx, is_batched, batch_dim = self._prepare(input, hx, name)
        x = input.transpose(0, 1) if self.batch_first else input
        output, hidden = self._run(x, hx)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


def _step_slices(gates, batch_sizes):
    """The rows of packed `gates` that belong to each time step."""
    slices, offset = [], 0
    for n in batch_sizes:
        slices.append(gates.narrow(0, offset, n))
        offset += n
    return slices


class RNN(RNNBase):
    r"""Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    Args:
        input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
        batch_first=False, dropout=0.0, bidirectional=False

    Shape:
        - input: (L, H_in), (L, N, H_in), or (N, L, H_in) with batch_first
        - hx: (D * num_layers, H_out) or (D * num_layers, N, H_out); zeros when omitted
        - output: (L, D * H_out) / (L, N, D * H_out) / (N, L, D * H_out); h_n as hx
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):  # noqa: A002
        return self._single_hidden_forward(input, hx, "RNN")


class GRU(RNNBase):
    r"""Gated recurrent unit (gate order r, z, n):
    r = sigma(W_ir x + b_ir + W_hr h + b_hr), z = sigma(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False

    Shape: as RNN.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):  # noqa: A002
        return self._single_hidden_forward(input, hx, "GRU")


class LSTM(RNNBase):
    r"""Long short-term memory (gate order i, f, g, o):
    c' = sigma(f) * c + sigma(i) * tanh(g), h' = sigma(o) * tanh(c'), then h' W_hr^T when
    proj_size > 0.

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False, proj_size=0

    Shape:
        - input: as RNN
        - (h_0, c_0): (D * num_layers, [N,] H_out) and (D * num_layers, [N,] H_cell),
          H_out = proj_size or hidden_size; zeros when omitted
        - output: (L, [N,] D * H_out) (batch_first: (N, L, ...)); (h_n, c_n) as (h_0, c_0)
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):  # noqa: A002
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):  # noqa: A002
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            n = input.shape[batch_dim]
            kw = {"dtype": input.dtype, "device": input.device}
            hx = (tensorlib.zeros((self.num_layers * num_directions, n, real_hidden_size),
                                  **kw),
                  tensorlib.zeros((self.num_layers * num_directions, n, self.hidden_size),
                                  **kw))
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        x = input.transpose(0, 1) if self.batch_first else input
        output, h_n, c_n = self._run(x, hx[0], hx[1])
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# ---- cells ---------------------------------------------------------------------------------
class RNNCellBase(Module):
    r"""weight_ih (num_chunks * hidden, input), weight_hh (num_chunks * hidden, hidden) and
    the biases bias_ih, bias_hh, all from U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(tensorlib.empty((num_chunks * hidden_size, input_size),
                                                   **factory))
        self.weight_hh = Parameter(tensorlib.empty((num_chunks * hidden_size, hidden_size),
                                                   **factory))
        if bias:
            self.bias_ih = Parameter(tensorlib.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(tensorlib.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, name, input, hiddens):  # noqa: A002
        """PyTorch's cell checks, on the batched (2-D) input and hidden states."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for i, h in enumerate(hiddens):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{i} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")

    def _batched(self, name, input, hx, what="hidden"):  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {hx.dim()}D "
                             f"instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = tensorlib.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                                 device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    r"""h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    Shape: input (N, H_in) or (H_in); hx (N, H_out) or (H_out), zeros when omitted;
    output like hx.
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002
        input, hx, is_batched = self._batched("RNNCell", input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check("RNNCell", input, (hx,))
        ret = _rnn_step(_input_gates(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                        self.bias_hh, self.nonlinearity == "relu")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One LSTM step (gate order i, f, g, o); returns (h', c').

    Shape: input (N, H_in) or (H_in); hx = (h, c), each (N, H) or (H), zeros when omitted.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = tensorlib.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                                    device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check("LSTMCell", input, hx)
        h, c = _lstm_step(_input_gates(input, self.weight_ih, self.bias_ih), hx[0], hx[1],
                          self.weight_hh, self.bias_hh, None)
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    r"""One GRU step (gate order r, z, n).

    Shape: input (N, H_in) or (H_in); hx (N, H) or (H), zeros when omitted; output like hx.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):  # noqa: A002
        input, hx, is_batched = self._batched("GRUCell", input, hx)
        self._check("GRUCell", input, (hx,))
        ret = _gru_step(_input_gates(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                        self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
