"""`python -m tensorlib.torch_compat PROGRAM.py [ARGS...]` (or `-m MODULE [ARGS...]`): run an
unchanged PyTorch program with `import torch` resolved to tensorlib; `tensorlib run-torch` is
the same command."""
import argparse
import os
import runpy
import sys


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="tensorlib run-torch",
        description="Run an unchanged PyTorch program on tensorlib (`import torch` -> tensorlib).")
    parser.add_argument("-m", dest="module", metavar="MODULE",
                        help="run a module as a script, like `python -m MODULE`")
    parser.add_argument("program", nargs="?",
                        help="the program's .py file (with -m: the module's first argument)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    args = parser.parse_args(argv)
    if args.module is None and args.program is None:
        parser.error("give PROGRAM.py or -m MODULE")
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    from tensorlib.torch_compat import install
    install()
    if args.module is not None:
        sys.argv = [args.module] + ([args.program] if args.program else []) + args.args
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        return 0
    program = os.path.abspath(args.program)
    if not os.path.isfile(program):
        print(f"tensorlib run-torch: no such program: {args.program}", file=sys.stderr)
        return 2
    sys.argv = [args.program] + args.args
    sys.path[0:1] = [os.path.dirname(program)]   # as `python PROGRAM.py` sets it
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
