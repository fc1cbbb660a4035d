"""`mindspore.communication`: the collective-communication setup, with the semantics MindSpore has
in a process that was not launched as part of a distributed job: one process, rank 0 of a world
of 1. init() succeeds (there is nothing to connect), and the group queries answer for that world."""
from pijit.communication.management import (  # noqa: F401
    GlobalComm, HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, init, release,
    get_rank, get_local_rank, get_group_size, get_local_rank_size, get_world_rank_from_group_rank,
    get_group_rank_from_world_rank, create_group, destroy_group, get_process_group_ranks)

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP",
           "init", "release", "get_rank", "get_local_rank", "get_group_size", "get_local_rank_size",
           "get_world_rank_from_group_rank", "get_group_rank_from_world_rank", "create_group",
           "destroy_group", "get_process_group_ranks"]
