"""tensorlib.serve: an HTTP server for graphs saved by `tensorlib.jit.save`, with
TorchServe's endpoints, dynamic batching and worker threads (docs/serving.md).

Modules: `__main__` (the command line), `app` (the server and its run loop), `routes` (the
endpoints), `payload` (JSON and .npy bodies), `batching` (grouping requests into one
forward), `workers` (the threads that run forwards), `registry` (safe loading and the model
store), `metrics` (Prometheus) and `errors` (TorchServe-shaped error answers). Needs the
`[serve]` extra (aiohttp, prometheus_client)."""
