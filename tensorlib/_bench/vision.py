"""The spatial-transformer workloads: F.grid_sample (bilinear, zero padding, align_corners
False) on (N, C, H, W) = (8, 16, 64, 64) float32 at a 64x64 grid, forward (`grid_sample_fwd`,
under no_grad) and forward + backward into input and grid (`grid_sample_train`)."""
import numpy as np

from tensorlib._bench.ops import on_lines
from tensorlib._bench.registry import register_suite

__all__ = ["GridSampleWorkload", "workloads"]


def _reference(x, grid):
    """Bilinear grid_sample with zero padding, align_corners=False, in float64 numpy."""
    x, grid = x.astype(np.float64), grid.astype(np.float64)
    n, c, h, w = x.shape
    ix = ((grid[..., 0] + 1) * w - 1) / 2
    iy = ((grid[..., 1] + 1) * h - 1) / 2
    x0, y0 = np.floor(ix).astype(np.int64), np.floor(iy).astype(np.int64)
    out = np.zeros((n, c) + grid.shape[1:3])
    batch = np.arange(n)[:, None, None]
    for dy in (0, 1):
        for dx in (0, 1):
            xs, ys = x0 + dx, y0 + dy
            weight = (1 - np.abs(ix - xs)) * (1 - np.abs(iy - ys))
            inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            taps = x[batch, :, np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)]  # (N, Ho, Wo, C)
            out += np.moveaxis(taps * (weight * inside)[..., None], -1, 1)
    return out


class GridSampleWorkload:
    """grid_sample forward, or forward + backward of out.sum() into input and grid."""

    kind, mode, libraries, unit = "vision", "eager", ("tensorlib", "torch"), None
    family = "grid_sample"

    def __init__(self, train, quick):
        self.train = train
        self.shape = (2, 4, 16, 16) if quick else (8, 16, 64, 64)
        self.name = "grid_sample_train" if train else "grid_sample_fwd"
        what = "forward+backward" if train else "forward (no_grad)"
        self.description = (f"grid_sample bilinear {what}, (N, C, H, W) = {self.shape} "
                            f"float32, grid {self.shape[2]}x{self.shape[3]}")

    def matches(self, name):
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        rng = np.random.default_rng(0)
        n, _, h, w = self.shape
        x = on_lines(rng.standard_normal(self.shape, dtype=np.float32))
        grid = on_lines(rng.uniform(-1.1, 1.1, (n, h, w, 2)).astype(np.float32))
        ref = _reference(x, grid)
        xt, gt = (module.from_numpy(a).to(device).requires_grad_(self.train) for a in (x, grid))
        sample = module.nn.functional.grid_sample

        def forward():
            return sample(xt, gt, mode="bilinear", padding_mode="zeros", align_corners=False)

        if self.train:
            def step():
                xt.grad = gt.grad = None
                out = forward()
                out.sum().backward()
                return out
        else:
            def step():
                with module.no_grad():
                    return forward()

        def check():
            got = step().detach().cpu().numpy()
            if not np.allclose(got, ref, rtol=1e-4, atol=1e-5):
                return f"wrong result vs numpy (max abs diff {np.abs(got - ref).max():.3g})"
            if self.train and not all(np.isfinite(t.grad.cpu().numpy()).all()
                                      for t in (xt, gt)):
                return "non-finite gradient"
            return None
        return step, check


@register_suite
def workloads(quick=False):
    """grid_sample_fwd and grid_sample_train (quick: the same names at a tiny size)."""
    return [GridSampleWorkload(False, quick), GridSampleWorkload(True, quick)]
