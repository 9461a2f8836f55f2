"""Prometheus metrics of one server (its own registry, so two servers in a process or a
test never share counts): requests by model and status code, latency, batch sizes, queue
depth and workers per model."""
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("tensorlib_serve_requests", "Prediction requests answered",
                                ["model", "code"], registry=r)
        self.latency = Histogram("tensorlib_serve_request_latency_seconds",
                                 "Prediction request latency, receipt to answer", ["model"],
                                 registry=r)
        self.batch_size = Histogram("tensorlib_serve_batch_size",
                                    "Requests per forward", ["model"], buckets=_BATCH_BUCKETS,
                                    registry=r)
        self.queue_depth = Gauge("tensorlib_serve_queue_depth",
                                 "Requests accepted and not yet in a forward", ["model"],
                                 registry=r)
        self.workers = Gauge("tensorlib_serve_workers", "Workers per model", ["model"],
                             registry=r)

    def forget(self, model):
        """Drop an unregistered model's gauges (its counters stay, as Prometheus expects)."""
        for gauge in (self.queue_depth, self.workers):
            try:
                gauge.remove(model)
            except KeyError:
                pass

    def render(self):
        return generate_latest(self.registry)
