"""`tensorlib serve` / `python -m tensorlib.serve`: serve tensorlib.jit graphs over HTTP.

    tensorlib serve --model digits=digits.tlj [--model NAME=PATH ...] [--host 127.0.0.1]
        [--port 8080] [--workers N] [--batch-size B] [--max-batch-delay MS] [--device DEV]
        [--threads T] [--queue-size Q] [--max-request-size BYTES]
"""
import argparse
import asyncio
import sys


def _model(text):
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {text!r}")
    return name, path


def build_parser():
    p = argparse.ArgumentParser(prog="tensorlib serve",
                                description="Serve models saved by tensorlib.jit.save over "
                                            "HTTP (TorchServe's endpoints).")
    p.add_argument("--model", action="append", type=_model, default=[], metavar="NAME=PATH",
                   help="a model to serve (repeatable)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free)")
    p.add_argument("--workers", type=int, default=1, help="worker threads per model")
    p.add_argument("--batch-size", type=int, default=8, help="most requests per forward")
    p.add_argument("--max-batch-delay", type=int, default=5, metavar="MS",
                   help="how long a batch waits to fill, in milliseconds (default 5)")
    p.add_argument("--device", default="cpu", help="device the models run on (default cpu)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads of the CPU kernels, for all workers together "
                        "(tensorlib.set_num_threads; default: OMP_NUM_THREADS, else every core)")
    p.add_argument("--queue-size", type=int, default=100,
                   help="requests waiting per model before 503 (default 100)")
    p.add_argument("--max-request-size", type=int, default=10 * 1024 * 1024, metavar="BYTES",
                   help="largest request body; larger ones get 413 (default 10 MiB)")
    return p


def main(argv=None):
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.threads is not None and args.threads < 1:
        raise SystemExit("tensorlib serve: --threads must be >= 1")
    for flag in ("workers", "batch_size", "queue_size", "max_request_size"):
        low = 0 if flag == "workers" else 1
        if getattr(args, flag) < low:
            raise SystemExit(f"tensorlib serve: --{flag.replace('_', '-')} must be >= {low}")
    names = [n for n, _ in args.model]
    if len(set(names)) != len(names):
        raise SystemExit("tensorlib serve: a model name is given twice")
    try:
        from tensorlib.serve.app import Server, serve
    except ImportError as exc:
        raise SystemExit(f"tensorlib serve needs the [serve] extra (pip install "
                         f"'tensorlib[serve]'): {exc}") from None
    import tensorlib
    from tensorlib.serve.errors import ServeError
    if args.threads is not None:
        tensorlib.set_num_threads(args.threads)
    server = Server(workers=args.workers, batch_size=args.batch_size,
                    max_batch_delay_ms=args.max_batch_delay, device=args.device,
                    queue_size=args.queue_size, max_body=args.max_request_size)
    try:
        asyncio.run(serve(server, dict(args.model), args.host, args.port))
    except ServeError as exc:
        print(f"tensorlib serve: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"tensorlib serve: cannot listen on {args.host}:{args.port}: {exc}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
