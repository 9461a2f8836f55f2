"""Dynamic batching: requests for one model that arrive within its max batch delay are
concatenated along dim 0 into one forward (up to its batch size, counted in requests) and
the outputs are split back by each request's rows."""
import asyncio
import time

import numpy as np

from tensorlib.serve.errors import ModelError, ServiceUnavailable


class Request:
    """One prediction waiting for its answer (`future`: (outputs, single) or an error)."""

    __slots__ = ("arrays", "rows", "future")

    def __init__(self, arrays, future):
        self.arrays = arrays
        self.rows = arrays[0].shape[0]
        self.future = future


class Batcher:
    """The queue of one model's requests, and the grouping of them into batches."""

    def __init__(self, entry, queue_size, metrics):
        self.entry = entry
        self.queue = asyncio.Queue(maxsize=queue_size)
        self.metrics = metrics
        self.pending = 0                 # accepted, not yet handed to a forward

    def submit(self, arrays):
        """The future of a request's outputs; ServiceUnavailable when the queue is full."""
        future = asyncio.get_running_loop().create_future()
        try:
            self.queue.put_nowait(Request(arrays, future))
        except asyncio.QueueFull:
            raise ServiceUnavailable(f"model {self.entry.name}: the request queue is full "
                                     f"({self.queue.maxsize}); retry later",
                                     headers={"Retry-After": "1"}) from None
        self._depth(+1)
        return future

    def _depth(self, delta):
        self.pending += delta
        self.metrics.queue_depth.labels(self.entry.name).set(self.pending)

    async def first(self):
        """The next request (a worker waits here, cancellable while it does)."""
        return await self.queue.get()

    async def fill(self, batch):
        """Add requests to `batch` until the batch size or the max batch delay is reached."""
        deadline = time.monotonic() + self.entry.max_batch_delay_ms / 1000
        while len(batch) < self.entry.batch_size:
            try:
                batch.append(self.queue.get_nowait())
                continue
            except asyncio.QueueEmpty:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                batch.append(await asyncio.wait_for(self.queue.get(), left))
            except asyncio.TimeoutError:
                break
        batch[:] = [r for r in batch if not r.future.done()]     # clients that went away
        self._depth(-len(batch))
        self.metrics.batch_size.labels(self.entry.name).observe(len(batch))
        return batch

    def fail_waiting(self, message):
        """Answer every queued request with 503 (the model is being removed)."""
        while not self.queue.empty():
            r = self.queue.get_nowait()
            self._depth(-1)
            if not r.future.done():
                r.future.set_exception(ServiceUnavailable(message))


def _as_outputs(result):
    from tensorlib._tensor import Tensor
    if isinstance(result, Tensor):
        return [result], True
    if isinstance(result, (tuple, list)) and result and all(isinstance(t, Tensor)
                                                            for t in result):
        return list(result), False
    raise ModelError(f"the model returned {type(result).__name__}; serving needs a tensor or "
                     f"a tuple/list of tensors")


def forward(entry, arrays):
    """Run the model once on numpy inputs: (list of numpy outputs, single)."""
    import tensorlib
    inputs = [tensorlib.from_numpy(np.ascontiguousarray(a)).to(entry.device) for a in arrays]
    try:
        with tensorlib.no_grad():       # grad mode is per thread: this worker's
            result = entry.module(*inputs)
    except Exception as exc:            # noqa: BLE001 - any model failure becomes a 500
        raise ModelError(f"model {entry.name} raised {type(exc).__name__}: {exc}") from None
    outputs, single = _as_outputs(result)
    return [t.detach().cpu().numpy() for t in outputs], single


def _stackable(batch):
    """Whether the requests can share a forward: each input of every request has the same
    dtype and trailing dims, and each request's inputs the same rows (a model saved without
    a signature lets requests differ)."""
    first = batch[0].arrays
    return all(a.shape[0] == r.rows and a.dtype == f.dtype and a.shape[1:] == f.shape[1:]
               for r in batch for a, f in zip(r.arrays, first))


def run_batch(entry, batch):
    """Per request, ((outputs, single), None) or (None, error); runs in a worker thread."""
    if len(batch) == 1 or not _stackable(batch):
        return [_guarded(entry, r.arrays) for r in batch]
    arrays = [np.concatenate([r.arrays[i] for r in batch]) for i in range(entry.n_inputs)]
    total = arrays[0].shape[0]
    try:
        outputs, single = forward(entry, arrays)
    except ModelError:
        outputs = None                  # answer each request alone: only the bad one fails
    if outputs is None or any(o.ndim == 0 or o.shape[0] != total for o in outputs):
        return [_guarded(entry, r.arrays) for r in batch]
    cuts = np.cumsum([r.rows for r in batch])[:-1]
    parts = [np.split(o, cuts) for o in outputs]
    return [(([p[k] for p in parts], single), None) for k in range(len(batch))]


def _guarded(entry, arrays):
    try:
        return forward(entry, arrays), None
    except ModelError as exc:
        return None, exc
