"""The server: its models, their batchers and workers, the aiohttp application, and the run
loop that logs "listening on http://HOST:PORT" and stops cleanly on SIGINT/SIGTERM (stop
listening, answer the requests in flight, stop the workers, exit 0)."""
import asyncio
import signal
import sys

from aiohttp import web

from tensorlib.serve.batching import Batcher
from tensorlib.serve.metrics import Metrics
from tensorlib.serve.registry import ModelEntry, ModelStore, load_graph
from tensorlib.serve.routes import errors_as_json, routes
from tensorlib.serve.workers import WorkerGroup


class Server:
    """Settings and state shared by the handlers (the app's "server" key)."""

    def __init__(self, *, workers=1, batch_size=8, max_batch_delay_ms=5, device="cpu",
                 queue_size=100, max_body=10 * 1024 * 1024):
        self.workers = workers
        self.batch_size = batch_size
        self.max_batch_delay_ms = max_batch_delay_ms
        self.device = device
        self.queue_size = queue_size
        self.max_body = max_body
        self.store = ModelStore()
        self.batchers = {}
        self.metrics = Metrics()

    async def register(self, name, url, batch_size=None, max_batch_delay_ms=None,
                       workers=None):
        """Load `url` (off the event loop), then start its batcher and workers."""
        self.store.check_new(name)
        module = await asyncio.get_running_loop().run_in_executor(None, load_graph, url,
                                                                  self.device)
        entry = ModelEntry(name, url, module,
                           self.batch_size if batch_size is None else batch_size,
                           self.max_batch_delay_ms if max_batch_delay_ms is None
                           else max_batch_delay_ms, self.device)
        self.store.add(entry)
        batcher = Batcher(entry, self.queue_size, self.metrics)
        self.batchers[name] = batcher
        self.metrics.queue_depth.labels(name).set(0)
        entry.workers = WorkerGroup(entry, batcher, self.metrics)
        entry.workers.scale(self.workers if workers is None else workers)
        return entry

    async def unregister(self, name):
        entry = self.store.remove(name)
        batcher = self.batchers.pop(name)
        batcher.fail_waiting(f"model {name} was unregistered")
        await entry.workers.stop()
        self.metrics.forget(name)

    async def stop(self):
        for entry in self.store.entries():
            await entry.workers.stop()
            self.batchers[entry.name].fail_waiting("the server is shutting down")


def make_app(server):
    app = web.Application(middlewares=[errors_as_json], client_max_size=server.max_body)
    app["server"] = server
    app.add_routes(routes)

    async def on_cleanup(app):
        await server.stop()
    app.on_cleanup.append(on_cleanup)
    return app


async def serve(server, models, host="127.0.0.1", port=8080, shutdown_timeout=30.0,
                ready=None):
    """Load `models` ({name: path}), listen, and run until SIGINT or SIGTERM."""
    for name, path in models.items():
        await server.register(name, path)
    app = make_app(server)
    runner = web.AppRunner(app, handle_signals=False, access_log=None,
                           shutdown_timeout=shutdown_timeout)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on http://{shown}:{bound}", file=ready or sys.stdout, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        # in-flight requests are answered: what is left is the interpreter's teardown, which
        # a repeated signal (a second Ctrl-C, a supervisor's retry) must not turn into a kill
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)     # else closing the loop restores the default
            signal.signal(sig, signal.SIG_IGN)

