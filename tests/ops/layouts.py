"""Input layouts every op is tested on: the same values as contiguous, strided (step 2),
transposed, broadcast (stride 0) and offset views."""
import numpy as np

import tensorlib as tl

LAYOUTS = ("contiguous", "strided", "transposed", "broadcast", "offset")


def make(array, layout, device="cpu"):
    """A tensor on `device` equal to `array` but laid out as `layout` (2-D arrays)."""
    if layout == "contiguous":
        return tl.tensor(array).to(device)
    if layout == "strided":
        wide = np.zeros((array.shape[0], array.shape[1] * 2), array.dtype)
        wide[:, ::2] = array
        return tl.tensor(wide).to(device)[:, ::2]
    if layout == "transposed":
        return tl.tensor(np.ascontiguousarray(array.T)).to(device).t()
    if layout == "broadcast":
        row = array[:1]
        array[...] = row
        return tl.tensor(row).to(device).expand(*array.shape)
    if layout == "offset":
        padded = np.concatenate([np.zeros((1, array.shape[1]), array.dtype), array])
        return tl.tensor(padded).to(device)[1:]
    raise ValueError(layout)
