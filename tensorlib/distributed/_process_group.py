"""Process groups and their lifecycle (torch.distributed.distributed_c10d's names):
init_process_group, the default (world) group, new_group, rank and size queries.

The world's size and this process's rank come from MPI when the process was started by an
MPI launcher (tensorlib-run, mpiexec, srun); the RANK/WORLD_SIZE variables, or the arguments,
must then agree with it. A world of one process needs no MPI: its collectives are identities."""
import datetime
import os

from tensorlib.distributed import _failure
from tensorlib.distributed._comm import LocalComm, MPIComm, load_mpi
from tensorlib.distributed._engine import engine

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "default_pg_timeout",
           "init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "new_group", "get_process_group_ranks", "get_global_rank", "get_group_rank"]

default_pg_timeout = datetime.timedelta(minutes=30)

# set in a process that an MPI launcher started (hydra/MPICH, Open MPI, PMIx, Slurm's PMI)
_MPI_LAUNCH_VARS = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID")


class Backend(str):
    """A backend name. Every name runs on the MPI engine: "gloo" and "nccl" are aliases that
    let unchanged PyTorch programs run; get_backend() answers the name the program chose."""
    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    _NAMES = ("mpi", "gloo", "nccl")

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        lowered = name.lower()
        # PyTorch's per-device form, e.g. "cpu:gloo,cuda:nccl"
        engines = {part.split(":")[-1] for part in lowered.split(",")}
        unknown = engines - set(cls._NAMES)
        if unknown:
            raise ValueError(f"Invalid backend: '{name}'; tensorlib.distributed runs on MPI "
                             f"and accepts {', '.join(cls._NAMES)} (gloo and nccl are "
                             f"aliases of mpi)")
        return super().__new__(cls, lowered)


class ProcessGroup:
    """A set of global ranks and, on its members, the communicator they share. `ranks` are
    global ranks in group-rank order."""

    def __init__(self, comm, ranks, timeout, backend, name):
        self._comm = comm
        self._ranks = list(ranks)
        self._timeout = timeout
        self._backend = backend
        self._name = name

    def rank(self):
        return self._comm.rank if self._comm is not None else -1

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._name

    @property
    def group_name(self):
        return self._name

    @property
    def timeout_s(self):
        return self._timeout.total_seconds()

    def group_rank(self, global_rank, what="rank"):
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what} {global_rank} is not part of group {self._name} "
                             f"(global ranks {self._ranks})") from None

    def __repr__(self):
        return f"<ProcessGroup {self._name} ranks={self._ranks} backend={self._backend}>"


class GroupMember:
    """torch.distributed.GroupMember: WORLD is the default group once initialised."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember            # torch.distributed.group.WORLD

_groups = []                   # every group this process created, the world first


def is_available():
    """True: world size 1 always works; larger worlds need mpi4py (is_mpi_available())."""
    return True


def is_mpi_available():
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


is_gloo_available = is_mpi_available     # aliases of the MPI engine
is_nccl_available = is_mpi_available


def is_torchelastic_launched():
    """True in ranks that tensorlib-run started (it sets TORCHELASTIC_RUN_ID, as torchrun)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    return GroupMember.WORLD is not None


def _env_int(name):
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}"
                         ) from None


def _check_init_method(init_method):
    """MPI does the rendezvous, so an init_method only has to be one PyTorch accepts."""
    if init_method is None:
        return
    if not isinstance(init_method, str) or \
            not init_method.startswith(("env://", "tcp://", "file://")):
        raise ValueError(f"init_method must be env://, tcp://host:port or file://path, got "
                         f"{init_method!r}")


