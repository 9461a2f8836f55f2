r"""Index tables of pooling and resampling, built by ops on the tensor's device and cached.

A table depends only on the geometry (sizes and parameters) and the device, never on the
data, so it is made once with arange/where/clamp and kept (an LRU of `_LIMIT` entries): each
later call reuses the device tensor instead of computing on the host and uploading. Tables
are built outside inference mode and without grad, so a table first made under
`inference_mode` can still be saved for backward by a later call that records a graph.

Pooling windows (NOTE [ Pooling by gathered windows ] in pooling.py), one `Windows` per
spatial dim: `positions` (O, k) int64, the input position of each window element, -1 where
it is padding or past an adaptive window's end. The backends' fused max-pool kernels take
these tensors; the decomposition takes the clamped positions, validity mask and flat input
positions of `gather_plan`; a gather-form backward takes `cover` (for each input position,
the outputs whose window holds it, as CSR).
"""
import threading
from collections import OrderedDict

import tensorlib

_LIMIT = 512
_CACHE = OrderedDict()
_LOCK = threading.Lock()        # DataParallel's replicas pool in threads


def cached(key, build):
    """build() once per key (key includes the device), most recently used kept. (Two threads
    missing at once may both build; the tables are equal, either is kept.)"""
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    with tensorlib.inference_mode(False), tensorlib.no_grad():
        found = build()
    with _LOCK:
        _CACHE[key] = found
        if len(_CACHE) > _LIMIT:
            _CACHE.popitem(last=False)
    return found


def _arange(n, device):
    return tensorlib.arange(n, dtype=tensorlib.int64, device=device)


class Windows:
    """The pooling windows along one spatial dim of an input of length `size` (see the module
    docstring). all_valid: no -1 in positions; any_empty: some window is all padding."""
    __slots__ = ("key", "positions", "size", "all_valid", "any_empty")

    def __init__(self, key, positions, size, all_valid, any_empty):
        self.key, self.positions, self.size = key, positions, size
        self.all_valid, self.any_empty = all_valid, any_empty

    def cover(self):
        """(offsets (size + 1,), outputs): outputs[offsets[p]:offsets[p + 1]] are the windows
        holding input position p, ascending (so sums come in output order, as a scatter-add).
        By a sort of p * O + o, the invalid elements keyed past every valid one."""
        def build():
            pos = self.positions
            n_out = pos.shape[0]
            valid = pos >= 0
            o = _arange(n_out, pos.device).reshape(-1, 1)
            key = tensorlib.where(valid, pos * n_out + o, self.size * n_out + o)
            outputs = tensorlib.sort(key.reshape(-1))[0] % n_out
            slot = tensorlib.where(valid, pos, self.size).reshape(-1)
            counts = tensorlib.bincount(slot, minlength=self.size + 1)[:self.size]
            offsets = tensorlib.cat([_arange(1, pos.device), tensorlib.cumsum(counts, 0)])
            return offsets, outputs
        return cached(("cover",) + self.key, build)


def regular_windows(size, out, k, s, p, d, device):
    """Windows o * s - p + j * d (j < k) of max_pool's kernel, stride, padding, dilation."""
    key = ("regular", size, out, k, s, p, d, device)

    def build():
        pos = _arange(out, device).reshape(-1, 1) * s - p + _arange(k, device) * d
        positions = tensorlib.where((pos >= 0) & (pos < size), pos, -1)
        all_valid = p == 0 and (out - 1) * s + (k - 1) * d < size
        any_empty = not all_valid and any(not _hits(o * s - p, k, d, size) for o in range(out))
        return Windows(key, positions, size, all_valid, any_empty)
    return cached(key, build)


def _hits(a, k, d, size):
    """Whether a + j * d lies in [0, size) for some j < k."""
    j = 0 if a >= 0 else (-a + d - 1) // d        # the first j with a + j * d >= 0
    return j < k and a + j * d < size


def adaptive_bounds(size, out):
    """Python lists of the windows [floor(o L / O), ceil((o + 1) L / O))."""
    starts = [(o * size) // out for o in range(out)]
    ends = [-((-(o + 1) * size) // out) for o in range(out)]
    return starts, ends


def adaptive_windows(size, out, device):
    """Adaptive pooling's windows, padded to the longest with -1."""
    key = ("adaptive", size, out, device)

    def build():
        starts, ends = adaptive_bounds(size, out)
        lengths = [e - b for b, e in zip(starts, ends)]
        kmax = max(lengths)
        o = _arange(out, device).reshape(-1, 1)
        start = (o * size) // out
        end = ((o + 1) * size + out - 1) // out
        pos = start + _arange(kmax, device)
        positions = tensorlib.where(pos < end, pos, -1)
        return Windows(key, positions, size, min(lengths) == kmax, False)
    return cached(key, build)


def gather_plan(windows):
    """What the decomposition of max pooling needs, for windows (one per dim) over an input
    whose spatial sizes are theirs: the clamped positions of each dim, flattened (for
    index_select), and over (*O, prod(k)): the validity mask (None when all valid) and the
    flat input position of every window element."""
    nd = len(windows)

    def build():
        pos = [w.positions for w in windows]
        outs = tuple(p.shape[0] for p in pos)
        ks = tuple(p.shape[1] for p in pos)
        clamped = [tensorlib.clamp(p, min=0) for p in pos]
        valid, flat = None, 0
        for i, w in enumerate(windows):
            shape = [1] * (2 * nd)
            shape[i], shape[nd + i] = outs[i], ks[i]
            flat = flat * w.size + clamped[i].reshape(shape)
            if not w.all_valid:
                ok = (pos[i] >= 0).reshape(shape)
                valid = ok if valid is None else valid & ok
        flat = flat.expand(outs + ks).reshape(outs + (-1,))
        if valid is not None:
            valid = valid.expand(outs + ks).reshape(outs + (-1,))
        return [c.reshape(-1) for c in clamped], valid, flat
    return cached(("gather",) + tuple(w.key for w in windows), build)
