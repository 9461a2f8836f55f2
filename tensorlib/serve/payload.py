"""Request bodies to numpy arrays and model outputs back to bodies: JSON nested lists or
`application/x-npy` (read with allow_pickle=False, so an object array is refused)."""
import io
import json

import numpy as np

from tensorlib.serve.errors import BadRequest, NotAcceptable

NPY = "application/x-npy"


def _dtype(name, where):
    try:
        dt = np.dtype(name)
    except TypeError:
        raise BadRequest(f"unknown dtype {name!r} {where}") from None
    if dt.kind not in "biuf":
        raise BadRequest(f"unsupported dtype {name!r} {where} (bool, integers, floats)")
    return dt


def decode(body, content_type, entry):
    """The list of input arrays a request carries, checked against `entry`'s signature."""
    if content_type == NPY:
        if entry.n_inputs != 1:
            raise BadRequest(f"model {entry.name} takes {entry.n_inputs} inputs; an .npy body "
                             f"holds one, send JSON instead ({entry.describe_signature()})")
        try:
            arrays = [np.lib.format.read_array(io.BytesIO(body), allow_pickle=False)]
        except (ValueError, OSError, EOFError) as exc:
            raise BadRequest(f"malformed .npy body: {exc}") from None
    else:
        arrays = _from_json(body, entry)
    _check(arrays, entry)
    return arrays


def _from_json(body, entry):
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"malformed JSON body: {exc}") from None
    if not isinstance(doc, dict) or "inputs" not in doc:
        raise BadRequest('the JSON body must be an object {"inputs": ...}')
    values = [doc["inputs"]] if entry.n_inputs == 1 else doc["inputs"]
    if not isinstance(values, list) or len(values) != entry.n_inputs:
        raise BadRequest(f"model {entry.name} takes {entry.n_inputs} inputs: send "
                         f'"inputs" as a list of {entry.n_inputs} tensors '
                         f"({entry.describe_signature()})")
    dtypes = doc.get("dtype")
    if dtypes is None:
        dtypes = ["float32"] * entry.n_inputs
    elif isinstance(dtypes, str):
        dtypes = [dtypes] * entry.n_inputs
    if not isinstance(dtypes, list) or len(dtypes) != entry.n_inputs:
        raise BadRequest(f'"dtype" must be a name or a list of {entry.n_inputs} names')
    arrays = []
    for i, (value, name) in enumerate(zip(values, dtypes)):
        dt = _dtype(name, f"for input {i}")
        try:
            arrays.append(np.asarray(value, dtype=dt))
        except (ValueError, TypeError) as exc:
            raise BadRequest(f"input {i} is not a rectangular nested list of numbers "
                             f"({exc}); {entry.describe_signature()}") from None
    return arrays


def _check(arrays, entry):
    for i, a in enumerate(arrays):
        if a.dtype.kind not in "biuf":
            raise BadRequest(f"input {i} has dtype {a.dtype}; {entry.describe_signature()}")
        if a.ndim == 0 or a.shape[0] == 0:
            raise BadRequest(f"input {i} needs a leading batch dimension of at least 1, got "
                             f"shape {list(a.shape)}; {entry.describe_signature()}")
    if entry.signature is None:
        return
    for i, (a, s) in enumerate(zip(arrays, entry.signature)):
        if a.ndim != len(s["shape"]) or list(a.shape[1:]) != list(s["shape"][1:]):
            raise BadRequest(f"input {i} has shape {list(a.shape)}; "
                             f"{entry.describe_signature()}")
        if a.dtype != np.dtype(s["dtype"]):
            raise BadRequest(f"input {i} has dtype {a.dtype}; {entry.describe_signature()}")


def wants_npy(accept):
    return NPY in (accept or "")


def encode(outputs, single, npy):
    """(body bytes, content type) for a request's outputs (a list of arrays)."""
    if npy:
        if not single:
            raise NotAcceptable("this model returns several outputs; .npy holds one, "
                                "ask for application/json")
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.ascontiguousarray(outputs[0]), allow_pickle=False)
        return buf.getvalue(), NPY
    value = outputs[0].tolist() if single else [o.tolist() for o in outputs]
    return json.dumps({"outputs": value}).encode(), "application/json"
