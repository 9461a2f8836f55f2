"""Summary protos (tensorboard's own message types) from tensorlib tensors, numpy arrays and
numbers, in the forms torch.utils.tensorboard writes: scalars as simple_value, histograms as
HistogramProto (what EventAccumulator.Histograms reads), images as PNG."""
import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
from tensorboard.plugins.text.summary_v2 import text_pb


def to_numpy(x):
    """A tensor (any device), array or number as a numpy array; anything else (a list, a
    string) raises NotImplementedError, as torch.utils.tensorboard's make_np does (callers
    such as skorch catch that to skip values they cannot log)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x) and not isinstance(x, (str, bytes)):
        return np.array([x])
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(tag, value):
    v = to_numpy(value).squeeze()
    if v.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {v.size} and {v.ndim} dimensions.")
    return Summary(value=[Summary.Value(tag=tag, simple_value=float(v))])


def _tensorflow_bins():
    """TensorFlow's default histogram buckets: +-1e-12 growing by 10% up to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


def histogram(tag, values, bins="tensorflow", max_bins=None):
    values = to_numpy(values).astype(np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=_tensorflow_bins() if bins == "tensorflow"
                                  else bins)
    if max_bins is not None and len(counts) > max_bins:
        group = -(-len(counts) // max_bins)
        pad = (-len(counts)) % group
        counts = np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=1)
        limits = np.concatenate([limits[:-1][::group], limits[-1:]])
    nonzero = np.flatnonzero(counts)
    start, end = nonzero[0], nonzero[-1] + 1            # drop the empty buckets at both ends
    proto = HistogramProto(min=float(values.min()), max=float(values.max()),
                           num=int(values.size), sum=float(values.sum()),
                           sum_squares=float(values.dot(values)),
                           bucket_limit=limits[start + 1:end + 1].tolist(),
                           bucket=counts[start:end].tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def _to_hwc(array, dataformats):
    """An image array in dataformats (CHW, HWC, HW, ...) as HWC with 1, 3 or 4 channels."""
    dataformats = dataformats.upper()
    if array.ndim != len(dataformats):
        raise ValueError(f"size of input tensor and input format are different. tensor shape: "
                         f"{array.shape}, input_format: {dataformats}")
    if "C" not in dataformats:
        array, dataformats = array[..., None], dataformats + "C"
    return np.transpose(array, [dataformats.index(c) for c in "HWC"])


def make_grid(images, ncols=8):
    """NHWC images tiled into one HWC image, as torchvision's grid: ncols per row."""
    n, h, w, c = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    grid = np.zeros((h * nrows, w * ncols, c), dtype=images.dtype)
    for i in range(n):
        r, col = divmod(i, ncols)
        grid[r * h:(r + 1) * h, col * w:(col + 1) * w] = images[i]
    return grid


def _png(hwc):
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("add_image needs Pillow to encode PNG: pip install pillow") from e
    if hwc.shape[2] == 1:
        hwc = hwc[:, :, 0]
    buf = io.BytesIO()
    Image.fromarray(hwc).save(buf, format="PNG")
    return buf.getvalue()


def _to_uint8(array):
    """Floats are taken in [0, 1] and scaled by 255; integers as they are (torch's rule)."""
    scale = 255.0 if np.issubdtype(array.dtype, np.floating) else 1.0
    return np.clip(array * scale, 0, 255).round().astype(np.uint8) if scale != 1.0 \
        else array.clip(0, 255).astype(np.uint8)


def image(tag, img, dataformats="CHW"):
    hwc = _to_uint8(_to_hwc(to_numpy(img), dataformats))
    if hwc.shape[2] not in (1, 3, 4):
        raise ValueError(f"an image has 1, 3 or 4 channels, got {hwc.shape[2]}")
    encoded = Summary.Image(height=hwc.shape[0], width=hwc.shape[1],
                            colorspace=hwc.shape[2], encoded_image_string=_png(hwc))
    return Summary(value=[Summary.Value(tag=tag, image=encoded)])


def images(tag, imgs, dataformats="NCHW"):
    array = to_numpy(imgs)
    dataformats = dataformats.upper()
    if array.ndim != len(dataformats) or "N" not in dataformats:
        raise ValueError(f"add_images expects a batch of images in {dataformats}, got shape "
                         f"{array.shape}")
    rest = dataformats.replace("N", "")
    batch = np.stack([_to_hwc(np.take(array, i, axis=dataformats.index("N")), rest)
                      for i in range(array.shape[dataformats.index("N")])])
    grid = make_grid(batch)
    return image(tag, grid, "HWC")


def text(tag, text_string):
    return text_pb(tag, text_string)
