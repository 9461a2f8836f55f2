"""The HTTP endpoints, TorchServe's paths and shapes on one port: inference (/ping,
/predictions/{name}), management (/models...) and /metrics."""
import asyncio
import time

from aiohttp import web

from tensorlib.serve import payload
from tensorlib.serve.errors import BadRequest, PayloadTooLarge, ServeError, error_body

routes = web.RouteTableDef()


def _server(request):
    return request.app["server"]


def _json(doc, status=200):
    return web.json_response(doc, status=status)


def _int_param(query, key, default, low=0):
    if key not in query:
        return default
    try:
        value = int(query[key])
    except ValueError:
        raise BadRequest(f"{key} must be an integer, got {query[key]!r}") from None
    if value < low:
        raise BadRequest(f"{key} must be at least {low}, got {value}")
    return value


@web.middleware
async def errors_as_json(request, handler):
    """Every failure answers {"code", "type", "message"}, aiohttp's own included."""
    try:
        return await handler(request)
    except ServeError as exc:
        return web.Response(status=exc.status, text=error_body(exc.status, exc.type,
                                                               exc.message),
                            content_type="application/json", headers=exc.headers)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        kind = {404: "NotFoundException", 405: "MethodNotAllowedException",
                413: "RequestEntityTooLargeException"}.get(exc.status, "HTTPException")
        return web.Response(status=exc.status, text=error_body(exc.status, kind, exc.reason),
                            content_type="application/json")


@routes.get("/ping")
async def ping(request):
    return _json({"status": "Healthy"})


async def _read_body(request, limit):
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"request body of {request.content_length} bytes is over the "
                              f"limit of {limit} bytes")
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise PayloadTooLarge(f"request body is over the limit of {limit} bytes") from None


@routes.post("/predictions/{name}")
async def predict(request):
    server = _server(request)
    name = request.match_info["name"]
    start = time.perf_counter()
    code = 500
    try:
        entry = server.store.get(name)
        body = await _read_body(request, server.max_body)
        arrays = payload.decode(body, request.content_type, entry)
        future = server.batchers[name].submit(arrays)
        outputs, single = await asyncio.shield(future)
        data, ctype = payload.encode(outputs, single, payload.wants_npy(
            request.headers.get("Accept")))
        code = 200
        return web.Response(body=data, content_type=ctype)
    except ServeError as exc:
        code = exc.status
        raise
    finally:
        if name in server.store:
            server.metrics.requests.labels(name, str(code)).inc()
            server.metrics.latency.labels(name).observe(time.perf_counter() - start)


@routes.get("/models")
async def list_models(request):
    server = _server(request)
    return _json({"models": [{"modelName": e.name, "modelUrl": e.url}
                             for e in server.store.entries()]})


@routes.get("/models/{name}")
async def describe_model(request):
    server = _server(request)
    e = server.store.get(request.match_info["name"])
    return _json([{"modelName": e.name, "modelUrl": e.url, "device": str(e.device),
                   "minWorkers": len(e.workers), "workers": [
                       {"id": str(i), "status": "READY"} for i in range(len(e.workers))],
                   "batchSize": e.batch_size, "maxBatchDelay": e.max_batch_delay_ms,
                   "queueDepth": server.batchers[e.name].pending,
                   "inputs": e.signature_json()}])


@routes.post("/models")
async def register_model(request):
    server = _server(request)
    q = request.query
    if "url" not in q:
        raise BadRequest("register a model with POST /models?url=PATH[&model_name=NAME]")
    url = q["url"]
    name = q.get("model_name") or url.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    batch_size = _int_param(q, "batch_size", server.batch_size, low=1)
    delay = _int_param(q, "max_batch_delay", server.max_batch_delay_ms)
    workers = _int_param(q, "initial_workers", server.workers)
    await server.register(name, url, batch_size, delay, workers)
    return _json({"status": f"Model \"{name}\" registered"})


@routes.delete("/models/{name}")
async def unregister_model(request):
    name = request.match_info["name"]
    await _server(request).unregister(name)
    return _json({"status": f"Model \"{name}\" unregistered"})


@routes.put("/models/{name}")
async def scale_model(request):
    server = _server(request)
    entry = server.store.get(request.match_info["name"])
    if "min_worker" not in request.query:
        raise BadRequest("scale a model with PUT /models/NAME?min_worker=N")
    n = _int_param(request.query, "min_worker", 1)
    entry.workers.scale(n)
    return _json({"status": f"Processing worker updates: {entry.name} has {n} worker(s)"})


@routes.get("/metrics")
async def metrics(request):
    m = _server(request).metrics
    return web.Response(body=m.render(), headers={"Content-Type": m.content_type})
