"""A script written for PyTorch, run with `import tensorlib as torch`: masking, gathering,
top-k, scatter-add and einsum attention scores, checked against numpy (and against PyTorch
itself when it is installed)."""
import numpy as np
import pytest

import tensorlib as torch


def attention_and_routing(torch, seed_values):
    """Realistic tensor code: attention scores with a padding mask, top-k routing of tokens to
    experts, per-expert load by scatter-add, and gathering the chosen scores."""
    q, k, v, lengths, expert_logits = seed_values
    q, k, v = torch.tensor(q), torch.tensor(k), torch.tensor(v)
    b, h, t, d = q.shape
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / d ** 0.5
    positions = torch.arange(t)
    pad = positions[None, :] >= torch.tensor(lengths)[:, None]          # (b, t) True = pad
    scores = scores.masked_fill(pad[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1) if hasattr(torch, "softmax") else \
        (scores - scores.amax(-1, keepdim=True)).exp() / \
        (scores - scores.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)
    context = torch.einsum("bhqk,bhkd->bhqd", weights, v)
    pooled = context.mean(dim=(1, 2))                                    # (b, d)

    logits = torch.tensor(expert_logits)                                 # (b*t, experts)
    top_vals, top_idx = logits.topk(2, dim=-1)
    load = torch.zeros(logits.shape[1]).scatter_add(0, top_idx.flatten(),
                                                   torch.ones(top_idx.numel()))
    chosen = logits.gather(1, top_idx)
    valid_tokens = ~pad.flatten()
    kept = chosen[valid_tokens]
    first_pad = pad.float().argmax(dim=1)
    return {"pooled": pooled, "load": load, "chosen": chosen, "kept": kept,
            "top_vals": top_vals, "first_pad": first_pad, "weights_sum": weights.sum(-1)}


def _inputs():
    rng = np.random.default_rng(0)
    b, h, t, d, experts = 2, 2, 5, 4, 6
    return (rng.standard_normal((b, h, t, d)).astype(np.float32),
            rng.standard_normal((b, h, t, d)).astype(np.float32),
            rng.standard_normal((b, h, t, d)).astype(np.float32),
            [5, 3],
            rng.standard_normal((b * t, experts)).astype(np.float32))


def _numpy_reference(values):
    q, k, v, lengths, logits = (x.astype(np.float64) if isinstance(x, np.ndarray) else x
                                for x in values)
    t, d = q.shape[2], q.shape[3]
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / d ** 0.5
    pad = np.arange(t)[None, :] >= np.array(lengths)[:, None]
    scores = np.where(pad[:, None, None, :], -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    pooled = np.einsum("bhqk,bhkd->bhqd", weights, v).mean(axis=(1, 2))
    top_idx = np.argsort(-logits, axis=-1, kind="stable")[:, :2]
    load = np.zeros(logits.shape[1])
    np.add.at(load, top_idx.ravel(), 1.0)
    chosen = np.take_along_axis(logits, top_idx, 1)
    return {"pooled": pooled, "load": load, "chosen": chosen, "kept": chosen[~pad.ravel()],
            "top_vals": chosen, "first_pad": pad.astype(float).argmax(1),
            "weights_sum": weights.sum(-1)}


def test_realistic_mix_matches_numpy():
    got = attention_and_routing(torch, _inputs())
    expected = _numpy_reference(_inputs())
    for name, value in expected.items():
        np.testing.assert_allclose(got[name].numpy(), value, rtol=1e-5, atol=1e-5,
                                   err_msg=name)
    assert got["first_pad"].dtype is torch.int64
    assert got["load"].sum().item() == 20


def test_realistic_mix_matches_pytorch():
    real = pytest.importorskip("torch")
    ours = attention_and_routing(torch, _inputs())
    theirs = attention_and_routing(real, _inputs())
    for name in ours:
        np.testing.assert_allclose(ours[name].numpy(), theirs[name].numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)
        assert str(ours[name].dtype).split(".")[-1] == str(theirs[name].dtype).split(".")[-1]


def test_training_step_in_pytorch_style():
    """The classic loop: a model, a loss, backward, an optimizer step; the loss falls."""
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = (x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3).squeeze(1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = ((model(x).squeeze(1) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]
