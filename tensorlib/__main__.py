"""`tensorlib info [--ops]`: the backends found, their status, why one is unavailable, and
(with --ops) which primitives each available backend implements."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tensorlib")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="list backends and their status")
    info.add_argument("--ops", action="store_true", help="show primitive op coverage")
    info.add_argument("--traceback", action="store_true", help="show broken plugins' tracebacks")
    args = parser.parse_args(argv)

    import tensorlib
    print(f"tensorlib {tensorlib.__version__}, plugin API {tensorlib.backends.API_VERSION}")
    for record in tensorlib.backends.list():
        origin = "first-party" if record.first_party else "third-party"
        line = f"  {record.name:<10} {record.status:<12} {origin:<12} {record.value}"
        print(line)
        if record.reason:
            print(f"{'':15}reason: {record.reason}")
        if record.install_hint and record.status != "available":
            print(f"{'':15}to use it: {record.install_hint}")
        if args.traceback and record.traceback:
            print(record.traceback)
        if record.status == "available" and hasattr(record.backend, "info"):
            for extra in record.backend.info():        # e.g. cuda: compiler, GEMM library
                print(f"{'':15}{extra}")
        if args.ops and record.status == "available":
            have, missing = tensorlib.backends.op_coverage(record.name)
            print(f"{'':15}primitives: {len(have)}/{len(have) + len(missing)}"
                  + (f"; missing: {', '.join(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
