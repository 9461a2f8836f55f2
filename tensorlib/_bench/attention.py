"""The attention workloads: F.scaled_dot_product_attention on (batch 16, heads 4, seq 256,
head dim 64) float32 (issue 13's size), forward (`sdpa_fwd`, under no_grad) and forward +
backward (`sdpa_train`), each library in its own worker process like every workload."""
import numpy as np

from tensorlib._bench.ops import on_lines
from tensorlib._bench.registry import register_suite

__all__ = ["AttentionWorkload", "workloads"]


def _reference(q, k, v):
    """softmax(q k^T / sqrt(E)) v in float64 numpy."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


class AttentionWorkload:
    """SDPA forward, or forward + backward of out.sum() into q, k and v."""

    kind, mode, libraries, unit = "attention", "eager", ("tensorlib", "torch"), None
    family = "sdpa"

    def __init__(self, train, quick):
        self.train, self.quick = train, quick
        self.shape = (2, 2, 32, 16) if quick else (16, 4, 256, 64)
        self.name = "sdpa_train" if train else "sdpa_fwd"
        what = "forward+backward" if train else "forward (no_grad)"
        self.description = (f"scaled_dot_product_attention {what}, (B, H, L, E) = "
                            f"{self.shape} float32")

    def matches(self, name):
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        rng = np.random.default_rng(0)
        arrays = [on_lines(rng.standard_normal(self.shape, dtype=np.float32)) for _ in range(3)]
        ref = _reference(*arrays)
        q, k, v = (module.from_numpy(a).to(device).requires_grad_(self.train)
                   for a in arrays)
        sdpa = module.nn.functional.scaled_dot_product_attention

        if self.train:
            def step():
                q.grad = k.grad = v.grad = None
                out = sdpa(q, k, v)
                out.sum().backward()
                return out
        else:
            def step():
                with module.no_grad():
                    return sdpa(q, k, v)

        def check():
            got = step().detach().cpu().numpy()
            if not np.allclose(got, ref, rtol=1e-4, atol=1e-5):
                return f"wrong result vs numpy (max abs diff {np.abs(got - ref).max():.3g})"
            if self.train and not all(np.isfinite(t.grad.cpu().numpy()).all()
                                      for t in (q, k, v)):
                return "non-finite gradient"
            return None
        return step, check


@register_suite
def workloads(quick=False):
    """sdpa_fwd and sdpa_train (quick: the same names at a tiny size)."""
    return [AttentionWorkload(False, quick), AttentionWorkload(True, quick)]
