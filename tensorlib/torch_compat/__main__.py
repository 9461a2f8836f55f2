"""`python -m tensorlib.torch_compat PROGRAM.py [ARGS...]` (or `-m MODULE [ARGS...]`): run an
unchanged PyTorch program with `import torch` resolved to tensorlib; `tensorlib run-torch` is
the same command."""
import os
import runpy
import sys


USAGE = """usage: tensorlib run-torch PROGRAM.py [ARGS...]
       tensorlib run-torch -m MODULE [ARGS...]

Run an unchanged PyTorch program on tensorlib: `import torch` resolves to tensorlib.
Everything after PROGRAM.py or MODULE goes to the program, as with `python`."""


def parse(argv):
    """(module, program, args): like `python`, the first word decides and the rest is the
    program's own, flags included."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            raise SystemExit(2)
        return argv[1], None, argv[2:]
    return None, argv[0], argv[1:]


def main(argv=None):
    module, program_arg, args = parse(sys.argv[1:] if argv is None else list(argv))
    from tensorlib.torch_compat import install
    install()
    if module is not None:
        sys.argv = [module] + args
        sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    program = os.path.abspath(program_arg)
    if not os.path.isfile(program):
        print(f"tensorlib run-torch: no such program: {program_arg}", file=sys.stderr)
        return 2
    sys.argv = [program_arg] + args
    sys.path[0:1] = [os.path.dirname(program)]   # as `python PROGRAM.py` sets it
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
