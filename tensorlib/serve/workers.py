"""Workers: each is an asyncio task that takes a batch from its model's Batcher and runs the
forward on its own thread, so the HTTP loop never waits on a model.

Threads rather than processes: a forward spends its time in tensorlib's kernels, the model
is loaded once and shared read-only, and inputs/outputs need no copying between processes.
Each forward runs under no_grad in its worker thread (grad mode is per thread, as in
PyTorch)."""
import asyncio
from concurrent.futures import ThreadPoolExecutor

from tensorlib.serve.batching import run_batch
from tensorlib.serve.errors import ServeError


class _Worker:
    def __init__(self, group, index):
        self.group = group
        self.thread = ThreadPoolExecutor(max_workers=1,
                                         thread_name_prefix=f"serve-{group.entry.name}-{index}")
        self.idle = True                 # waiting for a first request: safe to cancel
        self.retiring = False
        self.task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self):
        batcher = self.group.batcher
        loop = asyncio.get_running_loop()
        try:
            while not self.retiring:
                self.idle = True
                first = await batcher.first()
                self.idle = False
                batch = await batcher.fill([first])
                if not batch:
                    continue
                try:
                    results = await loop.run_in_executor(self.thread, run_batch,
                                                         self.group.entry, batch)
                except Exception as exc:    # noqa: BLE001 - a server bug must not hang clients
                    error = ServeError(f"serving model {self.group.entry.name} failed: "
                                       f"{type(exc).__name__}: {exc}")
                    results = [(None, error)] * len(batch)
                for request, (value, error) in zip(batch, results):
                    if request.future.done():
                        continue
                    if error is None:
                        request.future.set_result(value)
                    else:
                        request.future.set_exception(error)
        finally:
            self.thread.shutdown(wait=False)

    def retire(self):
        """Stop after the batch in hand (at once when waiting for work)."""
        self.retiring = True
        if self.idle:
            self.task.cancel()


class WorkerGroup:
    """The workers of one model; `scale(n)` adds or retires workers."""

    def __init__(self, entry, batcher, metrics):
        self.entry = entry
        self.batcher = batcher
        self.metrics = metrics
        self.workers = []
        self._made = 0

    def __len__(self):
        return len(self.workers)

    def scale(self, n):
        while len(self.workers) < n:
            self.workers.append(_Worker(self, self._made))
            self._made += 1
        while len(self.workers) > n:
            self.workers.pop().retire()
        self.metrics.workers.labels(self.entry.name).set(len(self.workers))

    async def stop(self):
        """Retire every worker and wait for the batches in hand to be answered."""
        tasks = [w.task for w in self.workers]
        self.scale(0)
        await asyncio.gather(*tasks, return_exceptions=True)
