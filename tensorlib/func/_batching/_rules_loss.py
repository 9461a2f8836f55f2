"""Batch rules of the nn.functional losses: each sample's loss is the op's unreduced loss
reduced over that sample's elements (cross_entropy/nll_loss: over its weighted targets)."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching._batched import BatchedTensor, batch_size, make, physical_front
from tensorlib.func._batching._dispatch import register
from tensorlib.func._batching._rules_pointwise import align

_ELEMENTWISE = {"mse_loss": 2, "l1_loss": 2, "smooth_l1_loss": 2, "huber_loss": 2,
                "soft_margin_loss": 2, "kl_div": 2, "binary_cross_entropy": 3,
                "binary_cross_entropy_with_logits": 3}


@register(*_ELEMENTWISE)
def elementwise_loss(func, level, args, kwargs):
    if len(args) > _ELEMENTWISE[func.__name__] or {"size_average", "reduce"} & set(kwargs) \
            or not batch_size(level):
        return NotImplemented
    kwargs = dict(kwargs)
    reduction = kwargs.pop("reduction", "mean")
    aligned = align(args, kwargs, level)
    if aligned is None:
        return NotImplemented
    aligned_args, aligned_kwargs = _same_shape(*aligned)
    out = func(*aligned_args, **aligned_kwargs, reduction="none")
    return make(_reduce(out, reduction, args[0].dim(), args[0].shape), 0, level)


def _same_shape(args, kwargs):
    """(args, kwargs) as func(*args, **kwargs) takes them, with input and target expanded to
    their common (batched) shape: an operand that is not batched keeps its logical shape,
    which binary_cross_entropy refuses as a mismatch with the other's batched one (each
    sample's pair has equal shapes)."""
    args, kwargs = list(args), dict(kwargs)
    slots = [(args, i) for i in range(min(len(args), 2))] + \
        [(kwargs, k) for k in ("input", "target") if k in kwargs]
    if len(slots) == 2 and all(isinstance(box[key], TensorImpl) for box, key in slots):
        shape = tensorlib.broadcast_shapes(*(box[key].shape for box, key in slots))
        for box, key in slots:
            box[key] = box[key].expand(shape)
    return args, kwargs


def _reduce(out, reduction, rank, shape):
    if reduction == "none":
        return out
    flat = out.reshape(out.shape[0], -1)
    if reduction == "sum":
        return flat.sum(1)
    if reduction == "batchmean":
        return flat.sum(1) / (shape[0] if rank else 1)
    return flat.mean(1)


@register("cross_entropy", "nll_loss")
def class_loss(func, level, args, kwargs):
    names = ("input", "target", "weight")
    given = dict(zip(names, args), **kwargs)
    allowed = set(names) | {"ignore_index", "reduction", "label_smoothing"}
    x, target, weight = given.get("input"), given.get("target"), given.get("weight")
    if set(given) - allowed or len(args) > 3 or given.get("label_smoothing", 0.0) or \
            type(weight) is BatchedTensor or target is None or target.dtype.is_floating_point \
            or x.dim() < 1 or not batch_size(level):
        return NotImplemented
    ignore = given.get("ignore_index", -100)
    reduction = given.get("reduction", "mean")
    size = batch_size(level)
    xv, tv = physical_front(x, level, size), physical_front(target, level, size)
    many = x.dim() > 1
    if many:
        xv, tv = xv.flatten(0, 1), tv.flatten(0, 1)
    out = func(xv, tv, weight=weight, ignore_index=ignore, reduction="none")
    kept = tv != ignore
    if many:
        out, kept = out.unflatten(0, (size, -1)), kept.unflatten(0, (size, -1))
    if reduction == "none":
        return make(out, 0, level)
    per = out.reshape(size, -1).sum(1)
    if reduction == "sum":
        return make(per, 0, level)
    denom = kept.to(out.dtype)
    if weight is not None:
        denom = denom * weight[tensorlib.where(kept, tv.reshape(kept.shape), 0)]
    denom = denom.reshape(size, -1).sum(1)
    return make(per / denom, 0, level)
