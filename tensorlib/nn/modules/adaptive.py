"""AdaptiveLogSoftmaxWithLoss (Grave et al., 2016): a softmax over many classes split by
frequency into a head (the frequent classes plus one entry per tail cluster) and tail
clusters projected through smaller hidden sizes, so rare classes cost less."""
from collections import namedtuple

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.container import ModuleList, Sequential
from tensorlib.nn.modules.linear import Linear
from tensorlib.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""forward(input, target) -> (log-probability of each target, mean negative of it);
    `log_prob(input)` is the full (N, n_classes) log-distribution, `predict` its argmax."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _check(self, input, target):  # noqa: A002
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_, target_):
        self._check(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)  # noqa: A001
        target = target_ if batched else target_.unsqueeze(0)
        output = input.new_zeros(target.size(0))
        head_index = target.clone()
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            used += rows.numel()
            if i == 0:
                continue
            relative = target.index_select(0, rows) - bounds[i]
            logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            output = output.index_copy(0, rows, logprob.gather(1, relative.unsqueeze(1))
                                       .squeeze(1))
            head_index = head_index.index_fill(0, rows, self.shortlist_size + i - 1)
        if used != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):  # noqa: A002
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return tensorlib.cat(parts, 1)

    def log_prob(self, input):  # noqa: A002
        r"""(N, n_classes) log-probabilities of every class."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):  # noqa: A002
        r"""The most probable class of each row (log_prob(input).argmax(1), computed only
        for the rows whose head argmax is a cluster)."""
        head_output = self.head(input)
        output = tensorlib.argmax(head_output, dim=1)
        in_tail = output >= self.shortlist_size
        if not in_tail.any():
            return output
        if in_tail.all():
            return tensorlib.argmax(self._full_log_prob(input, head_output), dim=1)
        full = self._full_log_prob(input[in_tail], head_output[in_tail])
        output[in_tail] = tensorlib.argmax(full, dim=1)
        return output
