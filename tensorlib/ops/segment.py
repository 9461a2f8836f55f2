"""segment_reduce: reduce consecutive runs of `data` along axis 0 (their lengths given by
`lengths` or `offsets`) with sum/mean/max/min/prod, built on scatter_reduce (so autograd
and every backend come with it). An empty run gives `initial`, else the reduction's
identity (nan for mean); a given `initial` also joins each non-empty run's reduction."""
import math

__all__ = ["segment_reduce", "_segment_reduce"]

# "amax"/"amin" are PyTorch's other spellings of max/min here (PyG passes them)
_IDENTITY = {"sum": 0.0, "mean": 0.0, "max": -math.inf, "min": math.inf, "prod": 1.0,
             "amax": -math.inf, "amin": math.inf}
_SCATTER = {"sum": "sum", "mean": "sum", "max": "amax", "min": "amin", "prod": "prod",
            "amax": "amax", "amin": "amin"}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    from tensorlib.ops.creation import arange, full
    if reduce not in _IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined"
                           if lengths is None else
                           "segment_reduce(): Either lengths or offsets should be defined, "
                           "not both")
    if offsets is not None:
        lengths = offsets[1:] - offsets[:-1] if offsets.dim() == 1 else offsets
    axis = axis + data.dim() if axis < 0 else axis
    if lengths.dim() != axis + 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if lengths.dim() > 1:
        raise NotImplementedError("segment_reduce(): tensorlib reduces along axis 0 with 1-D "
                                  "lengths or offsets only")
    if not unsafe and (bool((lengths < 0).any()) or
                       int(lengths.sum().item()) != data.shape[0]):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    segments = lengths.numel()
    ids = arange(segments, device=data.device).repeat_interleave(lengths.to(data.device))
    ids = ids.reshape((-1,) + (1,) * (data.dim() - 1)).expand(data.shape)
    start = _IDENTITY[reduce] if initial is None else initial
    out = full((segments,) + tuple(data.shape[1:]), start, dtype=data.dtype, device=data.device)
    out = out.scatter_reduce(0, ids, data, _SCATTER[reduce], include_self=True)
    if reduce != "mean":
        return out
    counts = lengths.to(data.device, data.dtype).reshape((-1,) + (1,) * (data.dim() - 1))
    mean = out / counts
    return mean if initial is None else mean.where(counts != 0, float(initial))


_segment_reduce = segment_reduce      # torch._segment_reduce is the same function
