"""tensorlib-run / python -m tensorlib.distributed.run: torchrun's command line, with MPI
starting the ranks.

    tensorlib-run --nproc-per-node 4 train.py --epochs 3
    tensorlib-run --nnodes 2 --nproc-per-node 8 --hosts node1,node2 train.py

It runs `mpiexec -n NNODES*NPROC ... python -m tensorlib.distributed._rank train.py ...`,
which gives every rank torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID). MPI starts every node from
this one command, so with --nnodes above 1 only node rank 0 launches (name the hosts with
--hosts, or run inside a Slurm allocation, where mpiexec finds them); on other node ranks
there is nothing to do. Elastic restarts are not supported: --max-restarts must be 0. The
exit status is non-zero when any rank failed."""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import uuid

__all__ = ["main", "parse_args", "mpiexec_command", "find_mpiexec"]


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if value == "gpu":
        import tensorlib
        return max(1, tensorlib.accelerator.device_count()) \
            if hasattr(tensorlib, "accelerator") else 1
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"--nproc-per-node must be positive, got {n}")
    return n


def _nnodes(value):
    low, _, high = value.partition(":")
    if high and int(high) != int(low):
        raise argparse.ArgumentTypeError(f"--nnodes {value}: elastic node ranges are not "
                                         f"supported; give one number")
    return int(low)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tensorlib-run", description=__doc__.split("\n\n")[0],
                                allow_abbrev=False)
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=_nproc, default=1)
    p.add_argument("--nnodes", type=_nnodes, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true",
                   help="one node, a free local port (as torchrun)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("--hosts", default=None,
                   help="comma-separated host names for --nnodes above 1 (mpiexec -hosts)")
    p.add_argument("--mpiexec", default=os.environ.get("TENSORLIB_MPIEXEC", "mpiexec"),
                   help="the MPI launcher to run (default: mpiexec beside this Python, in "
                        "its environment's bin/, else on PATH)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the target as an executable, not a Python script")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.max_restarts != 0:
        p.error(f"--max-restarts {args.max_restarts}: elastic restarts are not supported "
                f"by the MPI launcher; use 0")
    if args.standalone:
        args.nnodes, args.master_addr = 1, "127.0.0.1"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.master_port = s.getsockname()[1]
    if args.module and args.no_python:
        p.error("--module and --no-python cannot be used together")
    return args


def find_mpiexec(name):
    """(path or None, the places searched). A bare name is looked for beside sys.executable
    and in sys.prefix's bin/ before PATH: the mpich wheel puts mpiexec there, and a virtual
    environment run by its interpreter's path, not activated, has its bin/ off PATH."""
    if os.path.dirname(name):
        return shutil.which(name), [name]
    bindir = "Scripts" if os.name == "nt" else "bin"
    dirs = []
    for d in (os.path.dirname(sys.executable), os.path.join(sys.prefix, bindir)):
        if d and d not in dirs:
            dirs.append(d)
    for d in dirs:
        found = shutil.which(name, path=d)
        if found:
            return found, dirs
    return shutil.which(name), dirs + ["PATH"]


def mpiexec_command(args, mpiexec):
    """The mpiexec command line that starts every rank of the job."""
    total = args.nnodes * args.nproc_per_node
    cmd = [mpiexec, "-n", str(total)]
    if args.nnodes > 1:
        cmd += ["-ppn", str(args.nproc_per_node)]
        if args.hosts:
            cmd += ["-hosts", args.hosts]
    if args.no_python:
        return cmd + [args.training_script, *args.training_script_args]
    target = ["-m", args.training_script] if args.module else [args.training_script]
    return cmd + [sys.executable, "-u", "-m", "tensorlib.distributed._rank", *target,
                  *args.training_script_args]


def _environment(args):
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex[:12]))
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in env:
        # as torchrun: ranks sharing a machine must not each start a thread per core
        env["OMP_NUM_THREADS"] = "1"
    return env


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.nnodes > 1 and args.node_rank != 0:
        print(f"tensorlib-run: node rank {args.node_rank}: MPI starts the ranks of every "
              f"node from node rank 0, so there is nothing to do here", file=sys.stderr)
        return 0
    if args.nnodes > 1 and not args.hosts and "SLURM_JOB_ID" not in os.environ:
        print("tensorlib-run: --nnodes above 1 needs --hosts host1,host2,... (or a Slurm "
              "allocation, or mpiexec/srun run directly)", file=sys.stderr)
        return 2
    mpiexec, searched = find_mpiexec(args.mpiexec)
    if mpiexec is None:
        print(f"tensorlib-run: {args.mpiexec!r} not found (looked in "
              f"{', '.join(searched)}): pip install "
              f"\"tensorlib[distributed]\" (brings mpiexec with the mpich wheel), or load "
              f"your site's MPI", file=sys.stderr)
        return 2
    rc = subprocess.call(mpiexec_command(args, mpiexec), env=_environment(args))
    if rc != 0:
        rc = rc if rc > 0 else 128 - rc
        print(f"tensorlib-run: the job failed ({os.path.basename(mpiexec)} exited with "
              f"{rc})", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
