"""Summary protos (tensorboard's own message types) from tensorlib tensors, numpy arrays and
numbers, in the forms torch.utils.tensorboard writes: scalars as simple_value, histograms as
HistogramProto (what EventAccumulator.Histograms reads), images as PNG."""
import io
import os

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


def _video_frames(array):
    """(N, T, C, H, W) videos as (T, H', W', C) uint8 frames: the N videos side by side, N
    padded with black ones to a power of two, in 2^((N.bit_length() - 1) // 2) rows (torch's
    layout)."""
    if array.ndim != 5:
        raise ValueError(f"add_video expects (N, T, C, H, W) videos, got shape {array.shape}")
    frames = _to_uint8(array)
    n, t, c, h, w = frames.shape
    padded = 1 << (n - 1).bit_length()
    if padded != n:
        frames = np.concatenate([frames, np.zeros((padded - n, t, c, h, w), np.uint8)])
    rows = 1 << ((n.bit_length() - 1) // 2)
    cols = padded // rows
    frames = frames.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return frames.reshape(t, rows * h, cols * w, c)


def _gif(frames, fps):
    """The frames as an animated GIF by moviepy (1.x or 2.x), or None, with torch's message,
    where moviepy is not installed."""
    try:
        from moviepy import ImageSequenceClip
    except ImportError:
        try:
            from moviepy.editor import ImageSequenceClip
        except ImportError:
            print("add_video needs package moviepy")
            return None
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "video.gif")
        ImageSequenceClip(list(frames), fps=fps).write_gif(path, logger=None)
        with open(path, "rb") as f:
            return f.read()


def video(tag, tensor, fps=4):
    """An animated GIF of (N, T, C, H, W) videos (floats in [0, 1] or uint8), as torch's
    add_video writes it; without moviepy an empty image, and torch's message."""
    frames = _video_frames(to_numpy(tensor))
    encoded = _gif(frames, fps)
    t, h, w, c = frames.shape
    picture = Summary.Image(height=h, width=w, colorspace=c)
    if encoded is not None:
        picture.encoded_image_string = encoded
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def text(tag, text_string):
    return text_pb(tag, text_string)


# as torch stores them: a bool is an int, so it is the number 0 or 1
_HPARAM_TYPES = (((int, float), "number_value", "DATA_TYPE_FLOAT64"),
                 (str, "string_value", "DATA_TYPE_STRING"))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The hparams plugin's three records of one run, as Summary protos (experiment,
    session_start_info, session_end_info), as torch.utils.tensorboard.summary.hparams returns
    them: the hyperparameters with their types (and discrete domains), the metric tags the
    run reports as scalars, and the run marked finished. Libraries (Stable-Baselines3) write
    them with file_writer.add_summary into a run directory of their choosing."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    domains = {} if hparam_domain_discrete is None else hparam_domain_discrete
    if not isinstance(domains, dict):
        raise TypeError("hparam_domain_discrete should be a dictionary.")
    for k, options in domains.items():
        if k not in hparam_dict or not isinstance(options, list) or \
                not all(isinstance(o, type(hparam_dict[k])) for o in options):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "item") and not isinstance(v, (bool, int, float, str)):
            v = v.item()                 # a one-element tensor or numpy scalar
        for kind, field, data_type in _HPARAM_TYPES:
            if isinstance(v, kind):
                break
        else:
            raise ValueError(f"value of hparam {k} should be one of int, float, str, bool, or "
                             f"a one-element tensor, got {type(v).__name__}")
        setattr(start.hparams[k], field, v)
        info = api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(data_type))
        if k in domains:
            info.domain_discrete.CopyFrom(struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: o}) for o in domains[k]]))
        infos.append(info)
    experiment = api_pb2.Experiment(
        hparam_infos=infos,
        metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))

    def record(tag, **data):
        smd = metadata.create_summary_metadata(plugin_data_pb2.HParamsPluginData(**data))
        return Summary(value=[Summary.Value(tag=tag, metadata=smd)])
    return (record(metadata.EXPERIMENT_TAG, experiment=experiment),
            record(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            record(metadata.SESSION_END_INFO_TAG, session_end_info=end))