def _world_comm(world_size, rank):
    """The world's communicator: LocalComm for one process, else MPI's (checked against
    what the arguments and environment say)."""
    expected = world_size if world_size != -1 else _env_int("WORLD_SIZE")
    launched = any(v in os.environ for v in _MPI_LAUNCH_VARS)
    if expected is not None and expected < 1:
        raise ValueError(f"world_size must be positive, got {expected}")
    if not launched and expected in (None, 1):
        me = rank if rank != -1 else (_env_int("RANK") or 0)
        if me != 0:
            raise ValueError(f"rank {me} is out of range for world size 1")
        return LocalComm()
    MPI = load_mpi()
    size, me = MPI.COMM_WORLD.Get_size(), MPI.COMM_WORLD.Get_rank()
    if expected is not None and expected != size:
        raise RuntimeError(f"world size {expected} was asked for, but MPI started {size} "
                           f"process(es): start the ranks with tensorlib-run "
                           f"--nproc-per-node {expected}, mpiexec -n {expected} or srun")
    asked = rank if rank != -1 else _env_int("RANK")
    if asked is not None and asked != me:
        raise RuntimeError(f"rank {asked} was asked for, but MPI made this process rank {me}"
                           f" (ranks come from the MPI launcher)")
    if size == 1:
        return LocalComm()
    return MPIComm(MPI.COMM_WORLD.Dup())


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's default process group. backend: None or "mpi" (the engine), "gloo" and
    "nccl" (aliases of it). The rendezvous is MPI's, so init_method is checked and otherwise
    unused, and a store is not supported."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else Backend.MPI)
    if store is not None:
        raise NotImplementedError("init_process_group(store=...): tensorlib.distributed "
                                  "rendezvouses through MPI and has no Store; drop the store")
    _check_init_method(init_method)
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    comm = _world_comm(world_size, rank)
    world = ProcessGroup(comm, range(comm.size), timeout, name, group_name or "0")
    GroupMember.WORLD = world
    _groups.append(world)
    if not comm.local:
        _failure.install(comm.rank, comm.abort)


def _world():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return GroupMember.WORLD


def resolve(group):
    """The group a collective runs on (the world for None)."""
    if group is None or group is GroupMember.WORLD:
        return _world()
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group(), got "
                        f"{type(group).__name__}")
    if group not in _groups:
        raise ValueError(f"{group} was destroyed")
    return group


def _run_blocking(world, description, fn):
    from tensorlib.distributed._work import Work
    work = Work(description, world.rank(), world.timeout_s)
    if world._comm.local:
        work._run(fn)
    else:
        engine.submit(work, fn)
    work.wait()
    return work


def destroy_process_group(group=None):
    """Leave `group` (by default every group, the world included)."""
    if group is None or group is GroupMember.WORLD:
        world = _world()
        for g in reversed(_groups):
            if g._comm is not None:
                comm = g._comm
                _run_blocking(world, "destroy_process_group", comm.free)
        engine.stop()
        _groups.clear()
        GroupMember.WORLD = None
        _failure.uninstall()
        return
    g = resolve(group)
    if g._comm is not None:
        _run_blocking(_world(), "destroy_process_group", g._comm.free)
    _groups.remove(g)


def get_rank(group=None):
    """This process's rank in `group` (-1 when it is not a member)."""
    return resolve(group).rank()


def get_world_size(group=None):
    """The number of ranks in `group` (-1 when this process is not a member)."""
    g = resolve(group)
    return g.size() if g._comm is not None else -1


def get_backend(group=None):
    return resolve(group)._backend


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of the given global ranks. Every rank of the world must call it (as in
    PyTorch), members or not; group ranks follow the sorted global ranks."""
    world = _world()
    size = world.size()
    ranks = list(range(size)) if ranks is None else [int(r) for r in ranks]
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    for r in ranks:
        if r < 0 or r >= size:
            raise ValueError(f"new_group: rank {r} is out of range for world size {size}")
    if sort_ranks:
        ranks = sorted(ranks)
    me = world.rank()
    member = me in ranks
    key = ranks.index(me) if member else 0
    made = {}
    _run_blocking(world, "new_group", lambda: made.setdefault(
        "comm", world._comm.split(member, key)))
    name = str(len(_groups))
    g = ProcessGroup(made["comm"], ranks, timeout or world._timeout,
                     Backend(backend) if backend is not None else world._backend, name)
    _groups.append(g)
    return g


def get_process_group_ranks(group):
    return list(resolve(group)._ranks)


def get_global_rank(group, group_rank):
    ranks = resolve(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"group rank {group_rank} is out of range for a group of "
                         f"{len(ranks)}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    return resolve(group).group_rank(global_rank)
