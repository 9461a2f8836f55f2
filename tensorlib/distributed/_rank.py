"""What each rank runs first under tensorlib-run: the torchrun environment from MPI's view
of the job (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK), then the user's
script or module as __main__. An exception that escapes the script (even before
init_process_group) aborts the whole job with the rank named, so no rank waits for it.

    mpiexec -n N python -m tensorlib.distributed._rank [-m] script_or_module [args...]"""
import os
import runpy
import sys

from tensorlib.distributed import _failure
from tensorlib.distributed._comm import load_mpi


def _torchrun_environment(MPI):
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    node = world.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
    local_rank, local_size = node.Get_rank(), node.Get_size()
    leader = node.bcast(rank, root=0)
    node.Free()
    leaders = sorted(set(world.allgather(leader)))
    return {"RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": local_rank,
            "LOCAL_WORLD_SIZE": local_size, "GROUP_RANK": leaders.index(leader),
            "ROLE_RANK": rank, "ROLE_WORLD_SIZE": size, "GROUP_WORLD_SIZE": len(leaders)}


def main(argv):
    as_module = argv[:1] == ["-m"]
    if as_module:
        argv = argv[1:]
    if not argv:
        raise SystemExit("tensorlib.distributed._rank: no script given")
    MPI = load_mpi()
    env = _torchrun_environment(MPI)
    os.environ.update({k: str(v) for k, v in env.items()})
    rank = env["RANK"]
    abort = MPI.COMM_WORLD.Abort
    sys.argv = list(argv)
    try:
        if as_module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            sys.stdout.flush()
            sys.stderr.write(f"tensorlib.distributed: rank {rank} exited with {exc.code!r}; "
                             f"aborting the job\n")
            sys.stderr.flush()
            abort(exc.code if isinstance(exc.code, int) else 1)
        raise
    except BaseException:
        exc_type, exc, tb = sys.exc_info()
        _failure.fail(rank, exc_type, exc, _user_frames(tb), abort)


def _user_frames(tb):
    """The traceback from the user's code on (without this module's and runpy's frames)."""
    while tb is not None and tb.tb_next is not None and (
            tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__)
            or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
        tb = tb.tb_next
    return tb


if __name__ == "__main__":
    main(sys.argv[1:])
