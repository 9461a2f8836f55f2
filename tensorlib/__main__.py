"""`tensorlib run-torch PROGRAM.py [ARGS...]`: run an unchanged PyTorch program on tensorlib
(tensorlib.torch_compat). `tensorlib serve --model NAME=PATH ...`: serve jit graphs over HTTP
(tensorlib.serve). `tensorlib info [--ops]`: versions, the BLAS and conv libraries in use, the
backends found with their status, devices and why one is unavailable, the kernel cache (see
`_info`), and (with --ops) which primitives and optional composite kernels each available
backend implements."""
import argparse
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run-torch"]:       # the program's own flags must not reach this parser
        from tensorlib.torch_compat.__main__ import main as run_torch
        return run_torch(argv[1:])
    if argv[:1] == ["serve"]:           # its own parser (tensorlib/serve/__main__.py)
        from tensorlib.serve.__main__ import main as serve
        return serve(argv[1:])
    parser = argparse.ArgumentParser(prog="tensorlib")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="list backends and their status")
    info.add_argument("--ops", action="store_true",
                      help="show each backend's primitive and composite kernels")
    info.add_argument("--traceback", action="store_true", help="show broken plugins' tracebacks")
    sub.add_parser("run-torch", help="run an unchanged PyTorch program on tensorlib "
                                     "(tensorlib run-torch PROGRAM.py ARGS...)")
    sub.add_parser("serve", help="serve tensorlib.jit graphs over HTTP "
                                 "(tensorlib serve --model NAME=PATH ...)")
    args = parser.parse_args(argv)

    import tensorlib
    from tensorlib._info import collect, format_report
    print(format_report(collect(), tracebacks=args.traceback))
    if args.ops:
        _print_kernels(tensorlib.backends)
    return 0


def _print_kernels(backends):
    """Per available backend: its primitives (count, what is missing) and the optional
    composite kernels it implements (the rest take the reference path)."""
    print("kernels per backend:")
    for name in backends.available():
        have, missing = backends.op_coverage(name)
        print(f"  {name:<10} primitives {len(have)}/{len(have) + len(missing)}"
              + (f"; missing: {', '.join(missing)}" if missing else ""))
        composites, absent = backends.composite_coverage(name)
        print(f"  {'':<10} composites {len(composites)}/{len(composites) + len(absent)}"
              + (f": {', '.join(composites)}" if composites else ""))


if __name__ == "__main__":
    sys.exit(main())
