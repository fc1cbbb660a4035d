"""`mindspore.communication.management`: init, get_rank, get_group_size, ... for a single process.

pijit runs one process: the world is {rank 0}, every group (the world group and any created with
create_group) holds rank 0 only. Asking for another rank, or a group that was never created,
raises ValueError, as MindSpore does for a rank or group outside the job.
"""
HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"

_BACKENDS = {"hccl": HCCL_WORLD_COMM_GROUP, "nccl": NCCL_WORLD_COMM_GROUP,
             "mccl": MCCL_WORLD_COMM_GROUP}


class GlobalComm(object):
    """MindSpore's communication state: the backend, the world group's name, and whether init()
    ran."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


_groups = {}


def _world_groups():
    return set(_BACKENDS.values()) | {GlobalComm.WORLD_COMM_GROUP}


def _check_group(group):
    if group is None:
        group = GlobalComm.WORLD_COMM_GROUP
    if not isinstance(group, str):
        raise TypeError("group must be a str, got %s" % type(group).__name__)
    if group not in _world_groups() and group not in _groups:
        raise ValueError("communication group %r was not created (pijit runs a single process: the "
                         "world group is %r)" % (group, GlobalComm.WORLD_COMM_GROUP))
    return group


def init(backend_name=None):
    """Starts communication for a world of one process (rank 0). backend_name: 'hccl', 'nccl' or
    'mccl' names the world group as MindSpore does; None keeps the current one."""
    if backend_name is not None:
        if backend_name not in _BACKENDS:
            raise ValueError("init: backend_name must be one of %s, got %r"
                             % (", ".join(sorted(_BACKENDS)), backend_name))
        GlobalComm.BACKEND = backend_name
        GlobalComm.WORLD_COMM_GROUP = _BACKENDS[backend_name]
    GlobalComm.INITED = True


def release():
    GlobalComm.INITED = False
    _groups.clear()


def get_rank(group=None):
    _check_group(group)
    return 0


def get_local_rank(group=None):
    _check_group(group)
    return 0


def get_group_size(group=None):
    _check_group(group)
    return 1


def get_local_rank_size(group=None):
    _check_group(group)
    return 1


def _check_rank(who, rank):
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError("%s: the rank must be an int, got %s" % (who, type(rank).__name__))
    if rank != 0:
        raise ValueError("%s: rank %d is outside the world of 1 process (rank 0)" % (who, rank))


def get_world_rank_from_group_rank(group, group_rank_id):
    _check_group(group)
    _check_rank("get_world_rank_from_group_rank", group_rank_id)
    return 0


def get_group_rank_from_world_rank(world_rank_id, group):
    _check_group(group)
    _check_rank("get_group_rank_from_world_rank", world_rank_id)
    return 0


def get_process_group_ranks(group=None):
    _check_group(group)
    return [0]


def create_group(group, rank_ids, options=None):
    """Creates a named group of the given ranks: in a single process, the ranks must be [0]."""
    if not isinstance(group, str) or not group:
        raise TypeError("create_group: group must be a non-empty str, got %r" % (group,))
    if group in _world_groups() or group in _groups:
        raise ValueError("create_group: group %r already exists" % group)
    ranks = list(rank_ids)
    if ranks != [0]:
        raise ValueError("create_group: rank_ids %r are not the world's ranks [0] (pijit runs a "
                         "single process)" % (rank_ids,))
    _groups[group] = ranks


def destroy_group(group):
    if group in _world_groups():
        raise ValueError("destroy_group: the world group %r cannot be destroyed" % group)
    if group not in _groups:
        raise ValueError("destroy_group: group %r was not created" % group)
    del _groups[group]


__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP",
           "init", "release", "get_rank", "get_local_rank", "get_group_size", "get_local_rank_size",
           "get_world_rank_from_group_rank", "get_group_rank_from_world_rank", "create_group",
           "destroy_group", "get_process_group_ranks"]
