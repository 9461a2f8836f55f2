"""The baseline `serve_load.py` measures `tensorlib serve` against: the same model in PyTorch
behind a plain FastAPI app, one request one forward, as PyTorch users commonly deploy it
(a sync endpoint: FastAPI runs each call on its thread pool; no batching, no queue).

    python benchmarks/serve_torch_baseline.py --model digits --weights W.npz --port P
        [--threads T]

The architecture is the one `serve_load.py` saved for tensorlib (`serve_load.ARCHITECTURES`,
built here on torch.nn), the weights its state_dict as .npz. Prints "listening on URL" when
ready. Needs torch, fastapi and uvicorn (not tensorlib dependencies: benchmark only)."""
import argparse
import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def missing_packages():
    """The packages this baseline needs that are not installed."""
    import importlib.util
    return [name for name in ("torch", "fastapi", "uvicorn")
            if importlib.util.find_spec(name) is None]


def build(model, weights, threads):
    import numpy as np
    import torch
    from serve_load import ARCHITECTURES
    if threads:
        torch.set_num_threads(threads)
    net = ARCHITECTURES[model](torch.nn)
    with np.load(weights) as arrays:
        net.load_state_dict({k: torch.from_numpy(arrays[k]) for k in arrays.files})
    return net.eval()


def make_app(name, net, url):
    import torch
    from fastapi import FastAPI, HTTPException

    @contextlib.asynccontextmanager
    async def lifespan(app):
        print(f"listening on {url}", flush=True)
        yield

    app = FastAPI(lifespan=lifespan)

    @app.get("/ping")
    def ping():
        return {"status": "Healthy"}

    @app.post("/predictions/{model_name}")
    def predict(model_name: str, body: dict):
        if model_name != name:
            raise HTTPException(404, f"model {model_name!r} not found")
        with torch.no_grad():
            return {"outputs": net(torch.tensor(body["inputs"], dtype=torch.float32)).tolist()}

    return app


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)
    absent = missing_packages()
    if absent:
        raise SystemExit(f"serve_torch_baseline: install {' '.join(absent)} (pip install "
                         f"{' '.join(absent)})")
    import uvicorn
    url = f"http://127.0.0.1:{args.port}"
    app = make_app(args.model, build(args.model, args.weights, args.threads), url)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
