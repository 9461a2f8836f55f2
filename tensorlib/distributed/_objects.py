"""Collectives of picklable Python objects. These pickle (and unpickle what other ranks
sent) because that is their contract in PyTorch; they are the only places where
tensorlib.distributed uses pickle, so use them only among ranks of one trusted job."""
from tensorlib.distributed._collectives import _launch, _root
from tensorlib.distributed._process_group import resolve

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object"]


def _run(pg, description, fn):
    out = {}
    _launch(pg, description, lambda: out.setdefault("value", fn()))
    return out["value"]


def all_gather_object(object_list, obj, group=None):
    """object_list[i] = the obj of group rank i (object_list holds one slot per rank)."""
    pg = resolve(group)
    if pg._comm is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have one slot per rank "
                         f"({pg.size()}), got {len(object_list)}")
    comm = pg._comm
    object_list[:] = _run(pg, "all_gather_object", lambda: comm.allgather_object(obj))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace the entries of object_list, in place, with those of the source rank's."""
    pg = resolve(group)
    if pg._comm is None:
        return
    root, comm = _root(pg, src, group_src, "src"), pg._comm
    mine = list(object_list) if comm.rank == root else None
    got = _run(pg, "broadcast_object_list", lambda: comm.bcast_object(mine, root))
    if len(got) != len(object_list):
        raise ValueError(f"broadcast_object_list: the source sent {len(got)} objects but "
                         f"object_list here has {len(object_list)} slots")
    object_list[:] = got


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """On the destination, object_gather_list[i] = the obj of group rank i."""
    pg = resolve(group)
    if pg._comm is None:
        return
    root, comm = _root(pg, dst, group_dst, "dst"), pg._comm
    if comm.rank == root:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(f"gather_object: object_gather_list must have one slot per "
                             f"rank ({pg.size()}) on the destination rank")
    elif object_gather_list is not None:
        raise ValueError("Argument ``object_gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    got = _run(pg, "gather_object", lambda: comm.gather_object(obj, root))
    if comm.rank == root:
        object_gather_list[:] = got
